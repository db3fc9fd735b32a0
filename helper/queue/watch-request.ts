// A watch request (tmux-run watch): signed like a list under the enrollment's secret (the person's
// alone: the registry's permissions), then handed to the feed with the jobs it may replay.
import type { Transport } from '../../src/core/protocol/transport.js';
import type { Request } from '../../src/core/protocol/messages.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { checkHeld } from './authorize.js';
import { err } from './job.js';
import type { FeedJob, WatchFeed } from '../watch/feed.js';

export interface WatchContext {
  record: EnrollmentRecord;
  secret: Buffer;
  feed: WatchFeed;
  /** Every job the helper knows: held ones, the current one, background ones, queued ones. */
  jobs: () => FeedJob[];
}

/** Serves one watch request: a refusal closes the link; otherwise the link is fed until it closes. */
export function serveWatch(req: Extract<Request, { type: 'watch' }>, t: Transport, cx: WatchContext): void {
  const refusal = checkHeld('watch', req.run ?? '', req.auth, cx.record, cx.secret, Date.now());
  if (refusal) {
    t.send(err(refusal.code, refusal.message));
    t.close();
    return;
  }
  cx.feed.add(t, req.run, cx.jobs());
}
