// Requests sent straight to the helper's socket, bypassing the broker: forged, replayed,
// altered, mismatched and garbage. The helper refuses each before anything runs.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHelper, exchange, ping } from '../../src/broker/helper-client.js';
import { signBinding, type Binding } from '../../src/core/protocol/token.js';
import type { Reply, Request } from '../../src/core/protocol/messages.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { bindingFor as sharedBindingFor } from '../../lab/enrollment.js';
import { type Fixture, setupFixture, sha256 } from './support.js';

let fx: Fixture;
let rec: EnrollmentRecord;
beforeAll(async () => {
  fx = await setupFixture();
  rec = fx.record();
});
afterAll(async () => {
  await fx?.close();
});

const secretOf = (r: EnrollmentRecord): Buffer => Buffer.from(r.secret, 'hex');
const hex = (n: number): string => randomBytes(n).toString('hex');

/** A binding for `script` exactly as the broker would make it. */
const bindingFor = (script: string, over: Partial<Binding> = {}): Binding => sharedBindingFor(rec, script, over);

/** A correctly signed run request, then `alter` applied to it. */
function request(script: string, over: Partial<Binding> = {}): Extract<Request, { type: 'run' }> {
  const binding = bindingFor(script, over);
  return { type: 'run', binding, token: signBinding(secretOf(rec), binding), script, progress: false };
}

/** Sends requests on one connection; resolves with the final reply to each (done or error), in order. */
async function send(...reqs: Request[]): Promise<Reply[]> {
  const t = await connectHelper(rec.socket);
  const x = exchange(t);
  return new Promise((resolve, reject) => {
    const finals: Reply[] = [];
    const timer = setTimeout(
      () => reject(new Error(`no final replies in time (got ${JSON.stringify(finals)})`)),
      10_000,
    );
    x.onreply = (r) => {
      if (r.type === 'done' || r.type === 'error') finals.push(r);
      if (finals.length === reqs.length) {
        clearTimeout(timer);
        x.close();
        resolve(finals);
      }
    };
    x.onclose = (e) => {
      clearTimeout(timer);
      reject(new Error(`the helper closed the link${e ? `: ${e.message}` : ''} after ${JSON.stringify(finals)}`));
    };
    for (const r of reqs) x.send(r);
  });
}

/** A script that proves it ran by creating a marker. */
function markerScript(): { script: string; marker: string } {
  const marker = fx.marker();
  return { script: `touch '${marker}'`, marker };
}

async function expectRefusedAt(req: Request, code: string, script: string, marker: string): Promise<void> {
  const [r] = await send(req);
  expect(r).toMatchObject({ type: 'error', code, ran: false });
  expect((r as { message: string }).message).not.toContain(marker);
  await fx.assertNothingRan(script, marker);
}

