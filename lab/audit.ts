// The audit trail as a harness server's environment places it, read back as parsed entries.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TmuxServer } from './server.js';
import { waitUntil } from './waiting.js';

export type AuditEntry = Record<string, any> & { run_id: string; outcome: string; event?: string };

/** The audit trail the harness gives both the panes and the brokers. */
export function auditFile(server: TmuxServer): string {
  return join(server.env.XDG_STATE_HOME ?? join(server.home, '.local', 'state'), 'tmux-run', 'audit.jsonl');
}

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
