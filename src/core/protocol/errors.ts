// Every error code tmux-run can put in a result (`error.code`) or a helper's error reply: one list,
// documented one row each in the "Error codes" table of docs/tools.md.

export const ERROR_CODES = [
  'invalid_arguments',
  'tool_not_enabled',
  'not_enrolled',
  'stale_generation',
  'unsafe_directory',
  'helper_unreachable',
  'helper_outdated',
  'shell_busy',
  'editor_not_empty',
  'cwd_unavailable',
  'audit_unavailable',
  'output_limit_exceeded',
  'cancelled',
  'shell_exited',
  'helper_lost',
  'unauthorized',
  'expired',
  'replayed',
  'bad_request',
  'spawn_failed',
  'internal_error',
  'denied',
  'approval_timeout',
  'unknown_run',
  'too_many_background_runs',
  'sandbox_unavailable',
  'approval_unavailable',
  'input_closed',
  'input_backlog',
  'run_attached',
  'not_a_terminal',
  'wake_failed',
  'session_ended',
  'remote_unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);

/**
 * A refusal's message as the caller reads it: what went wrong, then that nothing was run. Every
 * error that stopped before the script started says so through here, never by hand.
 */
export const nothingRan = (message: string): string => `${message}; nothing was run`;
