// A trace of every hop of a run: monotonic stamps at each stage, in broker and helper.
// TMUX_RUN_TRACE in the broker's environment turns it on: `1` writes one JSON line per run to
// stderr, an absolute path appends the lines to that file (created 0600). The broker asks the
// helper for its stamps in the run request; a run that was not asked for stamps records none.
// Stamps are milliseconds of CLOCK_MONOTONIC (process.hrtime): system-wide on Linux, so the
// broker's and the helper's stamps of one run are on one clock and subtract across processes.
import { appendFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';

/** The stages of one run, in the order they happen; each one's cost is its stamp minus the previous one's. */
export const STAGES = [
  // broker
  'parsed', // the SDK's transport parsed the JSON-RPC message
  'handled', // the tool handler was entered (SDK dispatch)
  'validated', // the arguments passed the contract's input schema and the script checks
  'resolved', // the target resolved to its enrollment record in the registry
  'signed', // binding signed
  'connected', // a link to the helper is open
  'sent', // the run request is built and about to be written to the socket
  // helper
  'received', // the request frame was decoded
  'verified', // the request was validated and its token, digest and generations checked
  'queued', // the job is queued (and 'queued' replied)
  'asked', // the shell's line editor was asked whether it is idle and empty
  'answered', // the line editor answered
  'snapshot', // the snapshot (cwd, environment) was read and parsed
  'audited', // the audit trail's start entry was written
  'spawned', // spawn() returned
  'exited', // /bin/sh exited
  'drained', // its output ended (or the drain ran out)
  'replied', // the final reply is built and about to be written to the socket
  // broker
  'reply', // the final reply was decoded and validated
  'encoded', // the result was built (output streams encoded)
  'checked', // the result was validated against the output schema and rendered
  'written', // the response was written to stdout
] as const;

export type Stage = (typeof STAGES)[number];
export type Stamps = Partial<Record<Stage, number>>;

/** Where the helper's stamps start and end in STAGES. */
export const HELPER_STAGES: readonly Stage[] = STAGES.slice(STAGES.indexOf('received'), STAGES.indexOf('reply'));

/** Milliseconds of CLOCK_MONOTONIC, with nanosecond resolution. */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** The stamps of one run. */
export class Trace {
  readonly stamps: Stamps = {};
  /** What the run was, for the trace line (run id, script bytes, output bytes, outcome). */
  readonly info: Record<string, string | number | boolean> = {};

  mark(stage: Stage, at: number = monotonicMs()): void {
    this.stamps[stage] = at;
  }

  /** Adds stamps another process recorded (only known stage names with numeric values). */
  merge(stamps: unknown): void {
    if (typeof stamps !== 'object' || stamps === null) return;
    for (const s of HELPER_STAGES) {
      const v = (stamps as Record<string, unknown>)[s];
      if (typeof v === 'number' && Number.isFinite(v)) this.stamps[s] = v;
    }
  }

  /** Each stage's cost (ms since the previous stamped stage), and the total from first to last stamp. */
  costs(): { stages: Partial<Record<Stage, number>>; total: number } {
    const stages: Partial<Record<Stage, number>> = {};
    let first: number | undefined;
    let prev: number | undefined;
    for (const s of STAGES) {
      const at = this.stamps[s];
      if (at === undefined) continue;
      if (prev !== undefined) stages[s] = round(at - prev);
      first ??= at;
      prev = at;
    }
    return { stages, total: first !== undefined && prev !== undefined ? round(prev - first) : 0 };
  }

  /** The trace line: the run's info, each stage's cost, the total, and the raw stamps. */
  line(): string {
    const { stages, total } = this.costs();
    return JSON.stringify({ trace: 'tmux-run', ...this.info, total_ms: total, stages_ms: stages, at: this.stamps });
  }
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/** Where trace lines go, from TMUX_RUN_TRACE: undefined (off), stderr (`1`), or a file (an absolute path). */
export type TraceSink = ((line: string) => void) | undefined;

export function traceSink(value: string | undefined = process.env.TMUX_RUN_TRACE): TraceSink {
  if (!value || value === '0') return undefined;
  if (isAbsolute(value)) return (line) => appendFileSync(value, line + '\n', { mode: 0o600 });
  return (line) => process.stderr.write(line + '\n');
}
