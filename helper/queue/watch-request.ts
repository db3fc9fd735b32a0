// A watch request (tmux-run watch): signed like a list under the enrollment's secret (the person's
// alone: the registry's permissions), then handed to the feed with the jobs it may replay.
import type { Transport } from '../../src/core/protocol/transport.js';
import type { Request } from '../../src/core/protocol/messages.js';
import { checkHeld } from './authorize.js';
import { err } from './job.js';
import type { Enrollment } from './service-deps.js';
import type { RunQueue } from './run-queue.js';

/** Serves one watch request: a refusal closes the link; otherwise the link is fed until it closes. */
export function serveWatch(
  req: Extract<Request, { type: 'watch' }>,
  t: Transport,
  e: Enrollment,
  queue: RunQueue,
): void {
  const refusal = checkHeld('watch', req.run ?? '', req.auth, e.record, e.secret, Date.now());
  if (refusal) {
    t.send(err(refusal.code, refusal.message));
    t.close();
    return;
  }
  queue.watch.add(t, req.run, queue.all());
}
