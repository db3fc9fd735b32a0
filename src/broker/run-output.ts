// tmux_run_output in the broker: one stream of a held run, from an absolute byte offset, read from
// the target's helper at once. Authorized like a wait (signed for the run and the generations);
// it only reads, so nothing is audited and nothing changes whatever the answer.
import type { OutputReply, StreamName } from '../core/protocol/messages.js';
import { OUTPUT_CHUNK_BYTES } from '../core/protocol/limits.js';
import type { ErrorCode } from '../core/protocol/errors.js';
import { askOver } from './helper-client.js';
import { failure, type Target, type ToolResult } from './result.js';
import { validateOutputInput } from './contract.js';
import { authorizeHeld, isRecord } from './authorize.js';
import { linkAwake, resolveAwake } from './wake.js';
import type { RunContext } from './run-tool.js';
import { escapeOutput } from './escape.js';
import { TAKE_WAIT_MS, takeBy } from './helper-watch.js';
import { noteSilent, silenceWhy } from './unresponsive.js';
import { recordSocket } from './registry.js';
import { helperAlive } from './orphans.js';
import { HELPER_TAKE_MS } from '../core/protocol/limits.js';

export interface OutputArgs {
  target: Target;
  run_id: string;
  stream: StreamName;
  from?: number;
  max_bytes?: number;
}

/** What tmux_run_output returns: a chunk of the stream, or a refusal (nothing changes either way). */
export type OutputResult =
  { ok: true; data: Omit<OutputReply, 'type'> & { target: Target } } | Extract<ToolResult, { ok: false }>;

export async function outputTool(raw: unknown, ctx: Pick<RunContext, 'dir'>): Promise<OutputResult> {
  const refuse = (code: ErrorCode, message: string): OutputResult => failure(code, message, 'not_sent') as OutputResult;
  const v = validateOutputInput(raw);
  if (!v.ok) return refuse('invalid_arguments', `invalid tmux_run_output arguments: ${v.message}`);
  const args = raw as OutputArgs;
  const resolved = await resolveAwake(
    ctx.dir,
    args.target,
    (code, message) => failure(code, message, 'not_sent'),
    `; runs held by a pane's helper end with its enrollment, and their output with them`,
  );
  if (!isRecord(resolved)) return resolved as OutputResult;
  // The helper answers at once, from memory: one that has not within its take-by time is silent.
  const linked = await linkAwake(ctx.dir, resolved, HELPER_TAKE_MS);
  if (linked && !('link' in linked)) return linked as OutputResult;
  const reply =
    linked &&
    (await askOver(
      linked.link,
      {
        type: 'output',
        run_id: args.run_id,
        stream: args.stream,
        from: args.from ?? 0,
        max_bytes: args.max_bytes ?? OUTPUT_CHUNK_BYTES,
        auth: authorizeHeld(linked.rec, 'output', args.run_id),
        take_by: takeBy(),
      },
      (r) => (r.type === 'output' || r.type === 'error' ? r : undefined),
      TAKE_WAIT_MS,
    ));
  if (!reply && linked && helperAlive(linked.rec)) {
    noteSilent(linked.rec, recordSocket(ctx.dir, linked.rec));
    return failure(
      'helper_unreachable',
      `the helper of pane ${resolved.pane_id} did not answer: ${silenceWhy(linked.rec)}; it refuses the request if it reads it later (nothing changes either way); retry once tmux_enrolled_panes shows the pane other than unresponsive`,
      'possibly_sent',
      { state: 'none', authorization: null, completion: { state: 'unobserved' } },
    ) as OutputResult;
  }
  if (!reply)
    return refuse(
      'helper_unreachable',
      `the helper of pane ${resolved.pane_id} did not answer; its enrollment may have ended, and the runs it held with it; list panes again`,
    );
  if (reply.type === 'error') return refuse(reply.code, reply.message);
  const { type: _type, ...chunk } = reply;
  return { ok: true, data: { ...chunk, target: args.target } };
}

/** A short text rendering of a tmux_run_output result. */
export function renderOutput(r: OutputResult): string {
  if (!r.ok) return `tmux_run_output failed: ${r.error.code}: ${r.error.message} [delivery: ${r.error.delivery}]`;
  const d = r.data;
  const where = `${d.stream} of run ${d.run_id.slice(0, 8)} (${d.state}), bytes ${d.from} to ${d.to} of ${d.total_bytes}${d.finished ? ' (final)' : ' so far'}${d.kept_from > 0 ? `; bytes before ${d.kept_from} were not kept` : ''}`;
  if (d.to === d.from)
    return d.finished
      ? `${where}: no bytes from offset ${d.from}; the stream ended at byte ${d.total_bytes}`
      : `${where}: no bytes from offset ${d.from} yet`;
  return d.encoding === 'base64' ? `${where}, not UTF-8, base64:\n${d.data}` : `${where}:\n${escapeOutput(d.data)}`;
}
