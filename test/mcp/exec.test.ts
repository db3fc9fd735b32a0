// tmux_run end to end: what a script sees and what comes back (status, signals, streams,
// encodings, stdin, descriptors, environment, background jobs), through the real stack.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processAlive } from '../../lab/processes.js';
import { waitUntil } from '../../lab/waiting.js';
import { type Fixture, ok, setupFixture } from './support.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await setupFixture();
});
afterAll(async () => {
  await fx?.close();
});

describe('tmux_run: completion', () => {
  it.each([0, 3, 255])('reports exit status %i', async (code) => {
    const d = ok(await fx.run(`exit ${code}`));
    expect(d.completion).toEqual({ state: 'exited', exit_status: code, signal: null });
    expect(d.target).toEqual(fx.target());
    expect(d.authorization).toMatchObject({
      state: 'authorized',
      pane_id: fx.listing.pane_id,
      server_generation: fx.listing.server_generation,
      process_generation: fx.listing.process_generation,
      enrollment_generation: fx.listing.enrollment_generation,
    });
  });

  it('reports a script killed by SIGTERM as signaled 15', async () => {
    expect(ok(await fx.run('kill -TERM $$')).completion).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
  });

  it('reports a script killed by SIGKILL as signaled 9', async () => {
    expect(ok(await fx.run('kill -KILL $$')).completion).toEqual({ state: 'signaled', exit_status: null, signal: 9 });
  });

  it('reports exit 143 as exited 143, not as a signal', async () => {
    expect(ok(await fx.run('exit 143')).completion).toEqual({ state: 'exited', exit_status: 143, signal: null });
  });

  it('gives every run a fresh run id and the script digest', async () => {
    const a = ok(await fx.run('true')).authorization;
    const b = ok(await fx.run('true')).authorization;
    expect(a.run_id).not.toBe(b.run_id);
    expect(a.script_digest).toBe(b.script_digest);
    expect(a.script_digest).toBe('b5bea41b6c623f7c09f1bf24dcae58ebab3c0cdd90ad966bc43a45b44867e12b'); // sha256("true")
  });
});

describe('tmux_run: streams', () => {
  it('closes stdin: cat returns at once with nothing', async () => {
    // An open stdin would hold cat until the call's guard gives up; /dev/null ends it at once.
    const d = ok(await fx.run('cat; echo "status $?" >&2; readlink /proc/$$/fd/0 >&2'));
    expect(d.stdout).toEqual({ encoding: 'utf-8', data: '', bytes: 0, truncated: false });
    expect(d.stderr.data).toBe('status 0\n/dev/null\n');
  });

  it('keeps stdout and stderr apart', async () => {
    const d = ok(await fx.run('echo out; echo err >&2; echo out2'));
    expect(d.stdout).toEqual({ encoding: 'utf-8', data: 'out\nout2\n', bytes: 9, truncated: false });
    expect(d.stderr).toEqual({ encoding: 'utf-8', data: 'err\n', bytes: 4, truncated: false });
  });

  it('returns bytes that are not UTF-8 as base64', async () => {
    const d = ok(await fx.run("printf '\\377\\376'; printf '\\200' >&2"));
    expect(d.stdout).toEqual({
      encoding: 'base64',
      data: Buffer.from([0xff, 0xfe]).toString('base64'),
      bytes: 2,
      truncated: false,
    });
    expect(d.stderr).toEqual({
      encoding: 'base64',
      data: Buffer.from([0x80]).toString('base64'),
      bytes: 1,
      truncated: false,
    });
  });

  it('returns UTF-8 text as utf-8 with its byte count', async () => {
    const d = ok(await fx.run("printf 'héllo ✓'"));
    expect(d.stdout).toEqual({
      encoding: 'utf-8',
      data: 'héllo ✓',
      bytes: Buffer.byteLength('héllo ✓'),
      truncated: false,
    });
    expect(d.stdout.bytes).toBe(10);
    expect(d.stderr).toEqual({ encoding: 'utf-8', data: '', bytes: 0, truncated: false });
  });

  it('gives the script only descriptors 0, 1 and 2', async () => {
    const d = ok(await fx.run('ls /proc/self/fd'));
    // 3 is the directory ls itself opened to list it.
    expect(d.stdout.data.split('\n').filter(Boolean)).toEqual(['0', '1', '2', '3']);
    // The script's own shell, seen from a child while it waits: exactly 0, 1, 2, with stdin /dev/null.
    const d2 = ok(await fx.run('ls /proc/$$/fd; readlink /proc/$$/fd/0'));
    expect(d2.stdout.data.split('\n').filter(Boolean)).toEqual(['0', '1', '2', '/dev/null']);
  });

  it('gives the script pipes as stdout and stderr, which it can open by name (the native spawn)', async () => {
    // Node's spawn gave socket pairs, where opening /dev/stdout fails (ENXIO).
    const d = ok(
      await fx.run('printf out > /dev/stdout; printf err > /dev/stderr; readlink /proc/$$/fd/1 /proc/$$/fd/2'),
    );
    const [o, e] = d.stdout.data.slice(3).trim().split('\n');
    expect([d.stdout.data.slice(0, 3), d.stderr.data]).toEqual(['out', 'err']);
    expect(o).toMatch(/^pipe:\[\d+\]$/);
    expect(e).toMatch(/^pipe:\[\d+\]$/);
    expect(o).not.toBe(e);
  });
});

