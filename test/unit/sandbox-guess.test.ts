// The walls decided ahead (helper/walls/sandbox.ts guessAhead), with the real bwrap and waiter:
// a guess is taken only while it is fresh and only for the same plan, so a repository made after a
// stale guess is walled, and a run in another tree gets that tree's walls and cwd.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Run } from '../../helper/run/runner.js';
import type { RunOutcome } from '../../helper/run/run-spec.js';
import { guessAhead, noGuess, sandboxFor } from '../../helper/walls/sandbox.js';
import type { Snapshot } from '../../helper/shell/snapshot.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { sleep } from '../../lab/waiting.js';
import { wallsUsable } from '../../lab/walls.js';

const home = mkdtempSync('/var/tmp/tmux-run-guess-test-');
afterAll(() => rmSync(home, { recursive: true, force: true }));
mkdirSync(join(home, 'registry'), { mode: 0o700 });
const record = { socket: join(home, 'registry', 'h.sock'), tmux_socket: join(home, 'tmux-sock') } as EnrollmentRecord;
const audit = join(home, 'audit.jsonl');
const env = { PATH: '/usr/bin:/bin', HOME: home };
const at = (cwd: string): Snapshot => ({ cwd, env, shell: { TMUX_RUN_SANDBOX: 'workspace' } });

/** `script` run in the walls sandboxFor decides for `snapshot`, as the helper runs it. */
async function runIn(snapshot: Snapshot, script: string): Promise<RunOutcome> {
  const d = await sandboxFor(snapshot, record, audit);
  if (!d.ok) throw new Error(d.message);
  const r = new Run({
    script,
    cwd: snapshot.cwd,
    env: {},
    umask: undefined,
    stdoutLimit: 65536,
    stderrLimit: 65536,
    launcher: d.launcher,
  });
  r.start();
  return r.done;
}

describe.skipIf(!wallsUsable)('walls decided while the shell is asked', () => {
  it('are not taken once stale: a repository made after the guess is walled', async () => {
    const project = join(home, 'stale');
    mkdirSync(project);
    expect((await runIn(at(project), 'echo in')).stdout.toString()).toBe('in\n');
    guessAhead(record, audit); // no repository in the project yet
    execFileSync('git', ['init', '-q', project]);
    await sleep(50); // older than a shell's answer can make it
    const o = await runIn(at(project), 'touch .git/hooks/planted 2>/dev/null && echo planted || echo refused');
    expect(o.stdout.toString()).toBe('refused\n');
    noGuess();
  });

  it('are not taken for another plan: a run in another tree gets its walls and its cwd', async () => {
    const [a, b] = [join(home, 'a'), join(home, 'b')];
    mkdirSync(a);
    mkdirSync(b);
    expect((await runIn(at(a), 'pwd')).stdout.toString()).toBe(`${a}\n`);
    guessAhead(record, audit); // a's walls
    const o = await runIn(at(b), 'pwd; touch made && echo made');
    expect(o.stdout.toString()).toBe(`${b}\nmade\n`);
    noGuess();
  });
});
