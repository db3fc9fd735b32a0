// Cancellation (MCP notifications/cancelled through the SDK's AbortSignal) and progress notifications.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptDigest } from '../../src/core/enrollment/generation.js';
import { auditEntries, type AuditEntry } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { markerDir } from '../../lab/markers.js';
import { groupGone, groupMembers } from '../../lab/processes.js';
import { withServer } from '../../lab/lifecycle.js';
import type { TmuxServer } from '../../lab/server.js';
import { sleep, waitUntil } from '../../lab/waiting.js';
import { callWith, whileRunning } from './support.js';

// The audit entries of the run whose script is `script` (a cancelled call gets no result to name its run id).
const byScript = (server: TmuxServer, script: string): AuditEntry[] =>
  auditEntries(server).filter((e) => e.script_digest === scriptDigest(script));

describe('cancellation', () => {
  it('a call cancelled while queued never runs', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const first = callWith(mcp, listing, `echo $$ > '${marks}/first-started'; sleep 1.5; echo first`);
      await whileRunning(first, join(marks, 'first-started'));
      const ac = new AbortController();
      const queuedScript = `touch '${marks}/queued-ran'`;
      const queued = callWith(mcp, listing, queuedScript, { signal: ac.signal });
      await sleep(300);
      ac.abort('the test cancels the queued call');
      await expect(queued).rejects.toThrow();
      const r = await first;
      expect(r.isError, JSON.stringify(r.structured)).toBe(false);
      expect(r.structured.data.stdout.data).toBe('first\n');
      // The pane takes the next run normally; the cancelled one never ran.
      const next = await callWith(mcp, listing, 'echo next');
      expect(next.structured.data.stdout.data).toBe('next\n');
      expect(existsSync(join(marks, 'queued-ran'))).toBe(false);
      const entries = byScript(server, queuedScript);
      expect(entries.map((e) => [e.event, e.outcome, e.ran])).toEqual([['end', 'cancelled', false]]);
    });
  });

  it('a call cancelled while running stops its process group, and the pane takes the next run', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const ac = new AbortController();
      const script = `echo $$ > '${marks}/pgid'; sleep 100 & echo $! > '${marks}/sleep'; wait`;
      const call = callWith(mcp, listing, script, { signal: ac.signal });
      const pgid = Number(await whileRunning(call, join(marks, 'pgid')));
      const sleepPid = Number(await whileRunning(call, join(marks, 'sleep')));
      expect(groupMembers(pgid)).toContain(sleepPid);
      ac.abort('the test cancels the running call');
      await expect(call).rejects.toThrow();
      // Gone long before its sleep 100 would have ended.
      await groupGone(pgid, 15_000);
      const end = await waitUntil(() => byScript(server, script).find((e) => e.event === 'end'), 5000, 'the end entry');
      expect(end.outcome).toBe('cancelled');
      const next = await callWith(mcp, listing, 'echo next');
      expect(next.isError, JSON.stringify(next.structured)).toBe(false);
      expect(next.structured.data.stdout.data).toBe('next\n');
    });
  });

  it('a call cancelled while the shell is asked whether it is idle never runs, and is recorded', async () => {
    await withServer(async (server, scope) => {
      const { pane, listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      // A builtin in the foreground: no foreground job to see from outside, and zle cannot answer.
      await pane.type('read -t 3 x', { enter: true });
      await sleep(200);
      const ac = new AbortController();
      const script = `touch '${marks}/ran'`;
      const call = callWith(mcp, listing, script, { signal: ac.signal });
      await sleep(400); // the helper is now waiting (up to 1 s) for the line editor's answer
      ac.abort('the test cancels while the helper asks the shell');
      await expect(call).rejects.toThrow();
      const end = await waitUntil(
        () => byScript(server, script).find((e) => e.event === 'end' || e.event === 'refused'),
        5000,
        'an audit entry',
      );
      expect(end.outcome).toBe('cancelled');
      expect(end.ran).toBe(false);
      // The helper reported it: the broker's own fallback (after 5 s) would say it did not confirm.
      await waitUntil(
        () => mcp.stderr.some((l) => l.includes('cancelled by the client')),
        5000,
        'the broker to log the outcome',
      );
      expect(mcp.stderr.find((l) => l.includes('cancelled by the client'))).not.toMatch(/did not confirm/);
      await pane.waitForPrompt(5000);
      const next = await callWith(mcp, listing, 'echo next');
      expect(next.structured.data.stdout.data).toBe('next\n');
      expect(existsSync(join(marks, 'ran'))).toBe(false);
    });
  });
});

describe('progress', () => {
  it('sends increasing progress notifications while a call waits and runs', async () => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const first = callWith(mcp, listing, `echo $$ > '${marks}/first'; sleep 1.5`);
      await whileRunning(first, join(marks, 'first'));
      const seen: Array<{ progress: number; message?: string }> = [];
      const r = await callWith(mcp, listing, 'sleep 3; echo done', { onprogress: (p) => seen.push(p), timeout: 2500 });
      expect(r.isError, JSON.stringify(r.structured)).toBe(false);
      expect(r.structured.data.stdout.data).toBe('done\n');
      expect((await first).isError).toBe(false);
      // About one a second for 1.5 s queued and 3 s running; each larger than the one before.
      expect(seen.length).toBeGreaterThanOrEqual(4);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
      expect(seen.some((p) => /queued/.test(p.message ?? ''))).toBe(true);
      expect(seen.some((p) => /running/.test(p.message ?? ''))).toBe(true);
    });
  });
});
