// Two tmux servers sharing one registry directory: their panes can carry the same pane id, and
// each enrollment is still listed for its own server, with its own generations.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enroll, filesIn, listed, waitEmpty } from '../../lab/enrollment.js';
import { makePrivateDir } from '../../lab/run-root.js';
import { assertNoLeftovers, startServer, type TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';

let parent: string;
let shared: string;
const servers: TmuxServer[] = [];

beforeAll(async () => {
  parent = makePrivateDir('shared-', ['run']);
  shared = join(parent, 'run');
  servers.push(await startServer({ env: { TMUX_RUN_DIR: shared } }));
  servers.push(await startServer({ env: { TMUX_RUN_DIR: shared } }));
});

afterAll(async () => {
  for (const s of servers) await s.kill();
  for (const s of servers) expect(assertNoLeftovers(s)).toEqual([]);
  await waitEmpty(shared);
  rmSync(parent, { recursive: true, force: true });
});

it('the same pane id on two servers: both listed, told apart by their generations', async () => {
  const [a, b] = servers as [TmuxServer, TmuxServer];
  const pa = await a.newPane();
  const pb = await b.newPane();
  expect(pa.id).toBe(pb.id); // the first window's pane has the same id on both servers

  const la = await enroll(pa, shared);
  const lb = await enroll(pb, shared);
  const all = await listed(shared);
  expect(all).toHaveLength(2);
  expect(all.map((p) => p.pane_id)).toEqual([pa.id, pa.id]);
  expect(new Set(all.map((p) => p.tmux_socket))).toEqual(new Set([a.socket, b.socket]));
  expect(la.generation).not.toBe(lb.generation);
  expect(la.server_generation).not.toBe(lb.server_generation);
  expect(la.process_generation).not.toBe(lb.process_generation);
  expect(la.shell_pid).toBe(await pa.shellPid());
  expect(lb.shell_pid).toBe(await pb.shellPid());

  // Ending one leaves exactly the other.
  expect((await pa.runWithStatus('tmux_run_unenroll')).status).toBe(0);
  const left = await listed(shared);
  expect(left.map((p) => [p.tmux_socket, p.generation])).toEqual([[b.socket, lb.generation]]);

  // A whole server going away takes its enrollments with it, and only those.
  const again = await enroll(pa, shared);
  await b.kill();
  await waitUntil(async () => (await listed(shared)).length === 1, 10_000, "the killed server's enrollment to go");
  expect((await listed(shared)).map((p) => p.generation)).toEqual([again.generation]);
  expect((await pa.runWithStatus('tmux_run_unenroll')).status).toBe(0);
  await waitEmpty(shared);
  expect(filesIn(shared)).toEqual([]);
});
