// background: true on the real stack: a service started in a pane gives up the pane's queue, so a
// later run of the same pane talks to it; its log is read with tmux_run_output; it ends with a
// cancel, the person's `tmux-run stop`, or the pane; at most 8 run at once per pane.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { auditEntries } from '../../lab/audit.js';
import { runCli } from '../../lab/cli.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { markerDir } from '../../lab/markers.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import { productEnv } from '../../lab/product.js';
import { groupGone } from '../../lab/processes.js';
import { waitUntil } from '../../lab/waiting.js';
import { callLong, cancel, finalOf, heldRuns, readOutput, runIdOf, start, targetOf, wait } from './support.js';

/** A loopback port nothing listens on (now). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:port (tried by listening on it). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

const textOf = (path: string): string | undefined =>
  existsSync(path) ? readFileSync(path, 'utf8').trim() || undefined : undefined;

/** A small HTTP server in node that logs each request and serves a page. */
const serverScript = (port: number, marks: string): string =>
  `echo $$ > '${marks}/server-pgid'; exec '${process.execPath}' -e '
const http = require("http");
http.createServer((q, r) => { console.log("GET " + q.url); r.end("hello from the service\\n"); })
  .listen(${port}, "127.0.0.1", () => console.log("listening on ${port}"));'`;

