// scripts/bench.ts: tmux-run against its physical floor, in one run (`npm run bench`).
//
// Starts a private tmux server with real zsh panes on the test harness (test/support), enrolls
// them by typing `source` into them (the bench is a test driver, like a person; the product
// never sends keys), drives tmux-run-mcp through the SDK's Client over stdio, and measures the
// floor (Node spawning /bin/sh directly) next to the product. Prints a table with each target's
// pass/miss and writes bench-results/latest.json. Exit status 0 even when a target is missed; 1
// when the bench broke.
//
//   npm run bench                          # build, then run everything
//   npx tsx scripts/bench.ts --quick       # fewer repetitions (a smoke test of the bench itself)
//   npx tsx scripts/bench.ts --profile D   # also write .cpuprofile files of broker (D/broker) and helpers (D/helper)
//   BENCH_NOTIFY=off                       # panes do not draw run notices (on, the product's default, otherwise)
//
// The per-stage table comes from a second broker started with TMUX_RUN_TRACE (src/protocol/trace.ts):
// each traced call's stamps, plus the client's own (call sent, result in hand) on the same clock.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { listEnrolled, type PaneListing } from '../src/broker/registry.js';
import { callRun, type McpHandle, type McpOptions } from '../test/support/mcp.js';
import type { Pane } from '../test/support/pane.js';
import { cpuMs, openDescriptors, processAlive, rssKiB } from '../test/support/processes.js';
import { ROOT, SOURCE } from '../test/support/product.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../test/support/run-root.js';
import { openScope, type Scope } from '../test/support/scope.js';
import { tmuxBinary, zshBinary } from '../test/support/tmux-command.js';
import { sleep, waitUntil } from '../test/support/waiting.js';
import { STAGES, monotonicMs, type Stamps } from '../src/protocol/trace.js';
import { enrollCost, enrollCostLines, enrollTargets, memoryOf, type EnrollCost, type Memory } from './bench-enroll.js';
import { fishCost, fishCostLines, type FishCost } from './bench-fish.js';
import { PACE_MS, wallsBench, wallsBenchLines, type WallsBench } from './bench-walls.js';
import { watchCost, watchCostLines, type WatchCost } from './bench-watch.js';
import { promptCost, promptCostLines, type PromptCost } from './bench-zsh.js';
import { shellsCost, shellsCostLines, type ShellsCost } from './bench-shells.js';

/** The flags shell/tmux-run.zsh starts the helper with; the floor runs under the same ones. */
const HELPER_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=32'];
const BIG = 262144;
/** Idle time before a memory sample: V8's memory reducer collects after about 8 s without work. */
const IDLE_MS = 12000;
const BIG_SCRIPT = `head -c ${BIG} /dev/zero | tr '\\0' a`;
const MID = 65536;
const MID_SCRIPT = `head -c ${MID} /dev/zero | tr '\\0' a`;

const now = (): number => performance.now();

interface Stats {
  median: number;
  p90: number;
  min: number;
  n: number;
}

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
const stats = (values: number[]): Stats => ({
  median: percentile(values, 50),
  p90: percentile(values, 90),
  min: Math.min(...values),
  n: values.length,
});

// ------------------------------------------------------------------ the floor

// The floor runs in a fresh Node started with the helper's flags and nothing else loaded (no
// TypeScript loader, no SDK): plain JavaScript given to `node -e`. It spawns /bin/sh -c SCRIPT
// with piped stdout and stderr, collects stdout, waits for close, and prints the times as JSON.
const FLOOR_CHILD = `
const { spawn } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const [script, warm, n] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
function spawnSh() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/bin/sh', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    child.stdout.on('data', (c) => (bytes += c.length));
    child.stderr.on('data', () => {});
    child.once('error', reject);
    child.once('close', (code) => resolve({ ms: performance.now() - t0, bytes, code }));
  });
}
(async () => {
  const out = [];
  for (let i = 0; i < warm + n; i++) {
    const r = await spawnSh();
    if (r.code !== 0) throw new Error('floor script exited ' + r.code);
    if (i >= warm) out.push(r.ms);
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  process.stderr.write(String(e.stack || e) + '\\n');
  process.exit(1);
});
`;

/** The floor for `script`: `n` spawn times after `warm` unmeasured ones. */
function floor(script: string, warm: number, n: number): number[] {
  const out = execFileSync(process.execPath, [...HELPER_FLAGS, '-e', FLOOR_CHILD, script, String(warm), String(n)], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  });
  return JSON.parse(out) as number[];
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
const NOTIFY = process.env.BENCH_NOTIFY === 'off' ? 'off' : 'on';

// ------------------------------------------------------------------ /proc

interface ProcStatus {
  rssKb: number;
  fds: number;
}

/** Resident memory and open descriptors of pid, or undefined when it is gone. */
function procStatus(pid: number): ProcStatus | undefined {
  try {
    return { rssKb: rssKiB(pid), fds: openDescriptors(pid) };
  } catch {
    return undefined;
  }
}

/** procStatus of a process that must be there. */
function mustStatus(pid: number): ProcStatus {
  const s = procStatus(pid);
  if (s === undefined) throw new Error(`process ${pid} is gone`);
  return s;
}

// ------------------------------------------------------------------ the product

/**
 * Types `source SNIPPET` into a pane at its prompt; resolves the listing and the milliseconds
 * from the Enter key to a tmux-run listing that shows the pane (the listing's own cost included).
 */
