// tmux_run_input and tmux_run_screen in the broker: bytes for a held run's stdin (or its terminal),
// and a terminal run's screen, each asked of the target's helper at once. Authorized like a wait
// (signed for the run and the generations). Neither is audited per call: the run's end entry
// counts the input given, never its content.
import type { ErrorCode } from '../core/protocol/errors.js';
import type { Reply, Request, ScreenReply } from '../core/protocol/messages.js';
import { MAX_INPUT_BYTES } from '../core/protocol/limits.js';
import { askOver } from './helper-client.js';
import type { Delivery, Target } from './result.js';
import { validateInputInput, validateScreenInput } from './contract.js';
import { authorizeHeld, isRecord } from './authorize.js';
import { linkAwake, resolveAwake } from './wake.js';
import type { RunContext } from './run-tool.js';
import { escapeControls } from './escape.js';
import { TAKE_WAIT_MS, takeBy } from './helper-watch.js';
import { noteSilent, silenceWhy } from './unresponsive.js';
import { recordSocket } from './registry.js';
import { helperAlive } from './orphans.js';
import { HELPER_TAKE_MS } from '../core/protocol/limits.js';

export interface InputArgs {
  target: Target;
  run_id: string;
  data?: string;
  encoding?: 'utf-8' | 'base64';
  eof?: boolean;
}

type Refusal = { ok: false; error: { code: ErrorCode; message: string; delivery: Delivery } };
type InputTaken = Extract<Reply, { type: 'input_taken' }>;
export type InputResult = { ok: true; data: Omit<InputTaken, 'type'> } | Refusal;
export type ScreenResult = { ok: true; data: Omit<ScreenReply, 'type'> } | Refusal;

const refuse = (code: ErrorCode, message: string, delivery: Delivery = 'not_sent'): Refusal => ({
  ok: false,
  error: { code, message: escapeControls(message).slice(0, 2000), delivery },
});

/** The bytes of `data` as the call means them, or why they cannot be taken. */
function decoded(args: InputArgs): Buffer | Refusal {
  const text = args.data ?? '';
  let bytes: Buffer;
  if (args.encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1)
      return refuse('invalid_arguments', 'invalid tmux_run_input arguments: data is not base64; nothing was written');
    bytes = Buffer.from(text, 'base64');
  } else bytes = Buffer.from(text, 'utf8');
  if (bytes.length > MAX_INPUT_BYTES)
    return refuse(
      'invalid_arguments',
      `invalid tmux_run_input arguments: data is ${bytes.length} bytes once decoded, over the ${MAX_INPUT_BYTES} a call may give; send it in parts; nothing was written`,
    );
  return bytes;
}

/** Sends one request about a held run to its helper; the helper's error becomes the call's refusal. */
async function ask<T extends Reply['type']>(
  ctx: Pick<RunContext, 'dir'>,
  args: { target: Target; run_id: string },
  tool: string,
  build: (auth: ReturnType<typeof authorizeHeld>) => Request,
  op: 'input' | 'screen',
  want: T,
): Promise<Extract<Reply, { type: T }> | Refusal> {
  const resolved = await resolveAwake(
    ctx.dir,
    args.target,
    (code, message) => refuse(code, message),
    `; runs held by a pane's helper end with its enrollment (${tool} was not sent)`,
  );
  if (!isRecord(resolved)) return resolved as Refusal;
  // The helper answers at once, from memory: one that has not within its take-by time is silent.
  const linked = await linkAwake(ctx.dir, resolved, HELPER_TAKE_MS);
  if (linked && !('link' in linked)) return linked as Refusal;
  const reply =
    linked &&
    (await askOver(
      linked.link,
      { ...build(authorizeHeld(linked.rec, op, args.run_id)), take_by: takeBy() } as Request,
      (r) => (r.type === want || r.type === 'error' ? r : undefined),
      TAKE_WAIT_MS,
    ));
  if (!reply && linked && helperAlive(linked.rec)) {
    noteSilent(linked.rec, recordSocket(ctx.dir, linked.rec));
    return refuse(
      'helper_unreachable',
      `the helper of pane ${resolved.pane_id} did not answer: ${silenceWhy(linked.rec)}; it refuses the request if it reads it later, so ${op === 'input' ? 'the input was not written and will not be' : 'nothing changes'}; retry once tmux_enrolled_panes shows the pane other than unresponsive`,
      'possibly_sent',
    );
  }
  if (!reply)
    return refuse(
      'helper_unreachable',
      `the helper of pane ${resolved.pane_id} did not answer; its enrollment may have ended, and the runs it held with it; list panes again${op === 'input' && linked ? ' (whether the input was taken is unknown)' : ''}`,
      // Not connected: nothing was sent.
      op === 'input' && linked ? 'possibly_sent' : 'not_sent',
    );
  if (reply.type === 'error')
    // unknown_run: the helper holds no such run (not_sent: docs/tools.md); anything else it refused, having seen it.
    return refuse(reply.code, reply.message, reply.code === 'unknown_run' ? 'not_sent' : 'observed');
  return reply as Extract<Reply, { type: T }>;
}

