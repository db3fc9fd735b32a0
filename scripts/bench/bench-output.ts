// Long runs in the bench (scripts/bench/bench.ts): what reading a held run's output with
// tmux_run_output costs.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { MID, MID_SCRIPT, N, now, stats, type Stats } from './bench-common.js';

/**
 * The cost of reading a held run's output: one run started with tmux_run_start prints MID bytes
 * and is waited for; then `n` tmux_run_output calls read all MID bytes (one full 64 KiB chunk
 * each), and `n` read at the end of the stream (a poll that finds nothing new). Client-side ms.
 */
export async function outputReads(client: Client, pane: PaneListing, n: number): Promise<{ full: Stats; poll: Stats }> {
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
