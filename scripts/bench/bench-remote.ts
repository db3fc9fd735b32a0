// scripts/bench/bench-remote.ts: what a pane on another host costs per run (alone, not yet a
// section of `npm run bench`: `npx tsx scripts/bench/bench-remote.ts [--n 50]`, as root: it
// starts a private sshd and a remote user, test/remote/sshd.ts). The round trip of `true` through
// tmux-run-mcp in a local zsh pane and in a zsh at the far end of `tmux-run ssh` over loopback
// (the link kept open), interleaved call by call, 20 ms apart (bench-common.ts), so that both see
// the same machine; medians and the difference.
import { execFile } from 'node:child_process';
import { chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { enroll } from '../../lab/enrollment.js';
import { callRun, listedPanes } from '../../lab/mcp.js';
import { CLI_BIN, productEnv } from '../../lab/product.js';
import { openScope } from '../../lab/scope.js';
import { waitUntil } from '../../lab/waiting.js';
import { startSshd } from '../../test/remote/sshd.js';
import { median } from './bench-enroll.js';
import { sideBySidePause } from './bench-common.js';

const run = promisify(execFile);
const n = Number(process.argv[process.argv.indexOf('--n') + 1]) || 50;
const USER = 'trr-bench';

const scope = await openScope();
const sshd = await startSshd({ users: [{ name: USER, shell: '/usr/bin/zsh' }] });
try {
  const u = sshd.users[0]!;
  writeFileSync(join(u.home, '.zshrc'), "PROMPT='far> '\n");
  chownSync(join(u.home, '.zshrc'), u.uid, u.uid);
  await run(process.execPath, [CLI_BIN, 'setup', '--remote', '-F', sshd.clientConfig, USER], {
    env: productEnv(scope.server),
  });
  const local = await scope.server.newPane();
  await enroll(local);
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
    `tmux_run of true, ${n} pairs interleaved: local zsh median ${ml.toFixed(2)} ms, far-end zsh over loopback ssh median ${mr.toFixed(2)} ms, difference ${(mr - ml).toFixed(2)} ms (ratio ${(mr / ml).toFixed(2)}); ${load}\n`,
  );
  await far.type('exit', { enter: true });
} finally {
  await sshd.close();
  await scope.close();
}
