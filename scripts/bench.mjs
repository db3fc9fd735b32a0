#!/usr/bin/env node
// scripts/bench.mjs: tmux-run against its physical floor, in one run (`npm run bench`).
//
// Starts a private tmux server with real zsh panes, enrolls them by typing `source` into them
// (the bench is a test driver, like a person; the product never sends keys), drives
// tmux-run-mcp through the SDK's Client over stdio, and measures the floor (Node spawning
// /bin/sh directly) next to the product. Prints a table with each target's pass/miss and writes
// bench-results/latest.json. Exit status 0 even when a target is missed; 1 when the bench broke.
//
//   npm run bench                       # build, then run everything
//   node scripts/bench.mjs --quick      # fewer repetitions (a smoke test of the bench itself)
//   node scripts/bench.mjs --profile D  # also write .cpuprofile files of broker (D/broker) and helpers (D/helper)
//   BENCH_NOTIFY=off                    # panes do not draw run notices (on, the product's default, otherwise)
//
// Only node: built-ins are imported statically: `--floor` mode (the floor, in a fresh Node
// with the helper's flags) must not pay for the SDK.
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, totalmem, release, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SNIPPET = join(ROOT, 'shell', 'tmux-run.zsh');
const MCP_BIN = join(ROOT, 'bin', 'tmux-run-mcp.js');
/** The flags shell/tmux-run.zsh starts the helper with; the floor runs under the same ones. */
const HELPER_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=32'];
const BIG = 262144;
/** Idle time before a memory sample: V8's memory reducer collects after about 8 s without work. */
const IDLE_MS = 12000;
const BIG_SCRIPT = `head -c ${BIG} /dev/zero | tr '\\0' a`;

const now = () => performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const stats = (values) => ({
  median: percentile(values, 50),
  p90: percentile(values, 90),
  min: Math.min(...values),
  n: values.length,
});

// ------------------------------------------------------------------ the floor (child mode)

/** Spawns /bin/sh -c SCRIPT with piped stdout and stderr, collects stdout, waits for close. */
function spawnSh(script) {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const child = spawn('/bin/sh', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    child.stdout.on('data', (c) => (bytes += c.length));
    child.stderr.on('data', () => {});
    child.once('error', reject);
    child.once('close', (code) => resolve({ ms: now() - t0, bytes, code }));
  });
}

async function floorChild() {
  const [script, warm, n] = [process.argv[3], Number(process.argv[4]), Number(process.argv[5])];
  const out = [];
  for (let i = 0; i < warm + n; i++) {
    const r = await spawnSh(script);
    if (r.code !== 0) throw new Error(`floor script exited ${r.code}`);
    if (i >= warm) out.push(r.ms);
  }
  process.stdout.write(JSON.stringify(out));
}

/** The floor for `script`, measured in a fresh Node started with the helper's flags. */
function floor(script, warm, n) {
  const out = execFileSync(
    process.execPath,
    [...HELPER_FLAGS, fileURLToPath(import.meta.url), '--floor', script, String(warm), String(n)],
    {
      encoding: 'utf8',
      maxBuffer: 16 << 20,
    },
  );
  return JSON.parse(out);
}

if (process.argv[2] === '--floor') {
  await floorChild();
  process.exit(0);
}

// ------------------------------------------------------------------ options

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const PROFILE = argv.includes('--profile')
  ? resolve(argv[argv.indexOf('--profile') + 1] ?? 'bench-results/profiles')
  : undefined;
const N = QUICK
  ? {
      warm: 10,
      rtt: 40,
      floor: 60,
      bigWarm: 2,
      big: 10,
      windows: 2,
      window: 60,
      perPane: 2,
      leak: 200,
      enroll: 3,
      starts: 3,
    }
  : {
      warm: 30,
      rtt: 300,
      floor: 300,
      bigWarm: 5,
      big: 60,
      windows: 5,
      window: 200,
      perPane: 2,
      leak: 1000,
      enroll: 10,
      starts: 10,
    };

// ------------------------------------------------------------------ a private tmux server

function findExecutable(name) {
  for (const d of [...(process.env.PATH ?? '').split(delimiter), '/usr/local/bin', '/usr/bin', '/bin']) {
    if (d && existsSync(join(d, name))) return join(d, name);
  }
  throw new Error(`${name} not found`);
}
const TMUX = findExecutable('tmux');
const ZSH = findExecutable('zsh');

