// TMUX_RUN_TRACE end to end: the real broker writes one line per tmux_run call, with every stage
// stamped on one clock across broker and helper, and never the script or its output.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGES } from '../../src/core/protocol/trace.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import { openScope, type Scope } from '../../lab/scope.js';
import { waitUntil } from '../../lab/waiting.js';
import type { PaneListing } from '../../src/broker/registry.js';

let scope: Scope;
let listing: PaneListing;
let traced: McpHandle;
let traceFile: string;

beforeAll(async () => {
  scope = await openScope();
  listing = (await enrolledPane(scope.server)).listing;
  traceFile = join(scope.server.home, 'trace.jsonl');
  traced = await scope.startMcp({ env: { TMUX_RUN_TRACE: traceFile } });
});
afterAll(async () => {
  expect(await scope?.close()).toEqual([]);
});

interface TraceLine {
  trace: string;
  run_id?: string;
  code?: string;
  total_ms: number;
  stages_ms: Record<string, number>;
  at: Record<string, number>;
}
const lines = (): TraceLine[] =>
  existsSync(traceFile)
    ? readFileSync(traceFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as TraceLine)
    : [];

describe('TMUX_RUN_TRACE', () => {
  it('writes one line per call to a 0600 file, every stage stamped in order across broker and helper', async () => {
    const secret = 'trace-must-not-show-this-script';
    const r = await callRun(traced.client, listing, `echo ${secret}-output`);
    expect(r.isError).toBe(false);
    const runId = r.structured.data.authorization.run_id as string;
    // The line is written just after the response (its last stamp is the write): wait for it.
    await waitUntil(() => lines().some((l) => l.run_id === runId), 5000, 'the trace line');
    const mine = lines().filter((l) => l.run_id === runId);
    expect(mine).toHaveLength(1);
    const line = mine[0]!;
    expect(line.trace).toBe('tmux-run');
    expect(Object.keys(line.at)).toEqual(expect.arrayContaining([...STAGES]));
    const stamps = STAGES.map((s) => line.at[s]!);
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
    expect(line.total_ms).toBeGreaterThan(0);
    expect(readFileSync(traceFile, 'utf8')).not.toContain(secret);
    expect(statSync(traceFile).mode & 0o777).toBe(0o600);
  });

  it('traces a refusal up to where it stopped, with its code', async () => {
    const r = await callRun(traced.client, { ...listing, generation: 'f'.repeat(32) }, 'true');
    expect(r.structured.error.code).toBe('stale_generation');
    await waitUntil(() => lines().some((l) => l.code === 'stale_generation'), 5000, 'the trace line');
    const line = lines().find((l) => l.code === 'stale_generation')!;
    expect(line.at.validated).toBeDefined();
    expect(line.at.received).toBeUndefined();
    expect(line.at.written).toBeDefined();
  });

  it('a broker without it writes no trace', async () => {
    const before = lines().length;
    const plain = await scope.startMcp();
    expect((await callRun(plain.client, listing, 'true')).isError).toBe(false);
    await plain.close();
    expect(lines()).toHaveLength(before);
    expect(plain.stderr.some((l) => l.includes('"trace":"tmux-run"'))).toBe(false);
  });
});
