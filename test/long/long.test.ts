// tmux_run_start, tmux_run_wait, tmux_run_cancel and tmux_runs on the real stack: a run outlives
// the call that started it and the client's timeout, waits fetch its result (also from a new
// broker), cancel works queued and running, and at most 32 finished results are held per pane.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { scriptDigest } from '../../src/core/enrollment/generation.js';
import { auditEntries } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { markerDir } from '../../lab/markers.js';
import { ALL_TOOLS, callRun, type McpHandle } from '../../lab/mcp.js';
import { groupGone } from '../../lab/processes.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';
import { callLong, cancel, finalOf, heldRuns, runIdOf, start, targetOf, wait } from './support.js';

describe('long runs', () => {
  const scope = useServer();
  let server: TmuxServer;
  let listing: PaneListing;
  let mcp: McpHandle;
  let marks: string;

  beforeAll(async () => {
    server = scope.server;
    ({ listing } = await enrolledPane(server));
    mcp = await scope.startMcp();
    marks = markerDir(server);
  });

  it('lists the four tools with --enable-tool tmux_run, with sensible annotations', async () => {
    const tools = (await mcp.client.listTools()).tools;
    const by = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(by).sort()).toEqual(ALL_TOOLS);
    expect(by.tmux_run_wait!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(by.tmux_runs!.annotations).toMatchObject({ readOnlyHint: true });
    expect(by.tmux_run_cancel!.annotations).toMatchObject({ destructiveHint: true });
    expect(by.tmux_run_start!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(by.tmux_run!.description).toMatch(/tmux_run_start/);
  });

  it('a run longer than the client timeout finishes; a later wait (and a new broker) fetches the same result', async () => {
    // It runs until the test lets it end, so it is still running after the client gave up.
    const go = join(marks, 'long-go');
    const script = `until [ -e '${go}' ]; do sleep 0.05; done; echo "long done in $TMUX_PANE"; echo warn >&2; exit 3`;
    const started = await start(mcp.client, listing, script);
    expect(started.pending).toMatchObject({ target: targetOf(listing), stdout_bytes: 0 });
    expect(['queued', 'running']).toContain(started.pending.state);
    expect(started.pending.authorization.script_digest).toBe(scriptDigest(script));
    const runId = runIdOf(started);
    // A wait longer than this client's patience: the client gives up at 2 s and cancels the wait, not the run.
    await expect(wait(mcp.client, listing, runId, 30_000, { timeout: 2000 })).rejects.toThrow(/timed out/i);
    const pending = await wait(mcp.client, listing, runId, 0);
    expect(pending.pending).toMatchObject({ run_id: runId, state: 'running' });
    expect(pending.pending.elapsed_ms).toBeGreaterThanOrEqual(2000);
    writeFileSync(go, '');
    const other = await scope.startMcp();
    try {
      const final = await finalOf(other.client, listing, runId);
      expect(final.ok).toBe(true);
      expect(final.data.completion).toEqual({ state: 'exited', exit_status: 3, signal: null });
      expect(final.data.stdout.data).toBe(`long done in ${listing.pane_id}\n`);
      expect(final.data.stderr.data).toBe('warn\n');
      expect(final.data.authorization).toEqual(started.pending.authorization);
      // Waiting again is harmless and returns the same final result, from either broker.
      expect(await wait(mcp.client, listing, runId, 0)).toEqual(final);
      expect(await wait(other.client, listing, runId)).toEqual(final);
    } finally {
      await other.close();
    }
    const events = auditEntries(server).filter((e) => e.run_id === runId);
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['held', 'start', 'end', 'wait']));
    expect(events.find((e) => e.event === 'end')).toMatchObject({ outcome: 'exited', exit_status: 3 });
  });

  it('start with wait_ms returns the final result when the run ends in time, with progress for a progressToken', async () => {
    const seen: Array<{ progress: number; message?: string }> = [];
    const r = await start(
      mcp.client,
      listing,
      'sleep 1.5; echo quick',
      { wait_ms: 10_000 },
      {
        onprogress: (p) => seen.push(p),
      },
    );
    expect(r.ok).toBe(true);
    expect(r.data.stdout.data).toBe('quick\n');
    expect(seen.some((p) => /running/.test(p.message ?? ''))).toBe(true);
    // A wait with a progressToken gets progress too.
    const s2 = await start(mcp.client, listing, 'sleep 2.5; echo later');
    const seen2: Array<{ message?: string }> = [];
    const w = await wait(mcp.client, listing, runIdOf(s2), 10_000, { onprogress: (p) => seen2.push(p) });
    expect(w.data.stdout.data).toBe('later\n');
    expect(seen2.length).toBeGreaterThanOrEqual(1);
  });

  it('refusals made at dispatch come back as the final result, exactly as tmux_run gives them', async () => {
    const r = await start(mcp.client, listing, 'yes | head -c 5000', { stdout_limit: 100, wait_ms: 10_000 });
    expect(r.ok).toBe(false);
    expect(r.error).toMatchObject({ code: 'output_limit_exceeded', delivery: 'observed' });
    expect(r.error.effects.authorization.run_id).toBe(runIdOf(r));
    expect(await wait(mcp.client, listing, runIdOf(r), 0)).toEqual(r);
  });

  it('cancel while queued: the run never runs; while running: its group is stopped', async () => {
    const blocker = await start(mcp.client, listing, `echo $$ > '${marks}/blocker'; sleep 2`);
    await waitUntil(() => existsSync(join(marks, 'blocker')), 8000, 'the blocker to run');
    const queued = await start(mcp.client, listing, `touch '${marks}/queued-ran'`);
    expect(queued.pending.state).toBe('queued');
    const c = await cancel(mcp.client, listing, runIdOf(queued));
    expect(c.error).toMatchObject({ code: 'cancelled', delivery: 'observed' });
    expect(c.error.effects).toMatchObject({ state: 'none', completion: { state: 'unobserved' } });
    expect(c.error.effects.authorization.run_id).toBe(runIdOf(queued));
    expect((await finalOf(mcp.client, listing, runIdOf(blocker))).ok).toBe(true);
    expect(existsSync(join(marks, 'queued-ran'))).toBe(false);
    // Cancelling again returns the same final result.
    expect(await cancel(mcp.client, listing, runIdOf(queued))).toEqual(c);

    const running = await start(mcp.client, listing, `echo $$ > '${marks}/pgid'; sleep 100 & wait`);
    const pgid = Number(await waitUntil(() => textOf(join(marks, 'pgid')), 8000, 'the run to start'));
    const stopped = await cancel(mcp.client, listing, runIdOf(running), 10_000);
    expect(stopped.error).toMatchObject({ code: 'cancelled', delivery: 'observed' });
    expect(stopped.error.effects).toMatchObject({ state: 'known', completion: { state: 'signaled', signal: 15 } });
    await groupGone(pgid);
    const ends = auditEntries(server).filter((e) => e.run_id === runIdOf(running) && e.event === 'end');
    expect(ends).toHaveLength(1);
    expect(ends[0]!.detail).toMatch(/tmux_run_cancel/);
    expect(auditEntries(server).some((e) => e.run_id === runIdOf(running) && e.event === 'cancel')).toBe(true);
  });

  it('holds at most 32 finished results per pane: the 33rd drops the oldest', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 33; i++) {
      const r = await start(mcp.client, listing, `echo run-${i}`, { wait_ms: 10_000 });
      expect(r.ok, JSON.stringify(r)).toBe(true);
      ids.push(runIdOf(r));
    }
    const gone = await wait(mcp.client, listing, ids[0]!, 0);
    expect(gone.error).toMatchObject({ code: 'unknown_run', delivery: 'not_sent', effects: { state: 'none' } });
    const second = await wait(mcp.client, listing, ids[1]!, 0);
    expect(second.data.stdout.data).toBe('run-2\n');
    const held = (await heldRuns(mcp.client)).filter((r) => r.pane_id === listing.pane_id);
    expect(held).toHaveLength(32);
    expect(held.map((r) => r.run_id)).toEqual(ids.slice(1));
    const last = held.at(-1)!;
    expect(last).toMatchObject({
      state: 'finished',
      generation: listing.generation,
      outcome: { ok: true, code: null, exit_status: 0, signal: null },
      stdout_bytes: 7,
    });
    expect(Date.parse(last.held_until) - Date.parse(last.finished_at)).toBe(10 * 60_000);
  });

  it('refuses bad input, unknown runs and stale generations with nothing changed', async () => {
    const t = targetOf(listing);
    const some = 'a'.repeat(32);
    const bad = [
      ['tmux_run_wait', { target: t, run_id: some, wait_ms: 30_001 }],
      ['tmux_run_wait', { target: t, run_id: 'NOT-A-RUN-ID' }],
      ['tmux_run_cancel', { target: t, run_id: some, extra: 1 }],
      ['tmux_run_start', { target: t, script: 'true', wait_ms: -1 }],
      ['tmux_run_start', { target: t, script: 'true', nope: true }],
    ] as const;
    for (const [name, args] of bad) {
      const r = await callLong(mcp.client, name, args);
      expect(r.error, `${name} ${JSON.stringify(args)}`).toMatchObject({
        code: 'invalid_arguments',
        delivery: 'not_sent',
      });
    }
    const unknown = await wait(mcp.client, listing, some, 0);
    expect(unknown.error).toMatchObject({ code: 'unknown_run', delivery: 'not_sent' });
    // A tmux_run's run is not held.
    const plain = await callRun(mcp.client, listing, 'echo plain');
    const plainId = plain.structured.data.authorization.run_id as string;
    expect((await wait(mcp.client, listing, plainId, 0)).error.code).toBe('unknown_run');
    const stale = await callLong(mcp.client, 'tmux_run_wait', {
      target: { ...t, generation: 'f'.repeat(32) },
      run_id: some,
    });
    expect(stale.error).toMatchObject({ code: 'stale_generation', delivery: 'not_sent' });
  });

  it('when a tmux_run caller times out, the audit trail says why the run was stopped', async () => {
    const script = `sleep 30; echo '${marks}'`;
    await expect(callRun(mcp.client, listing, script, {}, { timeout: 1500 })).rejects.toThrow(/timed out/i);
    const end = await waitUntil(
      () => auditEntries(server).find((e) => e.script_digest === scriptDigest(script) && e.event === 'end'),
      8000,
      'the end entry',
    );
    expect(end.outcome).toBe('cancelled');
    expect(end.detail).toMatch(/the caller cancelled it \(reason given: .*Request timed out/);
  });
});

/** A marker file's text once it has some. */
function textOf(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8').trim() || undefined : undefined;
}
