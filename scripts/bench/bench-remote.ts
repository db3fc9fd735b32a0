// scripts/bench/bench-remote.ts: what a pane on another host costs per run (a section of `npm run
// bench`, also runnable alone: `npx tsx scripts/bench/bench-remote.ts [--n 60]`; as root, with
// sshd and ssh: it starts a private sshd and a remote user, test/remote/sshd.ts; without them the
// section is skipped and says why; `--shell bash` for bash with its builtin, `--shell
// fish|bash-screen` for a shell on the screen check,
// whose far pane the relay reads: src/remote/relay-screen.ts). The round trip of `true` through
// tmux-run-mcp in a local pane and at the far end of `tmux-run ssh` over loopback (the link kept
// open), the same shell on both sides, each with a start-up file of one prompt line and notices
// as the bench's, interleaved call by call (the order swapped each pair), 20 ms apart
// (bench-common.ts), so that both see the same machine; medians, ratio and difference. bash-screen
// is bash without its builtin (TMUX_RUN_NATIVE=off on both sides).
//
// Not quite like for like, by design: a local helper publishes the pane's status file in the local
// registry when a run starts and ends (helper/status.ts), which a listing reads instead of asking;
// the far helper can reach nothing local, so it writes none (a listing asks it through the relay).
// The section times that write alone (writeStatus into a private directory) to say what it is.
// `--trace` (alone only) starts the broker with TMUX_RUN_TRACE and prints each stage's median for
// the local pane and the far one (src/core/protocol/trace.ts): where the difference goes.
import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { enroll } from '../../lab/enrollment.js';
import { callRun, listedPanes } from '../../lab/mcp.js';
import { CLI_BIN, productEnv } from '../../lab/product.js';
import { openScope } from '../../lab/scope.js';
import { waitUntil } from '../../lab/waiting.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { sshdAvailable, startSshd } from '../../test/remote/sshd.js';
import { writeStatus } from '../../src/core/enrollment/pane-status.js';
import { bashPane, enrollBash } from '../../test/bash/support.js';
import { enrollFish, fishPane } from '../../test/fish/support.js';
import type { Pane } from '../../lab/pane.js';
import type { TmuxServer } from '../../lab/server.js';
import { median } from './bench-enroll.js';
import { STAGES, type Stamps } from '../../src/core/protocol/trace.js';
import { NOTIFY, sideBySidePause } from './bench-common.js';

const run = promisify(execFile);

/** The shell on both sides (bash: with its builtin, exact; bash-screen: without it, on the screen check). */
export type RemoteShell = 'zsh' | 'fish' | 'bash' | 'bash-screen';

/** Per shell: the remote user, its login shell and start-up file, and the local pane enrolled beside it. */
const SHELLS: Record<
  RemoteShell,
  { user: string; login: string; rc: () => [string, string]; local: (server: TmuxServer) => Promise<Pane> }
> = {
  zsh: {
    user: 'trr-bench',
    login: '/usr/bin/zsh',
    rc: () => ['.zshrc', `PROMPT='$ '\nTMUX_RUN_NOTIFY=${NOTIFY}\n`],
    local: async (server) => {
      const p = await server.newPane();
      await enroll(p);
      return p;
    },
  },
  fish: {
    user: 'trr-bench-fish',
    login: '/usr/bin/fish',
    rc: () => [
      '.config/fish/config.fish',
      `set -g fish_greeting\nfunction fish_prompt; printf '$ '; end\nset -g TMUX_RUN_NOTIFY ${NOTIFY}\n`,
    ],
    local: async (server) => {
      const p = await fishPane(server, { config: `set -g TMUX_RUN_NOTIFY ${NOTIFY}\n` });
      await enrollFish(p);
      return p;
    },
  },
  bash: {
    user: 'trr-bench-bash',
    login: '/bin/bash',
    rc: () => ['.bashrc', `${readFileSync('/etc/skel/.bashrc', 'utf8')}\nPS1='$ '\nTMUX_RUN_NOTIFY=${NOTIFY}\n`],
    local: async (server) => {
      const p = await bashPane(server, { rc: `TMUX_RUN_NOTIFY=${NOTIFY}` });
      await enrollBash(p);
      return p;
    },
  },
  'bash-screen': {
    user: 'trr-bench-bashs',
    login: '/bin/bash',
    rc: () => [
      '.bashrc',
      `${readFileSync('/etc/skel/.bashrc', 'utf8')}\nPS1='$ '\nexport TMUX_RUN_NATIVE=off\nTMUX_RUN_NOTIFY=${NOTIFY}\n`,
    ],
    local: async (server) => {
      const p = await bashPane(server, { env: { TMUX_RUN_NATIVE: 'off' }, rc: `TMUX_RUN_NOTIFY=${NOTIFY}` });
      await enrollBash(p);
      return p;
    },
  },
};

