// The watch feed (helper/watch/feed.ts): what each watcher is sent of a pane's runs, and that a
// watcher whose link is backed up is sent no more output, only how much it missed; the run's
// streams (real StreamStores) are fed through their one hook.
import { describe, expect, it } from 'vitest';
import type { Transport } from '../../src/core/protocol/transport.js';
import type { Reply } from '../../src/core/protocol/messages.js';
import { StreamStore } from '../../helper/output/stream-store.js';
import { WATCH_BACKLOG, WATCH_BACKLOG_MAX, WatchFeed, type FeedJob } from '../../helper/watch/feed.js';

/** A link whose unread backlog the test sets, recording what is sent. */
function link(): Transport & { sent: any[]; pending: number; closed: boolean } {
  const t = {
    sent: [] as any[],
    pending: 0,
    closed: false,
    send(m: unknown) {
      t.sent.push(m);
    },
    close() {
      t.closed = true;
    },
    backlog: () => t.pending,
  };
  return t;
}

function job(id: string): FeedJob & { run: NonNullable<FeedJob['run']> } {
  const stdout = new StreamStore(100);
  const stderr = new StreamStore(100);
  return {
    binding: { run_id: id.repeat(32).slice(0, 32), script_digest: 'd'.repeat(64) },
    script: 'echo a\necho b\n',
    background: false,
    state: 'running',
    startedAt: Date.now(),
    approval: 'auto',
    sandbox: 'off',
    run: {
      stdout,
      stderr,
      get stdoutBytes() {
        return stdout.total;
      },
      get stderrBytes() {
        return stderr.total;
      },
    },
  };
}

const done = (j: FeedJob): Reply => ({
  type: 'done',
  run_id: j.binding.run_id,
  completion: { state: 'exited', exit_status: 0, signal: null },
  stdout: Buffer.alloc(0),
  stderr: Buffer.alloc(0),
  duration_ms: 5,
});

const kinds = (t: { sent: any[] }): string[] => t.sent.map((m) => (m.type === 'watch_event' ? m.ev : m.type));

describe('the watch feed', () => {
  it("sends a run's start, each chunk with its offset, and its end", () => {
    const feed = new WatchFeed('%3');
    const t = link();
    feed.add(t, undefined, []);
    const j = job('a');
    feed.started(j);
    j.run.stdout.append(Buffer.from('one\n'));
    j.run.stderr.append(Buffer.from('err'));
    j.run.stdout.append(Buffer.from('two\n'));
    j.state = 'finished';
    feed.settled(j, done(j));
    expect(kinds(t)).toEqual(['watching', 'start', 'output', 'output', 'output', 'end']);
    expect(t.sent[1]).toMatchObject({ script_lines: 2, preview: ['echo a', 'echo b'] });
    expect(t.sent[1]).not.toHaveProperty('client');
    expect(t.sent.slice(2, 5).map((e) => [e.stream, e.from, e.data.toString()])).toEqual([
      ['stdout', 0, 'one\n'],
      ['stderr', 0, 'err'],
      ['stdout', 4, 'two\n'],
    ]);
    expect(t.sent[5]).toMatchObject({ ok: true, stdout_bytes: 8, stderr_bytes: 3, duration_ms: 5 });
  });

  it('a backed-up watcher is sent no output, then told how many bytes it missed; the others get everything', () => {
    const feed = new WatchFeed('%3');
    const slow = link();
    const fast = link();
    feed.add(slow, undefined, []);
    feed.add(fast, undefined, []);
    const j = job('b');
    feed.started(j);
    slow.pending = WATCH_BACKLOG;
    j.run.stdout.append(Buffer.from('12345'));
    j.run.stdout.append(Buffer.from('678'));
    slow.pending = 0;
    j.run.stdout.append(Buffer.from('9'));
    expect(kinds(slow)).toEqual(['watching', 'start', 'missed', 'output']);
    expect(slow.sent[2]).toMatchObject({ stream: 'stdout', bytes: 8 });
    expect(slow.sent[3]).toMatchObject({ from: 8 });
    expect(kinds(fast)).toEqual(['watching', 'start', 'output', 'output', 'output']);
    // What it misses at the end is said before the end.
    slow.pending = WATCH_BACKLOG;
    j.run.stderr.append(Buffer.from('xx'));
    feed.settled(j, done(j));
    expect(kinds(slow).slice(-2)).toEqual(['missed', 'end']);
  });

  it('lets go of a watcher that is hopelessly behind, and sends nothing to one that left', () => {
    const feed = new WatchFeed('%3');
    const stuck = link();
    const gone = link();
    feed.add(stuck, undefined, []);
    feed.add(gone, undefined, []);
    feed.drop(gone);
    stuck.pending = WATCH_BACKLOG_MAX + 1;
    feed.started(job('c'));
    expect(stuck.closed).toBe(true);
    expect(kinds(gone)).toEqual(['watching']);
  });

  it('a watch of one run replays what its job keeps, then only that run; an unknown one is told and closed', () => {
    const feed = new WatchFeed('%3');
    const j = job('e');
    const other = job('f');
    feed.started(j);
    j.run.stdout.append(Buffer.from('x'.repeat(150)));
    j.state = 'finished';
    j.final = done(j);
    const t = link();
    feed.add(t, j.binding.run_id.slice(0, 8), [other, j]);
    // 150 bytes through a store that keeps 100: the first 50 are said missed.
    expect(kinds(t)).toEqual(['watching', 'start', 'missed', 'output', 'end']);
    expect(t.sent[0]).toEqual({ type: 'watching', pane_id: '%3', found: true });
    expect(t.sent[2]).toMatchObject({ bytes: 50 });
    expect(t.sent[3]).toMatchObject({ from: 50 });
    feed.started(other);
    expect(kinds(t)).toHaveLength(5);
    const none = link();
    feed.add(none, '0123456789', [j]);
    expect(none.sent).toEqual([{ type: 'watching', pane_id: '%3', found: false }]);
    expect(none.closed).toBe(true);
  });

  it('a job that never started is a refusal; one refused before it was queued too', () => {
    const feed = new WatchFeed('%3');
    const t = link();
    feed.add(t, undefined, []);
    const j = { ...job('1'), client: 'codex 1', state: 'finished' as const };
    feed.settled(j, { type: 'error', code: 'shell_busy', message: 'busy', ran: false });
    feed.refused({ run_id: '2'.repeat(32), script_digest: 'd'.repeat(64) }, undefined, 'replayed', 'again');
    expect(t.sent.slice(1)).toMatchObject([
      { ev: 'refused', code: 'shell_busy', message: 'busy', client: 'codex 1' },
      { ev: 'refused', code: 'replayed', run_id: '2'.repeat(32) },
    ]);
  });
});
