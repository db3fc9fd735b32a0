// Authorization tokens: an HMAC under the enrollment's secret over the whole binding of a run.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface Binding {
  run_id: string;
  script_digest: string;
  server_generation: string;
  pane_id: string;
  enrollment_generation: string;
  process_generation: string;
  stdout_limit: number;
  stderr_limit: number;
  issued_at: number;
}

/** How long a token is accepted after it was issued (and before, for clock skew). */
export const TOKEN_TTL_MS = 60_000;

/** The exact bytes that are signed; every field, in a fixed order, one per line. */
export function bindingText(b: Binding): string {
  return [
    'tmux-run/run/v1',
    b.run_id,
    b.script_digest,
    b.server_generation,
    b.pane_id,
    b.enrollment_generation,
    b.process_generation,
    String(b.stdout_limit),
    String(b.stderr_limit),
    String(b.issued_at),
  ].join('\n');
}

/** Signs a run binding: 64 hex. */
export function signBinding(secret: Buffer, b: Binding): string {
  return createHmac('sha256', secret).update(bindingText(b)).digest('hex');
}

/** Signs a revocation of one enrollment at a time. */
export function signRevoke(secret: Buffer, enrollmentGeneration: string, issuedAt: number): string {
  return createHmac('sha256', secret).update(`tmux-run/revoke/v1\n${enrollmentGeneration}\n${issuedAt}`).digest('hex');
}

/** Constant-time comparison of a presented token with the expected one. */
export function tokenMatches(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected, 'latin1'), Buffer.from(presented, 'latin1'));
}

/** The operations on held runs (tmux_run_start's runs) that a broker or the CLI may ask a helper for. */
export type HeldOp = 'wait' | 'cancel_held' | 'list' | 'output' | 'watch' | 'input' | 'screen' | 'attach';

/** What a request about held runs is bound to: one enrollment's generations and a time. */
export interface HeldAuthFields {
  server_generation: string;
  pane_id: string;
  enrollment_generation: string;
  process_generation: string;
  issued_at: number;
}

/** The exact bytes signed for a request about held runs (`run_id` empty for a list). */
export function heldText(op: HeldOp, runId: string, a: HeldAuthFields): string {
  return [
    'tmux-run/held/v1',
    op,
    runId,
    a.server_generation,
    a.pane_id,
    a.enrollment_generation,
    a.process_generation,
    String(a.issued_at),
  ].join('\n');
}

/** Signs a wait, cancel, list or output request: 64 hex. */
export function signHeld(secret: Buffer, op: HeldOp, runId: string, a: HeldAuthFields): string {
  return createHmac('sha256', secret)
    .update(heldText(op, runId, a))
    .digest('hex');
}
