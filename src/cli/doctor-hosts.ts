// doctor's `hosts` line: the hosts `tmux-run setup --remote` set up (src/remote/hosts.ts), and
// those whose far end is of another build than this tmux-run: a `tmux-run ssh` session there is
// not enrolled (remote_unavailable: docs/remote.md) until setup --remote runs again. Said from the
// records kept here; no host is contacted.
import { BUILD_ID } from '../core/protocol/build.js';
import { shellQuote } from '../core/os/package-root.js';
import { readHosts } from '../remote/hosts.js';

/** One of doctor's lines (its Check). */
type Line = { check: string; ok: boolean; detail: string; fix: string | null; warning?: true };

export function checkHosts(env: NodeJS.ProcessEnv): Line {
  const hosts = readHosts(env);
  if (hosts.length === 0) return { check: 'hosts', ok: true, detail: 'no host set up for tmux-run ssh', fix: null };
  const names = hosts.map((h) => h.destination).join(', ');
  const older = hosts.filter((h) => h.build !== BUILD_ID);
  if (older.length === 0)
    return { check: 'hosts', ok: true, detail: `set up for tmux-run ssh, this build: ${names}`, fix: null };
  return {
    check: 'hosts',
    ok: true,
    warning: true,
    detail: `remote_unavailable: ${older.map((h) => `${h.destination} has build ${h.build}`).join(', ')}, this tmux-run is build ${BUILD_ID}: tmux-run ssh sessions there are not enrolled`,
    fix: older.map((h) => `tmux-run setup --remote ${shellQuote(h.destination)}`).join('; '),
  };
}
