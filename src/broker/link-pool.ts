// Links to helpers kept open between runs: a run takes an idle link to its helper's socket (or
// opens one) and gives it back once the helper has sent its final reply, so back-to-back runs do
// not each pay for a connection on both sides. A link carries one run at a time, exactly as a
// fresh one did: closing it still means "the caller went away" to the helper, for that run only,
// and a run that ends any other way (cancel not confirmed, link broken) closes its link as before.
import type { Transport } from '../core/protocol/transport.js';
import { connectHelper } from './helper-client.js';

/** How long an idle link stays open for the next run. */
export const IDLE_LINK_MS = 10_000;
/**
 * Idle links kept per helper: a broker's concurrent calls to one pane queue there anyway, and a
 * helper serves at most 64 links at once (helper/main.ts), a kept one counting like any other.
 */
export const MAX_IDLE_PER_HELPER = 2;

export class LinkPool {
  private readonly idle = new Map<string, Transport[]>();
  private readonly timers = new Map<Transport, NodeJS.Timeout>();

  constructor(
    private readonly idleMs: number = IDLE_LINK_MS,
    private readonly maxIdle: number = MAX_IDLE_PER_HELPER,
    private readonly connect: (path: string) => Promise<Transport> = connectHelper,
  ) {}

  /** A link to the helper at `path`: the most recently idle one, else a new connection (ConnectError). */
  async take(path: string): Promise<Transport> {
    const t = this.idle.get(path)?.pop();
    if (!t) return this.connect(path);
    this.forget(path, t);
    t.onmessage = undefined;
    t.onclose = undefined;
    t.hold?.(true);
    return t;
  }

  /**
   * Gives back a link whose run is over (its final reply arrived and nothing else is owed on it).
   * While idle, anything the helper sends on it, or its closing, ends it; so does time.
   */
  give(path: string, t: Transport): void {
    const list = this.idle.get(path) ?? [];
    if (list.length >= this.maxIdle) {
      t.close();
      return;
    }
    list.push(t);
    this.idle.set(path, list);
    t.hold?.(false);
    const drop = (): void => {
      this.forget(path, t);
      t.close();
    };
    t.onmessage = drop;
    t.onclose = () => this.forget(path, t);
    const timer = setTimeout(drop, this.idleMs);
    timer.unref();
    this.timers.set(t, timer);
  }

  /** Idle links held, for tests. */
  idleCount(path: string): number {
    return this.idle.get(path)?.length ?? 0;
  }

  /** Closes every idle link. */
  closeAll(): void {
    for (const [path, list] of this.idle)
      for (const t of [...list]) {
        this.forget(path, t);
        t.close();
      }
  }

  private forget(path: string, t: Transport): void {
    clearTimeout(this.timers.get(t));
    this.timers.delete(t);
    const list = this.idle.get(path);
    if (!list) return;
    const i = list.indexOf(t);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.idle.delete(path);
  }
}

/** The broker's pool. */
export const helperLinks = new LinkPool();
