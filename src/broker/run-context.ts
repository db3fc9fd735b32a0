// What a tmux_run call (and the long-run tools after it) is given: its arguments, the broker's
// directory, audit trail and log, the caller's signal and progress sink, and the links to helpers.
import type { AuditLog } from '../core/audit/audit-log.js';
import type { LiveState } from '../core/protocol/messages.js';
import type { Trace } from '../core/protocol/trace.js';
import type { LinkPool } from './link-pool.js';
import type { Target } from './result.js';

export interface RunArgs {
  target: Target;
  script: string;
  stdout_limit?: number;
  stderr_limit?: number;
}

export interface Progress {
  phase: LiveState;
  elapsed_ms: number;
  stdout_bytes: number;
  stderr_bytes: number;
  /** The last whole line of stdout so far (raw: escape before showing). */
  last_line?: string;
}

export interface RunContext {
  dir: string;
  audit: AuditLog;
  log: (message: string) => void;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** Stamps of this run's stages (TMUX_RUN_TRACE); the helper is asked for its own. */
  trace?: Trace;
  /** Links to helpers kept between runs (the broker's pool unless given). */
  links?: LinkPool;
  /** Who asked: the MCP client's `name version` (src/core/protocol/client.ts), when it named itself. */
  client?: string;
}
