// tmux_run in the broker: validate, resolve the target to its live enrollment, authorize (digest,
// run id, HMAC over the generations), hand the run to the pane's helper, and report what happened.
import { RegistryDirError } from '../enrollment/layout.js';
import { freshId, scriptDigest } from '../enrollment/generation.js';
import { signBinding, type Binding } from '../protocol/token.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { Reply } from '../protocol/messages.js';
import { terminateGroup } from '../os/process-group.js';
import { recordProblem, recordSocket, scanRecords } from './registry.js';
import { ConnectError, connectHelper, exchange } from './helper-client.js';
import { authorizationOf, failure, encodeStream, type ToolResult } from './result.js';
import { validateRunInput } from './contract.js';
import type { ErrorCode } from '../protocol/errors.js';
import { DEFAULT_OUTPUT_LIMIT, MAX_SCRIPT_BYTES } from '../protocol/limits.js';

/** After a cancel, how long the broker waits for the helper to report before it stops the group itself. */
const CANCEL_WAIT_MS = 5000;

export interface RunArgs {
  target: { kind: 'pane'; id: string; generation: string };
  script: string;
  stdout_limit?: number;
  stderr_limit?: number;
}

export interface Progress {
  phase: 'queued' | 'awaiting_approval' | 'running';
  elapsed_ms: number;
  stdout_bytes: number;
  stderr_bytes: number;
}