async function enroll(pane: Pane, registryDir: string): Promise<{ listing: PaneListing; ms: number }> {
  const recordFiles = (): string[] => readdirSync(registryDir).filter((n) => /^[a-f0-9]{32}\.json$/.test(n));
  await pane.waitForPrompt();
  const before = new Set(recordFiles());
  await pane.type(SOURCE);
  const t0 = now();
  await pane.type('', { enter: true });
  await waitUntil(() => recordFiles().some((n) => !before.has(n)), 10000, `the enrollment record of ${pane.id}`, 2);
  const listing = await waitUntil(
    async () => (await listEnrolled(registryDir)).find((p) => p.pane_id === pane.id),
    10000,
    `${pane.id} to be listed`,
    2,
  );
  const ms = now() - t0;
  await pane.waitForPrompt();
  return { listing, ms };
}

async function unenroll(pane: Pane, registryDir: string, helperPid: number): Promise<void> {
  await pane.type('tmux_run_unenroll', { enter: true });
  await waitUntil(() => !processAlive(helperPid), 10000, `helper ${helperPid} to exit`, 5);
  await waitUntil(
    async () => !(await listEnrolled(registryDir)).some((p) => p.pane_id === pane.id),
    10000,
    `${pane.id} to leave the listing`,
  );
  await pane.waitForPrompt();
}

/** What the bench reads of a tmux_run result. */
interface RunOutcome {
  ok?: boolean;
  error?: unknown;
  data?: {
    completion?: { exit_status?: number | null };
    stdout?: { bytes?: number };
    authorization?: { run_id?: string };
  };
}

// ------------------------------------------------------------------ the per-stage trace

/** Clients whose broker traces its calls; the client's own stamps of their runs, by run id. */
const tracing = new Set<Client>();
const clientStamps = new Map<string, { call: number; result: number }>();
/** The stages of a traced call, the client's two at either end. */
const TRACE_STAGES = ['call', ...STAGES, 'result'] as const;
type TraceStage = (typeof TRACE_STAGES)[number];

interface StageTable {
  /** Each stage's cost (ms since the stage before it), over the traced runs. */
  stages: Partial<Record<TraceStage, Stats>>;
  sum_of_medians: number;
  /** The same runs end to end, as the client saw them. */
  end_to_end: Stats;
  n: number;
}

/** The per-stage costs of the traced runs `ids`, from the trace file and the client's stamps. */
function stageTable(traceFile: string, ids: string[]): StageTable {
  const want = new Set(ids);
  const per = new Map<TraceStage, number[]>(TRACE_STAGES.map((s) => [s, []]));
  const ends: number[] = [];
  const lines = existsSync(traceFile) ? readFileSync(traceFile, 'utf8').split('\n').filter(Boolean) : [];
  for (const line of lines) {
    const t = JSON.parse(line) as { run_id?: string; at: Stamps };
    if (t.run_id === undefined || !want.has(t.run_id)) continue;
    const c = clientStamps.get(t.run_id);
    const at: Partial<Record<TraceStage, number>> = { ...t.at, ...(c ?? {}) };
    let prev: number | undefined;
    for (const s of TRACE_STAGES) {
      const v = at[s];
      if (v === undefined) continue;
      if (prev !== undefined) per.get(s)!.push(v - prev);
      prev = v;
    }
    if (c) ends.push(c.result - c.call);
  }
  const stages: Partial<Record<TraceStage, Stats>> = {};
  let sum = 0;
  for (const [s, v] of per) {
    if (v.length === 0) continue;
    stages[s] = stats(v);
    sum += stages[s].median;
  }
  return { stages, sum_of_medians: sum, end_to_end: stats(ends), n: ends.length };
}

let failures = 0;
async function run(
  client: Client,
  pane: PaneListing,
  script: string,
  extra: { stdout_limit?: number } = {},
): Promise<{ ms: number; data: RunOutcome['data'] }> {
  const sent = monotonicMs();
  const t0 = now();
  const r = await callRun(client, pane, script, extra);
  const ms = now() - t0;
  const got = monotonicMs();
  const s = r.structured as RunOutcome | undefined;
  const runId = s?.data?.authorization?.run_id;
  if (runId !== undefined && tracing.has(client)) clientStamps.set(runId, { call: sent, result: got });
  if (r.isError || !s?.ok || s.data?.completion?.exit_status !== 0) {
    failures++;
    if (failures <= 5)
      process.stderr.write(
        `bench: a run failed: ${JSON.stringify(s?.error ?? s?.data?.completion ?? r.result).slice(0, 300)}\n`,
      );
    if (failures > 20) throw new Error('too many failed runs; the bench is not measuring what it should');
  }
  return { ms, data: s?.data };
}

/** Closed loop: `perPane` callers per pane keep calling until `total` runs are done; runs/s. */
async function sustained(client: Client, panes: PaneListing[], perPane: number, total: number): Promise<number> {
  let left = total;
  const t0 = now();
  const worker = async (pane: PaneListing): Promise<void> => {
    while (left > 0) {
      left--;
      await run(client, pane, 'true');
    }
  };
  await Promise.all(panes.flatMap((p) => Array.from({ length: perPane }, () => worker(p))));
  return total / ((now() - t0) / 1000);
}

// ------------------------------------------------------------------ long runs: tmux_run_output

/**
 * The cost of reading a held run's output: one run started with tmux_run_start prints MID bytes
 * and is waited for; then `n` tmux_run_output calls read all MID bytes (one full 64 KiB chunk
 * each), and `n` read at the end of the stream (a poll that finds nothing new). Client-side ms.
 */
