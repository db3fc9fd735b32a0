// scripts/bench/bench.ts: tmux-run against its physical floor, in one run (`npm run bench`).
//
// Starts a private tmux server with real zsh panes on the test harness (lab/), enrolls
// them by typing `source` into them (the bench is a test driver, like a person; the product
// never sends keys), drives tmux-run-mcp through the SDK's Client over stdio, and measures the
// floor (Node spawning /bin/sh directly) next to the product. Prints a table with each target's
// pass/miss and writes bench-results/latest.json. Exit status 0 even when a target is missed; 1
// when the bench broke.
//
//   npm run bench                          # build, then run everything
//   npx tsx scripts/bench/bench.ts --quick       # fewer repetitions (a smoke test of the bench itself)
//   npx tsx scripts/bench/bench.ts --profile D   # also write .cpuprofile files of broker (D/broker) and helpers (D/helper)
//   BENCH_NOTIFY=off                       # panes do not draw run notices (on, the product's default, otherwise)
//
// The per-stage table comes from a second broker started with TMUX_RUN_TRACE (src/core/protocol/trace.ts):
// each traced call's stamps, plus the client's own (call sent, result in hand) on the same clock.
//
// This file only assembles the sections, in order; each lives in scripts/bench/bench-<section>.ts:
// bench-core (enrollment, server start, round trip, memory, rates, output sizes), bench-enroll,
// bench-fish, bench-zsh, bench-first-prompt (bash and fish), bench-shells, bench-output (tmux_run_output), bench-spawn, bench-sandbox,
// bench-walls, bench-watch, bench-light (listing, idle helpers), bench-start (a helper's own start), bench-remote (a pane at the far end of tmux-run ssh), bench-trace; bench-calls drives the product, bench-floor is the floor,
// bench-common holds the options and statistics, bench-report prints the tables.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { AwakeListing } from '../../src/broker/registry.js';
import type { McpHandle, McpOptions } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope, type Scope } from '../../lab/scope.js';
import { sleep } from '../../lab/waiting.js';
import { IDLE_MS, MID, mustStatus, N, NOTIFY, procStatus, PROFILE, progress, QUICK } from './bench-common.js';
import { enroll, failedRuns } from './bench-calls.js';
import { enrollment, helperMemory, outputSizes, rates, roundTrip, serverStarts } from './bench-core.js';
import { memoryOf } from './bench-enroll.js';
import type { Metrics } from './bench-metrics.js';
import { outputReads } from './bench-output.js';
import { inputBench } from './bench-input.js';
import { report } from './bench-report.js';
import { sandboxBench } from './bench-sandbox.js';
import { spawnBench } from './bench-spawn.js';
import { tracedSection } from './bench-trace.js';
import { wallsBench } from './bench-walls.js';
import { watchCost } from './bench-watch.js';
import { lightCost } from './bench-light.js';
import { startCost } from './bench-start.js';
import { dormantCost } from './bench-dormant.js';
import { remoteCost } from './bench-remote.js';

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
const hasBwrap = existsSync('/usr/bin/bwrap') || Boolean(process.env.TMUX_RUN_BWRAP);

