// What binds a remote pane's enrollment to one ssh session (docs/remote.md): the local relay
// (`tmux-run ssh`, pid and start time here), the ssh client it started (pid and start time here),
// and the far end's host, boot and shell (pid and start time there). The relay writes it into the
// local enrollment record (`remote`); its digest is the record's process generation, so a new ssh
// session or an `exec` at the far end is a new generation.
import { createHash } from 'node:crypto';

export interface RemoteBinding {
  /** The DESTINATION as the person gave it to `tmux-run ssh`. */
  destination: string;
  /** The name the far end reports (its hostname). */
  hostname: string;
  relay_pid: number;
  relay_start: string;
  ssh_pid: number;
  ssh_start: string;
  /** The far end's boot id (its /proc/sys/kernel/random/boot_id). */
  remote_boot: string;
}

/** The listing's `host` of a remote pane: the destination as given and the name the host reports. */
export interface ListedHost {
  destination: string;
  name: string;
}

const text = (x: unknown, max = 256): x is string => typeof x === 'string' && x.length > 0 && x.length <= max;
const pid = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) > 1;

/** Whether `x` is a well-formed binding (the record reader refuses a record with a malformed one). */
export function isRemoteBinding(x: unknown): x is RemoteBinding {
  if (typeof x !== 'object' || x === null) return false;
  const b = x as Record<string, unknown>;
  return (
    text(b.destination, 1024) &&
    text(b.hostname) &&
    pid(b.relay_pid) &&
    text(b.relay_start, 32) &&
    pid(b.ssh_pid) &&
    text(b.ssh_start, 32) &&
    text(b.remote_boot, 64)
  );
}

/** The process generation of a remote pane: this ssh client here and that shell there (32 hex). */
export function remoteProcessGeneration(
  localBoot: string,
  b: Pick<RemoteBinding, 'ssh_pid' | 'ssh_start' | 'remote_boot'>,
  shellPid: number,
  shellStart: string,
): string {
  return createHash('sha256')
    .update(`remote-process\n${localBoot}\n${b.ssh_pid}\n${b.ssh_start}\n${b.remote_boot}\n${shellPid}\n${shellStart}`)
    .digest('hex')
    .slice(0, 32);
}
