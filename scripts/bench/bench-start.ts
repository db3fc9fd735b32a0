// scripts/bench/bench-start.ts: a helper's own start, from the shell's exec of node to the helper
// answering (a section of `npm run bench`, also runnable alone):
//
//   npx tsx scripts/bench/bench-start.ts [--n 15]
//
// In one zsh pane on a private tmux server, N rounds of three enrollments each, in turn: the helper
// loaded from its modules (TMUX_RUN_BUNDLE=off), from its bundle without its code cache (node
// started with one more flag, --no-warnings, which V8 does not see but the cache's key does) and
// from its bundle with the cache; the pane's TMUX_RUN_NODE is a wrapper that execs node in all
// three, so that each pays the same. For each:
// - listening: from the Enter of `source` (sourced at a prompt, the helper is started at once) to
//   the enrollment record in place, which the helper writes once its socket listens;
// - first run: from there, a `tmux_run` of `true` through the SDK's Client to its result;
// and Node's own start under the helper's flags (`node FLAGS -e ...`, to its first line: the floor).
// Then one idle helper each way, side by side in three panes: its PSS once V8 has settled.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isRecordName } from '../../src/core/enrollment/layout.js';
import { readRecord } from '../../src/core/enrollment/record.js';
import { helperFlags } from '../helper-flags.mjs';
import { SOURCE } from '../../lab/product.js';
import { listEnrolled, type AwakeListing } from '../../src/broker/registry.js';
import { makeRunRoot, RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope, type Scope } from '../../lab/scope.js';
import type { Pane } from '../../lab/pane.js';
import { sleep, waitUntil } from '../../lab/waiting.js';
import { run, unenroll } from './bench-calls.js';
import { IDLE_MS, now } from './bench-common.js';
import { median, memoryOf } from './bench-enroll.js';

const WAYS = ['modules', 'bundle', 'bundle+cache'] as const;
type Way = (typeof WAYS)[number];

export interface StartCost {
  /** Node's own start under the helper's flags: its own count to its first line, and its CPU (ms). */
  node_ms: number[];
  node_cpu_ms: number[];
  /**
   * Per way: the helper's own count from node's start to ready and the CPU it used until then
   * (its log line), the Enter of `source` to the record in place, the first run's round trip and
   * the next one's (ms).
   */
  ways: Record<
    Way,
    { ready_ms: number[]; cpu_ms: number[]; listening_ms: number[]; first_run_ms: number[]; second_run_ms: number[] }
  >;
  /** Per way, one helper's PSS after a run and IDLE_MS at rest (kB). */
  idle_pss_kb: Partial<Record<Way, number>>;
}

/** Node's own start under the helper's flags: its count to its first line, and the CPU it used (ms). */
function nodeStart(flags: string[]): [number, number] {
  const probe = 'const c = process.cpuUsage(); console.log(performance.now(), (c.user + c.system) / 1000)';
  const out = execFileSync(process.execPath, [...flags, '-e', probe], { encoding: 'utf8' });
  const [ms, cpu] = out.trim().split(' ').map(Number);
  return [ms!, cpu!];
}

/** A helper per way, each in a pane of its own, at rest after one run: its PSS. */
async function idleMemory(scope: Scope, client: Parameters<typeof run>[0], out: StartCost): Promise<void> {
  const dir = scope.server.registryDir;
  const helpers: [Way, number][] = [];
  for (const way of WAYS) {
    const pane = await scope.server.newPane();
    await pane.run(`${wayEnv(way)}; export TMUX_RUN_NODE=${wrapper(dir, way)}`);
    const { listing } = await enrollUntilRecord(pane, dir);
    await run(client, listing, 'true');
    helpers.push([way, listing.helper_pid]);
  }
  await sleep(IDLE_MS);
  for (const [way, pid] of helpers) out.idle_pss_kb[way] = memoryOf(pid)?.pss_kb;
}

const wayEnv = (way: Way): string => (way === 'modules' ? 'export TMUX_RUN_BUNDLE=off' : 'unset TMUX_RUN_BUNDLE');
const wrapper = (dir: string, way: Way): string => join(dir, '..', way === 'bundle' ? 'node-no-cache' : 'node');

async function oneStart(
  pane: Pane,
  dir: string,
  way: Way,
  client: Parameters<typeof run>[0],
): Promise<[number, number, number, number, number]> {
  await pane.run(`${wayEnv(way)}; export TMUX_RUN_NODE=${wrapper(dir, way)}`);
  const { listing, ms } = await enrollUntilRecord(pane, dir);
  const first = await run(client, listing, 'true');
  const second = await run(client, listing, 'true');
  const log = readFileSync(`${readRecord(join(dir, `${listing.enrollment_generation}.json`)).channel}.log`, 'utf8');
  const m = /ready (\d+) ms after node started \(cpu (\d+) ms\)/.exec(log);
  if (!m) throw new Error(`no ready time in the helper's log: ${log}`);
  const [ready, cpu] = [Number(m[1]), Number(m[2])];
  await sleep(300);
  await unenroll(pane, dir, listing.helper_pid);
  return [ms, first.ms, ready, cpu, second.ms];
}

