// What the relay takes from the far end for the local audit trail (src/remote/relay-audit.ts): an
// entry of the trail's shape only, recorded under the pane and host the relay knows, whatever the
// far end says of them; anything else is refused and nothing is written.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, existsSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { farEntry, FAR_AUDIT_MAX_BYTES, RelayAudit } from '../../src/remote/relay-audit.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';

const rec = {
  pane_id: '%7',
  remote: {
    destination: 'build-box',
    hostname: 'bb1',
    relay_pid: 10,
    relay_start: '1',
    ssh_pid: 11,
    ssh_start: '2',
    remote_boot: 'b',
  },
} as unknown as EnrollmentRecord;
const RUN = 'a'.repeat(32);

describe("the relay's check of the far end's audit entries", () => {
  it('keeps a well-formed entry, under the pane and host the relay knows (not the ones the far end gives)', () => {
    const e = farEntry(
      {
        event: 'end',
        run_id: RUN,
        outcome: 'exited',
        exit_status: 0,
        pane_id: '%99',
        host: { destination: 'elsewhere', name: 'forged' },
        time: '1999-01-01T00:00:00Z',
        cwd: '/home/u',
        sandbox: 'off',
      },
      rec,
    );
    expect(e).toEqual({
      event: 'end',
      run_id: RUN,
      outcome: 'exited',
      exit_status: 0,
      cwd: '/home/u',
      sandbox: 'off',
      pane_id: '%7',
      host: { destination: 'build-box', name: 'bb1' },
    });
  });

  it('refuses what is not an entry of the trail', () => {
    const bad: unknown[] = [
      null,
      'text',
      [RUN],
      { outcome: 'exited' }, // no run id
      { run_id: 'not-hex', outcome: 'exited' },
      { run_id: RUN }, // no outcome
      { run_id: RUN, outcome: 'Exited Now' },
      { run_id: RUN, outcome: 'exited', event: 42 },
      { run_id: RUN, outcome: 'exited', 'Bad-Key': 1 },
      { run_id: RUN, outcome: 'exited', deep: { a: { b: { c: 1 } } } },
      { run_id: RUN, outcome: 'exited', long: 'x'.repeat(4097) },
      { run_id: RUN, outcome: 'exited', n: Infinity },
      {
        run_id: RUN,
        outcome: 'exited',
        ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, 'y'.repeat(3000)])),
      },
    ];
    for (const b of bad) expect(typeof farEntry(b, rec), JSON.stringify(b)?.slice(0, 80)).toBe('string');
    expect(FAR_AUDIT_MAX_BYTES).toBeLessThan(8 * 3000);
  });

  it('appends what it keeps to the local trail (0600) and logs what it refuses', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trr-relay-audit-'));
    try {
      const path = join(dir, 'state', 'audit.jsonl');
      const said: string[] = [];
      const a = new RelayAudit(path, (l) => said.push(l));
      a.take({ run_id: RUN, outcome: 'nope', pane_id: 'x', script: 1, deeper: { a: { b: { c: 1 } } } }, rec);
      expect(existsSync(path)).toBe(false);
      expect(said.join('\n')).toMatch(/refused an audit entry of the far end/);
      a.take({ event: 'start', run_id: RUN, outcome: 'started' }, rec);
      a.flush();
      const lines = readFileSync(path, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(JSON.parse(lines[0]!)).toMatchObject({ event: 'start', pane_id: '%7', host: { name: 'bb1' } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes at most a burst of 2000 entries at once, then 200 a second: a far end cannot fill the disk here at link speed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trr-relay-audit-'));
    try {
      const path = join(dir, 'audit.jsonl');
      const said: string[] = [];
      const a = new RelayAudit(path, (l) => said.push(l));
      const t0 = Date.now();
      for (let i = 0; i < 3000; i++) a.take({ run_id: RUN, outcome: 'started', n: i }, rec);
      a.flush();
      const refilled = Math.ceil(((Date.now() - t0) / 1000) * 200) + 1;
      const written = readFileSync(path, 'utf8').trim().split('\n').length;
      expect(written).toBeGreaterThanOrEqual(2000);
      expect(written).toBeLessThanOrEqual(2000 + refilled);
      expect(said.join('\n')).toMatch(/faster than 200 a second: dropping/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
