// tmux_run in the broker: validate, resolve the target to its live enrollment, authorize (digest,
// run id, HMAC over the generations), take a link to the pane's helper, and hand the run to its
// exchange (run-exchange.ts), which reports what happened.
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import { scriptDigest } from '../core/enrollment/generation.js';
import { recordSocket } from './registry.js';
import { ConnectError } from './helper-client.js';
import { helperLinks } from './link-pool.js';
import { failure, type ToolResult } from './result.js';
import type { ErrorCode } from '../core/protocol/errors.js';
import { validateRunInput } from './contract.js';
import { authorizeRun, isRecord, scriptProblem } from './authorize.js';
import { connectAwake, resolveAwake } from './wake.js';
import { exchangeRun } from './run-exchange.js';
import type { RunArgs, RunContext } from './run-context.js';

export type { Progress, RunArgs, RunContext } from './run-context.js';

/** A refusal before anything was sent, audited and logged as the broker's. */
type RefusedRun = { run_id?: string; pane_id: string; script_digest?: string; tag: string };

/** Records a refusal the broker made (nothing was sent) in the audit trail and the server's log. */
export function auditRefusal(ctx: RunContext, run: RefusedRun, code: ErrorCode): void {
  ctx.audit.tryAppend({
    event: 'refused',
    run_id: run.run_id ?? '',
    pane_id: run.pane_id,
    ...(run.script_digest ? { script_digest: run.script_digest } : {}),
    outcome: code,
    by: 'broker',
    ...(ctx.client ? { client: ctx.client } : {}),
  });
  ctx.log(`${run.tag} refused: ${code}`);
}

/** A refuser for one call: audits the refusal and returns its not_sent result. */
export function brokerRefusal(ctx: RunContext, run: RefusedRun): (code: ErrorCode, message: string) => ToolResult {
  return (code, message) => {
    auditRefusal(ctx, run, code);
    return failure(code, message, 'not_sent');
  };
}

/** Runs one tmux_run call to its end; never throws, always returns one result. */
export async function runTool(raw: unknown, ctx: RunContext): Promise<ToolResult> {
  const v = validateRunInput(raw);
  if (!v.ok) return failure('invalid_arguments', `invalid tmux_run arguments: ${v.message}`, 'not_sent');
  const args = raw as RunArgs;
  const bad = scriptProblem(args.script, 'tmux_run');
  if (bad) return bad;
  const digest = scriptDigest(args.script);
  ctx.trace?.mark('validated');
  const resolved = await resolveAwake(
    ctx.dir,
    args.target,
    brokerRefusal(ctx, { pane_id: args.target.id, script_digest: digest, tag: `run (sha256 ${digest.slice(0, 12)})` }),
  );
  if (!isRecord(resolved)) return resolved;
  ctx.trace?.mark('resolved');
  return authorizedRun(ctx, args, resolved, digest);
}

/** Signs the run for `rec`, takes a link to its helper and hands the run to its exchange. */
async function authorizedRun(
  ctx: RunContext,
  args: RunArgs,
  rec: EnrollmentRecord,
  digest: string,
): Promise<ToolResult> {
  const trace = ctx.trace;
  const { binding, token, auth } = authorizeRun(rec, args.script, args);
  const runId = binding.run_id;
  if (trace) {
    trace.mark('signed');
    trace.info.run_id = runId;
    trace.info.script_bytes = Buffer.byteLength(args.script, 'utf8');
  }
  const refuse = brokerRefusal(ctx, {
    run_id: runId,
    pane_id: args.target.id,
    script_digest: digest,
    tag: `run ${runId.slice(0, 8)} (sha256 ${digest.slice(0, 12)})`,
  });
  if (ctx.signal?.aborted) return refuse('cancelled', 'the call was cancelled before it was sent');

  const links = ctx.links ?? helperLinks;
  let linked;
  try {
    // (A pane that went dormant since it was resolved is woken, once: the binding holds for its new helper.)
    linked = await connectAwake(ctx.dir, rec, refuse, (socket) => links.take(socket));
  } catch (e) {
    return refuse(
      'helper_unreachable',
      `the helper of pane ${rec.pane_id} did not answer (${e instanceof ConnectError ? (e.errno ?? 'error') : 'error'}); its enrollment may have ended; list panes again`,
    );
  }
  if (!('link' in linked)) return linked;
  trace?.mark('connected');
  const socket = recordSocket(ctx.dir, linked.rec);
  return exchangeRun(
    { ctx, rec: linked.rec, target: args.target, runId, digest, auth, t: linked.link, links, socket },
    {
      type: 'run',
      binding,
      token,
      script: args.script,
      progress: ctx.onProgress !== undefined,
      ...(trace ? { trace: true } : {}),
      ...(ctx.client ? { client: ctx.client } : {}),
    },
  );
}
