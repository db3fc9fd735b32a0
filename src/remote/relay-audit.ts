// The local audit trail of a remote pane's runs (docs/remote.md, "The audit trail"): the far end's
// helper sends each entry it writes over the control link (`audit`), and the relay, a local process
// of the person's, appends it to the local trail with the pane and the host it knows itself. The
// far end chooses neither (its `pane_id`, `host` and `time` are replaced), and can write nothing but
// an entry of the trail's shape: a bounded JSON object with a run id and an outcome, plain values,
// short strings. Entries never hold script text or output (the helper writes none); a far end that
// lied could put at most these few bytes of its own in the trail, under its own host.
import { AuditLog, type AuditEntry } from '../core/audit/audit-log.js';
import type { EnrollmentRecord } from '../core/enrollment/record.js';
import { listedHost } from '../core/enrollment/remote-listing.js';

/** The largest entry the relay takes from the far end, as JSON (a start entry is a few hundred bytes plus its cwd). */
export const FAR_AUDIT_MAX_BYTES = 16 * 1024;
/** The longest string value in such an entry (a cwd up to PATH_MAX). */
const MAX_STRING = 4096;
/** The most keys in an entry or in one of its objects. */
const MAX_KEYS = 48;
/** How deep its values nest (an entry, an object in it, one in that). */
const MAX_DEPTH = 3;
/** At most this many entries a second on average, this many at once: a far end cannot fill the disk here at link speed. */
const RATE_PER_S = 200;
const BURST = 2000;

const KEY = /^[a-z][a-z0-9_]{0,47}$/;
const RUN_ID = /^[0-9a-f]{32}$/;
const WORD = /^[a-z][a-z0-9_]{0,63}$/;

/** Whether `v` is a value the trail holds: a short string, a finite number, a boolean, null, or small arrays and objects of them. */
function plain(v: unknown, depth: number): boolean {
  if (v === null || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v === 'string') return v.length <= MAX_STRING;
  if (depth >= MAX_DEPTH || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.length <= MAX_KEYS && v.every((x) => plain(x, depth + 1));
  if (Object.getPrototypeOf(v) !== Object.prototype) return false;
  const keys = Object.keys(v);
  return (
    keys.length <= MAX_KEYS && keys.every((k) => KEY.test(k) && plain((v as Record<string, unknown>)[k], depth + 1))
  );
}

/** The far end's entry as the local trail takes it, or why it is refused. */
export function farEntry(raw: unknown, rec: EnrollmentRecord): AuditEntry | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not a JSON object';
  let size;
  try {
    size = Buffer.byteLength(JSON.stringify(raw));
  } catch {
    return 'not serializable';
  }
  if (size > FAR_AUDIT_MAX_BYTES) return `${size} bytes, over ${FAR_AUDIT_MAX_BYTES}`;
  if (!plain(raw, 0)) return 'a key or value of a shape the trail does not hold';
  const e = raw as Record<string, unknown>;
  if (typeof e.run_id !== 'string' || !RUN_ID.test(e.run_id)) return 'no run id';
  if (typeof e.outcome !== 'string' || !WORD.test(e.outcome)) return 'no outcome';
  if (e.event !== undefined && (typeof e.event !== 'string' || !WORD.test(e.event))) return 'an odd event';
  // What only this side knows is this side's to say: the pane, the host, the time it was recorded.
  const { time: _time, host: _host, pane_id: _pane, ...rest } = e;
  return { ...rest, run_id: e.run_id, outcome: e.outcome, pane_id: rec.pane_id, host: listedHost(rec) };
}

/** Appends the far end's entries to the local trail (just after the I/O of the turn they came in), at a bounded rate; logs what it refuses or cannot write. */
export class RelayAudit {
  private readonly trail: AuditLog;
  private tokens = BURST;
  private last = Date.now();
  private dropped = 0;
  /** Entries checked and not yet written: written after the turn's I/O, so a reply being piped goes first. */
  private pending: AuditEntry[] = [];

  constructor(
    path: string,
    private readonly log: (line: string) => void,
  ) {
    this.trail = new AuditLog(path);
  }

  /** One `audit` message of the far end serving `rec`. */
  take(raw: unknown, rec: EnrollmentRecord): void {
    const now = Date.now();
    this.tokens = Math.min(BURST, this.tokens + ((now - this.last) * RATE_PER_S) / 1000);
    this.last = now;
    if (this.tokens < 1) {
      if (this.dropped++ === 0)
        this.log(`the far end sends audit entries faster than ${RATE_PER_S} a second: dropping`);
      return;
    }
    this.tokens -= 1;
    if (this.dropped > 0) {
      this.log(`dropped ${this.dropped} audit entries of the far end`);
      this.dropped = 0;
    }
    const e = farEntry(raw, rec);
    if (typeof e === 'string') return this.log(`refused an audit entry of the far end: ${e}`);
    if (this.pending.push(e) === 1) setImmediate(() => this.flush());
  }

  /** Writes what is pending (also when the relay closes). */
  flush(): void {
    for (const e of this.pending.splice(0)) {
      try {
        this.trail.append(e);
      } catch (err) {
        this.log((err as Error).message);
      }
    }
  }
}
