// What the audit trail knows of a held run whose enrollment is gone: a wait or cancel for it
// reaches no helper (nothing is sent), but the run may well have run, and its outcome is on record.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { parseLine, type AuditObject } from '../core/audit/audit-reader.js';
import { paneGeneration } from '../core/enrollment/generation.js';
import type { Effects, Target } from './result.js';

/** How much of the trail's end is read for it (a run's entries are recent: held runs end with their enrollment). */
const TAIL_BYTES = 4 * 1024 * 1024;

/** The last `TAIL_BYTES` of the audit trail as entries; none when it cannot be read. */
function recentEntries(path: string): AuditObject[] {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return [];
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return [];
    const start = Math.max(0, st.size - TAIL_BYTES);
    const buf = Buffer.alloc(st.size - start);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    const lines = buf.subarray(0, got).toString('utf8').split('\n');
    if (start > 0) lines.shift(); // (a line cut by the window's start)
    return lines.map(parseLine).filter((e): e is AuditObject => !!e);
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined => (Number.isInteger(v) ? (v as number) : undefined);

/**
 * The run's effects and a sentence about them from its audit entries (pure), when the trail has
 * its start entry for exactly this target (its pane and generations); undefined otherwise.
 */
export function outcomeFromAudit(
  entries: readonly AuditObject[],
  runId: string,
  target: Target,
): { effects: Effects; said: string } | undefined {
  const mine = entries.filter((e) => e.run_id === runId && e.pane_id === target.id);
  const start = mine.find((e) => e.event === 'start');
  if (!start) return undefined;
  const gens = {
    server_generation: str(start.server_generation) ?? '',
    pane_id: target.id,
    process_generation: str(start.process_generation) ?? '',
    enrollment_generation: str(start.enrollment_generation) ?? '',
  };
  if (paneGeneration(gens) !== target.generation) return undefined;
  const authorization = {
    state: 'authorized' as const,
    run_id: runId,
    script_digest: str(start.script_digest) ?? '',
    ...gens,
  };
  const end = mine.filter((e) => e.event === 'end').at(-1);
  const outcome = str(end?.outcome);
  const exit = int(end?.exit_status);
  const signal = int(end?.signal);
  const id8 = runId.slice(0, 8);
  if (exit !== undefined && exit >= 0 && exit <= 255) {
    return {
      effects: { state: 'known', authorization, completion: { state: 'exited', exit_status: exit, signal: null } },
      said: `the audit trail says run ${id8} started and ended ${outcome ?? 'exited'}, exit status ${exit}`,
    };
  }
  if (signal !== undefined && signal >= 1 && signal <= 255) {
    return {
      effects: { state: 'known', authorization, completion: { state: 'signaled', exit_status: null, signal } },
      said: `the audit trail says run ${id8} started and ended ${outcome ?? 'signaled'}, killed by signal ${signal}`,
    };
  }
  return {
    effects: { state: 'unknown', authorization, completion: { state: 'unobserved' } },
    said: outcome
      ? `the audit trail says run ${id8} started and ended ${outcome}, its end not observed${str(end?.detail) ? ` (${str(end?.detail)})` : ''}`
      : `the audit trail says run ${id8} started, and has no end for it`,
  };
}

/** outcomeFromAudit over the end of the trail at `path`. */
export function auditedOutcome(path: string, runId: string, target: Target): ReturnType<typeof outcomeFromAudit> {
  return outcomeFromAudit(recentEntries(path), runId, target);
}
