// Background runs (tmux_run_start background: true): once spawned they leave the pane's queue and
// go on beside it until they end; at most MAX_BACKGROUND_RUNS at once per pane. This keeps them,
// decides a start request's overflow and background, and words the refusal of one too many.
import type { Overflow, Request } from '../../src/core/protocol/messages.js';
import type { Refusal } from './authorize.js';
import { MAX_BACKGROUND_RUNS } from '../../src/core/protocol/limits.js';

/**
 * A run request's overflow and background: background implies tail, and so does input pipe or
 * terminal unless the request says stop; tmux_run's runs are neither.
 */
export function runMode(req: Extract<Request, { type: 'run' | 'start' }>): { overflow: Overflow; background: boolean } {
  if (req.type !== 'start') return { overflow: 'stop', background: false };
  const background = req.background === true;
  const implied = background || req.input !== undefined ? 'tail' : 'stop';
  return { overflow: background ? 'tail' : (req.overflow ?? implied), background };
}

export class BackgroundRuns<J> {
  private readonly running = new Set<J>();

  /** A background run was spawned and left the queue. */
  add(job: J): void {
    this.running.add(job);
  }

  /** A run ended (whether it was a background one or not). */
  delete(job: J): void {
    this.running.delete(job);
  }

  /** The background runs still running. */
  all(): J[] {
    return [...this.running];
  }

  /** Why a background run whose turn came may not start (the pane has MAX_BACKGROUND_RUNS running), or undefined. */
  refusal(paneId: string): Refusal | undefined {
    if (this.running.size < MAX_BACKGROUND_RUNS) return undefined;
    return {
      code: 'too_many_background_runs',
      message: `pane ${paneId} already has ${MAX_BACKGROUND_RUNS} background runs running (at most ${MAX_BACKGROUND_RUNS}); stop one with tmux_run_cancel (tmux_runs lists them) and start again`,
    };
  }
}
