// A plain run's spawn, both ways the helper can do it (src/core/os/native-spawn.ts): the native
// vfork and Node's own spawn give the script the same process: its own session and group, stdin
// /dev/null, stdout and stderr apart, every signal at its default and none blocked, no descriptor
// of the helper, the cwd, environment and umask it was given; and the run's end the same: the
// exit status or signal, the limit, the stop, the `cmd &` left holding the pipes.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { groupGone } from '../../lab/processes.js';
import { nativeSpawn, spawnKind, type SpawnKind } from '../../src/core/os/native-spawn.js';
import { Run } from '../../helper/run/runner.js';
import type { RunOutcome, RunSpec } from '../../helper/run/run-spec.js';

const dir = mkdtempSync(join(tmpdir(), 'tmux-run-spawn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PATH = '/usr/local/bin:/usr/bin:/bin';
const spec = (script: string, more: Partial<RunSpec> = {}): RunSpec => ({
  script,
  cwd: dir,
  env: { PATH },
  umask: undefined,
  stdoutLimit: 1 << 20,
  stderrLimit: 1 << 20,
  ...more,
});

async function run(kind: SpawnKind, script: string, more: Partial<RunSpec> = {}): Promise<RunOutcome> {
  const r = new Run(spec(script, more), kind);
  r.start();
  return r.done;
}

const status = (text: string, field: string): string => new RegExp(`^${field}:\\s*(\\S+)`, 'm').exec(text)?.[1] ?? '';

/** This process's descriptors that an exec keeps (FD_CLOEXEC unset), which any child inherits either way. */
function inheritable(): Set<string> {
  const out = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const flags = Number.parseInt(status(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'), 'flags'), 8);
      if ((flags & 0o2000000) === 0) out.add(fd);
    } catch {
      /* the listing's own descriptor, closed meanwhile */
    }
  }
  return out;
}

it('the native spawn is built (npm run build compiles helper/run/spawn.c; .ci/run installs the compiler)', () => {
  expect(spawnKind({})).toEqual({ kind: 'native' });
  expect(spawnKind({ TMUX_RUN_SPAWN: 'node' })).toEqual({ kind: 'node', why: 'TMUX_RUN_SPAWN=node' });
});

describe.each(['native', 'node'] as const)('a plain run spawned by %s', (kind) => {
  it('reports the exit status and keeps stdout and stderr apart', async () => {
    const o = await run(kind, 'printf out; printf err >&2; exit 3');
    expect(o).toMatchObject({ reason: 'completed', completion: { state: 'exited', exit_status: 3, signal: null } });
    expect([o.stdout.toString(), o.stderr.toString()]).toEqual(['out', 'err']);
  });

  it('reports the signal that ended /bin/sh', async () => {
    const o = await run(kind, 'kill -USR1 $$');
    expect(o.completion).toEqual({ state: 'signaled', exit_status: null, signal: 10 });
  });

  it('starts /bin/sh in a session and group of its own, stdin /dev/null, signals at their defaults', async () => {
    // The helper is Node, which ignores SIGPIPE: its children must not inherit that.
    expect(BigInt(`0x${status(readFileSync('/proc/self/status', 'utf8'), 'SigIgn')}`) & (1n << 12n)).toBe(1n << 12n);
    const r = new Run(spec('ps -o sid= -o pgid= -p $$; readlink /proc/self/fd/0; cat; cat /proc/self/status'), kind);
    const pgid = r.start();
    const o = await r.done;
    const [ids, stdin, ...rest] = o.stdout.toString().split('\n');
    expect(ids!.trim().split(/\s+/)).toEqual([String(pgid), String(pgid)]);
    expect(stdin).toBe('/dev/null');
    const proc = rest.join('\n');
    // `cat`'s status: nothing ignored, nothing blocked (glibc's two internal signals included).
    expect([status(proc, 'SigIgn'), status(proc, 'SigBlk')]).toEqual(['0000000000000000', '0000000000000000']);
  });

  it('gives the script no descriptor of the helper: only 0, 1, 2 and what any exec keeps', async () => {
    const kept = inheritable();
    // find lists /bin/sh's descriptors (its own are not in that directory).
    const o = await run(kind, "find /proc/$$/fd -mindepth 1 -printf '%f %l\\n'");
    const fds = o.stdout
      .toString()
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    expect(fds.filter(([fd]) => !['0', '1', '2'].includes(fd!) && !kept.has(fd!))).toEqual([]);
    // Pipes from the native spawn (so `> /dev/stdout` works); Node's spawn gives socket pairs.
    const stream = kind === 'native' ? /^pipe:/ : /^socket:/;
    expect(fds.find(([fd]) => fd === '1')?.[1]).toMatch(stream);
    expect(fds.find(([fd]) => fd === '2')?.[1]).toMatch(stream);
    expect(fds.find(([fd]) => fd === '1')?.[1]).not.toBe(fds.find(([fd]) => fd === '2')?.[1]);
  });

  it('runs in the cwd with exactly the environment and umask given, and puts the helper umask back', async () => {
    const before = process.umask();
    const o = await run(kind, 'pwd; umask; env | sort', {
      env: { PATH, EQUALS: 'a=b', GREEK: 'λ ünï' },
      umask: 0o027,
    });
    expect(process.umask()).toBe(before);
    expect(o.stdout.toString().split('\n')).toEqual([
      dir,
      '0027',
      'EQUALS=a=b',
      'GREEK=λ ünï',
      `PATH=${PATH}`,
      `PWD=${dir}`, // /bin/sh's own
      '',
    ]);
  });

  it('hands a snapshot that is not UTF-8 on byte for byte: an exported value and the cwd', async () => {
    const name = Buffer.concat([Buffer.from(`${dir}/lat`), Buffer.from([0xe9]), Buffer.from('n')]);
    mkdirSync(name, { recursive: true });
    const latin1 = (b: Buffer): string => b.toString('latin1');
    const bad = latin1(Buffer.from([0xff, 0xfe, 0x20, 0x6f, 0x6b]));
    const o = await run(
      kind,
      'printf %s "$BAD" | od -An -tx1 | tr -d " \\n"; echo; pwd | od -An -tx1 | tr -d " \\n"; echo; readlink /proc/$$/fd/1',
      {
        // The snapshot's text form (what Node could take) and its bytes (what the run gets).
        cwd: name.toString('utf8'),
        env: { PATH, BAD: Buffer.from(bad, 'latin1').toString('utf8') },
        bytes: { cwd: latin1(name), env: { PATH, BAD: bad } },
      },
    );
    const [value, cwd, stdout] = o.stdout.toString().trim().split('\n');
    expect(value).toBe('fffe206f6b');
    expect(cwd).toBe(Buffer.concat([name, Buffer.from('\n')]).toString('hex'));
    // Both ways through the same spawn as any other run: pipes natively, sockets through the wrapper.
    expect(stdout).toMatch(kind === 'native' ? /^pipe:/ : /^socket:/);
  });

  it('refuses an environment the kernel would not pass (E2BIG), naming the largest variables', async () => {
    const env: Record<string, string> = { PATH };
    for (let i = 0; i < 40; i++) env[`BIG${i}`] = 'x'.repeat(100_000);
    const o = await run(kind, 'true', { env });
    expect(o.reason).toBe('spawn_failed');
    expect(o.error).toMatch(/more than the kernel passes to a program \(E2BIG\)/);
  });

  it('stops a stream over its limit, and a cancelled run, with the whole group', async () => {
    const over = await run(kind, 'yes', { stdoutLimit: 65536 });
    expect(over).toMatchObject({ reason: 'output_limit_exceeded', overflow: 'stdout' });
    expect(over.stdout.length).toBe(65536);
    const r = new Run(spec('sleep 60 & sleep 60; echo never'), kind);
    const pgid = r.start()!;
    await new Promise((res) => setTimeout(res, 100));
    r.stop('cancelled');
    const o = await r.done;
    expect(o).toMatchObject({ reason: 'cancelled', completion: { state: 'signaled', signal: 15 } });
    await groupGone(pgid);
  });

  it('ends a run whose `cmd &` holds the pipes once /bin/sh exits, and ends that command too', async () => {
    const r = new Run(spec('sleep 60 & echo started'), kind);
    const pgid = r.start()!;
    const o = await r.done;
    expect(o).toMatchObject({ reason: 'completed', completion: { state: 'exited', exit_status: 0 } });
    expect(o.stdout.toString()).toBe('started\n');
    await groupGone(pgid);
  });
});

describe('the native spawn itself', () => {
  it('says which step failed, by errno, and leaves no descriptor open', async () => {
    const before = readdirSync('/proc/self/fd').length;
    const nothing = (): void => undefined;
    expect(() => nativeSpawn(['/no/such/program'], {}, dir, nothing)).toThrow(
      expect.objectContaining({ code: 'ENOENT', message: expect.stringMatching(/^spawn ENOENT/) }),
    );
    expect(() => nativeSpawn(['/bin/sh', '-c', 'true'], {}, join(dir, 'gone'), nothing)).toThrow(
      expect.objectContaining({ code: 'ENOENT', message: expect.stringMatching(/^chdir ENOENT/) }),
    );
    expect(() => nativeSpawn(['/bin/sh', '-c', 'true'], { A: 'x\0y' }, dir, nothing)).toThrow(
      expect.objectContaining({ code: 'EINVAL' }),
    );
    expect(readdirSync('/proc/self/fd').length).toBe(before);
  });
});
