// A helper that lives but answers nothing (stopped with SIGSTOP here; a hung one looks the same
// from outside): every tool answers within its own time with what is known (helper_unreachable,
// delivery, effects), a request given up on is never acted on when the helper runs again, a run
// under way is said to be given up (tmux_run) or still held (a wait), and the listings name the
// pane as unresponsive rather than leave it out. Real tmux, zsh, helper, MCP server and CLI.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { auditEventually } from '../../lab/audit.js';
import { runCli } from '../../lab/cli.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { markerDir } from '../../lab/markers.js';
import { callRun, listedPanes, type McpHandle } from '../../lab/mcp.js';
import { groupGone, processAlive } from '../../lab/processes.js';
import { productEnv } from '../../lab/product.js';
import { withServer } from '../../lab/lifecycle.js';
import { waitUntil } from '../../lab/waiting.js';
import { cancel, readOutput, start, targetOf, validateRuns, wait } from '../long/support.js';
import { callWith, errorOf, whileRunning } from './support.js';

/** tmux_run_input or tmux_run_screen: the structured result. */
async function callTool(h: McpHandle, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const r = (await h.client.callTool({ name, arguments: args })) as CallToolResult;
  return r.structuredContent as Record<string, any>;
}

/** tmux_runs: the structured result, checked against its schema. */
async function runsOf(h: McpHandle): Promise<Record<string, any>> {
  const r = (await h.client.callTool({ name: 'tmux_runs', arguments: {} })) as CallToolResult;
  expect(r.isError ?? false).toBe(false);
  const s = r.structuredContent as Record<string, any>;
  expect(validateRuns(s) ? [] : validateRuns.errors).toEqual([]);
  return s;
}

/** Continues the helper, whatever the test did (a stopped process would outlive the scope's cleanup). */
const resume = (pid: number): void => {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {
    // gone already
  }
};