async function outputReads(client: Client, pane: PaneListing, n: number): Promise<{ full: Stats; poll: Stats }> {
  const target = { kind: 'pane', id: pane.pane_id, generation: pane.generation };
  const started = (await client.callTool({
    name: 'tmux_run_start',
    arguments: { target, script: MID_SCRIPT, wait_ms: 10_000 },
  })) as { structuredContent?: { ok?: boolean; data?: { authorization: { run_id: string } } } };
  const runId = started.structuredContent?.data?.authorization.run_id;
  if (!started.structuredContent?.ok || runId === undefined) throw new Error('the held run for tmux_run_output failed');
  const read = async (from: number): Promise<{ ms: number; bytes: number }> => {
    const t0 = now();
    const r = (await client.callTool({
      name: 'tmux_run_output',
      arguments: { target, run_id: runId, stream: 'stdout', from, max_bytes: MID },
    })) as { structuredContent?: { ok?: boolean; data?: { from: number; to: number } } };
    const ms = now() - t0;
    const d = r.structuredContent?.data;
    if (!r.structuredContent?.ok || d === undefined) throw new Error('tmux_run_output failed');
    return { ms, bytes: d.to - d.from };
  };
  const full: number[] = [];
  const poll: number[] = [];
  for (let i = 0; i < N.bigWarm; i++) await read(0);
  for (let i = 0; i < n; i++) {
    const r = await read(0);
    if (r.bytes !== MID) throw new Error(`expected ${MID} bytes from tmux_run_output, got ${r.bytes}`);
    full.push(r.ms);
    poll.push((await read(MID)).ms);
  }
  return { full: stats(full), poll: stats(poll) };
}

function versionOf(cmd: string | undefined, args: string[]): string {
  if (cmd === undefined) return 'unknown';
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).trim().split('\n')[0] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

// ------------------------------------------------------------------ the run

interface HelperMetrics {
  pid: number;
  runs: number;
  rss_kb_start: number;
  rss_kb_after_warmup: number;
  rss_kb_after: number;
  rss_kb_after_more: number;
  fds_start: number;
  fds_after: number;
  fds_after_more: number;
  rss_kb_after_big?: number;
  rss_kb_after_big_idle?: number;
}

interface Metrics {
  loadavg_start: number[];
  loadavg_end: number[];
  enroll_ms: Stats;
  node_start_ms: Stats;
  server_start_ms: Stats;
  floor_true_ms: Stats;
  run_true_ms: Stats;
  cpu_ms_per_run: Record<string, number>;
  ratio_true: number;
  helper: HelperMetrics;
  rate_one_pane: Stats;
  rate_four_panes: Stats;
  rate_ratio: number;
  floor_big_ms: Stats;
  run_big_ms: Stats;
  ratio_big: number;
  floor_mid_ms: Stats;
  run_mid_ms: Stats;
  ratio_mid: number;
  output_full_ms: Stats;
  output_poll_ms: Stats;
  /** `paced`: `true` on the plain pane PACE_MS apart; `boxed`: the same in the sandboxed pane of sandboxBench (both absent without bwrap). */
  trace: { true: StageTable; mid: StageTable; big: StageTable; paced?: StageTable; boxed?: StageTable };
  broker_rss_kb: number | undefined;
  broker_rss_kb_start: number | undefined;
  broker_rss_kb_after: number | undefined;
  broker_rss_kb_after_more: number | undefined;
  failed_runs: number;
  /** What enrolling costs the shell (scripts/bench-enroll.ts); the helper's PSS after the runs. */
  enroll_cost: EnrollCost;
  /** What a fish pane costs: source, first prompt, a run (scripts/bench-fish.ts). */
  fish_cost: FishCost;
  helper_memory_after: Memory | undefined;
  sandbox?: SandboxMetrics;
  /** Plain runs spawned natively and by Node, alternating on two panes. */
  spawn?: SpawnMetrics;
  /** The spawn path and the sandbox, the base tree against this one in one process (scripts/bench-walls.ts). */
  walls?: WallsBench;
  /** A 10 MB run with nobody watching, a live watcher, a stopped one (scripts/bench-watch.ts). */
  watch?: WatchCost;
  /** zsh-bench-style first prompt and first command, minimal and with plugins, before and after (scripts/bench-zsh.ts). */
  prompt_cost?: PromptCost;
  /** What bash panes cost, and the screen check per run (scripts/bench-shells.ts). */
  shells?: ShellsCost;
}

// ------------------------------------------------------------------ the spawn
/** One figure on the pane that spawns natively and on one with TMUX_RUN_SPAWN=node, alternating. */
interface SpawnPair {
  native_ms: Stats;
  node_ms: Stats;
}

interface SpawnMetrics {
  true: SpawnPair;
  mid: SpawnPair;
  big: SpawnPair;
}

/**
 * Plain runs the two ways a helper can start them (src/os/native-spawn.ts), in this same run:
 * a pane of the bench (the native vfork) and one enrolled with TMUX_RUN_SPAWN=node (Node's
 * spawn, which forks the helper: how every plain run started before), called in alternation.
 */