let root = tmpdir();
try {
  root = realpathSync(root);
} catch {
  root = '/tmp';
}
if (root.length > 40) root = '/tmp';
const base = mkdtempSync(join(root, 'tmux-run-bench-'));
chmodSync(base, 0o700);
const home = join(base, 'home');
const runDir = join(base, 'run');
const sock = join(base, 'sock');
mkdirSync(home, { mode: 0o700 });
mkdirSync(runDir, { mode: 0o700 });
writeFileSync(join(home, '.zshrc'), "PROMPT='$ '\n", { mode: 0o600 });
// Profiling: the snippet starts the helper with TMUX_RUN_NODE (it clears NODE_OPTIONS), so a wrapper adds the flags.
const NODE_WRAPPER = join(base, 'node-profiled');
if (PROFILE) {
  mkdirSync(join(PROFILE, 'helper'), { recursive: true });
  mkdirSync(join(PROFILE, 'broker'), { recursive: true });
  writeFileSync(
    NODE_WRAPPER,
    `#!/bin/sh\nexec '${process.execPath}' --cpu-prof --cpu-prof-dir='${join(PROFILE, 'helper')}' "$@"\n`,
    { mode: 0o700 },
  );
}

const PATHS = [
  ...new Set([
    dirname(process.execPath),
    '/usr/local/sbin',
    '/usr/local/bin',
    '/usr/sbin',
    '/usr/bin',
    '/sbin',
    '/bin',
  ]),
].join(delimiter);
const paneEnv = {
  HOME: home,
  PATH: PATHS,
  TERM: 'xterm-256color',
  LANG: 'C.UTF-8',
  ZDOTDIR: home,
  SHELL: ZSH,
  TMUX_RUN_DIR: runDir,
  XDG_STATE_HOME: join(home, '.local', 'state'),
  TMUX_RUN_NOTIFY: process.env.BENCH_NOTIFY === 'off' ? 'off' : 'on',
  ...(PROFILE ? { TMUX_RUN_NODE: NODE_WRAPPER } : {}),
};
const brokerEnv = {
  PATH: PATHS,
  HOME: home,
  TMUX_RUN_DIR: runDir,
  XDG_STATE_HOME: join(home, '.local', 'state'),
};

function tmux(args) {
  return new Promise((resolve, reject) => {
    execFile(TMUX, ['-S', sock, '-f', '/dev/null', ...args], { env: paneEnv }, (e, out, err) =>
      e ? reject(new Error(`tmux ${args[0]}: ${(err || e.message).trim()}`)) : resolve(out),
    );
  });
}

async function waitUntil(fn, timeoutMs, what, everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function atPrompt(id) {
  const out = await tmux([
    'display-message',
    '-p',
    '-t',
    id,
    '#{cursor_x} #{cursor_y}',
    ';',
    'capture-pane',
    '-p',
    '-t',
    id,
  ]);
  const [head, ...screen] = out.split('\n');
  const [x, y] = head.split(' ').map(Number);
  return (screen[y] ?? '').trimEnd() === '$' && x === 2;
}

async function newPane() {
  const id = (
    await tmux(['new-window', '-d', '-P', '-F', '#{pane_id}', '-t', 'bench:', '-c', home, '--', ZSH, '-i'])
  ).trim();
  await waitUntil(() => atPrompt(id), 10000, `a prompt in ${id}`);
  return id;
}

async function type(id, text) {
  await tmux(['send-keys', '-t', id, '-l', '--', text]);
  await tmux(['send-keys', '-t', id, 'Enter']);
}

// ------------------------------------------------------------------ /proc

const procStatus = (pid) => {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'latin1');
    return { rssKb: Number(/^VmRSS:\s*(\d+)/m.exec(text)?.[1]), fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
};
/** CPU time (user + system) a process has used so far, in ms (clock ticks of 10 ms). */
const cpuMs = (pid) => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return NaN;
  }
};
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return !/^\S+ \S+ Z/.test(readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/\(.*\)/s, 'x'));
  } catch {
    return false;
  }
};

// ------------------------------------------------------------------ the product

const { listEnrolled } = await import(join(ROOT, 'dist', 'src', 'registry.js'));
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');

const recordFiles = () => readdirSync(runDir).filter((n) => /^[a-f0-9]{32}\.json$/.test(n));

/**
 * Types `source SNIPPET` into a pane at its prompt; resolves the listing and the milliseconds
 * from the Enter key to a tmux-run listing that shows the pane (the listing's own cost included).
 */
