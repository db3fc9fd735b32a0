// What a listing keeps of each pane's status and modes files (src/broker/listing-reads.ts): kept
// while a file is unchanged, and still every change is seen: a status renamed into place, a modes
// file rewritten in place to the same size (just after it was read, and once it settled), a file
// removed, replaced by a link or opened to others.
import { chmodSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listedModes, listedStatus } from '../../src/broker/listing-reads.js';
import { CHANNEL, statusPath } from '../../src/core/enrollment/layout.js';
import { writeStatus, type PaneStatus } from '../../src/core/enrollment/pane-status.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { fakeRecord } from './fixtures.js';

let dir: string;
let rec: EnrollmentRecord;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tmux-run-listing-reads-'));
  chmodSync(dir, 0o700);
  rec = fakeRecord(Buffer.alloc(32, 1), { channel: join(dir, 'ch.1.1') });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Longer than the time a file must be unchanged before what it said is kept. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 150));

const status = (queued: number): PaneStatus => ({
  version: 1,
  generation: rec.generation,
  helper_pid: rec.helper_pid,
  helper_start: '1',
  run: null,
  queued,
});

describe('listedStatus', () => {
  it('answers what the status says, read again as soon as a new one is renamed into place', async () => {
    expect(listedStatus(dir, rec)).toBeUndefined();
    writeStatus(dir, rec.enrollment_generation, status(1));
    expect(listedStatus(dir, rec)?.queued).toBe(1);
    await settle();
    expect(listedStatus(dir, rec)?.queued).toBe(1);
    expect(listedStatus(dir, rec)?.queued).toBe(1);
    writeStatus(dir, rec.enrollment_generation, status(2));
    expect(listedStatus(dir, rec)?.queued).toBe(2);
    await settle();
    expect(listedStatus(dir, rec)?.queued).toBe(2);
    writeStatus(dir, rec.enrollment_generation, status(3));
    await settle();
    expect(listedStatus(dir, rec)?.queued).toBe(3);
  });

  it('refuses a status that became a link, was opened to others or is gone, after it was kept', async () => {
    const path = statusPath(dir, rec.enrollment_generation);
    writeStatus(dir, rec.enrollment_generation, status(1));
    await settle();
    expect(listedStatus(dir, rec)?.queued).toBe(1);
    chmodSync(path, 0o644);
    expect(listedStatus(dir, rec)).toBeUndefined();
    await settle();
    expect(listedStatus(dir, rec)).toBeUndefined();
    chmodSync(path, 0o600);
    expect(listedStatus(dir, rec)?.queued).toBe(1);
    await settle();
    expect(listedStatus(dir, rec)?.queued).toBe(1);
    renameSync(path, join(dir, 'elsewhere'));
    symlinkSync(join(dir, 'elsewhere'), path);
    expect(listedStatus(dir, rec)).toBeUndefined();
    await settle();
    expect(listedStatus(dir, rec)).toBeUndefined();
    rmSync(path);
    expect(listedStatus(dir, rec)).toBeUndefined();
  });

  it('answers nothing for a status of another enrollment or helper', async () => {
    writeStatus(dir, rec.enrollment_generation, { ...status(1), helper_pid: rec.helper_pid + 1 });
    await settle();
    expect(listedStatus(dir, rec)).toBeUndefined();
    expect(listedStatus(dir, rec)).toBeUndefined();
  });
});

describe('listedModes', () => {
  const modes = (): string => rec.channel + CHANNEL.modes;

  it('sees a modes file rewritten in place to the same size, just after a read and once it settled', async () => {
    expect(listedModes(rec)).toEqual({ mode: 'unknown', sandbox: 'unknown' });
    writeFileSync(modes(), 'M ask workspace\n');
    expect(listedModes(rec)).toEqual({ mode: 'ask', sandbox: 'workspace' });
    writeFileSync(modes(), 'M ask read-only\n');
    expect(listedModes(rec)).toEqual({ mode: 'ask', sandbox: 'read-only' });
    await settle();
    expect(listedModes(rec)).toEqual({ mode: 'ask', sandbox: 'read-only' });
    expect(listedModes(rec)).toEqual({ mode: 'ask', sandbox: 'read-only' });
    writeFileSync(modes(), 'M ask workspace\n');
    expect(listedModes(rec)).toEqual({ mode: 'ask', sandbox: 'workspace' });
    await settle();
    writeFileSync(modes(), 'M auto off quiet\n');
    expect(listedModes(rec)).toEqual({ mode: 'auto', sandbox: 'off', quiet: true });
    rmSync(modes());
    expect(listedModes(rec)).toEqual({ mode: 'unknown', sandbox: 'unknown' });
  });

  it('does not follow a link', async () => {
    writeFileSync(join(dir, 'other'), 'M ask off\n');
    symlinkSync(join(dir, 'other'), modes());
    await settle();
    expect(listedModes(rec)).toEqual({ mode: 'unknown', sandbox: 'unknown' });
  });
});