/** bench-calls' enroll, timed from the Enter to the record's appearance (the listing follows). */
async function enrollUntilRecord(pane: Pane, dir: string): Promise<{ listing: AwakeListing; ms: number }> {
  const records = (): string[] => readdirSync(dir).filter(isRecordName);
  await pane.waitForPrompt();
  const before = new Set(records());
  await pane.type(SOURCE);
  const t0 = now();
  await pane.type('', { enter: true });
  await waitUntil(() => records().some((n) => !before.has(n)), 10000, `the record of ${pane.id}`, 1);
  const ms = now() - t0;
  const listing = await waitUntil(
    async () =>
      (await listEnrolled(dir)).find((p): p is AwakeListing => p.pane_id === pane.id && p.helper_pid !== null),
    10000,
    `${pane.id} to be listed`,
    1,
  );
  return { listing, ms };
}

export async function startCost(n: number): Promise<StartCost> {
  const scope = await openScope();
  const out: StartCost = {
    node_ms: [],
    node_cpu_ms: [],
    idle_pss_kb: {},
    ways: {
      modules: { ready_ms: [], cpu_ms: [], listening_ms: [], first_run_ms: [], second_run_ms: [] },
      bundle: { ready_ms: [], cpu_ms: [], listening_ms: [], first_run_ms: [], second_run_ms: [] },
      'bundle+cache': { ready_ms: [], cpu_ms: [], listening_ms: [], first_run_ms: [], second_run_ms: [] },
    },
  };
  try {
    const pane = await scope.server.newPane();
    const { client } = await scope.startMcp();
    const flags = helperFlags();
    const home = join(scope.server.registryDir, '..');
    for (const [name, extra] of [
      ['node', ''],
      ['node-no-cache', ' --no-warnings'],
    ] as const)
      writeFileSync(join(home, name), `#!/bin/sh\nexec '${process.execPath}'${extra} "$@"\n`, { mode: 0o700 });
    await oneStart(pane, scope.server.registryDir, 'bundle', client); // warm the page cache
    for (let i = 0; i < n; i++) {
      const [ms, cpu] = nodeStart(flags);
      out.node_ms.push(ms);
      out.node_cpu_ms.push(cpu);
      for (const way of WAYS) {
        const [listening, first, ready, cpu, second] = await oneStart(pane, scope.server.registryDir, way, client);
        out.ways[way].second_run_ms.push(second);
        out.ways[way].ready_ms.push(ready);
        out.ways[way].cpu_ms.push(cpu);
        out.ways[way].listening_ms.push(listening);
        out.ways[way].first_run_ms.push(first);
      }
    }
    await idleMemory(scope, client, out);
    return out;
  } finally {
    await scope.close().catch(() => undefined);
  }
}

/** Table rows (markdown) for the bench's report. */
export function startCostLines(c: StartCost): string[] {
  const f = (xs: number[]): string => median(xs).toFixed(1);
  const n = c.node_ms.length;
  return [
    `| node's own start under the helper's flags, to its first line (its CPU) (ms, medians, n=${n}) | ${f(c.node_ms)} (${f(c.node_cpu_ms)}) | | |`,
    ...WAYS.map((w) => {
      const { ready_ms: up, cpu_ms: cpu, listening_ms: l, first_run_ms: r, second_run_ms: r2 } = c.ways[w];
      const total = l.map((x, i) => x + r[i]!);
      const pss = c.idle_pss_kb[w];
      const mb = pss === undefined ? '?' : (pss / 1024).toFixed(1);
      return `| helper start, ${w}: node start to ready (its CPU); Enter of source to listening + first run = total; the next run (ms, medians, n=${n}); idle PSS (MB) | ${f(up)} (${f(cpu)}); ${f(l)} + ${f(r)} = ${f(total)}; ${f(r2)}; ${mb} | | |`;
    }),
  ];
}

// Alone: `npx tsx scripts/bench/bench-start.ts [--n N]` prints the rows and the JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf('--n');
  const root = makeRunRoot('tmux-run-bench-start-');
  process.env[RUN_ROOT_VAR] = root;
  try {
    const c = await startCost(i >= 0 ? Number(process.argv[i + 1]) : 15);
    console.log(startCostLines(c).join('\n'));
    console.log(JSON.stringify(c));
  } finally {
    await sweepRunRoot(root);
  }
}