export interface RunContext {
  dir: string;
  audit: AuditLog;
  log: (message: string) => void;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

/** Runs one tmux_run call to its end; never throws, always returns one result. */
export async function runTool(raw: unknown, ctx: RunContext): Promise<ToolResult> {
  const v = validateRunInput(raw);
  if (!v.ok) return failure('invalid_arguments', `invalid tmux_run arguments: ${v.message}`, 'not_sent');
  const args = raw as RunArgs;
  const bytes = Buffer.byteLength(args.script, 'utf8');
  if (bytes > MAX_SCRIPT_BYTES) {
    return failure(
      'invalid_arguments',
      `the script is ${bytes} bytes of UTF-8; the limit is ${MAX_SCRIPT_BYTES} bytes`,
      'not_sent',
    );
  }
  // An unpaired surrogate has no UTF-8 form: it would run (and be digested) as U+FFFD, not as sent.
  if (/[\uD800-\uDFFF]/u.test(args.script)) {
    return failure(
      'invalid_arguments',
      'the script is not valid Unicode text (it holds an unpaired UTF-16 surrogate, which has no UTF-8 form)',
      'not_sent',
    );
  }
  const digest = scriptDigest(args.script);
  const runId = freshId();
  const refuse = (code: ErrorCode, message: string): ToolResult => {
    ctx.audit.tryAppend({
      event: 'refused',
      run_id: runId,
      pane_id: args.target.id,
      script_digest: digest,
      outcome: code,
      by: 'broker',
    });
    ctx.log(`run ${runId.slice(0, 8)} (sha256 ${digest.slice(0, 12)}) refused: ${code}`);
    return failure(code, message, 'not_sent');
  };

  let records;
  try {
    records = scanRecords(ctx.dir); // checks the directory first
  } catch (e) {
    if (e instanceof RegistryDirError && e.reason === 'missing') {
      return refuse('not_enrolled', `pane ${args.target.id} is not enrolled (no pane is)`);
    }
    return refuse(e instanceof RegistryDirError ? e.code : 'internal_error', (e as Error).message);
  }
  const forPane = records.filter((r) => r.pane_id === args.target.id);
  const rec = forPane.find((r) => r.generation === args.target.generation);
  if (!rec) {
    if (forPane.length === 0) {
      return refuse(
        'not_enrolled',
        `pane ${args.target.id} is not enrolled (source shell/tmux-run.zsh in it, then list panes with tmux_enrolled_panes)`,
      );
    }
    return refuse(
      'stale_generation',
      `pane ${args.target.id} has no enrollment with generation ${args.target.generation}: its shell, enrollment or tmux server changed since it was listed; list panes again with tmux_enrolled_panes`,
    );
  }

  const problem = recordProblem(rec);
  if (problem) {
    return refuse(
      'not_enrolled',
      `pane ${args.target.id} has no valid enrollment with generation ${args.target.generation}: its record in the registry is not trustworthy (${problem}); list panes again with tmux_enrolled_panes`,
    );
  }

  const binding: Binding = {
    run_id: runId,
    script_digest: digest,
    server_generation: rec.server_generation,
    pane_id: rec.pane_id,
    enrollment_generation: rec.enrollment_generation,
    process_generation: rec.process_generation,
    stdout_limit: args.stdout_limit ?? DEFAULT_OUTPUT_LIMIT,
    stderr_limit: args.stderr_limit ?? DEFAULT_OUTPUT_LIMIT,
    issued_at: Date.now(),
  };
  const auth = authorizationOf(binding);
  const token = signBinding(Buffer.from(rec.secret, 'hex'), binding);
  if (ctx.signal?.aborted) return refuse('cancelled', 'the call was cancelled before it was sent');

  let t;
  try {
    t = await connectHelper(recordSocket(ctx.dir, rec));
  } catch (e) {
    return refuse(
      'helper_unreachable',
      `the helper of pane ${rec.pane_id} did not answer (${e instanceof ConnectError ? (e.errno ?? 'error') : 'error'}); its enrollment may have ended; list panes again`,
    );
  }
  const x = exchange(t);
  const target = args.target;
  const tag = `run ${runId.slice(0, 8)} (sha256 ${digest.slice(0, 12)}) on ${rec.pane_id}`;

  return new Promise<ToolResult>((resolve) => {
    let answered = false;
    let pgid: number | undefined;
    let settled = false;
    let cancelTimer: NodeJS.Timeout | undefined;
    const settle = (r: ToolResult): void => {
      if (settled) return;
      settled = true;
      if (cancelTimer) clearTimeout(cancelTimer);
      ctx.signal?.removeEventListener('abort', onAbort);
      x.close();
      if (ctx.signal?.aborted)
        ctx.log(
          `${tag} cancelled by the client: ${r.ok ? 'it had completed' : r.error.code} (${r.ok ? '' : r.error.message})`,
        );
      resolve(r);
    };
    // Outcomes only the broker saw (the helper could not report them) go to the audit trail from here.
    const auditEnd = (outcome: string, detail: string): void => {
      ctx.audit.tryAppend({
        event: 'end',
        run_id: runId,
        pane_id: rec.pane_id,
        script_digest: digest,
        outcome,
        by: 'broker',
        ran: pgid !== undefined ? true : 'unknown',
        ...(pgid !== undefined ? { pgid } : {}),
        detail,
      });
    };
    const onAbort = (): void => {
      x.send({ type: 'cancel', run_id: runId });
      // The helper stops the group and reports; if it does not, drop the link (it then cancels) and stop the group here.
      cancelTimer = setTimeout(() => {
        if (pgid !== undefined) terminateGroup(pgid);
        auditEnd(
          'cancelled',
          `the helper did not confirm the cancellation within ${CANCEL_WAIT_MS} ms${pgid !== undefined ? '; the broker stopped the process group' : ''}`,
        );
        settle(
          failure(
            'cancelled',
            "the call was cancelled; the helper did not confirm the stop in time, so tmux-run stopped the run's process group itself",
            'observed',
            { state: 'unknown', authorization: auth, completion: { state: 'unobserved' } },
          ),
        );
      }, CANCEL_WAIT_MS);
    };
    ctx.signal?.addEventListener('abort', onAbort, { once: true });

    x.onreply = (r: Reply) => {
      answered = true;
      switch (r.type) {
        case 'queued':
          ctx.onProgress?.({ phase: 'queued', elapsed_ms: 0, stdout_bytes: 0, stderr_bytes: 0 });
          return;
        case 'started':
          pgid = r.pgid;
          return;
        case 'progress':
          ctx.onProgress?.(r);
          return;
        case 'done':
          settle({
            ok: true,
            data: {
              target,
              authorization: auth,
              completion: r.completion,
              stdout: encodeStream(r.stdout),
              stderr: encodeStream(r.stderr),
            },
          });
          return;
        case 'error':
          settle(
            failure(
              r.code,
              r.message,
              'observed',
              r.ran
                ? {
                    state: r.completion ? 'known' : 'unknown',
                    authorization: auth,
                    completion: r.completion ?? { state: 'unobserved' },
                  }
                : { state: 'none', authorization: auth, completion: { state: 'unobserved' } },
            ),
          );
          return;
        default:
          settle(
            failure('internal_error', `the helper answered a run with an unexpected ${r.type} message`, 'observed', {
              state: 'unknown',
              authorization: auth,
              completion: { state: 'unobserved' },
            }),
          );
      }
    };
    x.onclose = (e) => {
      if (settled) return;
      // The helper is gone mid-run: it cannot clean up after SIGKILL, so the broker stops the group it was told about.
      if (pgid !== undefined) terminateGroup(pgid);
      const why = e ? ` (${e.message})` : '';
      auditEnd(
        'helper_lost',
        `the link to the helper broke${why}${pgid !== undefined ? '; the broker stopped the process group' : answered ? ' after it accepted the run' : ' after the run was sent'}`,
      );
      settle(
        failure(
          'helper_lost',
          `the link to the helper of pane ${rec.pane_id} broke${why} ${pgid !== undefined ? `while the run was executing; tmux-run stopped its process group ${pgid}, but what the script did before is unknown` : answered ? 'after it accepted the run; whether the script started is unknown' : 'after the run was sent; whether it arrived is unknown'}`,
          answered ? 'observed' : 'possibly_sent',
          { state: 'unknown', authorization: auth, completion: { state: 'unobserved' } },
        ),
      );
    };
    x.send({ type: 'run', binding, token, script: args.script, progress: ctx.onProgress !== undefined });
  });
}
