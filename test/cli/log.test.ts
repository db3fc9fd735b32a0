// `tmux-run log` on a hand-written audit trail: filters, JSON lines, corrupt lines, --follow.
import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, runCli, startCli } from '../../lab/cli.js';
import { sandbox } from './support.js';

const box = sandbox();
const trail = join(box.stateDir, 'tmux-run', 'audit.jsonl');
const ago = (ms: number): string => new Date(Date.now() - ms).toISOString();

const RUN_A = 'aaaa1111' + '0'.repeat(24);
const RUN_B = 'bbbb2222' + '0'.repeat(24);
const RUN_C = 'aaaa9999' + '0'.repeat(24);
const DIGEST = '0123456789abcdef'.repeat(4);

const entries = [
  { time: ago(3 * 3_600_000), event: 'start', run_id: RUN_A, pane_id: '%1', script_digest: DIGEST, outcome: 'started' },
  {
    time: ago(3 * 3_600_000 - 1500),
    event: 'end',
    run_id: RUN_A,
    pane_id: '%1',
    script_digest: DIGEST,
    outcome: 'exited',
    exit_status: 3,
    signal: null,
    stdout_bytes: 10,
    stderr_bytes: 2,
    duration_ms: 1500,
  },
  {
    time: ago(5 * 60_000),
    event: 'refused',
    run_id: RUN_B,
    pane_id: '%2',
    script_digest: DIGEST,
    outcome: 'editor_not_empty',
  },
  {
    time: ago(60_000),
    event: 'start',
    run_id: RUN_C,
    pane_id: '%1',
    script_digest: DIGEST,
    outcome: 'started',
    cwd: '/tmp/\x1b[31mred',
  },
  {
    time: ago(59_000),
    event: 'end',
    run_id: RUN_C,
    pane_id: '%1',
    script_digest: DIGEST,
    outcome: 'signaled',
    exit_status: null,
    signal: 15,
    stdout_bytes: 0,
    stderr_bytes: 0,
    duration_ms: 1000,
  },
];

beforeAll(() => {
  mkdirSync(join(box.stateDir, 'tmux-run'), { mode: 0o700 });
  const lines = entries.map((e) => JSON.stringify(e));
  lines.splice(2, 0, '{"time": "broken', 'not json at all', '[1,2]');
  writeFileSync(trail, lines.join('\n') + '\n\n', { mode: 0o600 });
});
afterAll(() => box.remove());

const jsonLines = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('tmux-run log', () => {
  it('prints a table of every entry and counts the unparsable lines', async () => {
    const r = await runCli(['log'], box.env);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME\s+PANE\s+RUN\s+EVENT\s+OUTCOME\s+STATUS\s+BYTES\s+DURATION\s+DIGEST$/);
    expect(lines).toHaveLength(1 + entries.length);
    expect(lines[2]).toMatch(/%1\s+aaaa1111\s+end\s+exited\s+3\s+10\/2\s+1\.5s\s+0123456789ab$/);
    expect(lines[5]).toMatch(/aaaa9999\s+end\s+signaled\s+SIGTERM\s+0\/0\s+1\.0s/);
    expect(r.stderr).toBe(`tmux-run: skipped 3 unparsable lines in ${trail}\n`);
  });

  it('prints the matching entries as JSON lines with --json', async () => {
    const r = await runCli(['log', '--json'], box.env);
    expect(r.code).toBe(0);
    const got = jsonLines(r.stdout);
    expect(got).toEqual(entries);
    expect(r.stdout).not.toMatch(/\x1b/); // the ESC inside cwd stays escaped
    expect(r.stderr).toMatch(/skipped 3 unparsable lines/);
  });

  it('filters by pane, run prefix and since, alone and together', async () => {
    const runIds = async (...args: string[]): Promise<string[]> => {
      const r = await runCli(['log', '--json', ...args], box.env);
      expect(r.code).toBe(0);
      return jsonLines(r.stdout).map((e) => `${String(e.run_id).slice(0, 8)}:${String(e.event)}`);
    };
    expect(await runIds('--pane', '%2')).toEqual(['bbbb2222:refused']);
    expect(await runIds('--run', 'aaaa')).toEqual(['aaaa1111:start', 'aaaa1111:end', 'aaaa9999:start', 'aaaa9999:end']);
    expect(await runIds('--run', 'AAAA9')).toEqual(['aaaa9999:start', 'aaaa9999:end']);
    expect(await runIds('--since', '10m')).toEqual(['bbbb2222:refused', 'aaaa9999:start', 'aaaa9999:end']);
    expect(await runIds('--since', ago(2 * 60_000))).toEqual(['aaaa9999:start', 'aaaa9999:end']);
    expect(await runIds('--pane', '%1', '--since', '1h', '--run', 'aaaa9999')).toEqual([
      'aaaa9999:start',
      'aaaa9999:end',
    ]);
    expect(await runIds('--pane', '%9')).toEqual([]);
  });

  it('shows nothing, with a note, when there is no audit trail', async () => {
    const env = { ...box.env, XDG_STATE_HOME: join(box.dir, 'nowhere') };
    const table = await runCli(['log'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toBe('');
    expect(table.stderr).toMatch(
      /^tmux-run: no audit trail yet \(.*nowhere\/tmux-run\/audit\.jsonl does not exist\)\n$/,
    );
    const json = await runCli(['log', '--json'], env);
    expect(json).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('follows new lines until interrupted', async () => {
    const dir = join(box.dir, 'follow');
    mkdirSync(join(dir, 'tmux-run'), { recursive: true, mode: 0o700 });
    const path = join(dir, 'tmux-run', 'audit.jsonl');
    writeFileSync(path, JSON.stringify(entries[0]) + '\n', { mode: 0o600 });
    chmodSync(path, 0o600);
    const child = startCli(['log', '--json', '--follow', '--pane', '%1'], { ...box.env, XDG_STATE_HOME: dir });
    const done = collect(child);
    let seen = '';
    child.stdout!.on('data', (d: string) => (seen += d));
    const waitFor = async (n: number): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (jsonLines(seen).length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} lines, got: ${seen}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await waitFor(1);
    appendFileSync(path, JSON.stringify(entries[2]) + '\n'); // pane %2: filtered out
    const half = JSON.stringify(entries[1]);
    appendFileSync(path, half.slice(0, 20)); // a line written in two parts
    await new Promise((r) => setTimeout(r, 400));
    appendFileSync(path, half.slice(20) + '\n' + 'garbage\n');
    await waitFor(2);
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout)).toEqual([entries[0], entries[1]]);
    expect(r.stderr).toMatch(/skipped 1 unparsable line in/);
  });
});