async function spawnBench(
  c: Client,
  native: PaneListing,
  server: Scope['server'],
  n: number,
  nBig: number,
): Promise<SpawnMetrics> {
  const pane = await server.newPane({ env: { TMUX_RUN_SPAWN: 'node' } });
  const node = (await enroll(pane, server.registryDir)).listing;
  const pair = async (script: string, count: number, extra: { stdout_limit?: number } = {}): Promise<SpawnPair> => {
    for (let i = 0; i < N.bigWarm; i++) {
      await run(c, native, script, extra);
      await run(c, node, script, extra);
    }
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < count; i++) {
      a.push((await run(c, native, script, extra)).ms);
      b.push((await run(c, node, script, extra)).ms);
    }
    return { native_ms: stats(a), node_ms: stats(b) };
  };
  return {
    true: await pair('true', n),
    mid: await pair(MID_SCRIPT, nBig),
    big: await pair(BIG_SCRIPT, nBig, { stdout_limit: BIG }),
  };
}

// ------------------------------------------------------------------ the sandbox

interface SandboxMetrics {
  /** Paced (PACE_MS between calls). */
  plain_true_ms: Stats;
  sandboxed_true_ms: Stats;
  /** Median sandboxed minus median plain. */
  cost_ms: number;
  /** The same, a third as many, each call right after the one before. */
  back_to_back: { plain_true_ms: Stats; sandboxed_true_ms: Stats };
  /** RSS of the sandboxed pane's helper before its first sandboxed run and after them. */
  helper_rss_kb_before: number;
  helper_rss_kb_after: number;
  /** The sandboxed pane, for the traced runs. */
  boxed: PaneListing;
}

/**
 * A sandboxed `true` beside a plain one, in this same run: a pane of the bench and a fifth one
 * with TMUX_RUN_SANDBOX=workspace in a project directory holding a git repository (so the
 * repository search and the locks are paid for), called in alternation.
 */
async function sandboxBench(
  c: Client,
  plain: PaneListing,
  server: Scope['server'],
  n: number,
): Promise<SandboxMetrics> {
  const project = join(server.home, 'bench-project');
  mkdirSync(join(project, 'src'), { recursive: true });
  execFileSync('git', ['init', '-q', project]);
  const pane = await server.newPane({ cwd: project });
  const boxed = { pane, listing: (await enroll(pane, server.registryDir)).listing };
  await boxed.pane.run('TMUX_RUN_SANDBOX=workspace');
  const before = mustStatus(boxed.listing.helper_pid).rssKb;
  for (let i = 0; i < N.warm; i++) {
    await run(c, plain, 'true');
    await run(c, boxed.listing, 'true');
  }
  // Each call PACE_MS after the one before ended, as an agent's calls are (seconds apart): the
  // walls fork the next run's processes once a run is over, and back to back that work lands on
  // whichever run comes next, the plain one as much as the next sandboxed one (the second pair).
  const a: number[] = [];
  const b: number[] = [];
  const a2: number[] = [];
  const b2: number[] = [];
  for (let i = 0; i < n; i++) {
    a.push((await run(c, plain, 'true')).ms);
    await sleep(PACE_MS);
    b.push((await run(c, boxed.listing, 'true')).ms);
    await sleep(PACE_MS);
  }
  for (let i = 0; i < n / 3; i++) {
    a2.push((await run(c, plain, 'true')).ms);
    b2.push((await run(c, boxed.listing, 'true')).ms);
  }
  const after = mustStatus(boxed.listing.helper_pid).rssKb;
  const plainStats = stats(a);
  const boxedStats = stats(b);
  return {
    plain_true_ms: plainStats,
    sandboxed_true_ms: boxedStats,
    cost_ms: boxedStats.median - plainStats.median,
    back_to_back: { plain_true_ms: stats(a2), sandboxed_true_ms: stats(b2) },
    helper_rss_kb_before: before,
    helper_rss_kb_after: after,
    boxed: boxed.listing,
  };
}

