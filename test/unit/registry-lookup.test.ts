// The broker's lookup of a run's record (recordsFor in src/broker/registry.ts): after a first
// scan it checks only the target's record again, and still notices every change a scan would.
import { chmodSync, copyFileSync, mkdtempSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordsFor, scanRecords } from '../../src/broker/registry.js';
import { writeRecord, type EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { freshId, paneGeneration } from '../../src/core/enrollment/generation.js';
import { fakeRecord } from './fixtures.js';
import { RegistryDirError, recordPath } from '../../src/core/enrollment/layout.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tmux-run-lookup-'));
  chmodSync(dir, 0o700);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function record(pane: string): EnrollmentRecord {
  const gens = {
    server_generation: '1.2.srv',
    pane_id: pane,
    process_generation: freshId(),
    enrollment_generation: freshId(),
  };
  return fakeRecord(Buffer.alloc(32, 0xab), {
    ...gens,
    generation: paneGeneration(gens),
    channel: join(dir, 'ch.1.1'),
  });
}

const lookup = (r: EnrollmentRecord): EnrollmentRecord[] => recordsFor(dir, r.pane_id, r.generation);
const ids = (rs: EnrollmentRecord[]): string[] => rs.map((r) => r.enrollment_generation).sort();

describe('recordsFor', () => {
  it('scans everything the first time, then checks only the target record while it is unchanged', () => {
    const a = record('%1');
    const b = record('%2');
    writeRecord(dir, a);
    writeRecord(dir, b);
    expect(ids(lookup(a))).toEqual(ids([a, b]));
    expect(lookup(a)).toEqual([a]);
    expect(lookup(b)).toEqual([b]);
  });

  it('notices a record that was removed, opened to others or replaced, as a scan would', () => {
    const a = record('%1');
    const b = record('%2');
    writeRecord(dir, a);
    writeRecord(dir, b);
    scanRecords(dir);
    expect(lookup(a)).toEqual([a]);

    chmodSync(recordPath(dir, a.enrollment_generation), 0o644);
    expect(lookup(a).map((r) => r.pane_id)).toEqual(['%2']);
    chmodSync(recordPath(dir, a.enrollment_generation), 0o600);
    expect(lookup(a)).toEqual([a]);

    // Another record's content under a's name describes nothing.
    const path = recordPath(dir, a.enrollment_generation);
    copyFileSync(recordPath(dir, b.enrollment_generation), `${path}.new`);
    chmodSync(`${path}.new`, 0o600);
    renameSync(`${path}.new`, path);
    expect(lookup(a).map((r) => r.pane_id)).toEqual(['%2']);

    unlinkSync(path);
    writeRecord(dir, a);
    expect(ids(lookup(a))).toEqual(ids([a, b]));
    expect(lookup(a)).toEqual([a]);
    unlinkSync(path);
    expect(lookup(a)).toEqual([b]);
  });

  it('checks the directory on every lookup', () => {
    const a = record('%1');
    writeRecord(dir, a);
    expect(lookup(a)).toEqual([a]);
    chmodSync(dir, 0o755);
    expect(() => lookup(a)).toThrow(RegistryDirError);
    chmodSync(dir, 0o700);
    expect(lookup(a)).toEqual([a]);
  });

  it('finds a record enrolled after the last scan, and decides an unknown generation on all records', () => {
    const a = record('%1');
    writeRecord(dir, a);
    expect(lookup(a)).toEqual([a]);
    const later = record('%1');
    writeRecord(dir, later);
    expect(lookup(later).map((r) => r.generation)).toContain(later.generation);
    expect(ids(recordsFor(dir, '%1', 'f'.repeat(32)))).toEqual(ids([a, later]));
  });
});
