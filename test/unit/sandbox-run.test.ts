// A wrapped run with the real bwrap and the real waiter, without tmux or a shell: the completion is
// the script's own (not bwrap's 128+N), the waiter's descriptor does not reach the script, and a
// sandbox that bwrap cannot set up is told from the script's failure (sandbox_unavailable, not run).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Run, type RunOutcome, type RunWrap } from '../../helper/run/runner.js';
import { wrappedCompletion } from '../../helper/sandbox/sandbox.js';
import { reportOf } from '../../helper/run/outcome.js';
import { findBwrap, PERL, processWalls, WAITER, WAITER_GO, WAITER_READY } from '../../src/os/bwrap.js';

const bwrap = findBwrap({});
const BASE = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];

function wrap(mounts: string[] = []): RunWrap {
  return {
    file: bwrap!,
    args: [...BASE, ...mounts, ...processWalls(false), '--', PERL, '-e', WAITER],
    completion: wrappedCompletion,
    handshake: { ready: WAITER_READY, go: WAITER_GO },
  };
}

function run(script: string, w = wrap()): Promise<RunOutcome> {
  const r = new Run({
    script,
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    umask: undefined,
    stdoutLimit: 65536,
    stderrLimit: 65536,
    wrap: w,
  });
  r.start();
  return r.done;
}

describe.skipIf(bwrap === undefined || !existsSync(PERL))('a run wrapped in bwrap and the waiter', () => {
  it('reports the script’s own signal and exit status', async () => {
    expect((await run('kill -TERM $$')).completion).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
    expect((await run('exit 143')).completion).toEqual({ state: 'exited', exit_status: 143, signal: null });
    expect((await run('kill -KILL $$')).completion).toEqual({ state: 'signaled', exit_status: null, signal: 9 });
    const ok = await run('echo out; echo err >&2');
    expect(ok.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
    expect([ok.stdout.toString(), ok.stderr.toString()]).toEqual(['out\n', 'err\n']);
  });

  it('keeps the waiter’s descriptor from the script, and the script in its own process group', async () => {
    const o = await run('[ -e /proc/$$/fd/3 ] && echo fd3-open; ps -o pgid= -p $$ | tr -d " "; echo $$');
    const [pgid, pid] = o.stdout.toString().trim().split('\n');
    expect(o.stdout.toString()).not.toContain('fd3-open');
    expect(pgid).toBe(pid);
  });

  it('tells a sandbox bwrap could not set up from the script’s failure: sandbox_unavailable, not run', async () => {
    const o = await run('echo ran', wrap(['--bind', '/nonexistent-tmux-run-test', '/x']));
    expect(o.reason).toBe('sandbox_unavailable');
    expect(o.completion).toBeUndefined();
    expect(o.error).toMatch(/^bwrap: /);
    const report = reportOf(
      { binding: { run_id: 'r'.repeat(32), script_digest: 'd'.repeat(64), stdout_limit: 1, stderr_limit: 1 } },
      o,
      '%1',
    );
    expect(report.reply).toMatchObject({ type: 'error', code: 'sandbox_unavailable', ran: false });
    expect(report.end).toMatchObject({ outcome: 'sandbox_unavailable', ran: false });
  });
});

// A helper SIGKILLed at once after spawning bwrap: bwrap's outer process sets its parent-death
// signal only after it has started, and one whose parent died first is never signalled. Without
// the waiter's handshake the sandboxed script then ran on (5 of 8 tries here, as root).
const DIES_AT_ONCE = `
import { Run } from './helper/runner.ts';
import { wrappedCompletion } from './helper/sandbox.ts';
import { findBwrap, PERL, processWalls, WAITER, WAITER_GO, WAITER_READY } from './src/os/bwrap.ts';
const base = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
const wrap = { file: findBwrap({}), args: [...base, ...processWalls(false), '--', PERL, '-e', WAITER],
  completion: wrappedCompletion, handshake: { ready: WAITER_READY, go: WAITER_GO } };
new Run({ script: 'sleep ' + process.argv[1], cwd: '/', env: { PATH: '/usr/bin:/bin' }, umask: undefined,
  stdoutLimit: 1024, stderrLimit: 1024, wrap }).start();
process.kill(process.pid, 'SIGKILL');
`;

describe.skipIf(bwrap === undefined || !existsSync(PERL))('a helper that does not answer the waiter', () => {
  it('gets sandbox_unavailable after 10 s, saying why, and the script never starts', async () => {
    // A runner that does not know the question (an older helper) never answers it.
    const o = await run('echo ran', { ...wrap(), handshake: { ready: 'not-this', go: WAITER_GO } });
    expect(o.reason).toBe('sandbox_unavailable');
    expect(o.stdout.toString()).toBe('');
    expect(o.error).toMatch(/did not answer the sandbox .*enroll the pane again/);
  }, 30_000);
});

describe.skipIf(bwrap === undefined || !existsSync(PERL))('a helper SIGKILLed right after it spawned bwrap', () => {
  it('leaves no sandboxed script running (the waiter starts it only on the helper’s go)', async () => {
    const tags = Array.from({ length: 8 }, (_, i) => `600.${process.pid}${i}7`);
    for (const tag of tags) {
      spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', DIES_AT_ONCE, tag], {
        cwd: join(import.meta.dirname, '..', '..'),
        stdio: 'ignore',
      });
    }
    const sleeping = (): number[] =>
      readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .filter((d) => {
          try {
            const argv = readFileSync(`/proc/${d}/cmdline`, 'latin1').split('\0');
            return argv[0] === 'sleep' && tags.includes(argv[1] ?? '');
          } catch {
            return false;
          }
        })
        .map(Number);
    // Whatever started would be running within this time (a sandbox starts in tens of ms).
    await new Promise((r) => setTimeout(r, 1500));
    const left = sleeping();
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left, 'sandboxed scripts still running after their helper was SIGKILLed').toEqual([]);
  }, 60_000);
});
