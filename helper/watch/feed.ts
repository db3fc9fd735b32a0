// The watch feed: every `tmux-run watch` link on this helper, and what each is sent of the pane's
// runs (events.ts). A watcher never slows a run nor holds its memory: output goes to a watcher only
// while its link has less than WATCH_BACKLOG bytes waiting; what does not fit is counted, never
// queued, and the watcher is told how many bytes it missed before its next output or the run's end.
import type { Transport } from '../../src/core/protocol/transport.js';
import type { Reply, RunState, StreamName, WatchEvent, WatchStream } from '../../src/core/protocol/messages.js';
import { OUTPUT_CHUNK_BYTES } from '../../src/core/protocol/limits.js';
import type { StreamStore } from '../output/stream-store.js';
import { endEvent, missedEvent, outputEvent, refusedEvent, startEvent, type Watched } from './events.js';

/** Bytes a watcher's link may hold unread before output to it is dropped (and counted). */
export const WATCH_BACKLOG = 256 * 1024;
/** Past this even a start or an end is not queued: the watcher is let go (it is far behind). */
export const WATCH_BACKLOG_MAX = 1024 * 1024;

/** What the feed needs of a job (helper/queue/job.ts). */
export interface FeedJob extends Watched {
  state: RunState;
  final?: Reply;
  /** Its start event, kept to replay it to a watcher of this one run. */
  watchStart?: WatchEvent;
  run?: Watched['run'] & { stdout: StreamStore; stderr: StreamStore };
  /** A pipe or terminal run's input: its newest bytes, replayed as the `in` stream. */
  input?: Watched['input'] & { kept: StreamStore };
}

class Watcher {
  /** Bytes not sent, by run id and stream. */
  readonly missed = new Map<string, number>();
  constructor(
    readonly t: Transport,
    readonly run: string | undefined,
  ) {}

  wants(runId: string): boolean {
    return this.run === undefined || runId.startsWith(this.run);
  }

  backlog(): number {
    return this.t.backlog?.() ?? 0;
  }
}

const STREAMS: StreamName[] = ['stdout', 'stderr'];
const isFinal = (r: Reply | undefined): r is Extract<Reply, { type: 'done' | 'error' }> =>
  r?.type === 'done' || r?.type === 'error';

export class WatchFeed {
  private readonly watchers = new Set<Watcher>();

  constructor(private readonly paneId: string) {}

  /**
   * An authorized watch: answered `watching`, then fed. A watch of one run (`run`, an id prefix)
   * is first sent what the job still keeps of it; one this helper does not know is told so and closed.
   */
  add(t: Transport, run: string | undefined, jobs: FeedJob[]): void {
    const job = run === undefined ? undefined : jobs.find((j) => j.binding.run_id.startsWith(run));
    t.send({
      type: 'watching',
      pane_id: this.paneId,
      ...(run === undefined ? {} : { found: job !== undefined }),
    } satisfies Reply);
    if (run !== undefined && job === undefined) {
      t.close();
      return;
    }
    const w = new Watcher(t, run);
    this.watchers.add(w);
    if (job) this.replay(w, job);
  }

  /** A watcher's link closed. */
  drop(t: Transport): void {
    for (const w of this.watchers) if (w.t === t) this.watchers.delete(w);
  }

  /** A run was spawned: its start goes out, and its streams' bytes from now on. */
  started(job: FeedJob): void {
    job.watchStart = startEvent(job, Date.now());
    for (const stream of STREAMS) {
      const store = job.run?.[stream];
      if (store) store.onAppend = (chunk, from) => this.output(job, stream, chunk, from);
    }
    for (const w of this.watchers) if (w.wants(job.binding.run_id)) this.control(w, job.watchStart);
  }

  /** Input given to a pipe or terminal run (the agent's or the attached person's): a stream of its own. */
  input(job: FeedJob, chunk: Buffer, from: number): void {
    this.output(job, 'stdin', chunk, from);
  }

  /** A job's final reply: the end of a run that started, or the refusal of one that never did. */
  settled(job: FeedJob, reply: Reply): void {
    if (this.watchers.size === 0 || !isFinal(reply)) return;
    const at = Date.now();
    for (const w of this.watchers) {
      if (!w.wants(job.binding.run_id)) continue;
      this.closing(w, job, reply, at);
    }
  }

  /** A run refused before it was queued (not authorized, replayed, the shell gone). */
  refused(
    b: { run_id: string; script_digest: string },
    client: string | undefined,
    code: string,
    message: string,
  ): void {
    if (this.watchers.size === 0) return;
    const ev = refusedEvent(b, client, code, message, Date.now());
    for (const w of this.watchers) if (w.wants(b.run_id)) this.control(w, ev);
  }

  private closing(w: Watcher, job: FeedJob, reply: Extract<Reply, { type: 'done' | 'error' }>, at: number): void {
    const id = job.binding.run_id;
    if (!job.watchStart) {
      if (reply.type === 'error') this.control(w, refusedEvent(job.binding, job.client, reply.code, reply.message, at));
      return;
    }
    for (const stream of [...STREAMS, 'stdin' as const]) this.sayMissed(w, id, stream, at);
    this.control(w, endEvent(job, reply, at));
  }

  private output(job: FeedJob, stream: WatchStream, chunk: Buffer, from: number): void {
    for (const w of this.watchers)
      if (w.wants(job.binding.run_id)) this.send(w, job.binding.run_id, stream, chunk, from);
  }

  /** One chunk to one watcher, or counted as missed when its link is backed up. */
  private send(w: Watcher, runId: string, stream: WatchStream, chunk: Buffer, from: number): void {
    const key = runId + stream;
    if (w.backlog() + chunk.length > WATCH_BACKLOG) {
      w.missed.set(key, (w.missed.get(key) ?? 0) + chunk.length);
      return;
    }
    const at = Date.now();
    this.sayMissed(w, runId, stream, at);
    w.t.send(outputEvent(runId, stream, from, chunk, at));
  }

  private sayMissed(w: Watcher, runId: string, stream: WatchStream, at: number): void {
    const key = runId + stream;
    const n = w.missed.get(key);
    if (n === undefined) return;
    w.missed.delete(key);
    this.control(w, missedEvent(runId, stream, n, at));
  }

  /** A small event every watcher gets (start, end, missed, refused), unless it is hopelessly behind. */
  private control(w: Watcher, ev: WatchEvent): void {
    if (w.backlog() > WATCH_BACKLOG_MAX) {
      this.watchers.delete(w);
      w.t.close();
      return;
    }
    w.t.send(ev);
  }

  /** What a job still keeps, for a watcher of that one run: its start, its kept output and input, its end. */
  private replay(w: Watcher, job: FeedJob): void {
    const id = job.binding.run_id;
    if (job.watchStart) this.control(w, job.watchStart);
    for (const stream of [...STREAMS, 'stdin' as const]) {
      const store = stream === 'stdin' ? (job.watchStart ? job.input?.kept : undefined) : job.run?.[stream];
      if (!store) continue;
      if (store.keptFrom > 0) w.missed.set(id + stream, store.keptFrom);
      for (let at = store.keptFrom; at < store.total;) {
        const got = store.read(at, OUTPUT_CHUNK_BYTES);
        if (got.bytes.length === 0) break;
        this.send(w, id, stream, got.bytes, got.from);
        at = got.from + got.bytes.length;
      }
    }
    if (job.state === 'finished' && isFinal(job.final)) this.closing(w, job, job.final, Date.now());
  }
}
