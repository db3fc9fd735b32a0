// scripts/bench/bench-remote-shells.ts: what bash and fish at the far end of `tmux-run ssh` cost per
// run against the same shell in a local pane (alone, not a section of `npm run bench`: `npx tsx
// scripts/bench/bench-remote-shells.ts [--n 40] [--shell bash|fish|bash-screen] [--quiet]`, as root: it
// starts a private sshd and a remote user, test/remote/sshd.ts). bash: the exact check (the builtin
// built at the far end); bash-screen: bash without it (TMUX_RUN_NATIVE=off), so the screen check;
// fish: always the screen check. A local pane reads its screen from its own tmux with a client held
// for the read; a far pane's is read by the relay (src/remote/relay-screen.ts, with a client it holds
// the same way) and crosses the link.
// The round trip of `true` through tmux-run-mcp, interleaved call by call, 20 ms apart
// (bench-common.ts); medians, the difference and the ratio.
import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { callRun, listedPanes } from '../../lab/mcp.js';
import { CLI_BIN, productEnv } from '../../lab/product.js';
import { openScope } from '../../lab/scope.js';
import { waitUntil } from '../../lab/waiting.js';
import { startSshd } from '../../test/remote/sshd.js';
import { bashPane, enrollBash } from '../../test/bash/support.js';
import { enrollFish, fishPane } from '../../test/fish/support.js';
import { median } from './bench-enroll.js';
import { sideBySidePause } from './bench-common.js';

const run = promisify(execFile);
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const n = Number(arg('--n')) || 40;
const kind = arg('--shell') ?? 'fish';
if (!['bash', 'bash-screen', 'fish'].includes(kind)) throw new Error('--shell bash, bash-screen or fish');
const fish = kind === 'fish';
const screen = kind !== 'bash';
/** --quiet: notices off in both shells (TMUX_RUN_NOTIFY=off). */
const quiet = process.argv.includes('--quiet');
const USER = fish ? 'trr-bench-fish' : 'trr-bench-bash';

const scope = await openScope();
const sshd = await startSshd({ users: [{ name: USER, shell: fish ? '/usr/bin/fish' : '/bin/bash' }] });
try {
  const u = sshd.users[0]!;
  const own = (p: string): void => chownSync(join(u.home, p), u.uid, u.uid);
  if (fish) {
    for (const d of ['.config', '.config/fish']) {
      mkdirSync(join(u.home, d), { recursive: true });
      own(d);
    }
    writeFileSync(
      join(u.home, '.config/fish/config.fish'),
      `set -g fish_greeting\nfunction fish_prompt; printf '$ '; end\n${quiet ? 'set -g TMUX_RUN_NOTIFY off\n' : ''}`,
    );
    own('.config/fish/config.fish');
  } else {
    const off = (screen ? 'export TMUX_RUN_NATIVE=off\n' : '') + (quiet ? 'TMUX_RUN_NOTIFY=off\n' : '');
    writeFileSync(join(u.home, '.bashrc'), `${readFileSync('/etc/skel/.bashrc', 'utf8')}\nPS1='$ '\n${off}`);
    own('.bashrc');
  }
  await run(process.execPath, [CLI_BIN, 'setup', '--remote', '-F', sshd.clientConfig, USER], {
    env: productEnv(scope.server),
  });
  const env = screen && !fish ? { TMUX_RUN_NATIVE: 'off' } : undefined;
  const local = fish
    ? await fishPane(scope.server, quiet ? { config: 'set -g TMUX_RUN_NOTIFY off\n' } : {})
    : await bashPane(scope.server, { ...(env ? { env } : {}), ...(quiet ? { rc: 'TMUX_RUN_NOTIFY=off' } : {}) });
  await (fish ? enrollFish(local) : enrollBash(local));
  const far = await scope.server.newPane();
  await far.type(`${process.execPath} ${CLI_BIN} ssh -F ${sshd.clientConfig} ${USER}`, { enter: true });
  const mcp = await scope.startMcp();
  const panes = await waitUntil(
    async () => {
      const l = await listedPanes(mcp.client);
      const a = l.find((p) => p.pane_id === local.id && p.host === null);
      const b = l.find((p) => p.pane_id === far.id && p.host !== null);
      return a && b ? { a, b } : undefined;
    },
    20_000,
    'both panes listed',
  );
  if (panes.a.editor_check !== panes.b.editor_check || (panes.b.editor_check === 'screen') !== screen)
    throw new Error(`the checks differ: local ${panes.a.editor_check}, far ${panes.b.editor_check}`);
  const time = async (p: typeof panes.a): Promise<number> => {
    const t0 = performance.now();
    const r = await callRun(mcp.client, p, 'true');
    if (r.isError) throw new Error(JSON.stringify(r.structured));
    return performance.now() - t0;
  };
  for (let i = 0; i < 10; i++) {
    await time(panes.a);
    await time(panes.b);
  }
  const loc: number[] = [];
  const rem: number[] = [];
  for (let i = 0; i < n; i++) {
    loc.push(await time(panes.a));
    await sideBySidePause();
    rem.push(await time(panes.b));
    await sideBySidePause();
  }
  const [ml, mr] = [median(loc), median(rem)];
  const load = (await run('uptime', [])).stdout.trim();
  process.stdout.write(
    `tmux_run of true, ${kind} (${panes.b.editor_check} check), ${n} pairs interleaved: local median ${ml.toFixed(2)} ms, far end over loopback ssh median ${mr.toFixed(2)} ms, difference ${(mr - ml).toFixed(2)} ms (ratio ${(mr / ml).toFixed(2)}); ${load}\n`,
  );
  await far.type('exit', { enter: true });
} finally {
  await sshd.close();
  await scope.close();
}