async function enroll(id) {
  await waitUntil(() => atPrompt(id), 10000, `a prompt in ${id}`);
  const before = new Set(recordFiles());
  await tmux(['send-keys', '-t', id, '-l', '--', `source ${SNIPPET}`]);
  const t0 = now();
  await tmux(['send-keys', '-t', id, 'Enter']);
  await waitUntil(() => recordFiles().some((n) => !before.has(n)), 10000, `the enrollment record of ${id}`, 2);
  const listing = await waitUntil(
    async () => (await listEnrolled(runDir)).find((p) => p.pane_id === id),
    10000,
    `${id} to be listed`,
    2,
  );
  const ms = now() - t0;
  await waitUntil(() => atPrompt(id), 10000, `the prompt in ${id} after enrolling`);
  return { listing, ms };
}

async function unenroll(id, helperPid) {
  await type(id, 'tmux_run_unenroll');
  await waitUntil(() => !alive(helperPid), 10000, `helper ${helperPid} to exit`, 5);
  await waitUntil(
    async () => !(await listEnrolled(runDir)).some((p) => p.pane_id === id),
    10000,
    `${id} to leave the listing`,
  );
  await waitUntil(() => atPrompt(id), 10000, `the prompt in ${id} after unenrolling`);
}

function mcpTransport() {
  const args = [
    ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE, 'broker')}`] : []),
    MCP_BIN,
    '--enable-tool',
    'tmux_run',
  ];
  return new StdioClientTransport({ command: process.execPath, args, env: brokerEnv, stderr: 'pipe' });
}

async function startClient() {
  const transport = mcpTransport();
  const stderr = [];
  transport.stderr?.on('data', (c) => stderr.push(c.toString('utf8')));
  const client = new Client({ name: 'tmux-run-bench', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  return { client, transport, stderr };
}

let failures = 0;
async function run(client, pane, script, extra = {}) {
  const t0 = now();
  const r = await client.callTool({
    name: 'tmux_run',
    arguments: { target: { kind: 'pane', id: pane.pane_id, generation: pane.generation }, script, ...extra },
  });
  const ms = now() - t0;
  const s = r.structuredContent;
  if (r.isError || !s?.ok || s.data.completion.exit_status !== 0) {
    failures++;
    if (failures <= 5)
      process.stderr.write(
        `bench: a run failed: ${JSON.stringify(s?.error ?? s?.data?.completion ?? r).slice(0, 300)}\n`,
      );
    if (failures > 20) throw new Error('too many failed runs; the bench is not measuring what it should');
  }
  return { ms, r };
}

/** Closed loop: `perPane` callers per pane keep calling until `total` runs are done; runs/s. */
async function sustained(client, panes, perPane, total) {
  let left = total;
  const t0 = now();
  const worker = async (pane) => {
    while (left > 0) {
      left--;
      await run(client, pane, 'true');
    }
  };
  await Promise.all(panes.flatMap((p) => Array.from({ length: perPane }, () => worker(p))));
  return total / ((now() - t0) / 1000);
}

function versionOf(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).trim().split('\n')[0];
  } catch {
    return 'unknown';
  }
}

// ------------------------------------------------------------------ the run

const m = { loadavg_start: loadavg().map((x) => Number(x.toFixed(2))) };
const clients = [];
const progress = (s) => process.stderr.write(`bench: ${s}\n`);
let exitCode = 0;
try {
  await tmux([
    'new-session',
    '-d',
    '-x',
    '200',
    '-y',
    '50',
    '-s',
    'bench',
    '-n',
    'placeholder',
    '-c',
    home,
    'sleep',
    '2147483647',
  ]);
  const panes = [];
  for (let i = 0; i < 4; i++) panes.push(await newPane());

  progress(`enrollment, ${N.enroll} times on ${panes[0]}`);
  const enrollMs = [];
  for (let i = 0; i < N.enroll; i++) {
    const { listing, ms } = await enroll(panes[0]);
    enrollMs.push(ms);
    await unenroll(panes[0], listing.helper_pid);
  }
  m.enroll_ms = stats(enrollMs);
  const listings = [];
  for (const id of panes) listings.push((await enroll(id)).listing);
  const helperPid = listings[0].helper_pid;
  const helperStart = procStatus(helperPid);

  progress('server start to tools/list');
  const nodeStart = [];
  for (let i = 0; i < N.starts; i++) {
    const t0 = now();
    await new Promise((r) => spawn(process.execPath, ['-e', ''], { stdio: 'ignore' }).once('exit', r));
    nodeStart.push(now() - t0);
  }
  const startMs = [];
  for (let i = 0; i < N.starts; i++) {
    const transport = mcpTransport();
    const client = new Client({ name: 'tmux-run-bench', version: '1.0.0' });
    const t0 = now();
    await client.connect(transport);
    await client.listTools();
    startMs.push(now() - t0);
    await client.close();
  }
  m.node_start_ms = stats(nodeStart);
  m.server_start_ms = stats(startMs);

  const main = await startClient();
  clients.push(main);
  const c = main.client;
  const one = listings[0];

  progress(`round trip for true: ${N.warm} warm-up, ${N.rtt} measured; floor ${N.floor} spawns`);
  for (let i = 0; i < N.warm; i++) await run(c, one, 'true');
  const helperWarm = procStatus(helperPid);
  m.floor_true_ms = stats(floor('true', 20, N.floor));
  const rtt = [];
  const tmuxPid = Number((await tmux(['display-message', '-p', '#{pid}'])).trim());
  const who = { helper: one.helper_pid, zsh: one.shell_pid, broker: main.transport.pid, tmux: tmuxPid };
  const cpu0 = Object.fromEntries(Object.entries(who).map(([k, pid]) => [k, cpuMs(pid)]));
  const self0 = process.cpuUsage();
  for (let i = 0; i < N.rtt; i++) rtt.push((await run(c, one, 'true')).ms);
  const self1 = process.cpuUsage(self0);
  m.run_true_ms = stats(rtt);
  // CPU each process spent per run: unlike wall time, barely moved by whatever else the machine runs.
  m.cpu_ms_per_run = Object.fromEntries(Object.entries(who).map(([k, pid]) => [k, (cpuMs(pid) - cpu0[k]) / N.rtt]));
  m.cpu_ms_per_run.client = (self1.user + self1.system) / 1000 / N.rtt;
  m.ratio_true = m.run_true_ms.median / m.floor_true_ms.median;

  // Memory and descriptors: after the first N.leak runs on the pane (warm-up and round trips
  // included), then after N.leak more, which must not have grown either. Each sample follows
  // IDLE_MS without work, so that V8's memory reducer has collected: resident memory right
  // after a burst says more about when the last collection happened than about a leak.
  progress(
    `helper memory and descriptors: after ${N.leak} runs, then after ${N.leak} more (each then ${IDLE_MS / 1000} s idle)`,
  );
  const runsOn = async (n) => {
    let left = n;
    const worker = async () => {
      while (left > 0) {
        left--;
        await run(c, one, 'true');
      }
    };
    await Promise.all(Array.from({ length: N.perPane }, worker));
    await sleep(IDLE_MS);
    return procStatus(helperPid);
  };
  const after1 = await runsOn(N.leak - N.warm - N.rtt);
  const after2 = await runsOn(N.leak);
  m.helper = {
    pid: helperPid,
    runs: N.leak,
    rss_kb_start: helperStart.rssKb,
    rss_kb_after_warmup: helperWarm.rssKb,
    rss_kb_after: after1.rssKb,
    rss_kb_after_more: after2.rssKb,
    fds_start: helperStart.fds,
    fds_after: after1.fds,
    fds_after_more: after2.fds,
  };

  progress(`sustained: ${N.windows} windows of ${N.window} runs, ${N.perPane} callers per pane`);
  const r1 = [];
  const r4 = [];
  for (let w = 0; w < N.windows; w++) {
    r1.push(await sustained(c, [one], N.perPane, N.window));
    r4.push(await sustained(c, listings, N.perPane, N.window));
  }
  m.rate_one_pane = stats(r1);
  m.rate_four_panes = stats(r4);
  m.rate_ratio = m.rate_four_panes.median / m.rate_one_pane.median;

  progress(`${BIG} bytes of output: ${N.big} measured; floor the same`);
  for (let i = 0; i < N.bigWarm; i++) await run(c, one, BIG_SCRIPT, { stdout_limit: BIG });
  m.floor_big_ms = stats(floor(BIG_SCRIPT, 5, N.big));
  const big = [];
  for (let i = 0; i < N.big; i++) {
    const { ms, r } = await run(c, one, BIG_SCRIPT, { stdout_limit: BIG });
    if (r.structuredContent?.data?.stdout?.bytes !== BIG) throw new Error(`expected ${BIG} bytes of stdout`);
    big.push(ms);
  }
  m.run_big_ms = stats(big);
  m.ratio_big = m.run_big_ms.median / m.floor_big_ms.median;

  m.helper.rss_kb_after_big = procStatus(helperPid).rssKb;
  // Large outputs leave garbage that V8 collects when the helper goes idle (its memory reducer
  // runs after some seconds without work); the helper's malloc settings then give it back.
  progress(`helper memory after ${IDLE_MS / 1000} s idle`);
  await sleep(IDLE_MS);
  m.helper.rss_kb_after_big_idle = procStatus(helperPid).rssKb;
  m.broker_rss_kb = procStatus(main.transport.pid)?.rssKb;
  m.failed_runs = failures;
  m.loadavg_end = loadavg().map((x) => Number(x.toFixed(2)));
} catch (e) {
  process.stderr.write(`bench: ${e.stack ?? e}\n`);
  exitCode = 1;
} finally {
  for (const { client } of clients) await client.close().catch(() => {});
  await tmux(['kill-server']).catch(() => {});
  const helpers = [];
  for (const name of existsSync(runDir) ? readdirSync(runDir) : []) {
    if (!name.endsWith('.json')) continue;
    try {
      helpers.push(JSON.parse(readFileSync(join(runDir, name), 'utf8')).helper_pid);
    } catch {
      /* gone */
    }
  }
  await waitUntil(() => helpers.every((p) => !alive(p)), 5000, 'helpers to exit').catch(() => {});
  rmSync(base, { recursive: true, force: true });
}
if (exitCode !== 0) process.exit(exitCode);

// ------------------------------------------------------------------ report

const MB = 1024;
const h = m.helper;
const targets = [
  {
    name: 'round trip for true vs spawn floor',
    target: '<= 1.5x',
    value: m.ratio_true,
    pass: m.ratio_true <= 1.5,
    show: `${m.ratio_true.toFixed(2)}x`,
  },
  {
    name: 'runs/s, one pane',
    target: '>= 100',
    value: m.rate_one_pane.median,
    pass: m.rate_one_pane.median >= 100,
    show: m.rate_one_pane.median.toFixed(0),
  },
  // "1.5x that across 4 panes" read literally: 1.5 times the 100 runs/s asked of one pane.
  {
    name: 'runs/s, 4 panes in parallel',
    target: '>= 150',
    value: m.rate_four_panes.median,
    pass: m.rate_four_panes.median >= 150,
    show: m.rate_four_panes.median.toFixed(0),
  },
  // Read strictly: 1.5 times what one pane measured (CPU-bound on 2 cores: see BENCHMARKS.md).
  {
    name: 'runs/s, 4 panes vs one pane',
    target: '>= 1.5x',
    value: m.rate_ratio,
    pass: m.rate_ratio >= 1.5,
    show: `${m.rate_ratio.toFixed(2)}x`,
  },
  {
    name: `${BIG} bytes vs its floor`,
    target: '<= 1.5x',
    value: m.ratio_big,
    pass: m.ratio_big <= 1.5,
    show: `${m.ratio_big.toFixed(2)}x`,
  },
  {
    name: 'enrollment (source to listed)',
    target: '< 300 ms',
    value: m.enroll_ms.median,
    pass: m.enroll_ms.median < 300,
    show: `${m.enroll_ms.median.toFixed(0)} ms`,
  },
  {
    name: `helper RSS after ${h.runs} runs`,
    target: '< 45 MB',
    value: h.rss_kb_after,
    pass: h.rss_kb_after < 45 * MB,
    show: `${(h.rss_kb_after / MB).toFixed(1)} MB`,
  },
  // RSS moves with the garbage collector; growth beyond 1 MB over the next runs counts as a leak.
  {
    name: `helper RSS growth over ${h.runs} more runs`,
    target: '<= 1 MB',
    value: h.rss_kb_after_more - h.rss_kb_after,
    pass: h.rss_kb_after_more - h.rss_kb_after <= MB,
    show: `${((h.rss_kb_after_more - h.rss_kb_after) / MB).toFixed(2)} MB`,
  },
  {
    name: `helper descriptors over ${2 * h.runs} runs`,
    target: 'no growth',
    value: h.fds_after_more - h.fds_start,
    pass: h.fds_after <= h.fds_start && h.fds_after_more <= h.fds_start,
    show: `${h.fds_start} -> ${h.fds_after} -> ${h.fds_after_more}`,
  },
  {
    name: 'server start to tools/list',
    target: '< 300 ms',
    value: m.server_start_ms.median,
    pass: m.server_start_ms.median < 300,
    show: `${m.server_start_ms.median.toFixed(0)} ms`,
  },
];

const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const rows = [
  ['floor: spawn /bin/sh -c true (ms)', m.floor_true_ms, 2],
  ['tmux_run true, one pane (ms)', m.run_true_ms, 2],
  ['runs/s, one pane', m.rate_one_pane, 0],
  ['runs/s, 4 panes in parallel', m.rate_four_panes, 0],
  [`floor: spawn ${BIG} bytes (ms)`, m.floor_big_ms, 2],
  [`tmux_run ${BIG} bytes (ms)`, m.run_big_ms, 2],
  ['enrollment: source to listed (ms)', m.enroll_ms, 0],
  ['node -e "" start to exit (ms)', m.node_start_ms, 0],
  ['tmux-run-mcp start to tools/list (ms)', m.server_start_ms, 0],
];
const lines = [];
lines.push(`| measure | median | p90 | n |`, `| --- | ---: | ---: | ---: |`);
for (const [name, s, d] of rows) lines.push(`| ${name} | ${f(s.median, d)} | ${f(s.p90, d)} | ${s.n} |`);
lines.push(
  `| helper RSS (MB): start / ${N.warm} runs / ${h.runs} runs + ${IDLE_MS / 1000} s idle / ${2 * h.runs} runs + ${IDLE_MS / 1000} s idle | ${[h.rss_kb_start, h.rss_kb_after_warmup, h.rss_kb_after, h.rss_kb_after_more].map((k) => (k / MB).toFixed(1)).join(' / ')} | | |`,
  `| helper RSS (MB): right after the runs of ${BIG} bytes (and the sustained ones) / then ${IDLE_MS / 1000} s idle | ${[h.rss_kb_after_big, h.rss_kb_after_big_idle].map((k) => (k / MB).toFixed(1)).join(' / ')} | | |`,
  `| helper descriptors: start / ${h.runs} runs / ${2 * h.runs} runs | ${h.fds_start} / ${h.fds_after} / ${h.fds_after_more} | | |`,
  `| CPU per run of \`true\` (ms): helper / zsh / broker / client / tmux server | ${['helper', 'zsh', 'broker', 'client', 'tmux'].map((k) => f(m.cpu_ms_per_run[k], 2)).join(' / ')} | | |`,
);
lines.push('', `| target | goal | measured | result |`, `| --- | --- | ---: | --- |`);
for (const t of targets) lines.push(`| ${t.name} | ${t.target} | ${t.show} | ${t.pass ? 'pass' : 'MISS'} |`);

