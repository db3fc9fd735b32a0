// Runs in a bash pane, driven as a person: the run sees the cd, export and umask typed in the
// pane and not an unexported variable; the real exit status or signal, separate streams, closed
// stdin, only descriptors 0-2; the queue; ^C in the pane; nothing on the screen or in history.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashFixture, enrolledBash, ok, refusal, type BashFixture } from './support.js';

let fx: BashFixture;
beforeAll(async () => {
  fx = await bashFixture();
});
afterAll(async () => {
  expect(await fx.scope.close()).toEqual([]);
});

describe('a run in a bash pane', () => {
  it('sees the cd, export and umask typed in the pane, and not an unexported variable', async () => {
    await fx.pane.run(`mkdir -p ${fx.server.home}/work && cd ${fx.server.home}/work`);
    await fx.pane.run('export TYPED_EXPORT=yes-exported; NOT_EXPORTED=hidden; umask 027');
    const d = ok(await fx.run('pwd; echo "e=$TYPED_EXPORT n=${NOT_EXPORTED-unset}"; umask'));
    expect(d.stdout.data).toBe(`${fx.server.home}/work\ne=yes-exported n=unset\n0027\n`);
    await fx.pane.run(`cd ${fx.server.home}; umask 022`);
  });

  it('hands on an export named like a local of the snippet (its answer runs among them)', async () => {
    const names = ['n', 'kv', 'names', 'ok', 'nonce', 'reason', 'line', 'said', 'REPLY', 'um'];
    await fx.pane.run(names.map((n) => `export ${n}=v-${n}`).join('; '));
    const d = ok(await fx.run(names.map((n) => `printf '%s ' "\${${n}-unset}"`).join('; ')));
    expect(d.stdout.data).toBe(names.map((n) => `v-${n} `).join(''));
    await fx.pane.run(`unset ${names.join(' ')}`);
  });

  it('reports the exit status and the signal, keeps the streams apart, closes stdin', async () => {
    expect(ok(await fx.run('exit 7')).completion).toEqual({ state: 'exited', exit_status: 7, signal: null });
    expect(ok(await fx.run('kill -TERM $$')).completion).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
    const d = ok(await fx.run('echo out; echo err >&2; cat; echo "cat $?"'));
    expect(d.stdout.data).toBe('out\ncat 0\n');
    expect(d.stderr.data).toBe('err\n');
  });

  it('gives the script only descriptors 0-2, and none of the helper reaches a command the person types', async () => {
    const d = ok(await fx.run('ls /proc/$$/fd; readlink /proc/$$/fd/0'));
    expect(d.stdout.data.split('\n').filter(Boolean)).toEqual(['0', '1', '2', '/dev/null']);
    // Typed in the pane: ls's own 0-2 and the directory it reads (3), nothing of the helper's.
    expect(await fx.pane.run('echo $(ls /proc/self/fd)')).toBe('0 1 2 3');
  });

  it('queues three runs without overlap, in order', async () => {
    const log = join(fx.server.home, 'queue.log');
    const script = (n: number) => `echo start ${n} >> ${log}; sleep 0.3; echo end ${n} >> ${log}`;
    const results = await Promise.all([1, 2, 3].map((n) => fx.run(script(n))));
    for (const r of results) ok(r);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(6);
    for (let i = 0; i < 6; i += 2) {
      expect(lines[i]!.replace('start', 'end')).toBe(lines[i + 1]);
    }
  });

  it('^C in the pane does not reach a run', async () => {
    const marker = join(fx.server.home, 'survived');
    const call = fx.run(`sleep 1; touch ${marker}`);
    await new Promise((r) => setTimeout(r, 300));
    await fx.server.tmux(['send-keys', '-t', fx.pane.id, 'C-c']);
    const d = ok(await call);
    expect(d.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
    expect(existsSync(marker)).toBe(true);
    await fx.pane.waitForPrompt();
  });

  it('leaves nothing on the screen and nothing in the history', async () => {
    await fx.pane.run('history -c; echo before');
    const screen = await fx.pane.capture();
    ok(await fx.run('echo run-output-here'));
    ok(await fx.run('true'));
    expect(await fx.pane.capture()).toBe(screen);
    const history = await fx.pane.run('history');
    expect(history).not.toMatch(/_tmux_run|run-output-here/);
    // `history -c` cleared its own line: the list holds `history` alone.
    expect(history.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/^ +1 +history$/)]);
  });

  it('refuses a busy shell (a command in the foreground)', async () => {
    await fx.pane.type('sleep 2', { enter: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(refusal(await fx.run('echo no')).code).toBe('shell_busy');
    await fx.pane.waitForPrompt(10_000);
  });

  it('without the builtin, refuses every run in ask mode with approval_unavailable, nothing run', async () => {
    const marker = join(fx.server.home, 'asked');
    const { pane, listing } = await enrolledBash(fx.server, { rc: 'TMUX_RUN_NATIVE=off' });
    await pane.run('TMUX_RUN_APPROVE=ask');
    const e = refusal(await fx.run(`touch ${marker}`, listing));
    expect(e.code).toBe('approval_unavailable');
    expect(e.delivery).toBe('observed');
    expect(e.effects.state).toBe('none');
    expect(existsSync(marker)).toBe(false);
    await pane.run('unset TMUX_RUN_APPROVE');
    ok(await fx.run('true', listing));
  });
});
