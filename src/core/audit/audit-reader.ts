// Reads the audit trail line by line from where it left off, so new lines can be followed.
import { closeSync, fstatSync, openSync, readSync, constants } from 'node:fs';

export type AuditObject = Record<string, unknown>;

export interface Batch {
  entries: AuditObject[];
  /** Lines that were not a JSON object. */
  bad: number;
  /** False when the file does not exist (yet). */
  exists: boolean;
}

const CHUNK = 64 * 1024;

/** Parses one line; undefined for blank lines, null when the line is not a JSON object. */
export function parseLine(line: string): AuditObject | null | undefined {
  if (line.trim() === '') return undefined;
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as AuditObject) : null;
  } catch {
    return null;
  }
}

/** A cursor over one audit file; starts over when the file is replaced or truncated. */
export class AuditReader {
  private offset = 0;
  private ino: number | undefined;
  private partial: Buffer = Buffer.alloc(0);

  constructor(readonly path: string) {}

  /**
   * Everything appended since the last call. A last line without its newline is held back
   * until it is complete, unless `final` (nobody will append more for us to wait for).
   */
  read(final: boolean): Batch {
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], bad: 0, exists: false };
      throw e;
    }
    const batch: Batch = { entries: [], bad: 0, exists: true };
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw new Error(`${this.path} is not a regular file`);
      if (st.ino !== this.ino || st.size < this.offset) {
        this.ino = st.ino;
        this.offset = 0;
        this.partial = Buffer.alloc(0);
      }
      const buf = Buffer.alloc(CHUNK);
      for (;;) {
        const n = readSync(fd, buf, 0, CHUNK, this.offset);
        if (n <= 0) break;
        this.offset += n;
        this.take(Buffer.concat([this.partial, buf.subarray(0, n)]), batch);
      }
    } finally {
      closeSync(fd);
    }
    if (final && this.partial.length > 0) {
      this.add(this.partial.toString('utf8'), batch);
      this.partial = Buffer.alloc(0);
    }
    return batch;
  }

  private take(data: Buffer, batch: Batch): void {
    let start = 0;
    for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
      this.add(data.subarray(start, nl).toString('utf8'), batch);
      start = nl + 1;
    }
    this.partial = Buffer.from(data.subarray(start));
  }

  private add(line: string, batch: Batch): void {
    const v = parseLine(line);
    if (v === null) batch.bad++;
    else if (v !== undefined) batch.entries.push(v);
  }
}
