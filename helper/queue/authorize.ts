// Whether a request may act on this enrollment: its signature, the generations it names, its age,
// and (for a run) its script's digest and size and a run id not used before. Decides only: the
// service replies and records.
import type { Request } from '../../src/core/protocol/messages.js';
import {
  signBinding,
  signHeld,
  signRevoke,
  tokenMatches,
  TOKEN_TTL_MS,
  type HeldOp,
} from '../../src/core/protocol/token.js';
import type { ErrorCode } from '../../src/core/protocol/errors.js';
import { MAX_SCRIPT_BYTES } from '../../src/core/protocol/limits.js';
import { scriptDigest } from '../../src/core/enrollment/generation.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';

/** Why a request is refused. */
export interface Refusal {
  code: ErrorCode;
  message: string;
}

type Generations = Pick<
  EnrollmentRecord,
  'pane_id' | 'server_generation' | 'process_generation' | 'enrollment_generation'
>;

/** The request names this pane, tmux server, shell and enrollment. */
function sameEnrollment(a: Generations, rec: Generations): boolean {
  return (
    a.pane_id === rec.pane_id &&
    a.server_generation === rec.server_generation &&
    a.process_generation === rec.process_generation &&
    a.enrollment_generation === rec.enrollment_generation
  );
}

const expired = (issuedAt: number, now: number): boolean => Math.abs(now - issuedAt) > TOKEN_TTL_MS;

/**
 * A request read after its take-by time (src/core/protocol/limits.ts HELPER_TAKE_MS): its caller has
 * given it up and said so (helper_unreachable, nothing run), so it is refused unread, whatever it
 * asks. `received` is when its frame was read, on the same clock (CLOCK_MONOTONIC ms).
 */
export function lateRefusal(takeBy: number | undefined, received: number): Refusal | undefined {
  if (takeBy === undefined || received <= takeBy) return undefined;
  return {
    code: 'expired',
    message: `the request was read ${Math.round(received - takeBy)} ms after its take-by time (the helper was stopped or too busy to read it): its caller had given it up, so it was not acted on`,
  };
}

/** A run or start request: signed for its binding, its script the one authorized, for this enrollment, fresh. */
export function checkRun(
  req: Extract<Request, { type: 'run' | 'start' }>,
  rec: EnrollmentRecord,
  secret: Buffer,
  now: number,
): Refusal | undefined {
  const b = req.binding;
  if (!tokenMatches(signBinding(secret, b), req.token)) {
    return { code: 'unauthorized', message: 'the authorization token does not match this enrollment' };
  }
  if (scriptDigest(req.script) !== b.script_digest) {
    return { code: 'unauthorized', message: 'the script does not match its authorized digest' };
  }
  // The broker refuses these too; a helper does not rely on it.
  if (req.script.includes('\0') || Buffer.byteLength(req.script, 'utf8') > MAX_SCRIPT_BYTES) {
    return {
      code: 'invalid_arguments',
      message: `the script contains NUL or is over ${MAX_SCRIPT_BYTES} bytes of UTF-8`,
    };
  }
  if (!sameEnrollment(b, rec)) {
    return { code: 'stale_generation', message: 'the authorization is for another pane, shell, server or enrollment' };
  }
  if (expired(b.issued_at, now)) return { code: 'expired', message: 'the authorization has expired' };
  return undefined;
}

/** A wait, cancel or list request: signed for its operation and run, for this enrollment, fresh. */
export function checkHeld(
  op: HeldOp,
  runId: string,
  a: Extract<Request, { type: 'list' }>['auth'],
  rec: EnrollmentRecord,
  secret: Buffer,
  now: number,
): Refusal | undefined {
  if (!tokenMatches(signHeld(secret, op, runId, a), a.token)) {
    return { code: 'unauthorized', message: 'the request is not signed for this enrollment' };
  }
  if (!sameEnrollment(a, rec)) {
    return { code: 'stale_generation', message: 'the request is for another pane, shell, server or enrollment' };
  }
  if (expired(a.issued_at, now)) return { code: 'expired', message: 'the request has expired' };
  return undefined;
}

/** A revocation: signed for this enrollment, fresh. */
export function revokeAuthorized(
  req: Extract<Request, { type: 'revoke' }>,
  rec: EnrollmentRecord,
  secret: Buffer,
  now: number,
): boolean {
  const expected = signRevoke(secret, rec.enrollment_generation, req.issued_at);
  return (
    req.enrollment_generation === rec.enrollment_generation &&
    tokenMatches(expected, req.token) &&
    !expired(req.issued_at, now)
  );
}

/** The run ids used within twice a token's lifetime: a run id is accepted once. */
export class UsedRunIds {
  private readonly seen = new Map<string, number>();

  /** Records the run id and returns true, or returns false when it was already used. */
  use(runId: string, now: number): boolean {
    // Oldest first (insertion order): stop at the first one still kept, rather than walk every
    // run id of the last two minutes on each run.
    for (const [id, at] of this.seen) {
      if (now - at <= 2 * TOKEN_TTL_MS) break;
      this.seen.delete(id);
    }
    if (this.seen.has(runId)) return false;
    this.seen.set(runId, now);
    return true;
  }
}