describe('background runs', () => {
  const scope = useServer();
  let listing: PaneListing;
  let mcp: McpHandle;
  let marks: string;

  beforeAll(async () => {
    ({ listing } = await enrolledPane(scope.server));
    mcp = await scope.startMcp();
    marks = markerDir(scope.server);
  });

  it('a service started in the background answers a later run of the same pane; its log is read; a cancel stops it and frees its port', async () => {
    const port = await freePort();
    const s = await start(mcp.client, listing, serverScript(port, marks), { background: true });
    expect(s.pending).toMatchObject({ background: true });
    const id = runIdOf(s);
    await waitUntil(
      async () =>
        (await readOutput(mcp.client, listing, { run_id: id, stream: 'stdout' })).data.data.includes('listening'),
      10_000,
      'the service to listen',
    );
    // The broker restarted in between changes nothing: a new one finds the run and its output.
    await mcp.close();
    mcp = await scope.startMcp();
    const page = await callRun(mcp.client, listing, `curl -s http://127.0.0.1:${port}/page`);
    expect(page.structured.ok, JSON.stringify(page.structured)).toBe(true);
    expect(page.structured.data.stdout.data).toBe('hello from the service\n');
    const log = await readOutput(mcp.client, listing, { run_id: id, stream: 'stdout' });
    expect(log.data).toMatchObject({ state: 'running', finished: false, from: 0, kept_from: 0, encoding: 'utf-8' });
    expect(log.data.data).toBe(`listening on ${port}\nGET /page\n`);
    const listed = (await heldRuns(mcp.client)).find((r) => r.run_id === id);
    expect(listed).toMatchObject({ background: true, state: 'running' });
    const w = await wait(mcp.client, listing, id, 0);
    expect(w.pending).toMatchObject({ background: true, state: 'running' });
    expect(w.pending.stdout_tail.data).toContain('GET /page');

    const stopped = await cancel(mcp.client, listing, id, 10_000);
    expect(stopped.error).toMatchObject({ code: 'cancelled', delivery: 'observed' });
    expect(stopped.error.effects).toMatchObject({ state: 'known', completion: { state: 'signaled', signal: 15 } });
    await groupGone(Number(textOf(join(marks, 'server-pgid'))));
    expect(await portFree(port)).toBe(true);
    // Output stays readable after the cancel.
    const after = await readOutput(mcp.client, listing, { run_id: id, stream: 'stdout', from: 0 });
    expect(after.data).toMatchObject({ finished: true, state: 'finished', total_bytes: log.data.total_bytes });
    const start_ = auditEntries(scope.server).find((e) => e.run_id === id && e.event === 'start');
    expect(start_).toMatchObject({ background: true });
  });

  it('background with overflow stop is invalid_arguments; a background run keeps the tail of big output', async () => {
    const bad = await start(mcp.client, listing, 'true', { background: true, overflow: 'stop' });
    expect(bad.error).toMatchObject({ code: 'invalid_arguments', delivery: 'not_sent' });
    const r = await start(mcp.client, listing, 'seq 1 200000', { background: true, stdout_limit: 1000 });
    const final = await finalOf(mcp.client, listing, runIdOf(r));
    expect(final.data.stdout).toMatchObject({ truncated: true, bytes: 1288895, kept_from: 1288895 - 1000 });
  });

  it('a ninth background run is refused while 8 run; tmux-run stop ends one from the CLI', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(runIdOf(await start(mcp.client, listing, 'sleep 120', { background: true })));
    await waitUntil(
      async () =>
        (await heldRuns(mcp.client)).filter((r) => ids.includes(r.run_id) && r.state === 'running').length === 8,
      20_000,
      'the 8 background runs to run',
    );
    // The queue is free: a plain run goes on while they run.
    expect((await callRun(mcp.client, listing, 'echo beside')).structured.data.stdout.data).toBe('beside\n');
    const ninth = await start(mcp.client, listing, `touch '${marks}/ninth-ran'`, { background: true, wait_ms: 10_000 });
    expect(ninth.error).toMatchObject({
      code: 'too_many_background_runs',
      delivery: 'observed',
      effects: { state: 'none', completion: { state: 'unobserved' } },
    });
    expect(existsSync(join(marks, 'ninth-ran'))).toBe(false);

    const env = productEnv(scope.server);
    const usage = await runCli(['stop', 'xyz'], env);
    expect(usage.code).toBe(2);
    const none = await runCli(['stop', 'f'.repeat(32)], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no held run/);
    expect(none.stderr).toMatch(
      /started with tmux_run, not tmux_run_start, is not held: 'tmux-run revoke PANE' stops it/,
    );
    const cli = await runCli(['stop', ids[0]!.slice(0, 8)], env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(
      new RegExp(`^stopped: run ${ids[0]!.slice(0, 8)} in pane ${listing.pane_id} \\(signal 15\\)`),
    );
    const r = await wait(mcp.client, listing, ids[0]!, 0);
    expect(r.error).toMatchObject({ code: 'cancelled' });
    expect(r.error.message).toMatch(/the person stopped it \(tmux-run stop\)/);
    const events = auditEntries(scope.server).filter((e) => e.run_id === ids[0]);
    expect(events.find((e) => e.event === 'cancel')).toMatchObject({ by: 'person' });
    expect(events.find((e) => e.event === 'end')?.detail).toMatch(/the person stopped it/);
    // With 7 running a new background run starts again.
    const again = await start(mcp.client, listing, 'sleep 120', { background: true });
    ids.push(runIdOf(again));
    await waitUntil(
      async () => (await heldRuns(mcp.client)).find((x) => x.run_id === runIdOf(again))?.state === 'running',
      10_000,
      'the new background run to run',
    );
    for (const id of ids.slice(1)) expect((await cancel(mcp.client, listing, id, 10_000)).error.code).toBe('cancelled');
  });

  it('closing the pane stops every background run', async () => {
    const { pane, listing: other } = await enrolledPane(scope.server);
    const pgids: number[] = [];
    for (let i = 0; i < 3; i++) {
      await start(mcp.client, other, `echo $$ > '${marks}/bg-${i}'; sleep 300 & sleep 300; wait`, { background: true });
      pgids.push(Number(await waitUntil(() => textOf(join(marks, `bg-${i}`)), 10_000, `background run ${i}`)));
    }
    await scope.server.tmux(['kill-pane', '-t', pane.id]);
    for (const pgid of pgids) await groupGone(pgid);
    const t = targetOf(other);
    const w = await callLong(mcp.client, 'tmux_run_wait', { target: t, run_id: 'a'.repeat(32), wait_ms: 0 });
    expect(w.error).toMatchObject({ code: 'not_enrolled' });
  });
});
