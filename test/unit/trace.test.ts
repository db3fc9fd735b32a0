// The trace of a run's hops (src/core/protocol/trace.ts): the recorder, its sink, and the helper's
// stamps, returned only to a request that asked for them. Behaviour only: no timed assertion.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HELPER_STAGES, STAGES, Trace, monotonicMs, traceSink } from '../../src/core/protocol/trace.js';
import { HelperService } from '../../helper/service.js';
import { memoryPair } from '../../src/core/protocol/transport.js';
import { fakeRecord, runRequest, standInService } from './fixtures.js';
import { checkReply, checkRequest, type Reply } from '../../src/core/protocol/messages.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'tmux-run-trace-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('trace recorder', () => {
  it('costs each stamped stage from the previous stamped one, in stage order, whatever the marking order', () => {
    const t = new Trace();
    t.mark('written', 110);
    t.mark('parsed', 100);
    t.mark('handled', 100.5);
    t.mark('sent', 102);
    t.merge({ received: 103, replied: 109, bogus: 1, drained: 'x' });
    const { stages, total } = t.costs();
    expect(stages).toEqual({ handled: 0.5, sent: 1.5, received: 1, replied: 6, written: 1 });
    expect(total).toBe(10);
    const line = JSON.parse(t.line()) as { trace: string; stages_ms: object; at: Record<string, number> };
    expect(line.trace).toBe('tmux-run');
    expect(line.stages_ms).toEqual(stages);
    expect(Object.keys(line.at)).not.toContain('bogus');
  });

  it('takes from another process only the helper stages, and only numbers', () => {
    const t = new Trace();
    t.merge({ parsed: 1, received: 2, spawned: Infinity, exited: 3 });
    expect(t.stamps).toEqual({ received: 2, exited: 3 });
    expect(HELPER_STAGES[0]).toBe('received');
    expect(HELPER_STAGES.at(-1)).toBe('replied');
    expect(STAGES.indexOf('sent')).toBeLessThan(STAGES.indexOf('received'));
  });

  it('reads a monotonic clock', () => {
    const a = monotonicMs();
    const b = monotonicMs();
    expect(b).toBeGreaterThanOrEqual(a);
  });

  it('is off unless TMUX_RUN_TRACE is set; 1 means stderr, an absolute path a 0600 file', () => {
    expect(traceSink(undefined)).toBeUndefined();
    expect(traceSink('')).toBeUndefined();
    expect(traceSink('0')).toBeUndefined();
    expect(typeof traceSink('1')).toBe('function');
    const file = join(tmp(), 'trace.jsonl');
    const sink = traceSink(file)!;
    sink('{"a":1}');
    sink('{"a":2}');
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2}\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe('the helper returns its stamps only when asked', () => {
  const secret = Buffer.alloc(32, 3);
  const record = fakeRecord(secret, { pane_id: '%9' });

  function serve(dir: string, answer: 'ok' | 'busy'): HelperService {
    return standInService(dir, record, secret, () =>
      Promise.resolve(
        answer === 'ok'
          ? {
              ok: true,
              snapshot: { cwd: dir, env: { PATH: '/usr/bin:/bin' } },
              approval: 'auto',
              answeredAt: monotonicMs(),
            }
          : { ok: false, reason: 'editor_not_empty' },
      ),
    );
  }

  function run(service: HelperService, script: string, trace: boolean | undefined): Promise<Reply> {
    const msg = { ...runRequest(record, secret, script), ...(trace === undefined ? {} : { trace }) };
    expect(checkRequest(msg).ok).toBe(true);
    const [client, helperSide] = memoryPair();
    service.attach(helperSide);
    return new Promise((resolve) => {
      client.onmessage = (m) => {
        const r = m as Reply;
        if (r.type === 'done' || r.type === 'error') resolve(r);
      };
      client.send(msg);
    });
  }

  it('stamps every helper stage of a run, in order, in a reply that passes the wire schema', async () => {
    const dir = tmp();
    const done = await run(serve(dir, 'ok'), 'echo hi', true);
    expect(done.type).toBe('done');
    expect(checkReply(done).ok).toBe(true);
    const stamps = (done as { trace?: Record<string, number> }).trace!;
    expect(Object.keys(stamps).sort()).toEqual([...HELPER_STAGES].sort());
    const ordered = HELPER_STAGES.map((s) => stamps[s]!);
    expect([...ordered].sort((a, b) => a - b)).toEqual(ordered);
  });

  it('stamps a refusal up to where it stopped', async () => {
    const dir = tmp();
    const e = await run(serve(dir, 'busy'), 'true', true);
    expect(e).toMatchObject({ type: 'error', code: 'editor_not_empty' });
    expect(checkReply(e).ok).toBe(true);
    const stamps = (e as { trace?: Record<string, number> }).trace!;
    expect(Object.keys(stamps)).toEqual(expect.arrayContaining(['received', 'verified', 'queued', 'asked', 'replied']));
    expect(stamps.spawned).toBeUndefined();
  });

  it('sends no stamps to a request that did not ask (or said no)', async () => {
    const dir = tmp();
    const service = serve(dir, 'ok');
    for (const flag of [undefined, false]) {
      const done = await run(service, 'true', flag);
      expect(done.type).toBe('done');
      expect('trace' in done).toBe(false);
    }
  });
});