describe('tmux_run: secrets stay out of the script', () => {
  it('has no secret or token in its environment, argv or /proc', async () => {
    const secret = fx.record().secret;
    expect(secret).toMatch(/^[a-f0-9]{64}$/);
    const d = ok(
      await fx.run(
        'env; echo ---; tr "\\0" " " </proc/$$/cmdline; echo; echo ---; tr "\\0" "\\n" </proc/$$/environ; echo ---; cat /proc/self/cmdline | tr "\\0" " "',
      ),
    );
    const text: string = d.stdout.data;
    expect(text).toContain('TMUX_RUN_DIR=');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(d.authorization.run_id);
    const names = text
      .split('---')[0]!
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => l.slice(0, l.indexOf('=')));
    expect(names.filter((n) => /TOKEN|SECRET|HMAC/i.test(n))).toEqual([]);
    // Only the person's own settings (the pane was started with TMUX_RUN_DIR and TMUX_RUN_NOTIFY).
    expect(names.filter((n) => n.startsWith('TMUX_RUN_')).sort()).toEqual(['TMUX_RUN_DIR', 'TMUX_RUN_NOTIFY']);
    expect(names.filter((n) => /^_?tmux_run/i.test(n) && !['TMUX_RUN_DIR', 'TMUX_RUN_NOTIFY'].includes(n))).toEqual([]);
    // No 64-hex value (the shape of a token or secret) anywhere in the environment.
    expect(text.split('---')[0]!).not.toMatch(/=[a-f0-9]{64}$/m);
  });

  it("leaves no copy of the shell's exported environment in the registry once the run has it", async () => {
    // The shell hands its exported environment (API keys included) to the helper in a file of the
    // shell channel; that file stayed in the registry until the next run or the end of the enrollment.
    const value = `rev-${process.pid}-exported-key`;
    await fx.pane.run(`export SOME_API_KEY=${value}`);
    expect(ok(await fx.run('printf %s "$SOME_API_KEY"')).stdout.data).toBe(value);
    // A file may go between the listing and its read (the helper's status file is written as a
    // .tmp and renamed into place): one that is gone holds nothing.
    const holds = (path: string): boolean => {
      try {
        return lstatSync(path).isFile() && readFileSync(path, 'latin1').includes(value);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw e;
      }
    };
    const holding = readdirSync(fx.server.registryDir).filter((n) => holds(join(fx.server.registryDir, n)));
    await fx.pane.run('unset SOME_API_KEY');
    expect(holding).toEqual([]);
  });
});

describe('tmux_run: background jobs', () => {
  it('ends the run when /bin/sh exits and stops what is left in its group', async () => {
    // The result comes while the sleep still has most of its 100 s to go (the test's guard is 30 s).
    const d = ok(await fx.run('sleep 100 & echo "started $!"'));
    expect(d.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
    const m = /^started (\d+)$/m.exec(d.stdout.data);
    expect(m).not.toBeNull();
    const pid = Number(m![1]);
    await waitUntil(() => !processAlive(pid), 5000, `background sleep ${pid} to be stopped`);
  });

  it('stops a background job that holds the pipes without delaying the result', async () => {
    const d = ok(await fx.run('(sleep 100; echo never) & echo "started $!"; echo bye >&2'));
    expect(d.stderr.data).toBe('bye\n');
    expect(d.stdout.data).not.toContain('never');
    const pid = Number(/^started (\d+)$/m.exec(d.stdout.data)![1]);
    await waitUntil(() => !processAlive(pid), 5000, `background subshell ${pid} to be stopped`);
  });
});
