// Talking to a running program in the bench (scripts/bench/bench.ts): what an input round trip costs
// (tmux_run_input, then tmux_run_output polled until the byte comes back: `cat` on a pipe, and a
// terminal's own echo), and what a terminal run's emulator holds in memory.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AwakeListing } from '../../src/broker/registry.js';
import { Emulator } from '../../helper/run/emulator.js';
import { DEFAULT_TERMINAL_SIZE, SCREEN_SCROLLBACK } from '../../src/core/protocol/limits.js';
import { now, procStatus, stats, type Stats } from './bench-common.js';

export interface InputBench {
  /** tmux_run_input of one byte to the byte read back with tmux_run_output, client-side ms. */
  pipe_ms: Stats;
  terminal_ms: Stats;
  /** The emulator (@xterm/headless), measured in this process: loading it, and each one after 256 KiB of output. */
  emulator: { load_ms: number; load_rss_kb: number; heap_kb_each: number; count: number; scrollback: number };
  /** The helper's resident memory before its first terminal run and after it (the emulator loaded). */
  helper_rss_kb: { before?: number; after?: number };
}

type Call = {
  structuredContent?: { ok?: boolean; pending?: { run_id?: string; state?: string }; data?: unknown };
};

async function roundTrips(client: Client, pane: AwakeListing, mode: 'pipe' | 'terminal', n: number): Promise<Stats> {
  const target = { kind: 'pane', id: pane.pane_id, generation: pane.generation };
  const call = (name: string, args: object): Promise<Call> =>
    client.callTool({ name, arguments: { target, ...args } }) as Promise<Call>;
  const started = await call('tmux_run_start', { script: 'exec cat', input: mode, wait_ms: 0 });
  const runId = started.structuredContent?.pending?.run_id;
  if (!runId) throw new Error(`the ${mode} run for the input round trip did not start`);
  for (let i = 0; i < 100; i++) {
    const p = await call('tmux_run_wait', { run_id: runId, wait_ms: 100 });
    if (p.structuredContent?.pending?.state === 'running') break;
  }
  let seen = 0;
  const times: number[] = [];
  for (let i = 0; i < n + 5; i++) {
    const t0 = now();
    const r = await call('tmux_run_input', { run_id: runId, data: 'x' });
    if (!r.structuredContent?.ok) throw new Error(`tmux_run_input failed: ${JSON.stringify(r.structuredContent)}`);
    for (;;) {
      const o = await call('tmux_run_output', { run_id: runId, stream: 'stdout', from: seen });
      const d = o.structuredContent?.data as { to: number } | undefined;
      if (d && d.to > seen) {
        seen = d.to;
        break;
      }
    }
    if (i >= 5) times.push(now() - t0);
  }
  await call('tmux_run_cancel', { run_id: runId, wait_ms: 5000 });
  return stats(times);
}

/** Emulators as a terminal run's helper keeps them: 80 x 24, each fed 256 KiB of lines and escapes. */
async function emulatorMemory(count: number): Promise<InputBench['emulator']> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const rss0 = process.memoryUsage().rss;
  const t0 = now();
  const keep = [new Emulator(DEFAULT_TERMINAL_SIZE)];
  const load_ms = now() - t0;
  const load_rss_kb = Math.round((process.memoryUsage().rss - rss0) / 1024);
  const chunk = Buffer.from('\x1b[32mok\x1b[0m line of build output, with some width to it: 0123456789\r\n'.repeat(64));
  gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  for (let i = 0; i < count; i++) keep.push(new Emulator(DEFAULT_TERMINAL_SIZE));
  for (const e of keep.slice(1)) for (let k = 0; k < (256 * 1024) / chunk.length; k++) e.write(chunk);
  await Promise.all(keep.map((e) => e.view()));
  gc?.();
  const heap_kb_each = Math.round((process.memoryUsage().heapUsed - heap0) / 1024 / count);
  for (const e of keep) e.dispose();
  return { load_ms, load_rss_kb, heap_kb_each, count, scrollback: SCREEN_SCROLLBACK };
}

export async function inputBench(client: Client, pane: AwakeListing, n: number): Promise<InputBench> {
  const before = procStatus(pane.helper_pid)?.rssKb;
  const pipe_ms = await roundTrips(client, pane, 'pipe', n);
  const terminal_ms = await roundTrips(client, pane, 'terminal', n);
  const after = procStatus(pane.helper_pid)?.rssKb;
  return { pipe_ms, terminal_ms, emulator: await emulatorMemory(20), helper_rss_kb: { before, after } };
}

const ms = (s: Stats): string => `${s.median.toFixed(2)} ms (p90 ${s.p90.toFixed(2)}, n ${s.n})`;

export function inputLines(b: InputBench): string[] {
  const e = b.emulator;
  const { before, after } = b.helper_rss_kb;
  return [
    '',
    '| input to a running program | median |',
    '| --- | ---: |',
    `| input round trip, pipe (tmux_run_input of 1 byte to it read back from \`cat\` with tmux_run_output) | ${ms(b.pipe_ms)} |`,
    `| input round trip, terminal (the same through the run's own pty) | ${ms(b.terminal_ms)} |`,
    `| emulator (@xterm/headless 80x24, scrollback ${e.scrollback}) first load | ${e.load_ms.toFixed(1)} ms, ${e.load_rss_kb} KB RSS |`,
    `| emulator heap each, after 256 KiB of output (${e.count} of them) | ${e.heap_kb_each} KB |`,
    `| helper RSS before its first terminal run / after | ${before ?? '?'} KB / ${after ?? '?'} KB |`,
  ];
}
