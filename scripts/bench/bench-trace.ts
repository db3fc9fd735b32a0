// The per-stage trace of the bench (scripts/bench/bench.ts): a second broker started with TMUX_RUN_TRACE
// (src/core/protocol/trace.ts) writes each traced call's stamps; with the client's own (call sent,
// result in hand) on the same clock they say where a run's time goes.
import { existsSync, readFileSync } from 'node:fs';
import { STAGES, type Stamps } from '../../src/core/protocol/trace.js';
import type { PaneListing } from '../../src/broker/registry.js';
import type { McpOptions } from '../../lab/mcp.js';
import type { Scope } from '../../lab/scope.js';
import { sleep } from '../../lab/waiting.js';
import { BIG, BIG_SCRIPT, MID, MID_SCRIPT, N, progress, stats, type Stats } from './bench-common.js';
import { clientStamps, run, tracing } from './bench-calls.js';
import { PACE_MS } from './bench-walls.js';

/** The stages of a traced call, the client's two at either end. */
export const TRACE_STAGES = ['call', ...STAGES, 'result'] as const;
export type TraceStage = (typeof TRACE_STAGES)[number];

export interface StageTable {
  /** Each stage's cost (ms since the stage before it), over the traced runs. */
  stages: Partial<Record<TraceStage, Stats>>;
  sum_of_medians: number;
  /** The same runs end to end, as the client saw them. */
  end_to_end: Stats;
  n: number;
}

/** The per-stage costs of the traced runs `ids`, from the trace file and the client's stamps. */
export function stageTable(traceFile: string, ids: string[]): StageTable {
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

/** `paced`: `true` on the plain pane PACE_MS apart; `boxed`: the same in the sandboxed pane of sandboxBench (both absent without bwrap). */
export interface Traces {
  true: StageTable;
  mid: StageTable;
  big: StageTable;
  paced?: StageTable;
  boxed?: StageTable;
}

/**
 * The same three runs (and, with a sandbox, `true` paced on a plain and on the sandboxed pane)
 * through a broker that traces every call, to see where their time goes.
 */
export async function tracedSection(
  scope: Scope,
  brokerOptions: McpOptions,
  traceFile: string,
  one: PaneListing,
  boxed: PaneListing | undefined,
): Promise<Traces> {
  progress(`traced runs (TMUX_RUN_TRACE): ${N.rtt} of true, ${N.big} of ${MID} and of ${BIG} bytes`);
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
  const trace: Traces = {
    true: stageTable(traceFile, await tracedRuns('true', N.rtt)),
    mid: stageTable(traceFile, await tracedRuns(MID_SCRIPT, N.big)),
    big: stageTable(traceFile, await tracedRuns(BIG_SCRIPT, N.big, { stdout_limit: BIG })),
    // Paced as the sandbox section's calls are (PACE_MS apart), plain and sandboxed alike.
    ...(boxed
      ? {
          paced: stageTable(traceFile, await tracedRuns('true', N.rtt, {}, one, PACE_MS)),
          boxed: stageTable(traceFile, await tracedRuns('true', N.rtt, {}, boxed, PACE_MS)),
        }
      : {}),
  };
  await traced.close();
  return trace;
}