// Every server of the bench lives under its own run root, swept at the end like a test run's.
const runRootDir = makeRunRoot('tmux-run-bench-');
process.env[RUN_ROOT_VAR] = runRootDir;
// Profiling: the snippet starts the helper with TMUX_RUN_NODE (it clears NODE_OPTIONS), so a wrapper adds the flags.
const NODE_WRAPPER = join(runRootDir, 'node-profiled');
if (PROFILE) {
  mkdirSync(join(PROFILE, 'helper'), { recursive: true });
  mkdirSync(join(PROFILE, 'broker'), { recursive: true });
  writeFileSync(
    NODE_WRAPPER,
    `#!/bin/sh\nexec '${process.execPath}' --cpu-prof --cpu-prof-dir='${join(PROFILE, 'helper')}' "$@"\n`,
    { mode: 0o700 },
  );
}
const brokerOptions: McpOptions = {
  clientName: 'tmux-run-bench',
  nodeArgs: PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE, 'broker')}`] : [],
};

const m: Partial<Metrics> = { loadavg_start: loadavg().map((x) => Number(x.toFixed(2))) };
const progress = (s: string): void => void process.stderr.write(`bench: ${s}\n`);
let scope: Scope | undefined;
let exitCode = 0;
try {
  scope = await openScope({ env: { TMUX_RUN_NOTIFY: NOTIFY, ...(PROFILE ? { TMUX_RUN_NODE: NODE_WRAPPER } : {}) } });
  const server = scope.server;
  const dir = server.registryDir;
  const panes: Pane[] = [];
  for (let i = 0; i < 4; i++) panes.push(await server.newPane());
  const first = panes[0]!;

  progress(`enrollment, ${N.enroll} times on ${first.id}`);
  const enrollMs: number[] = [];
  for (let i = 0; i < N.enroll; i++) {
    const { listing, ms } = await enroll(first, dir);
    enrollMs.push(ms);
    await unenroll(first, dir, listing.helper_pid);
  }
  m.enroll_ms = stats(enrollMs);
  progress('what enrolling costs the shell: source, first prompt, hooks, helper memory (fresh panes)');
  m.enroll_cost = await enrollCost(server, QUICK ? 3 : 20);
  progress('fish panes: source, first prompt, a run (fresh fish panes)');
  m.fish_cost = await fishCost(scope, QUICK ? 3 : 10);
  progress('first prompt and first command, minimal and with plugins, without the snippet, before and after');
  m.prompt_cost = await promptCost(server, QUICK ? 2 : 10, runRootDir);
  m.shells = await shellsCost(scope, QUICK ? 3 : 10);
  const listings: PaneListing[] = [];
  for (const pane of panes) listings.push((await enroll(pane, dir)).listing);
  const one = listings[0]!;
  const helperPid = one.helper_pid;
  const helperStart = mustStatus(helperPid);

  progress('server start to tools/list');
  const nodeStart: number[] = [];
  for (let i = 0; i < N.starts; i++) {
    const t0 = now();
    await new Promise((r) => spawn(process.execPath, ['-e', ''], { stdio: 'ignore' }).once('exit', r));
    nodeStart.push(now() - t0);
  }
  const startMs: number[] = [];
  for (let i = 0; i < N.starts; i++) {
    const t0 = now();
    const h = await scope.startMcp(brokerOptions);
    await h.client.listTools();
    startMs.push(now() - t0);
    await h.close();
  }
  m.node_start_ms = stats(nodeStart);
  m.server_start_ms = stats(startMs);

  const main: McpHandle = await scope.startMcp(brokerOptions);
  await main.client.listTools();
  const c = main.client;
  const brokerRss = (): number | undefined => (main.pid === null ? undefined : procStatus(main.pid)?.rssKb);
  m.broker_rss_kb_start = brokerRss();

  progress(`round trip for true: ${N.warm} warm-up, ${N.rtt} measured; floor ${N.floor} spawns`);
  for (let i = 0; i < N.warm; i++) await run(c, one, 'true');
  const helperWarm = mustStatus(helperPid);
  m.floor_true_ms = stats(floor('true', 20, N.floor));
  const rtt: number[] = [];
  const who: Record<string, number> = {
    helper: one.helper_pid,
    zsh: one.shell_pid,
    broker: main.pid ?? NaN,
    tmux: await server.serverPid(),
  };
  const cpu0 = Object.fromEntries(Object.entries(who).map(([k, pid]) => [k, cpuMs(pid)]));
  const self0 = process.cpuUsage();
  for (let i = 0; i < N.rtt; i++) rtt.push((await run(c, one, 'true')).ms);
  const self1 = process.cpuUsage(self0);
  m.run_true_ms = stats(rtt);
  // CPU each process spent per run: unlike wall time, barely moved by whatever else the machine runs.
  m.cpu_ms_per_run = Object.fromEntries(
    Object.entries(who).map(([k, pid]) => [k, (cpuMs(pid) - (cpu0[k] ?? NaN)) / N.rtt]),
  );
  m.cpu_ms_per_run.client = (self1.user + self1.system) / 1000 / N.rtt;
  m.ratio_true = m.run_true_ms.median / m.floor_true_ms.median;

  // Memory and descriptors: after the first N.leak runs on the pane (warm-up and round trips
  // included), then after N.leak more, which must not have grown either. Each sample follows
  // IDLE_MS without work, so that V8's memory reducer has collected: resident memory right
  // after a burst says more about when the last collection happened than about a leak.
  progress(
    `helper memory and descriptors: after ${N.leak} runs, then after ${2 * N.leak} more (each then ${IDLE_MS / 1000} s idle)`,
  );
  const runsOn = async (n: number): Promise<ProcStatus> => {
    let left = n;
    const worker = async (): Promise<void> => {
      while (left > 0) {
        left--;
        await run(c, one, 'true');
      }
    };
    await Promise.all(Array.from({ length: N.perPane }, worker));
    brokerAfter.push(brokerRss());
    await sleep(IDLE_MS);
    return mustStatus(helperPid);
  };
  const brokerAfter: Array<number | undefined> = [];
  const after1 = await runsOn(N.leak - N.warm - N.rtt);
  const after2 = await runsOn(2 * N.leak);
  [m.broker_rss_kb_after, m.broker_rss_kb_after_more] = brokerAfter;
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
  const r1: number[] = [];
  const r4: number[] = [];
  for (let w = 0; w < N.windows; w++) {
    r1.push(await sustained(c, [one], N.perPane, N.window));
    r4.push(await sustained(c, listings, N.perPane, N.window));
  }
  m.rate_one_pane = stats(r1);
  m.rate_four_panes = stats(r4);
  m.rate_ratio = m.rate_four_panes.median / m.rate_one_pane.median;

  progress(`${MID} bytes of output: ${N.big} measured; floor the same`);
  for (let i = 0; i < N.bigWarm; i++) await run(c, one, MID_SCRIPT);
  m.floor_mid_ms = stats(floor(MID_SCRIPT, 5, N.big));
  const mid: number[] = [];
  for (let i = 0; i < N.big; i++) {
    const { ms, data } = await run(c, one, MID_SCRIPT);
    if (data?.stdout?.bytes !== MID) throw new Error(`expected ${MID} bytes of stdout`);
    mid.push(ms);
  }
  m.run_mid_ms = stats(mid);
  m.ratio_mid = m.run_mid_ms.median / m.floor_mid_ms.median;

  progress(`${BIG} bytes of output: ${N.big} measured; floor the same`);
  for (let i = 0; i < N.bigWarm; i++) await run(c, one, BIG_SCRIPT, { stdout_limit: BIG });
  m.floor_big_ms = stats(floor(BIG_SCRIPT, 5, N.big));
  const big: number[] = [];
  for (let i = 0; i < N.big; i++) {
    const { ms, data } = await run(c, one, BIG_SCRIPT, { stdout_limit: BIG });
    if (data?.stdout?.bytes !== BIG) throw new Error(`expected ${BIG} bytes of stdout`);
    big.push(ms);
  }
  m.run_big_ms = stats(big);
  m.ratio_big = m.run_big_ms.median / m.floor_big_ms.median;

  m.helper.rss_kb_after_big = procStatus(helperPid)?.rssKb;

  progress(`tmux_run_output: ${N.big} reads of ${MID} bytes, ${N.big} reads at the end of the stream`);
  const reads = await outputReads(c, one, N.big);
  m.output_full_ms = reads.full;
  m.output_poll_ms = reads.poll;
  progress(`plain runs spawned natively and by Node (TMUX_RUN_SPAWN=node), alternating on two panes`);
  m.spawn = await spawnBench(c, one, server, N.rtt, N.big);
  if (existsSync('/usr/bin/bwrap') || process.env.TMUX_RUN_BWRAP) {
    progress(`sandboxed true beside a plain one: ${N.rtt} each, alternating, on two other panes`);
    m.sandbox = await sandboxBench(c, listings[1]!, server, N.rtt);
  } else progress('no bwrap: the sandboxed runs are not measured');
  if (existsSync('/usr/bin/bwrap') || process.env.TMUX_RUN_BWRAP) {
    progress('spawn and sandbox, the tree before and after, alternating in one process (scripts/bench-walls.ts)');
    m.walls = await wallsBench(QUICK ? 20 : 100);
  }
  progress('a 10 MB run: nobody watching, a live watcher, a stopped one (alternating)');
  m.watch = await watchCost(server, c, listings[2]!, QUICK ? 1 : 5);

  // The same three runs through a broker that traces every call, to see where their time goes.
  progress(`traced runs (TMUX_RUN_TRACE): ${N.rtt} of true, ${N.big} of ${MID} and of ${BIG} bytes`);
  const traceFile = join(runRootDir, 'trace.jsonl');
  const traced = await scope.startMcp({ ...brokerOptions, env: { TMUX_RUN_TRACE: traceFile } });
  tracing.add(traced.client);
  const tracedRuns = async (
    script: string,
    n: number,
    extra: { stdout_limit?: number } = {},
    pane: PaneListing = one,
    paceMs = 0,
  ): Promise<string[]> => {
    for (let i = 0; i < N.bigWarm; i++) await run(traced.client, pane, script, extra);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      if (paceMs > 0) await sleep(paceMs);
      const id = (await run(traced.client, pane, script, extra)).data?.authorization?.run_id;
      if (id !== undefined) ids.push(id);
    }
    return ids;
  };
  m.trace = {
    true: stageTable(traceFile, await tracedRuns('true', N.rtt)),
    mid: stageTable(traceFile, await tracedRuns(MID_SCRIPT, N.big)),
    big: stageTable(traceFile, await tracedRuns(BIG_SCRIPT, N.big, { stdout_limit: BIG })),
    // Paced as the sandbox section's calls are (PACE_MS apart), plain and sandboxed alike.
    ...(m.sandbox
      ? {
          paced: stageTable(traceFile, await tracedRuns('true', N.rtt, {}, one, PACE_MS)),
          boxed: stageTable(traceFile, await tracedRuns('true', N.rtt, {}, m.sandbox.boxed, PACE_MS)),
        }
      : {}),
  };
  await traced.close();
  // Large outputs leave garbage that V8 collects when the helper goes idle (its memory reducer
  // runs after some seconds without work); the helper's malloc settings then give it back.
  progress(`helper memory after ${IDLE_MS / 1000} s idle`);
  await sleep(IDLE_MS);
  m.helper.rss_kb_after_big_idle = procStatus(helperPid)?.rssKb;
  m.helper_memory_after = memoryOf(helperPid);
  m.broker_rss_kb = brokerRss();
  m.failed_runs = failures;
  m.loadavg_end = loadavg().map((x) => Number(x.toFixed(2)));
} catch (e) {
  process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  exitCode = 1;
} finally {
  // Brokers first, then the server; kill() waits for the helpers and shells to exit.
  const leftovers = scope ? await scope.close().catch((e: unknown) => [String(e)]) : [];
  leftovers.push(...(await sweepRunRoot(runRootDir)));
  if (leftovers.length > 0) process.stderr.write(`bench: left behind and stopped:\n  ${leftovers.join('\n  ')}\n`);
}
if (exitCode !== 0) process.exit(exitCode);
report(m as Metrics);

// ------------------------------------------------------------------ report

function report(m: Metrics): void {
  const MB = 1024;
  const h = m.helper;
  const mb = (k: number | undefined): string => (k === undefined ? '-' : (k / MB).toFixed(1));
  const growth = h.rss_kb_after_more - h.rss_kb_after;
  const ratio = (x: number): string => `${x.toFixed(2)}x`;
  // Issue 13's targets: each a ratio of two figures measured in this same run (or memory).
  const targets = [
    {
      name: 'round trip for true vs spawn floor',
      target: '<= 1.5x',
      value: m.ratio_true,
      pass: m.ratio_true <= 1.5,
      show: ratio(m.ratio_true),
    },
    {
      name: `${MID} bytes vs its floor`,
      target: '<= 1.5x',
      value: m.ratio_mid,
      pass: m.ratio_mid <= 1.5,
      show: ratio(m.ratio_mid),
    },
    {
      name: `${BIG} bytes vs its floor`,
      target: '<= 1.5x',
      value: m.ratio_big,
      pass: m.ratio_big <= 1.5,
      show: ratio(m.ratio_big),
    },
    // On 2 cores the runs are CPU-bound: see BENCHMARKS.md.
    {
      name: 'runs/s, 4 panes vs one pane',
      target: '>= 1.8x',
      value: m.rate_ratio,
      pass: m.rate_ratio >= 1.8,
      show: ratio(m.rate_ratio),
    },
    {
      name: `broker RSS right after ${h.runs} runs`,
      target: '<= 80 MB',
      value: m.broker_rss_kb_after ?? NaN,
      pass: (m.broker_rss_kb_after ?? Infinity) <= 80 * MB,
      show: `${mb(m.broker_rss_kb_after)} MB`,
    },
    // RSS moves with the garbage collector: each sample follows IDLE_MS without work.
    {
      name: `helper RSS over ${2 * h.runs} runs after ${h.runs} of warm-up`,
      target: 'within 2 MB',
      value: growth,
      pass: Math.abs(growth) <= 2 * MB,
      show: `${growth >= 0 ? '+' : ''}${(growth / MB).toFixed(2)} MB`,
    },
    {
      name: `helper descriptors over ${3 * h.runs} runs`,
      target: 'no growth',
      value: h.fds_after_more - h.fds_start,
      pass: h.fds_after <= h.fds_start && h.fds_after_more <= h.fds_start,
      show: `${h.fds_start} -> ${h.fds_after} -> ${h.fds_after_more}`,
    },
    {
      name: 'enrollment (source to listed)',
      target: '< 300 ms',
      value: m.enroll_ms.median,
      pass: m.enroll_ms.median < 300,
      show: `${m.enroll_ms.median.toFixed(0)} ms`,
    },
    ...enrollTargets(m.enroll_cost),
    {
      name: 'server start to tools/list',
      target: '< 300 ms',
      value: m.server_start_ms.median,
      pass: m.server_start_ms.median < 300,
      show: `${m.server_start_ms.median.toFixed(0)} ms`,
    },
  ];

  const f = (x: number | undefined, d = 2): string => (x !== undefined && Number.isFinite(x) ? x.toFixed(d) : '-');
  const rows: Array<[string, Stats, number]> = [
    ['floor: spawn /bin/sh -c true (ms)', m.floor_true_ms, 2],
    ['tmux_run true, one pane (ms)', m.run_true_ms, 2],
    ['runs/s, one pane', m.rate_one_pane, 0],
    ['runs/s, 4 panes in parallel', m.rate_four_panes, 0],
    [`floor: spawn ${MID} bytes (ms)`, m.floor_mid_ms, 2],
    [`tmux_run ${MID} bytes (ms)`, m.run_mid_ms, 2],
    [`floor: spawn ${BIG} bytes (ms)`, m.floor_big_ms, 2],
    [`tmux_run ${BIG} bytes (ms)`, m.run_big_ms, 2],
    [`tmux_run_output of ${MID} bytes of a held run (ms)`, m.output_full_ms, 2],
    ['tmux_run_output at the end of the stream, nothing new (ms)', m.output_poll_ms, 2],
    ['enrollment: source to listed (ms)', m.enroll_ms, 0],
    ['node -e "" start to exit (ms)', m.node_start_ms, 0],
    ['tmux-run-mcp start to tools/list (ms)', m.server_start_ms, 0],
  ];
  const lines: string[] = [];
  lines.push(`| measure | median | p90 | n |`, `| --- | ---: | ---: | ---: |`);
  for (const [name, s, d] of rows) lines.push(`| ${name} | ${f(s.median, d)} | ${f(s.p90, d)} | ${s.n} |`);
  lines.push(
    `| helper RSS (MB): start / ${N.warm} runs / ${h.runs} runs + ${IDLE_MS / 1000} s idle / ${3 * h.runs} runs + ${IDLE_MS / 1000} s idle | ${[h.rss_kb_start, h.rss_kb_after_warmup, h.rss_kb_after, h.rss_kb_after_more].map(mb).join(' / ')} | | |`,
    `| broker RSS (MB): start / right after ${h.runs} runs / right after ${3 * h.runs} runs / at the end | ${[m.broker_rss_kb_start, m.broker_rss_kb_after, m.broker_rss_kb_after_more, m.broker_rss_kb].map(mb).join(' / ')} | | |`,
    `| helper RSS (MB): right after the runs of ${BIG} bytes (and the sustained ones) / then ${IDLE_MS / 1000} s idle | ${[h.rss_kb_after_big, h.rss_kb_after_big_idle].map(mb).join(' / ')} | | |`,
    `| helper descriptors: start / ${h.runs} runs / ${3 * h.runs} runs | ${h.fds_start} / ${h.fds_after} / ${h.fds_after_more} | | |`,
    `| CPU per run of \`true\` (ms): helper / zsh / broker / client / tmux server | ${['helper', 'zsh', 'broker', 'client', 'tmux'].map((k) => f(m.cpu_ms_per_run[k], 2)).join(' / ')} | | |`,
  );
  lines.push(
    ...enrollCostLines(m.enroll_cost),
    ...fishCostLines(m.fish_cost).map((l) => `${l} | |`),
    ...(m.shells ? shellsCostLines(m.shells) : []),
    `| helper memory after all the runs (MB): RSS / PSS / private | ${[m.helper_memory_after?.rss_kb, m.helper_memory_after?.pss_kb, m.helper_memory_after?.private_kb].map(mb).join(' / ')} | | |`,
  );
  if (m.spawn) {
    const sp = m.spawn;
    const row = (what: string, p: SpawnPair): string =>
      `| ${what} | ${f(p.native_ms.median)} / ${f(p.node_ms.median)} | ${f(p.native_ms.p90)} / ${f(p.node_ms.p90)} | ${p.native_ms.n} | ${f(p.node_ms.median - p.native_ms.median)} |`;
    lines.push(
      '',
      "| plain runs (same run, alternating on two panes): native vfork / Node's spawn (TMUX_RUN_SPAWN=node) | median | p90 | n | saved (ms) |",
      '| --- | ---: | ---: | ---: | ---: |',
      row('tmux_run true (ms)', sp.true),
      row(`tmux_run ${MID} bytes (ms)`, sp.mid),
      row(`tmux_run ${BIG} bytes (ms)`, sp.big),
    );
  }
  if (m.sandbox) {
    const sb = m.sandbox;
    lines.push(
      '',
      `| sandbox (same run, alternating on two panes, ${PACE_MS} ms between calls unless back to back) | median | p90 | n |`,
      '| --- | ---: | ---: | ---: |',
      `| tmux_run true, plain (ms) | ${f(sb.plain_true_ms.median)} | ${f(sb.plain_true_ms.p90)} | ${sb.plain_true_ms.n} |`,
      `| tmux_run true, TMUX_RUN_SANDBOX=workspace (ms) | ${f(sb.sandboxed_true_ms.median)} | ${f(sb.sandboxed_true_ms.p90)} | ${sb.sandboxed_true_ms.n} |`,
      `| cost of the sandbox per run (difference of medians, ms) | ${f(sb.cost_ms)} | | |`,
      `| back to back: tmux_run true, plain (ms) | ${f(sb.back_to_back.plain_true_ms.median)} | ${f(sb.back_to_back.plain_true_ms.p90)} | ${sb.back_to_back.plain_true_ms.n} |`,
      `| back to back: tmux_run true, TMUX_RUN_SANDBOX=workspace (ms) | ${f(sb.back_to_back.sandboxed_true_ms.median)} | ${f(sb.back_to_back.sandboxed_true_ms.p90)} | ${sb.back_to_back.sandboxed_true_ms.n} |`,
      `| sandboxed pane's helper RSS (MB): before its first sandboxed run / after them | ${mb(sb.helper_rss_kb_before)} / ${mb(sb.helper_rss_kb_after)} | | |`,
    );
  }
  if (m.walls) lines.push('', ...wallsBenchLines(m.walls));
  if (m.prompt_cost) lines.push(...promptCostLines(m.prompt_cost));
  if (m.watch) lines.push(...watchCostLines(m.watch));
  const t = [
    m.trace.true,
    m.trace.mid,
    m.trace.big,
    ...(m.trace.paced && m.trace.boxed ? [m.trace.paced, m.trace.boxed] : []),
  ];
  if (t.every((x) => x.n === 0)) lines.push('', 'No traced runs: this broker writes no trace (TMUX_RUN_TRACE).');
  else {
    lines.push(
      '',
      `| stage: median ms since the one before (traced runs) | true | ${MID} bytes | ${BIG} bytes |${t.length > 3 ? ` true, ${PACE_MS} ms apart | true, sandboxed, ${PACE_MS} ms apart |` : ''}`,
      `| --- | ---: | ---: | ---: |${t.length > 3 ? ' ---: | ---: |' : ''}`,
    );
    for (const s of TRACE_STAGES.slice(1)) {
      if (t.every((x) => x.stages[s] === undefined)) continue;
      lines.push(`| ${s} | ${t.map((x) => f(x.stages[s]?.median, 3)).join(' | ')} |`);
    }
    lines.push(
      `| sum of the stage medians | ${t.map((x) => f(x.sum_of_medians)).join(' | ')} |`,
      `| end to end, the same traced runs (median) | ${t.map((x) => f(x.end_to_end.median)).join(' | ')} |`,
      `| traced runs | ${t.map((x) => x.n).join(' | ')} |`,
    );
  }
  lines.push('', `| target | goal | measured | result |`, `| --- | --- | ---: | --- |`);
  for (const t of targets) lines.push(`| ${t.name} | ${t.target} | ${t.show} | ${t.pass ? 'pass' : 'MISS'} |`);

  const machine = {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memory_mb: Math.round(totalmem() / 2 ** 20),
    kernel: release(),
    node: process.version,
    tmux: versionOf(tmuxBinary(), ['-V']),
    zsh: versionOf(zshBinary(), ['--version']),
  };
  const commit = versionOf('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']);
  const dirty = versionOf('git', ['-C', ROOT, 'status', '--porcelain', '--untracked-files=no']) !== '';
  process.stdout.write(
    `tmux-run bench (${commit}${dirty ? '+dirty' : ''}, ${QUICK ? 'quick, ' : ''}notices ${NOTIFY}): ${machine.nproc} cores, ${machine.memory_mb} MB, node ${machine.node}, ${machine.tmux}, ${machine.zsh}; load average ${m.loadavg_start[0]} at start, ${m.loadavg_end[0]} at end\n\n${lines.join('\n')}\n`,
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
        notices: NOTIFY,
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
}
