// Shared pieces of the fault suites: a server per test that must leave nothing behind, the audit
// trail as the server's environment places it, the processes of a run's group, and marker files.
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { callRun, startMcp, type McpHandle, type RunCall } from '../support/mcp.js';
import { assertNoLeftovers, startServer, waitUntil, type TmuxServer } from '../support/tmux.js';

/** Starts a tmux server, runs fn, then closes every broker it opened and checks nothing is left. */
export async function withServer(fn: (s: TmuxServer, open: typeof startMcp) => Promise<void>): Promise<void> {
  const server = await startServer();
  const brokers: McpHandle[] = [];
  const open: typeof startMcp = async (srv, opts) => {
    const h = await startMcp(srv, opts);
    brokers.push(h);
    return h;
  };
  try {
    await fn(server, open);
  } catch (e) {
    // What the brokers logged is the best clue to a failure; add it to the error.
    const logs = brokers
      .map((b, i) => `broker ${i} (pid ${b.pid}) stderr:\n  ${b.stderr.slice(-30).join('\n  ')}`)
      .join('\n');
    if (e instanceof Error && logs) e.message += `\n${logs}`;
    throw e;
  } finally {
    for (const b of brokers) await b.close();
    await server.kill();
  }
  expect(assertNoLeftovers(server)).toEqual([]);
}

/** The audit trail the harness gives both the panes and the brokers. */
export function auditFile(server: TmuxServer): string {
  return join(server.env.XDG_STATE_HOME ?? join(server.home, '.local', 'state'), 'tmux-run', 'audit.jsonl');
}

export type AuditEntry = Record<string, unknown> & { run_id: string; outcome: string; event?: string };

/** Every entry in the audit trail (none when it does not exist yet). */
export function auditEntries(server: TmuxServer): AuditEntry[] {
  let text: string;
  try {
    text = readFileSync(auditFile(server), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEntry);
}

/** The entries of one run. */
export const auditOf = (server: TmuxServer, runId: string): AuditEntry[] =>
  auditEntries(server).filter((e) => e.run_id === runId);

/** Waits until the audit trail holds an entry for runId matching pred; returns it. */
export function auditEventually(
  server: TmuxServer,
  runId: string,
  pred: (e: AuditEntry) => boolean,
  ms = 8000,
): Promise<AuditEntry> {
  return waitUntil(() => auditOf(server, runId).find(pred), ms, `an audit entry for run ${runId.slice(0, 8)}`);
}

/** The run id a result names (its authorization), when the run was authorized. */
export function runIdOf(c: RunCall): string | undefined {
  const s = c.structured;
  return s.ok ? s.data.authorization.run_id : s.error?.effects?.authorization?.run_id;
}

/** Live (non-zombie) processes in process group pgid, read from /proc. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue;
    }
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    if (f[0] === 'Z' || f[0] === 'X') continue;
    if (Number(f[2]) === pgid) out.push(Number(name));
  }
  return out;
}

/** Waits until nothing of group pgid runs any more. */
export function groupGone(pgid: number, ms = 5000): Promise<true> {
  return waitUntil(() => groupMembers(pgid).length === 0, ms, `process group ${pgid} to be gone`);
}

/** A fresh directory for marker files, inside the server's directory (removed with it). */
export function markerDir(server: TmuxServer, name = 'marks'): string {
  const d = join(server.baseDir, name);
  mkdirSync(d, { recursive: true, mode: 0o700 });
  return d;
}

/**
 * Waits for a file a running call's script writes; if the call ends first (refused, say), fails
 * with what it returned instead of a bare timeout.
 */
export async function whileRunning(call: Promise<RunCall>, path: string, ms = 8000): Promise<string> {
  let ended: RunCall | undefined;
  void call.then(
    (c) => (ended = c),
    () => undefined,
  );
  return waitUntil(
    () => {
      if (existsSync(path)) return readFileSync(path, 'utf8').trim() || undefined;
      if (ended) throw new Error(`the call ended before ${path} was written: ${JSON.stringify(ended.structured)}`);
      return undefined;
    },
    ms,
    `${path} to be written`,
  ).catch((e: Error) => {
    throw new Error(
      ended ? `the call ended before ${path} was written: ${JSON.stringify(ended.structured)}` : e.message,
    );
  });
}

/** Calls tmux_run on a pane with an abort signal and an optional progress callback. */
export function callWith(
  h: McpHandle,
  l: Pick<PaneListing, 'pane_id' | 'generation'>,
  script: string,
  o: {
    signal?: AbortSignal;
    onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
    timeout?: number;
  } = {},
): Promise<RunCall> {
  return callRun(
    h.client,
    l,
    script,
    {},
    {
      signal: o.signal,
      onprogress: o.onprogress,
      resetTimeoutOnProgress: o.onprogress !== undefined,
      timeout: o.timeout ?? 60_000,
    },
  );
}

/** The error part of a failed call (and fails the test when the call succeeded). */
export function errorOf(c: RunCall): {
  code: string;
  message: string;
  delivery: string;
  effects?: Record<string, any>;
} {
  expect(c.isError, JSON.stringify(c.structured)).toBe(true);
  const e = c.structured.error;
  // FAULTS_SHOW=1 prints what each caller saw (for reviewing the messages by eye).
  if (process.env.FAULTS_SHOW)
    console.log(
      `${expect.getState().currentTestName}: ${e.code} / ${e.delivery} / ${e.effects?.state ?? '-'} / ${JSON.stringify(e.effects?.completion ?? null)}\n  ${e.message}`,
    );
  return e;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