describe('a helper that answers nothing (SIGSTOP)', () => {
  it('every tool answers helper_unreachable with what is known; nothing given up on runs later; the pane serves again once continued', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const helper = listing.helper_pid;
      const target = targetOf(listing);

      // A run held before the stop: a background service reading a pipe.
      const held = await start(mcp.client, listing, `echo up; sleep 120`, { background: true, input: 'pipe' });
      expect(held.pending, JSON.stringify(held)).toBeDefined();
      const heldId: string = held.pending.run_id;
      // A tmux_run executing when the helper stops.
      const running = callWith(mcp, listing, `echo $$ > '${marks}/pgid'; sleep 100`);
      const pgid = Number(await whileRunning(running, join(marks, 'pgid')));
      // A wait the helper took (its progress says so) when it stops.
      let progressed!: () => void;
      const tookWait = new Promise<void>((r) => (progressed = r));
      const waiting = wait(mcp.client, listing, heldId, 25_000, {
        onprogress: () => progressed(),
        resetTimeoutOnProgress: true,
        timeout: 60_000,
      });
      await tookWait;

      process.kill(helper, 'SIGSTOP');
      try {
        // The run under way: given up, its process group stopped by the broker.
        const r = errorOf(await running);
        expect(r.code).toBe('helper_unreachable');
        expect(r.delivery).toBe('observed');
        expect(r.effects).toMatchObject({ state: 'unknown', completion: { state: 'unobserved' } });
        expect(r.message).toMatch(/stopped/);
        await groupGone(pgid, 5000);
        // The wait the helper took: the run is still held by it, and the result says so.
        const w = await waiting;
        expect(w.ok, JSON.stringify(w)).toBe(false);
        expect(w.error).toMatchObject({ code: 'helper_unreachable', delivery: 'observed' });
        expect(w.error.effects).toMatchObject({ state: 'unknown', authorization: { run_id: heldId } });
        expect(w.error.message).toMatch(/held by the helper/);

        // Every call sent while it is stopped: not taken, refused with effects none.
        const [run, st, wt, cn, out, inp, scr] = await Promise.all([
          callRun(mcp.client, listing, `touch '${marks}/late-run'`),
          start(mcp.client, listing, `touch '${marks}/late-start'`, { wait_ms: 1000 }),
          wait(mcp.client, listing, heldId, 1000),
          cancel(mcp.client, listing, heldId, 1000),
          readOutput(mcp.client, listing, { run_id: heldId, stream: 'stdout' }),
          callTool(mcp, 'tmux_run_input', { target, run_id: heldId, data: 'late input\n' }),
          callTool(mcp, 'tmux_run_screen', { target, run_id: heldId }),
        ]);
        const e = errorOf(run);
        expect(e).toMatchObject({ code: 'helper_unreachable', delivery: 'possibly_sent' });
        expect(e.effects).toMatchObject({ state: 'none', completion: { state: 'unobserved' } });
        expect(e.message).toMatch(/stopped/);
        const lateRunId: string = e.effects!.authorization.run_id;
        expect(st.error).toMatchObject({ code: 'helper_unreachable', delivery: 'possibly_sent' });
        expect(st.error.effects.state).toBe('none');
        const lateStartId: string = st.error.effects.authorization.run_id;
        for (const x of [wt, cn, out]) {
          expect(x.ok, JSON.stringify(x)).toBe(false);
          expect(x.error).toMatchObject({ code: 'helper_unreachable', delivery: 'possibly_sent' });
          expect(x.error.effects.state).toBe('none');
        }
        for (const x of [inp, scr])
          expect(x.error).toMatchObject({ code: 'helper_unreachable', delivery: 'possibly_sent' });

        // The listings name the pane and why, rather than leave it out.
        const pane = (await listedPanes(mcp.client)).find((p) => p.pane_id === listing.pane_id);
        expect(pane?.state).toBe('unresponsive');
        expect(pane?.helper_problem).toMatch(/stopped/);
        const runs = await runsOf(mcp);
        expect(runs.unanswered).toEqual([
          { pane_id: listing.pane_id, generation: listing.generation, reason: expect.stringMatching(/stopped/) },
        ]);
        const env = productEnv(server);
        const cliPanes = await runCli(['panes'], env);
        expect(cliPanes.code).toBe(0);
        expect(cliPanes.stdout).toMatch(
          new RegExp(`${listing.pane_id}: unresponsive: its helper \\(pid ${helper}\\) is stopped`),
        );
        const cliRuns = await runCli(['runs'], env);
        expect(cliRuns.code).toBe(1);
        expect(cliRuns.stderr).toMatch(new RegExp(`pane ${listing.pane_id}: its runs are unknown: .*stopped`));
        const cliStop = await runCli(['stop', heldId.slice(0, 8)], env);
        expect(cliStop.code).toBe(1);
        expect(cliStop.stderr).toMatch(new RegExp(`pane ${listing.pane_id} did not: .*stopped`));

        // Continued: the helper reads what was given up and refuses it unread (the audit trail says so).
        process.kill(helper, 'SIGCONT');
        for (const id of [lateRunId, lateStartId])
          await auditEventually(
            server,
            id,
            (x) => x.event === 'refused' && x.outcome === 'expired' && x.by !== 'broker',
          );
        expect(existsSync(join(marks, 'late-run'))).toBe(false);
        expect(existsSync(join(marks, 'late-start'))).toBe(false);
        // The cancel was not acted on: the held run still runs, its late input was not written.
        const still = await wait(mcp.client, listing, heldId, 0);
        expect(still.pending, JSON.stringify(still)).toMatchObject({ state: 'running', input_bytes: 0 });
        // The pane serves again, and the listing says so: the same helper (a stopped helper is not a dormant one to wake).
        const again = await waitUntil(
          async () => (await listedPanes(mcp.client)).find((p) => p.pane_id === listing.pane_id && p.state === 'idle'),
          15_000,
          'the pane to be listed idle again',
        );
        expect(again.helper_pid).toBe(helper);
        expect((await runsOf(mcp)).unanswered).toBeUndefined();
        const ok = await callRun(mcp.client, listing, 'echo ok3');
        expect(ok.isError, JSON.stringify(ok.structured)).toBe(false);
        expect(ok.structured.data.stdout.data).toBe('ok3\n');
        const stopped = await cancel(mcp.client, listing, heldId, 10_000);
        expect(stopped.error?.code, JSON.stringify(stopped)).toBe('cancelled');
        expect(processAlive(helper)).toBe(true);
      } finally {
        resume(helper);
      }
    });
  });

  it('a start the helper took before it stopped is said to be held by it, and found again once it runs', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const helper = listing.helper_pid;
      // The run starts (its file says so), then the helper stops before the start's wait_ms is up.
      const starting = start(mcp.client, listing, `echo $$ > '${marks}/pgid'; sleep 3; echo done`, {
        wait_ms: 20_000,
      });
      await whileRunning(
        starting.then((s) => ({ result: {} as CallToolResult, structured: s, isError: s.ok === false })),
        join(marks, 'pgid'),
      );
      process.kill(helper, 'SIGSTOP');
      try {
        const s = await starting;
        expect(s.ok, JSON.stringify(s)).toBe(false);
        expect(s.error).toMatchObject({ code: 'helper_unreachable', delivery: 'observed' });
        expect(s.error.effects.state).toBe('unknown');
        const runId: string = s.error.effects.authorization.run_id;
        expect(s.error.message).toMatch(new RegExp(`run_id ${runId}`));
        process.kill(helper, 'SIGCONT');
        // The run went on under its helper, and its result is there.
        let r = await wait(mcp.client, listing, runId, 10_000);
        if (r.pending) r = await wait(mcp.client, listing, runId, 10_000);
        expect(r.ok, JSON.stringify(r)).toBe(true);
        expect(r.data.stdout.data).toBe('done\n');
      } finally {
        resume(helper);
      }
    });
  });
});
