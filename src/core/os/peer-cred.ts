// The kernel's peer credentials (SO_PEERCRED) of a connected Unix socket, which Node does not
// offer: from the native part helper/remote/peer-cred.c where it was built, else from perl (its
// getsockopt, on the socket handed to it as its stdin). Panes on other hosts rest on it: the
// relay of `tmux-run ssh` accepts only its own ssh client, the far end keeps only the socket its
// own sshd listens on (docs/remote.md).
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import type { Socket } from 'node:net';
import { PERL } from './perl.js';

export interface PeerCred {
  pid: number;
  uid: number;
  gid: number;
}

interface Addon {
  peer(fd: number): [number, number, number];
}

let addon: Addon | null | undefined;
function load(): Addon | null {
  if (addon === undefined) {
    try {
      // From src/core/os/ and from dist/src/core/os/ alike, generated/ is three levels up.
      addon = createRequire(import.meta.url)('../../../generated/peer-cred.node') as Addon;
    } catch {
      addon = null;
    }
  }
  return addon;
}

const PERL_PEER =
  'use Socket qw(SOL_SOCKET SO_PEERCRED); my $c = getsockopt(STDIN, SOL_SOCKET, SO_PEERCRED) or die "$!\\n"; print join(" ", unpack("l3", $c)), "\\n";';

/** The descriptor under a connected net.Socket (Node keeps it on its handle). */
export function socketFd(socket: Socket): number {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('the socket has no descriptor');
  return fd;
}

/** The process at the other end of `socket`, by the kernel's word; throws when it cannot be known. */
export function peerCred(socket: Socket, opts: { native?: boolean } = {}): PeerCred {
  const fd = socketFd(socket);
  const a = opts.native === false ? null : load();
  if (a) {
    const [pid, uid, gid] = a.peer(fd);
    return { pid, uid, gid };
  }
  const r = spawnSync(PERL, ['-e', PERL_PEER], { stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8', timeout: 5000 });
  const m = /^(\d+) (\d+) (\d+)$/.exec(r.stdout?.trim() ?? '');
  if (r.status !== 0 || !m)
    throw new Error(
      `perl could not read the socket's peer credentials: ${r.stderr?.trim() || r.error?.message || `status ${r.status}`}`,
    );
  return { pid: Number(m[1]), uid: Number(m[2]), gid: Number(m[3]) };
}

/** Which way peerCred reads them here (for doctor and logs). */
export const peerCredSource = (): 'native' | 'perl' => (load() ? 'native' : 'perl');
