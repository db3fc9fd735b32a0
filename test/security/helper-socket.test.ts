// The helper's socket is a trust boundary: whatever arrives on it (garbage, truncated frames,
// absurd length prefixes, msgpack of the wrong shape, floods of connections, slow clients) is
// dropped without crashing the helper, blocking other callers or growing its memory.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { Packr } from 'msgpackr';
import { encodeFrame } from '../../src/core/protocol/framing.js';
import { ping } from '../../src/broker/helper-client.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { enrolledPane, recordOf } from '../../lab/enrollment.js';
import { processAlive, rssKiB } from '../../lab/processes.js';
import type { TmuxServer } from '../../lab/server.js';
import { useServer } from '../../lab/lifecycle.js';
import { sleep } from '../../lab/waiting.js';
import { rawConnect, untilClosed } from './support.js';

const frame = (body: Buffer): Buffer => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
};
const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false });

describe('the helper socket under abuse', () => {
  let server: TmuxServer;
  let rec: EnrollmentRecord;

  /** A ping on a fresh connection is answered (the guard only keeps a hung helper from hanging the test). */
  async function answersPing(guardMs = 10_000): Promise<void> {
    const pong = await ping(rec.socket, guardMs);
    expect(pong?.pid, 'the helper answered a ping').toBe(rec.helper_pid);
  }

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    const { listing } = await enrolledPane(server);
    rec = recordOf(server, listing);
  });

  it('closes the connection on garbage, a huge length prefix or a body that is not msgpack, and keeps serving', async () => {
    const attacks: Array<[string, Buffer]> = [
      ['random bytes', Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')],
      ['a 4 GiB length prefix', Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3])],
      ['a length just over the 128 KiB cap', Buffer.from([0x00, 0x02, 0x00, 0x01, 0x80])],
      ['a body that is not msgpack', frame(Buffer.from([0xc1]))],
      ['an empty body', frame(Buffer.alloc(0))],
      ['msgpack with trailing bytes', frame(Buffer.concat([packr.pack({ type: 'ping' }), Buffer.from([0x00])]))],
      ['a str32 claiming 4 GiB', frame(Buffer.from([0xdb, 0xff, 0xff, 0xff, 0xff, 0x41]))],
      ['an array32 claiming 4 billion items', frame(Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0]))],
      ['64 Ki nested arrays', frame(Buffer.alloc(65536, 0x91))],
      ['an ext type the protocol does not use', frame(Buffer.from([0xd4, 0x65, 0x00]))],
    ];
    for (const [what, bytes] of attacks) {
      const s = await rawConnect(rec.socket);
      s.write(bytes);
      const got = await untilClosed(s).catch((e: Error) => {
        throw new Error(`${what}: ${e.message}`);
      });
      // Either nothing, or one error reply; never a pong or anything else.
      if (got.length > 0) expect(got.subarray(4).toString('latin1'), what).toContain('bad_request');
      expect(processAlive(rec.helper_pid), `the helper survives ${what}`).toBe(true);
      await answersPing();
    }
  });

  it('answers msgpack of the wrong shape with bad_request and closes the link', async () => {
    const shapes: unknown[] = [
      null,
      42,
      'ping',
      [{ type: 'ping' }],
      {},
      { type: 'PING' },
      { type: 'ping', extra: true },
      { type: 'run' },
      { type: 'run', binding: 'x', token: 'y', script: 'true', progress: false },
      { type: 'run', binding: {}, token: 'a'.repeat(64), script: 'x'.repeat(70_000), progress: false },
      { type: 'revoke', enrollment_generation: rec.enrollment_generation, issued_at: -1, token: 'a'.repeat(64) },
      { type: 'cancel', run_id: '../../etc/passwd' },
    ];
    // A map whose key is __proto__, as raw msgpack (a JS literal would not carry it).
    const str = (t: string): Buffer => Buffer.concat([Buffer.from([0xa0 | t.length]), Buffer.from(t)]);
    const proto = Buffer.concat([
      Buffer.from([0x82]),
      str('type'),
      str('ping'),
      str('__proto__'),
      Buffer.from([0x81]),
      str('polluted'),
      Buffer.from([0xc3]),
    ]);
    const frames = [...shapes.map((v) => encodeFrame(v)), frame(proto)];
    for (const [i, bytes] of frames.entries()) {
      const shape = shapes[i] ?? '__proto__ map';
      const s = await rawConnect(rec.socket);
      s.write(bytes);
      const got = await untilClosed(s);
      const text = got.toString('latin1');
      expect(text, JSON.stringify(shape)?.slice(0, 80)).toContain('bad_request');
      expect(text).not.toContain('pong');
      expect(processAlive(rec.helper_pid)).toBe(true);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await answersPing();
  });

  it('forgets a truncated frame when its connection closes', async () => {
    for (const cut of [1, 3, 4, 10]) {
      const s = await rawConnect(rec.socket);
      s.end(encodeFrame({ type: 'ping' }).subarray(0, cut));
      await untilClosed(s);
    }
    await answersPing();
  });

  /** Opens `count` connections, each holding `bytes(i)` of an incomplete frame, pings meanwhile, then closes them. */
  async function flood(count: number, bytes: (i: number) => Buffer): Promise<void> {
    const held: Socket[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const s = await rawConnect(rec.socket).catch(() => undefined);
        if (!s) continue;
        s.write(bytes(i));
        held.push(s);
      }
      await sleep(50);
      // While the flood holds its connections open, another caller is still served.
      await answersPing();
    } finally {
      for (const s of held) s.destroy();
    }
  }

  it('survives a flood of 200 connections: pings on other connections are answered and memory stays within a few MB', async () => {
    for (let i = 0; i < 5; i++) await answersPing();
    const before = rssKiB(rec.helper_pid);
    const ping = encodeFrame({ type: 'ping' });
    const kinds = [
      Buffer.alloc(0),
      Buffer.from([0, 0]),
      ping.subarray(0, ping.length - 1),
      Buffer.from('garbage\n'),
      Buffer.from([0, 0, 1, 0, 0x81]),
    ];
    for (let round = 0; round < 3; round++) await flood(200, (i) => kinds[i % kinds.length]!);
    await sleep(300);
    await answersPing();
    const after = rssKiB(rec.helper_pid);
    expect(processAlive(rec.helper_pid)).toBe(true);
    expect(after - before, `RSS ${before} KiB before, ${after} KiB after`).toBeLessThan(8 * 1024);
  });

  it('keeps memory bounded under floods of large incomplete frames (it does not grow with what is sent)', async () => {
    const before = rssKiB(rec.helper_pid);
    const big = encodeFrame({ type: 'ping', pad: 'x'.repeat(100_000) });
    const partial = big.subarray(0, big.length - 1);
    const seen: number[] = [];
    // 10 rounds send about 100 MB; at most 64 links (about 6 MB of frames) are held at once.
    for (let round = 0; round < 10; round++) {
      await flood(200, (i) => (i % 2 === 0 ? partial : Buffer.from([0, 0])));
      seen.push(rssKiB(rec.helper_pid) - before);
    }
    await answersPing();
    console.log(`helper RSS growth per round (KiB): ${seen.join(' ')}`);
    expect(processAlive(rec.helper_pid)).toBe(true);
    expect(Math.max(...seen)).toBeLessThan(96 * 1024);
  });

  it('drops a client that holds an incomplete frame for more than 10 s, serving others meanwhile', async () => {
    const s = await rawConnect(rec.socket);
    // One byte every 200 ms of a ~500-byte frame: it would take ~100 s to complete.
    const long = encodeFrame({ type: 'ping', pad: 'y'.repeat(480) });
    let sent = 0;
    const started = Date.now();
    const closed = untilClosed(s, 20_000).then(() => Date.now());
    const dribble = setInterval(() => {
      if (s.destroyed || sent >= long.length - 1) return;
      s.write(long.subarray(sent, sent + 1));
      sent++;
    }, 200);
    try {
      await sleep(1000);
      await answersPing(); // others are served while it dribbles
      const held = (await closed) - started;
      expect(held).toBeGreaterThanOrEqual(9_500);
      expect(sent).toBeLessThan(long.length - 1); // dropped before the frame could complete
    } finally {
      clearInterval(dribble);
      s.destroy();
    }
    expect(processAlive(rec.helper_pid)).toBe(true);
    await answersPing();
  });
});
