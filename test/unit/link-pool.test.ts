// Links kept between runs (src/broker/link-pool.ts), against a real helper service on a real Unix
// socket: reuse, cancellation over a reused link, a caller that goes away, and idle links that end.
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HelperService } from '../../helper/service.js';
import { LinkPool } from '../../src/broker/link-pool.js';
import { exchange } from '../../src/broker/helper-client.js';
import { socketTransport, type Transport } from '../../src/core/protocol/transport.js';
import { fakeRecord, runRequest as signedRun, standInService } from './fixtures.js';
import type { Reply, Request } from '../../src/core/protocol/messages.js';

const secret = Buffer.alloc(32, 5);
const record = fakeRecord(secret, { pane_id: '%4' });

let dir: string;
let path: string;
let server: Server;
let connections: number;
let service: HelperService;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tmux-run-pool-'));
  path = join(dir, 'helper.sock');
  connections = 0;
  service = standInService(dir, record, secret, () =>
    Promise.resolve({ ok: true, snapshot: { cwd: dir, env: { PATH: '/usr/bin:/bin' } }, approval: 'auto' }),
  );
  server = createServer((conn) => {
    connections++;
    service.attach(socketTransport(conn));
  });
  await new Promise<void>((r) => server.listen(path, r));
});
afterEach(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

function runRequest(script: string): { runId: string; message: Request } {
  const message = signedRun(record, secret, script);
  return { runId: message.binding.run_id, message };
}

/** Sends a run on `t`; resolves its replies up to the final one; `onStarted` fires once it runs. */
function run(t: Transport, script: string, onStarted?: (runId: string) => void): Promise<Reply[]> {
  const { runId, message } = runRequest(script);
  const x = exchange(t);
  return new Promise((resolve, reject) => {
    const got: Reply[] = [];
    x.onreply = (r) => {
      got.push(r);
      if (r.type === 'started') onStarted?.(runId);
      if (r.type === 'done' || r.type === 'error') resolve(got);
    };
    x.onclose = (e) => reject(e ?? new Error('link closed'));
    x.send(message);
  });
}

const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
};

describe('link pool', () => {
  it('serves back-to-back runs over one connection', async () => {
    const pool = new LinkPool();
    for (let i = 0; i < 3; i++) {
      const t = await pool.take(path);
      const r = await run(t, `echo ${i}`);
      expect(r.at(-1)).toMatchObject({ type: 'done' });
      pool.give(path, t);
    }
    expect(connections).toBe(1);
    expect(pool.idleCount(path)).toBe(1);
    pool.closeAll();
  });

  it('cancels a run over a reused link, and the link serves the next run', async () => {
    const pool = new LinkPool();
    const t = await pool.take(path);
    await run(t, 'true');
    pool.give(path, t);
    const again = await pool.take(path);
    expect(again).toBe(t);
    const marker = join(dir, 'not-reached');
    const r = await run(again, `sleep 5; touch ${marker}`, (runId) => again.send({ type: 'cancel', run_id: runId }));
    expect(r.at(-1)).toMatchObject({ type: 'error', code: 'cancelled', ran: true });
    pool.give(path, again);
    const third = await pool.take(path);
    expect((await run(third, 'true')).at(-1)).toMatchObject({ type: 'done' });
    expect(connections).toBe(1);
    expect(existsSync(marker)).toBe(false);
    pool.give(path, third);
    pool.closeAll();
  });

  it('a caller that goes away mid-run still stops its run, after earlier runs on the same link', async () => {
    const pool = new LinkPool();
    const t = await pool.take(path);
    await run(t, 'true');
    pool.give(path, t);
    const again = await pool.take(path);
    const marker = join(dir, 'not-reached');
    let started = false;
    const pending = run(again, `sleep 2; touch ${marker}`, () => (started = true)).catch(() => 'closed');
    await until(() => started);
    again.close(); // as when the broker exits: its links close
    expect(await pending).toBe('closed');
    await service.idle();
    expect(existsSync(marker)).toBe(false);
  });

  it('drops an idle link the helper closes, and one idle too long; the next take connects anew', async () => {
    const pool = new LinkPool(100);
    const t = await pool.take(path);
    await run(t, 'true');
    pool.give(path, t);
    expect(pool.idleCount(path)).toBe(1);
    await new Promise<void>((r) => server.close(() => r()));
    server.listen(path);
    await until(() => pool.idleCount(path) === 0);
    const fresh = await pool.take(path);
    expect(fresh).not.toBe(t);
    pool.give(path, fresh);
    await until(() => pool.idleCount(path) === 0); // the idle time ran out
  });
});
