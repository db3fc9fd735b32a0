// The watch feed's events (pure): what `tmux-run watch` is told of a run's start, its output, the
// output a watcher missed, its end, and a refusal. Script text goes only to watchers (the person),
// as its first lines escaped and cut as in the ask question; never to the audit trail.
import type { Reply, WatchApproval, WatchEvent, WatchStream } from '../../src/core/protocol/messages.js';
import { scriptPreview } from '../shell/approval.js';

/** What an event needs to know of a job (helper/queue/job.ts). */
export interface Watched {
  binding: { run_id: string; script_digest: string };
  script: string;
  client?: string;
  background: boolean;
  /** A pipe or terminal run's input (its start event says which). */
  input?: { mode: 'pipe' | 'terminal' };
  /** How the run was let through, and the walls it runs in (set at dispatch). */
  approval?: WatchApproval;
  sandbox?: string;
  startedAt?: number;
  run?: { stdoutBytes: number; stderrBytes: number };
}

const who = (client: string | undefined): { client?: string } => (client ? { client } : {});

/** A run's start: who asked, how it was let through, its walls, its digest and its first lines. */
export function startEvent(job: Watched, at: number): WatchEvent {
  const { shown, lines } = scriptPreview(job.script);
  return {
    type: 'watch_event',
    ev: 'start',
    run_id: job.binding.run_id,
    at,
    ...who(job.client),
    script_digest: job.binding.script_digest,
    approval: job.approval ?? 'auto',
    sandbox: (job.sandbox ?? 'off').slice(0, 64),
    background: job.background,
    ...(job.input ? { input: job.input.mode } : {}),
    script_bytes: Buffer.byteLength(job.script, 'utf8'),
    script_lines: lines,
    preview: shown,
  };
}

export const outputEvent = (
  runId: string,
  stream: WatchStream,
  from: number,
  data: Buffer,
  at: number,
): WatchEvent => ({
  type: 'watch_event',
  ev: 'output',
  run_id: runId,
  at,
  stream,
  from,
  data,
});

export const missedEvent = (runId: string, stream: WatchStream, bytes: number, at: number): WatchEvent => ({
  type: 'watch_event',
  ev: 'missed',
  run_id: runId,
  at,
  stream,
  bytes,
});

/** A started run's end, from its final reply: the exit status or signal (or the error), duration, bytes. */
export function endEvent(job: Watched, reply: Extract<Reply, { type: 'done' | 'error' }>, at: number): WatchEvent {
  const completion = reply.completion;
  return {
    type: 'watch_event',
    ev: 'end',
    run_id: job.binding.run_id,
    at,
    ok: reply.type === 'done',
    ...(reply.type === 'error' ? { code: reply.code } : {}),
    ...(completion ? { completion } : {}),
    duration_ms: reply.type === 'done' ? reply.duration_ms : Math.max(0, at - (job.startedAt ?? at)),
    stdout_bytes: job.run?.stdoutBytes ?? 0,
    stderr_bytes: job.run?.stderrBytes ?? 0,
  };
}

/** A run that ended before its script started: refused (its code and the helper's message), or cancelled while queued. */
export function refusedEvent(
  b: { run_id: string; script_digest?: string },
  client: string | undefined,
  code: string,
  message: string,
  at: number,
): WatchEvent {
  return {
    type: 'watch_event',
    ev: 'refused',
    run_id: b.run_id,
    at,
    ...who(client),
    ...(b.script_digest ? { script_digest: b.script_digest } : {}),
    code: code.slice(0, 64),
    message: message.slice(0, 2000),
  };
}
