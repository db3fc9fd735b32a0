// Runs in a pane's kept-alive walls with the real bwrap and the real waiter, without tmux or a
// shell: the completion is the script's own (not bwrap's 128+N), the waiter's descriptors do not
// reach the script, what a run leaves is gone before its end is reported, walls bwrap cannot set
// up are told from the script's failure, and a helper SIGKILLed at once leaves nothing running.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../helper/run/run-spec.js';
import { Walls } from '../../helper/walls/walls.js';
import { NATIVE_WAITER } from '../../src/core/os/native-spawn.js';
import { INNER_SOCKET, waiterCommand, waiterProgram, type WaiterProgram } from '../../helper/walls/waiter.js';
import { reportOf } from '../../helper/queue/outcome.js';
import { processWalls, WAITER_READY } from '../../src/core/os/bwrap.js';
import { waitUntil } from '../../lab/waiting.js';
import {
  keptPair,
  processesWalledUnder,
  runIn,
  wallsRun,
  testBwrap,
  TEST_MOUNTS,
  TEST_WAITERS,
  wallsUsable,
} from '../../lab/walls.js';

/** utime + stime of a process, in clock ticks (/proc/PID/stat fields 14 and 15). */
const cpuTicks = (pid: number): number => {
  const f = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]);
};

const bwrap = testBwrap;
const BASE = TEST_MOUNTS;
const home = mkdtempSync('/var/tmp/tmux-run-walls-test-');
afterAll(() => rmSync(home, { recursive: true, force: true }));

function walls(waiter: WaiterProgram, mounts: string[] = [], key = 'test', idleMs?: number): Walls {
  return new Walls(bwrap!, [...BASE, ...mounts, ...processWalls(false)], home, waiter, key, idleMs);
}

/** Live processes whose argv is `sleep TAG` for one of the tags. */
function sleeping(tags: readonly string[]): number[] {
  return readdirSync('/proc')
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
}

const usable = wallsUsable;

it.skipIf(!usable)('has the C waiter built (npm run build), so both waiters are tested', () => {
  expect(TEST_WAITERS.map((w) => w.kind)).toEqual(['native', 'perl']);
  expect(waiterProgram({})).toEqual({ kind: 'native', path: NATIVE_WAITER });
  expect(waiterProgram({ TMUX_RUN_SPAWN: 'node' })).toMatchObject({ kind: 'perl', why: 'TMUX_RUN_SPAWN=node' });
  expect(waiterProgram({}, '/nonexistent/walls-waiter')).toMatchObject({ kind: 'perl', unbuilt: true });
  expect(waiterProgram({}, '/nonexistent/walls-waiter', 'mips')).toMatch(/does not know this architecture/);
});