const m: Partial<Metrics> = { loadavg_start: loadavg().map((x) => Number(x.toFixed(2))) };
let scope: Scope | undefined;
let exitCode = 0;
try {
  scope = await openScope({ env: { TMUX_RUN_NOTIFY: NOTIFY, ...(PROFILE ? { TMUX_RUN_NODE: NODE_WRAPPER } : {}) } });
  const server = scope.server;
  const panes: Pane[] = [];
  for (let i = 0; i < 4; i++) panes.push(await server.newPane());
  await enrollment(scope, panes[0]!, runRootDir, m);
  const listings: AwakeListing[] = [];
  for (const pane of panes) listings.push((await enroll(pane, server.registryDir)).listing);
  const one = listings[0]!;
  const helperPid = one.helper_pid;
  const helperStart = mustStatus(helperPid);

  await serverStarts(scope, brokerOptions, m);
  const main: McpHandle = await scope.startMcp(brokerOptions);
  await main.client.listTools();
  const c = main.client;
  const brokerRss = (): number | undefined => (main.pid === null ? undefined : procStatus(main.pid)?.rssKb);
  m.broker_rss_kb_start = brokerRss();

  const helperWarm = await roundTrip(c, one, main.pid, server, m);
  await helperMemory(c, one, { start: helperStart, warm: helperWarm }, brokerRss, m);
  await rates(c, listings, m);
  await outputSizes(c, one, m);
  m.helper!.rss_kb_after_big = procStatus(helperPid)?.rssKb;

  progress(`tmux_run_output: ${N.big} reads of ${MID} bytes, ${N.big} reads at the end of the stream`);
  const reads = await outputReads(c, one, N.big);
  m.output_full_ms = reads.full;
  m.output_poll_ms = reads.poll;
  progress(`input round trips: ${N.rtt} through a pipe, ${N.rtt} through a terminal; the emulator's memory`);
  m.input = await inputBench(c, one, N.rtt);
  progress(`plain runs spawned natively and by Node (TMUX_RUN_SPAWN=node), alternating on two panes`);
  m.spawn = await spawnBench(c, one, server, N.rtt, N.big);
  if (hasBwrap) {
    progress(`sandboxed true beside a plain one: ${N.rtt} each, alternating, on two other panes`);
    m.sandbox = await sandboxBench(c, listings[1]!, server, N.rtt);
  } else progress('no bwrap: the sandboxed runs are not measured');
  if (hasBwrap) {
    progress('spawn and sandbox, the tree before and after, alternating in one process (scripts/bench/bench-walls.ts)');
    m.walls = await wallsBench(QUICK ? 20 : 100);
  }
  progress('a 10 MB run: nobody watching, a live watcher, a stopped one (alternating)');
  m.watch = await watchCost(server, c, listings[2]!, QUICK ? 1 : 5);
  progress(
    'the listing and the helpers at rest, at 1 and 20 panes, each on a server of its own (scripts/bench/bench-light.ts)',
  );
  m.light = await lightCost(QUICK ? 4 : 20, QUICK ? 10 : 40);
  progress(
    "a helper's own start: from its modules, its bundle, its bundle and code cache, in turn (scripts/bench/bench-start.ts)",
  );
  m.start = await startCost(QUICK ? 3 : 15);
  progress(
    "the same, every helper dormant, and a dormant pane's first run in each shell (scripts/bench/bench-dormant.ts)",
  );
  // 100 listings each: at 20 or 40 the ratio wanders with the machine's load (BENCHMARKS.md).
  m.dormant = await dormantCost(QUICK ? 4 : 20, QUICK ? 10 : 100, QUICK ? 2 : 5);
  progress(
    'a zsh at the far end of tmux-run ssh over loopback beside a local zsh pane, interleaved (scripts/bench/bench-remote.ts)',
  );
  m.remote = await remoteCost(QUICK ? 10 : 100);
  if ('skipped' in m.remote) progress(`the remote pane's cost is not measured: ${m.remote.skipped}`);
  else {
    progress(
      'the same with bash (its builtin), fish, then bash without its builtin: the screen check, read by the relay',
    );
    m.remote_screen = [];
    for (const shell of ['bash', 'fish', 'bash-screen'] as const)
      m.remote_screen.push(await remoteCost(QUICK ? 10 : 60, shell));
  }
  m.trace = await tracedSection(scope, brokerOptions, join(runRootDir, 'trace.jsonl'), one, m.sandbox?.boxed);
  // Large outputs leave garbage that V8 collects when the helper goes idle (its memory reducer
  // runs after some seconds without work); the helper's malloc settings then give it back.
  progress(`helper memory after ${IDLE_MS / 1000} s idle`);
  await sleep(IDLE_MS);
  m.helper!.rss_kb_after_big_idle = procStatus(helperPid)?.rssKb;
  m.helper_memory_after = memoryOf(helperPid);
  m.broker_rss_kb = brokerRss();
  m.failed_runs = failedRuns();
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
// The walls of the sandbox section keep their waiter (and its spare) for the next sandboxed run
// until they have been idle 10 minutes; a helper ends them at its exit (helper/walls/walls.ts), and
// so does the bench, once the table is out.
process.exit(0);