export type RemoteCost =
  | { skipped: string; shell?: RemoteShell }
  | {
      shell?: RemoteShell;
      n: number;
      local_ms: number[];
      remote_ms: number[];
      /** One status file write of a local helper (µs, median of many). */
      status_write_us: number;
      loadavg: number[];
      /** With a trace: each stage's median (ms since the stage before), local and far. */
      stages?: Record<string, { local: number; far: number }>;
    };

/** One status write, as a local helper makes it at a run's start and end: the median of `k` (µs). */
function statusWriteUs(k: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'tmux-run-bench-status-'));
  try {
    const times: number[] = [];
    for (let i = 0; i < k; i++) {
      const t0 = performance.now();
      writeStatus(dir, 'e'.repeat(32), {
        version: 1,
        generation: 'g'.repeat(32),
        helper_pid: process.pid,
        helper_start: '1',
        run: i % 2 ? null : 'running',
        queued: 0,
      });
      times.push((performance.now() - t0) * 1000);
    }
    return median(times);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each stage's median over the measured calls (`sides[i]` the pane of the trace file's line i), local and far. */
function stageMedians(
  traceFile: string,
  sides: string[],
  from: number,
): Record<string, { local: number; far: number }> {
  const lines = readFileSync(traceFile, 'utf8').split('\n').filter(Boolean);
  if (lines.length !== sides.length) throw new Error(`${lines.length} trace lines for ${sides.length} calls`);
  const per: Record<string, { local: number[]; far: number[] }> = {};
  lines.slice(from).forEach((line, i) => {
    const at = (JSON.parse(line) as { at: Stamps }).at;
    const side = sides[from + i] === 'a' ? 'local' : 'far';
    let prev: number | undefined;
    for (const s of STAGES) {
      const v = at[s];
      if (v === undefined) continue;
      if (prev !== undefined) (per[s] ??= { local: [], far: [] })[side].push(v - prev);
      prev = v;
    }
  });
  return Object.fromEntries(Object.entries(per).map(([s, v]) => [s, { local: median(v.local), far: median(v.far) }]));
}