describe.skipIf(!usable).each(TEST_WAITERS)('a run in kept-alive walls, the $kind waiter', (waiter) => {
  let shared: Walls | undefined;
  const run = (script: string, w: Walls = (shared ??= walls(waiter))): Promise<RunOutcome> => runIn(w, script);
  afterAll(() => shared?.close());

  it('reports the script’s own signal and exit status, run after run in the same walls', async () => {
    expect((await run('kill -TERM $$')).completion).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
    expect((await run('exit 143')).completion).toEqual({ state: 'exited', exit_status: 143, signal: null });
    expect((await run('kill -KILL $$')).completion).toEqual({ state: 'signaled', exit_status: null, signal: 9 });
    const ok = await run('echo out; echo err >&2');
    expect(ok.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
    expect([ok.stdout.toString(), ok.stderr.toString()]).toEqual(['out\n', 'err\n']);
  });

  it('stands when a run signals the walls’ pid 1, the waiter', async () => {
    const o = await run(
      'for s in ALRM TERM HUP INT USR1 USR2 QUIT PIPE CHLD STOP KILL; do kill -s $s 1; done; echo sent',
    );
    expect([o.stdout.toString(), o.stderr.toString()]).toEqual(['sent\n', '']);
    expect((await run('echo still')).stdout.toString()).toBe('still\n');
  });

  it('gives the script no signal ignored or blocked', async () => {
    // The shell's own status can show every signal blocked while it forks (dash blocks them
    // around fork): the exec'd grep reads its own, which it took from the shell at the exec.
    const o = await run('exec grep -E "^Sig(Ign|Blk):" /proc/self/status');
    expect(o.stdout.toString()).toBe('SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n');
  });

  it('gives the script descriptors 0-2 only, and a session of its own', async () => {
    // ls as a plain simple command: in a pipeline the shell holds the pipe's ends itself for a
    // moment (a busy machine let ls see them), and dash keeps a redirected descriptor's copy at 10.
    const o = await run('ls /proc/$$/fd; echo --; ps -o pgid=,sid= -p $$; echo $$');
    const [list, rest] = o.stdout.toString().split('--\n');
    const [ids, pid] = rest!.trim().split('\n');
    const fds = list!.trim().split(/\s+/);
    expect(fds.filter((f) => Number(f) > 2 && Number(f) < 200)).toEqual([]);
    expect(ids!.trim().split(/\s+/)).toEqual([pid, pid]);
  });

  it('ends what a run left (setsid, nohup, a double fork) before it reports the end', async () => {
    const tags = [1, 2, 3].map((i) => `700.${process.pid}${i}`);
    const o = await run(
      `setsid sleep ${tags[0]} & nohup sleep ${tags[1]} >/dev/null 2>&1 & (sleep ${tags[2]} &) ; echo left`,
    );
    expect(o.stdout.toString()).toBe('left\n');
    expect(sleeping(tags)).toEqual([]);
  });

  it('keeps two runs apart while both run (a background run and the next one)', async () => {
    const slow = run('sleep 0.5; echo slow');
    const fast = await run('echo fast; echo e >&2');
    expect([fast.stdout.toString(), fast.stderr.toString()]).toEqual(['fast\n', 'e\n']);
    expect((await slow).stdout.toString()).toBe('slow\n');
  });

  it('closes a connection from inside the walls that names no run, and nothing of it reaches a run', async () => {
    const forge =
      `perl -MSocket -e 'socket(my $x, AF_UNIX, SOCK_STREAM, 0) or die; connect($x, pack_sockaddr_un("${INNER_SOCKET}")) or die "connect $!";` +
      ` syswrite($x, ("0" x 32) . "o\\nforged\\n"); my $b; my $n = sysread($x, $b, 10); print defined $n && $n == 0 ? "closed\\n" : "open\\n"'`;
    const o = await run(forge);
    expect([o.stdout.toString(), o.stderr.toString()]).toEqual(['closed\n', '']);
  });

  it('stops a cancelled run with SIGTERM to its group, the walls still standing', async () => {
    const r = wallsRun(
      (shared ??= walls(waiter)),
      'trap "echo term; exit 3" TERM; echo up; while :; do sleep 0.05; done',
      {},
    );
    await new Promise<void>((res) => {
      const t = setInterval(() => r.stdout.contents().toString().includes('up') && (clearInterval(t), res()), 20);
    });
    r.stop('cancelled');
    const o = await r.done;
    expect(o.reason).toBe('cancelled');
    expect(o.stdout.toString()).toBe('up\nterm\n');
    expect(o.completion).toEqual({ state: 'exited', exit_status: 3, signal: null });
    expect((await run('echo still')).stdout.toString()).toBe('still\n');
  });

  it('does not start again a run stopped before its child took it, and starts a run at most once', async () => {
    const dir = mkdtempSync(join(home, 'stopped-'));
    const w = walls(waiter, ['--bind', dir, dir]);
    try {
      const seen: string[] = [];
      for (let i = 0; i < 10; i++) {
        await waitUntil(() => keptPair(w), 10_000, "the next run's processes");
        const r = wallsRun(w, `echo ${i} >> ${dir}/starts; sleep 5`);
        r.stop('cancelled'); // at once: before the child read its request, or just after
        const o = await r.done;
        expect(o.reason).toBe('cancelled');
        seen.push(o.completion ? 'ran' : (o.error ?? ''));
      }
      expect(new Set(seen.filter((x) => x !== 'ran'))).toEqual(
        new Set(
          seen.includes('the run was stopped before it started') ? ['the run was stopped before it started'] : [],
        ),
      );
      const starts = existsSync(`${dir}/starts`)
        ? readFileSync(`${dir}/starts`, 'utf8').split('\n').filter(Boolean)
        : [];
      expect(starts.length).toBe(new Set(starts).size);
    } finally {
      w.close();
    }
  });

  it('tells walls bwrap could not set up from the script’s failure: sandbox_unavailable, not run', async () => {
    const w = walls(waiter, ['--bind', '/nonexistent-tmux-run-test', '/x']);
    const o = await run('echo ran', w);
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

describe.skipIf(!usable).each(TEST_WAITERS)('idle walls, the $kind waiter', (waiter) => {
  it('cost no CPU while idle, and end once unused for their idle time', async () => {
    const w = walls(waiter, [], 'idle', 1500);
    expect((await runIn(w, 'echo up')).stdout.toString()).toBe('up\n');
    // Idle once the next run's reaper and child are forked (after each run): bwrap, the waiter, those two.
    const kept = await waitUntil(() => keptPair(w), 10_000, "the next run's processes");
    const pids = [w.pgid!, kept.waiter, kept.reaper, kept.child];
    const ticks = (): number[] => pids.map((p) => cpuTicks(p));
    const before = ticks();
    await new Promise((r) => setTimeout(r, 500));
    expect(ticks()).toEqual(before);
    await waitUntil(
      () => (w.closed && pids.every((p) => !existsSync(`/proc/${p}`))) || undefined,
      20_000,
      'idle walls to end',
    );
  });
});

describe.skipIf(!usable).each(TEST_WAITERS)('a helper that does not answer the $kind waiter', (waiter) => {
  it('makes the waiter give up after 10 s, saying why, with nothing started', async () => {
    const { binds, command } = waiterCommand(waiter);
    const child = spawn(bwrap!, [...BASE, ...processWalls(false), ...binds, ...command], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    let said = '';
    let asked = '';
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (said += c));
    (child.stdio[3] as Duplex).setEncoding('latin1').on('data', (c: string) => (asked += c));
    const code = await new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
    expect(asked).toBe(WAITER_READY);
    expect(code).toBe(125);
    expect(said).toMatch(/did not answer the sandbox/);
  }, 30_000);
});

// A helper SIGKILLed at once after it made walls and sent them a run: bwrap's outer process sets
// its parent-death signal only after it has started, and one whose parent died first is never
// signalled; the waiter takes a request only after the helper's go, which proves it alive then.
const DIES_AT_ONCE = `
import { Walls } from './helper/walls/walls.ts';
import { waiterProgram } from './helper/walls/waiter.ts';
import { findBwrap, processWalls } from './src/core/os/bwrap.ts';
const base = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
const w = new Walls(findBwrap({}), [...base, ...processWalls(false)], process.argv[2], waiterProgram(), 'k');
w.run({ script: 'sleep ' + process.argv[1], umask: undefined, cwd: '/', env: { PATH: '/usr/bin:/bin' } },
  { output() {}, started() {}, ended() {} });
if (process.argv[3] === 'later') setTimeout(() => process.kill(process.pid, 'SIGKILL'), 300);
else process.kill(process.pid, 'SIGKILL');
`;

describe.skipIf(!usable).each(TEST_WAITERS)(
  'a helper SIGKILLed right after it made walls, the $kind waiter',
  (waiter) => {
    it('leaves no waiter and no run, killed at once or while the run runs', async () => {
      const dir = mkdtempSync(join(home, 'killed-'));
      // The probe for what is left can see walls: one made here is found while it lives.
      const probeHome = mkdtempSync(join(home, 'probe-'));
      const seen = new Walls(bwrap!, [...BASE, ...processWalls(false)], probeHome, waiter, 'probe');
      expect((await runIn(seen, 'echo up')).stdout.toString()).toBe('up\n');
      expect(processesWalledUnder(probeHome).length).toBeGreaterThan(0);
      seen.close();
      const tags = Array.from({ length: 8 }, (_, i) => `600.${process.pid}${i}7`);
      const env = { ...process.env, ...(waiter.kind === 'perl' ? { TMUX_RUN_SPAWN: 'node' } : {}) };
      const results = tags.map((tag, i) =>
        spawnSync(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', DIES_AT_ONCE, tag, dir, i % 2 ? 'later' : 'now'],
          {
            cwd: join(import.meta.dirname, '..', '..'),
            stdio: ['ignore', 'ignore', 'pipe'],
            encoding: 'utf8',
            env,
          },
        ),
      );
      // Each helper did die of its SIGKILL (not of an error before it made the walls).
      expect(results.map((r) => [r.signal, r.stderr])).toEqual(tags.map(() => ['SIGKILL', '']));
      // Whatever started would be running within this time (walls start in tens of ms).
      await new Promise((r) => setTimeout(r, 1500));
      const left = sleeping(tags);
      for (const pid of left) process.kill(pid, 'SIGKILL');
      expect(left, 'sandboxed scripts still running after their helper was SIGKILLed').toEqual([]);
      expect(processesWalledUnder(dir), 'a bwrap or waiter left by a SIGKILLed helper').toEqual([]);
    }, 60_000);
  },
);