export async function inputTool(raw: unknown, ctx: Pick<RunContext, 'dir'>): Promise<InputResult> {
  const v = validateInputInput(raw);
  if (!v.ok) return refuse('invalid_arguments', `invalid tmux_run_input arguments: ${v.message}; nothing was written`);
  const args = raw as InputArgs;
  const data = decoded(args);
  if (!Buffer.isBuffer(data)) return data;
  const r = await ask(
    ctx,
    args,
    'tmux_run_input',
    (auth) => ({ type: 'input', run_id: args.run_id, data, eof: args.eof === true, auth }),
    'input',
    'input_taken',
  );
  if (!('type' in r)) return r;
  const { type: _type, ...taken } = r;
  return { ok: true, data: taken };
}

export async function screenTool(raw: unknown, ctx: Pick<RunContext, 'dir'>): Promise<ScreenResult> {
  const v = validateScreenInput(raw);
  if (!v.ok) return refuse('invalid_arguments', `invalid tmux_run_screen arguments: ${v.message}`);
  const args = raw as { target: Target; run_id: string };
  const r = await ask(
    ctx,
    args,
    'tmux_run_screen',
    (auth) => ({ type: 'screen', run_id: args.run_id, auth }),
    'screen',
    'screen',
  );
  if (!('type' in r)) return r;
  const { type: _type, ...screen } = r;
  return { ok: true, data: screen };
}

const failed = (tool: string, r: Refusal): string =>
  `${tool} failed: ${r.error.code}: ${r.error.message} [delivery: ${r.error.delivery}]`;

/** A short text rendering of a tmux_run_input result. */
export function renderInput(r: InputResult): string {
  if (!r.ok) return failed('tmux_run_input', r);
  const d = r.data;
  const when =
    d.state === 'running' ? 'written to the run' : `held until the run starts (it is ${d.state.replace('_', ' ')})`;
  return `${d.accepted_bytes} bytes taken for run ${d.run_id.slice(0, 8)}, ${when}; ${d.input_bytes} bytes of input given in all${d.closed ? '; its stdin is now closed (eof)' : ''}`;
}

/** A short text rendering of a tmux_run_screen result: the screen's rows, then what else is known. */
export function renderScreen(r: ScreenResult): string {
  if (!r.ok) return failed('tmux_run_screen', r);
  const d = r.data;
  const facts = [
    `${d.cols}x${d.rows}`,
    `cursor at row ${d.cursor.y + 1}, column ${d.cursor.x + 1}${d.cursor.visible ? '' : ' (hidden)'}`,
    ...(d.alternate ? ['full-screen program (alternate screen)'] : []),
    ...(d.title ? [`title ${JSON.stringify(d.title)}`] : []),
    ...(d.echo ? [] : ['echo off (a password prompt?): the person can answer it with tmux-run attach']),
    ...(d.attached ? ['the person has taken it over (tmux-run attach)'] : []),
    d.finished ? 'the run has finished' : 'running',
  ];
  const last = d.lines.reduce((n, l, i) => (l !== '' ? i + 1 : n), 0);
  const rows = d.lines.slice(0, Math.max(last, d.cursor.y + 1)).map((l) => `| ${escapeControls(l)}`);
  return [`screen of run ${d.run_id.slice(0, 8)} (${facts.join('; ')}):`, ...rows].join('\n');
}