export async function remoteCost(n: number, shell: RemoteShell = 'zsh', traceFile?: string): Promise<RemoteCost> {
  const skip = sshdAvailable();
  if (skip) return { skipped: skip, shell };
  const S = SHELLS[shell];
  const scope = await openScope({ env: { TMUX_RUN_NOTIFY: NOTIFY } });
  const sshd = await startSshd({ users: [{ name: S.user, shell: S.login }], acceptEnv: 'fedora' });
  try {
    const u = sshd.users[0]!;
    const [file, text] = S.rc();
    // The start-up file and the folders it is in, the user's own.
    let dir = '';
    for (const part of file.split('/').slice(0, -1)) {
      dir = join(dir, part);
      mkdirSync(join(u.home, dir), { recursive: true });
      chownSync(join(u.home, dir), u.uid, u.uid);
    }
    writeFileSync(join(u.home, file), text);
    chownSync(join(u.home, file), u.uid, u.uid);
    await run(process.execPath, [CLI_BIN, 'setup', '--remote', '-F', sshd.clientConfig, S.user], {
      env: productEnv(scope.server),
    });
    const local = await S.local(scope.server);
    const far = await scope.server.newPane();
    await far.type(`${process.execPath} ${CLI_BIN} ssh -F ${sshd.clientConfig} ${S.user}`, { enter: true });
    const mcp = await scope.startMcp({
      clientName: 'tmux-run-bench',
      ...(traceFile ? { env: { TMUX_RUN_TRACE: traceFile } } : {}),
    });
    const sides: string[] = [];
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
    if (panes.a.editor_check !== panes.b.editor_check)
      throw new Error(`the checks differ: local ${panes.a.editor_check}, far ${panes.b.editor_check}`);
    const time = async (p: typeof panes.a): Promise<number> => {
      sides.push(p === panes.a ? 'a' : 'b');
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
      for (const which of i % 2 ? ['b', 'a'] : ['a', 'b']) {
        if (which === 'a') loc.push(await time(panes.a));
        else rem.push(await time(panes.b));
        await sideBySidePause();
      }
    }
    await far.type('exit', { enter: true });
    return {
      shell,
      n,
      local_ms: loc,
      remote_ms: rem,
      status_write_us: statusWriteUs(200),
      loadavg: loadavg().map((x) => Number(x.toFixed(2))),
      ...(traceFile ? { stages: stageMedians(traceFile, sides, 20) } : {}),
    };
  } finally {
    await sshd.close();
    await scope.close();
  }
}

/** Table rows (markdown) for the bench's report. */
export function remoteCostLines(c: RemoteCost): string[] {
  const shell = c.shell ?? 'zsh';
  const name = shell === 'bash-screen' ? 'bash on the screen check' : shell;
  if ('skipped' in c)
    return [`| a remote pane's run of true vs a local pane's (${name}) | skipped: ${c.skipped} | | |`];
  const [l, r] = [median(c.local_ms), median(c.remote_ms)];
  // Call i of each side ran next to the other's (the order swapped each pair): the median of the
  // paired differences moves less with the machine's load than the difference of the medians.
  const paired = median(c.remote_ms.map((x, i) => x - c.local_ms[i]!));
  const traced = Object.entries(c.stages ?? {}).map(
    ([s, m]) =>
      `| ${s} (ms, median, local / far) | ${m.local.toFixed(3)} / ${m.far.toFixed(3)} (${m.far - m.local >= 0 ? '+' : ''}${(m.far - m.local).toFixed(3)}) | | |`,
  );
  return [
    ...traced,
    `| tmux_run of true: local ${name} / ${name} at the far end of tmux-run ssh over loopback (ms, medians, n=${c.n} each, interleaved; load ${c.loadavg[0]}) | ${l.toFixed(2)} / ${r.toFixed(2)} (x${(r / l).toFixed(2)}, ${r - l >= 0 ? '+' : ''}${(r - l).toFixed(2)} ms; paired differences' median ${paired >= 0 ? '+' : ''}${paired.toFixed(2)} ms) | <= +1 ms | ${r - l <= 1 ? 'pass' : 'MISS'} |`,
    ...(shell === 'zsh'
      ? [
          `| one status file write of a local helper, two per run; a far helper writes none (us, median) | ${c.status_write_us.toFixed(0)} | | |`,
        ]
      : []),
  ];
}

// Alone: `npx tsx scripts/bench/bench-remote.ts [--n N] [--shell zsh|fish|bash|bash-screen] [--trace]` prints the rows and the JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf('--n');
  const n = i >= 0 ? Number(process.argv[i + 1]) : 60;
  const root = makeRunRoot('tmux-run-bench-remote-');
  process.env[RUN_ROOT_VAR] = root;
  try {
    const j = process.argv.indexOf('--shell');
    const shell = (j >= 0 ? process.argv[j + 1] : 'zsh') as RemoteShell;
    if (!(shell in SHELLS)) throw new Error('--shell zsh, fish, bash or bash-screen');
    const c = await remoteCost(n, shell, process.argv.includes('--trace') ? join(root, 'trace.jsonl') : undefined);
    console.log(remoteCostLines(c).join('\n'));
    console.log(JSON.stringify(c));
  } finally {
    await sweepRunRoot(root);
  }
}