describe('the helper refuses what the broker did not authorize', () => {
  it('accepts a correctly signed request (the baseline for the cases below)', async () => {
    const { script, marker } = markerScript();
    const [r] = await send(request(script));
    expect(r).toMatchObject({ type: 'done', completion: { state: 'exited', exit_status: 0, signal: null } });
    expect(existsSync(marker)).toBe(true);
  });

  it('refuses a wrong token', async () => {
    const { script, marker } = markerScript();
    await expectRefusedAt({ ...request(script), token: hex(32) }, 'unauthorized', script, marker);
  });

  it('refuses a token signed with another secret', async () => {
    const { script, marker } = markerScript();
    const binding = bindingFor(script);
    await expectRefusedAt(
      { type: 'run', binding, token: signBinding(randomBytes(32), binding), script, progress: false },
      'unauthorized',
      script,
      marker,
    );
  });

  it('refuses a valid token whose script was altered (digest mismatch)', async () => {
    const { script: altered, marker } = markerScript();
    const req = request('echo harmless');
    await expectRefusedAt({ ...req, script: altered }, 'unauthorized', altered, marker);
  });

  it('refuses a valid token whose binding was altered after signing', async () => {
    const { script, marker } = markerScript();
    const req = request(script, { stdout_limit: 10 });
    await expectRefusedAt(
      { ...req, binding: { ...req.binding, stdout_limit: 262144 } },
      'unauthorized',
      script,
      marker,
    );
  });

  it.each<[string, () => Partial<Binding>]>([
    ['another pane_id', () => ({ pane_id: `%${Number(rec.pane_id.slice(1)) + 1000}` })],
    ['another process_generation', () => ({ process_generation: hex(16) })],
    ['another enrollment_generation', () => ({ enrollment_generation: hex(16) })],
    ['another server_generation', () => ({ server_generation: hex(16) })],
  ])('refuses a binding for %s, even signed with the right secret, as stale_generation', async (_what, over) => {
    const { script, marker } = markerScript();
    await expectRefusedAt(request(script, over()), 'stale_generation', script, marker);
  });

  it('refuses a run id used before (replayed), on the same and on a new connection', async () => {
    const marker = fx.marker();
    const script = `echo ran >> '${marker}'`;
    const req = request(script);
    // The copy is refused at once, so its reply may come before the first run's result.
    const both = await send(req, req);
    expect(both).toHaveLength(2);
    expect(both.filter((r) => r.type === 'done')).toEqual([
      expect.objectContaining({ completion: { state: 'exited', exit_status: 0, signal: null } }),
    ]);
    expect(both.filter((r) => r.type === 'error')).toEqual([expect.objectContaining({ code: 'replayed', ran: false })]);
    const [third] = await send(req);
    expect(third).toMatchObject({ type: 'error', code: 'replayed', ran: false });
    // Same run id, new script, re-signed: still a replay.
    const other = markerScript();
    const reSigned = request(other.script, { run_id: req.binding.run_id });
    const [fourth] = await send(reSigned);
    expect(fourth).toMatchObject({ type: 'error', code: 'replayed', ran: false });
    await fx.assertNothingRan(other.script, other.marker);
    expect(readFileSync(marker, 'utf8')).toBe('ran\n');
    const starts = fx.audit().filter((e) => e.event === 'start' && e.run_id === req.binding.run_id);
    expect(starts).toHaveLength(1);
  });

  it('refuses an authorization issued 10 minutes ago (expired)', async () => {
    const { script, marker } = markerScript();
    await expectRefusedAt(request(script, { issued_at: Date.now() - 10 * 60_000 }), 'expired', script, marker);
  });

  it('refuses an authorization issued 10 minutes in the future (expired)', async () => {
    const { script, marker } = markerScript();
    await expectRefusedAt(request(script, { issued_at: Date.now() + 10 * 60_000 }), 'expired', script, marker);
  });

  it('records each refusal in the audit trail without the script', async () => {
    const { script, marker } = markerScript();
    const req = { ...request(script), token: hex(32) };
    await expectRefusedAt(req, 'unauthorized', script, marker);
    const entries = fx.audit().filter((e) => e.run_id === req.binding.run_id);
    expect(entries).toEqual([
      expect.objectContaining({ event: 'refused', outcome: 'unauthorized', script_digest: sha256(script) }),
    ]);
    expect(JSON.stringify(fx.audit())).not.toContain(marker);
  });
});

describe('the helper survives garbage on its socket', () => {
  /** Writes raw bytes on a fresh connection; resolves with what came back once the helper closed it. */
  function raw(bytes: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const sock = connect(rec.socket);
      const got: Buffer[] = [];
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new Error('the helper did not close the connection'));
      }, 5000);
      sock.on('data', (c) => got.push(c));
      sock.on('error', () => {});
      sock.on('close', () => {
        clearTimeout(timer);
        resolve(Buffer.concat(got));
      });
      sock.on('connect', () => sock.write(bytes));
    });
  }

  const frame = (body: Buffer): Buffer => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length);
    return Buffer.concat([head, body]);
  };

  it.each<[string, () => Buffer]>([
    ['a huge length prefix', () => Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3])],
    [
      'a length prefix just over the frame limit',
      () => {
        const b = Buffer.alloc(8);
        b.writeUInt32BE(1024 * 1024 + 1);
        return b;
      },
    ],
    ['bytes that are not msgpack', () => frame(Buffer.from([0xc1, 0xc1, 0xc1, 0xc1]))],
    ['a msgpack value that is not a request', () => frame(Buffer.from([0x93, 1, 2, 3]))],
    ['random bytes', () => frame(randomBytes(64))],
  ])('closes the connection on %s and still answers ping', async (_what, bytes) => {
    await raw(bytes());
    const pong = await ping(rec.socket, 2000);
    expect(pong).toMatchObject({ type: 'pong', generation: rec.generation, state: 'idle' });
  });

  it('answers a malformed run request with bad_request and runs nothing', async () => {
    const { script, marker } = markerScript();
    const req = request(script) as unknown as Record<string, unknown>;
    const t = await connectHelper(rec.socket);
    const replies: unknown[] = [];
    await new Promise<void>((resolve) => {
      t.onmessage = (m) => replies.push(m);
      t.onclose = () => resolve();
      t.send({ ...req, extra: 'field' });
    });
    expect(replies).toEqual([expect.objectContaining({ type: 'error', code: 'bad_request', ran: false })]);
    await fx.assertNothingRan(script, marker);
    expect(await ping(rec.socket, 2000)).toMatchObject({ type: 'pong' });
  });

  it('still runs through the broker afterwards', async () => {
    const s = await fx.run('echo alive');
    expect(s.ok).toBe(true);
    expect(s.data.stdout.data).toBe('alive\n');
  });
});
