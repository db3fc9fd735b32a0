// Requests about held runs straight at the helper's socket: wait, cancel and list are signed
// under the enrollment's secret over the operation, the run id, the four generations and the
// time; anything else is refused and changes nothing.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import type { PaneListing } from '../../src/broker/registry.js';
import type { HeldAuth, Request } from '../../src/core/protocol/messages.js';
import { signHeld, type HeldOp } from '../../src/core/protocol/token.js';
import { enrolledPane, recordOf } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { markerDir } from '../../lab/markers.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';
import { exchangeAll, runIdOf, start, wait } from './support.js';

function auth(
  rec: EnrollmentRecord,
  op: HeldOp,
  runId: string,
  over: Partial<HeldAuth> = {},
  secretHex = rec.secret,
): HeldAuth {
  const fields = {
    server_generation: rec.server_generation,
    pane_id: rec.pane_id,
    enrollment_generation: rec.enrollment_generation,
    process_generation: rec.process_generation,
    issued_at: Date.now(),
    ...over,
  };
  return { ...fields, token: signHeld(Buffer.from(secretHex, 'hex'), op, runId, fields) };
}

const heldReq = (op: 'wait' | 'cancel_held', runId: string, a: HeldAuth): Request => ({
  type: op,
  run_id: runId,
  wait_ms: 0,
  progress: false,
  auth: a,
});

describe('requests about held runs are authorized like runs', () => {
  const scope = useServer();
  let server: TmuxServer;
  let a: PaneListing;
  let b: PaneListing;
  let recA: EnrollmentRecord;
  let recB: EnrollmentRecord;
  let mcp: McpHandle;
  let runId: string;
  let marks: string;

  beforeAll(async () => {
    server = scope.server;
    ({ listing: a } = await enrolledPane(server));
    ({ listing: b } = await enrolledPane(server));
    recA = recordOf(server, a);
    recB = recordOf(server, b);
    mcp = await scope.startMcp();
    marks = markerDir(server);
    // A run in pane A that would leave a marker if it were cancelled.
    const s = await start(mcp.client, a, `trap "touch '${marks}/stopped'" TERM; sleep 30 & wait`);
    runId = runIdOf(s);
    await waitUntil(async () => (await wait(mcp.client, a, runId, 0)).pending?.state === 'running', 8000, 'the run');
  });

  const stillRunning = async (): Promise<void> => {
    expect((await wait(mcp.client, a, runId, 0)).pending?.state).toBe('running');
    expect(existsSync(join(marks, 'stopped'))).toBe(false);
  };

  it("refuses a cancel signed with another enrollment's secret, or over another run id or operation", async () => {
    for (const [req, why] of [
      [heldReq('cancel_held', runId, auth(recA, 'cancel_held', runId, {}, recB.secret)), "B's secret"],
      [heldReq('cancel_held', runId, auth(recA, 'cancel_held', 'e'.repeat(32))), 'signed for another run id'],
      [heldReq('cancel_held', runId, auth(recA, 'wait', runId)), 'signed for a wait'],
    ] as const) {
      const replies = await exchangeAll(recA.socket, req);
      expect(replies, why).toEqual([expect.objectContaining({ type: 'error', code: 'unauthorized', ran: false })]);
    }
    await stillRunning();
  });

  it('refuses stale generations and expired requests; nothing changes', async () => {
    const stale = await exchangeAll(
      recA.socket,
      heldReq('cancel_held', runId, auth(recA, 'cancel_held', runId, { process_generation: 'a'.repeat(32) })),
    );
    expect(stale).toEqual([expect.objectContaining({ type: 'error', code: 'stale_generation' })]);
    const old = await exchangeAll(
      recA.socket,
      heldReq('cancel_held', runId, auth(recA, 'cancel_held', runId, { issued_at: Date.now() - 10 * 60_000 })),
    );
    expect(old).toEqual([expect.objectContaining({ type: 'error', code: 'expired' })]);
    await stillRunning();
  });

  it("pane B's helper does not know pane A's run (unknown_run), even signed correctly for B", async () => {
    const r = await exchangeAll(recB.socket, heldReq('cancel_held', runId, auth(recB, 'cancel_held', runId)));
    expect(r).toEqual([expect.objectContaining({ type: 'error', code: 'unknown_run', ran: false })]);
    const list = await exchangeAll(recB.socket, { type: 'list', auth: auth(recB, 'list', '') });
    expect(list).toEqual([{ type: 'runs', runs: [] }]);
    await stillRunning();
  });

  it('lists only when signed for this enrollment', async () => {
    const bad = await exchangeAll(recA.socket, { type: 'list', auth: auth(recA, 'list', '', {}, recB.secret) });
    expect(bad).toEqual([expect.objectContaining({ type: 'error', code: 'unauthorized' })]);
    const good = await exchangeAll(recA.socket, { type: 'list', auth: auth(recA, 'list', '') });
    expect(good[0]).toMatchObject({
      type: 'runs',
      runs: [expect.objectContaining({ run_id: runId, state: 'running' })],
    });
  });

  it('reads output only when signed for this run, operation and enrollment', async () => {
    const out = (a: HeldAuth): Request => ({
      type: 'output',
      run_id: runId,
      stream: 'stdout',
      from: 0,
      max_bytes: 100,
      auth: a,
    });
    for (const [a2, code] of [
      [auth(recA, 'output', runId, {}, recB.secret), 'unauthorized'],
      [auth(recA, 'wait', runId), 'unauthorized'],
      [auth(recA, 'output', 'e'.repeat(32)), 'unauthorized'],
      [auth(recA, 'output', runId, { enrollment_generation: 'b'.repeat(32) }), 'stale_generation'],
      [auth(recA, 'output', runId, { issued_at: Date.now() - 10 * 60_000 }), 'expired'],
    ] as const) {
      expect(await exchangeAll(recA.socket, out(a2))).toEqual([
        expect.objectContaining({ type: 'error', code, ran: false }),
      ]);
    }
    const other = await exchangeAll(recB.socket, out(auth(recB, 'output', runId)));
    expect(other).toEqual([expect.objectContaining({ type: 'error', code: 'unknown_run' })]);
    const good = await exchangeAll(recA.socket, out(auth(recA, 'output', runId)));
    expect(good).toEqual([
      expect.objectContaining({ type: 'output', run_id: runId, state: 'running', total_bytes: 0, finished: false }),
    ]);
    await stillRunning();
  });

  it('a correctly signed cancel stops the run', async () => {
    const r = await exchangeAll(recA.socket, {
      ...heldReq('cancel_held', runId, auth(recA, 'cancel_held', runId)),
      wait_ms: 5000,
    } as Request);
    expect(r[0]).toMatchObject({ type: 'held', run_id: runId, state: 'running' });
    expect(r.at(-1)).toMatchObject({ type: 'error', code: 'cancelled', ran: true });
    await waitUntil(() => existsSync(join(marks, 'stopped')), 5000, 'the trap to run');
  });
});
