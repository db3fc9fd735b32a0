// The core figures of the bench (scripts/bench/bench.ts), each a section in the order the bench takes
// them: enrollment, the server's start, the round trip of `true` beside its floor and the CPU it
// costs, the helper's memory and descriptors over many runs, sustained rates on one pane and on
// four, and outputs of 64 KiB and 256 KiB beside their floors.
import { spawn } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AwakeListing } from '../../src/broker/registry.js';
import type { McpOptions } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { cpuMs } from '../../lab/processes.js';
import type { Scope } from '../../lab/scope.js';
import { sleep } from '../../lab/waiting.js';
import {
  BIG,
  BIG_SCRIPT,
  IDLE_MS,
  MID,
  MID_SCRIPT,
  mustStatus,
  N,
  now,
  progress,
  QUICK,
  stats,
  type ProcStatus,
} from './bench-common.js';
import { enroll, run, sustained, unenroll } from './bench-calls.js';
import { initializeCost } from './bench-initialize.js';
import { enrollCost } from './bench-enroll.js';
import { fishCost } from './bench-fish.js';
import { floor } from './bench-floor.js';
import type { Metrics } from './bench-metrics.js';
import { shellsCost } from './bench-shells.js';
import { promptCost } from './bench-zsh.js';
import { firstPromptCost } from './bench-first-prompt.js';

type Figures = Partial<Metrics>;

/** Enrollment on one pane N.enroll times; then what enrolling costs each shell (fresh panes). */
export async function enrollment(scope: Scope, first: Pane, runRootDir: string, m: Figures): Promise<void> {
  const server = scope.server;
  progress(`enrollment, ${N.enroll} times on ${first.id}`);
  const enrollMs: number[] = [];
  for (let i = 0; i < N.enroll; i++) {
    const { listing, ms } = await enroll(first, server.registryDir);
    enrollMs.push(ms);
    await unenroll(first, server.registryDir, listing.helper_pid);
  }
  m.enroll_ms = stats(enrollMs);
  progress('what enrolling costs the shell: source, first prompt, hooks, helper memory (fresh panes)');
  m.enroll_cost = await enrollCost(server, QUICK ? 3 : 20);
  progress('fish panes: source, first prompt, a run (fresh fish panes)');
  m.fish_cost = await fishCost(scope, QUICK ? 3 : 10);
  progress('first prompt and first command, minimal and with plugins, without the snippet, before and after');
  m.prompt_cost = await promptCost(server, QUICK ? 2 : 10, runRootDir);
  progress('bash (minimal, with plugins) and fish: first prompt and first command from outside, before and after');
  m.first_prompt = await firstPromptCost(server, QUICK ? 2 : 12, runRootDir);
  m.shells = await shellsCost(scope, QUICK ? 3 : 10);
}

/**
 * `node -e ""` start to exit beside tmux-run-mcp's start to tools/list; then tmux-run-mcp's answer
 * to initialize beside a bare Node's answer to one line, alternating (scripts/bench/bench-initialize.ts).
 */
export async function serverStarts(scope: Scope, brokerOptions: McpOptions, m: Figures): Promise<void> {
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
  progress('initialize: tmux-run-mcp beside a bare Node, alternating');
  m.initialize = await initializeCost(QUICK ? 5 : 3 * N.starts);
}

/**
 * The round trip of `true` after N.warm warm-up runs, beside its floor, and the CPU each process
 * spent per run; resolves the helper's status right after the warm-up.
 */
export async function roundTrip(
  c: Client,
  one: AwakeListing,
  brokerPid: number | null,
  server: Scope['server'],
  m: Figures,
): Promise<ProcStatus> {
  progress(`round trip for true: ${N.warm} warm-up, ${N.rtt} measured; floor ${N.floor} spawns`);
  for (let i = 0; i < N.warm; i++) await run(c, one, 'true');
  const helperWarm = mustStatus(one.helper_pid);
  m.floor_true_ms = stats(floor('true', 20, N.floor));
  const rtt: number[] = [];
  const who: Record<string, number> = {
    helper: one.helper_pid,
    zsh: one.shell_pid,
    broker: brokerPid ?? NaN,
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
  return helperWarm;
}

/**
 * Memory and descriptors: after the first N.leak runs on the pane (warm-up and round trips
 * included), then after N.leak more, which must not have grown either. Each sample follows
 * IDLE_MS without work, so that V8's memory reducer has collected: resident memory right
 * after a burst says more about when the last collection happened than about a leak.
 */
export async function helperMemory(
  c: Client,
  one: AwakeListing,
  seen: { start: ProcStatus; warm: ProcStatus },
  brokerRss: () => number | undefined,
  m: Figures,
): Promise<void> {
  const helperPid = one.helper_pid;
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
    rss_kb_start: seen.start.rssKb,
    rss_kb_after_warmup: seen.warm.rssKb,
    rss_kb_after: after1.rssKb,
    rss_kb_after_more: after2.rssKb,
    fds_start: seen.start.fds,
    fds_after: after1.fds,
    fds_after_more: after2.fds,
  };
}

/** Sustained runs/s: N.windows windows of N.window runs on one pane, then on all four. */
export async function rates(c: Client, listings: AwakeListing[], m: Figures): Promise<void> {
  const one = listings[0]!;
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
}

/** Runs of MID and of BIG bytes of output, each beside its floor. */
export async function outputSizes(c: Client, one: AwakeListing, m: Figures): Promise<void> {
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
}