const machine = {
  nproc: cpus().length,
  cpu: cpus()[0]?.model ?? 'unknown',
  memory_mb: Math.round(totalmem() / 2 ** 20),
  kernel: release(),
  node: process.version,
  tmux: versionOf(TMUX, ['-V']),
  zsh: versionOf(ZSH, ['--version']),
};
const commit = versionOf('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']);
const dirty = versionOf('git', ['-C', ROOT, 'status', '--porcelain', '--untracked-files=no']) !== '';
process.stdout.write(
  `tmux-run bench (${commit}${dirty ? '+dirty' : ''}, ${QUICK ? 'quick, ' : ''}notices ${paneEnv.TMUX_RUN_NOTIFY}): ${machine.nproc} cores, ${machine.memory_mb} MB, node ${machine.node}, ${machine.tmux}, ${machine.zsh}; load average ${m.loadavg_start[0]} at start, ${m.loadavg_end[0]} at end\n\n${lines.join('\n')}\n`,
);
if (m.failed_runs) process.stdout.write(`\n${m.failed_runs} runs failed during the bench\n`);

mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
const out = join(ROOT, 'bench-results', 'latest.json');
writeFileSync(
  out,
  JSON.stringify(
    {
      when: new Date().toISOString(),
      commit,
      dirty,
      quick: QUICK,
      notices: paneEnv.TMUX_RUN_NOTIFY,
      config: N,
      machine,
      metrics: m,
      targets: targets.map(({ show: _show, ...t }) => t),
    },
    null,
    2,
  ) + '\n',
);
process.stdout.write(`\nwrote ${out}${PROFILE ? `; profiles in ${PROFILE}` : ''}\n`);
