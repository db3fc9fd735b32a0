// tmux_run in a fish pane, end to end (real tmux, real fish, the real helper and broker): what a
// run sees of the shell (a typed cd, set -gx, umask; not an unexported variable), what comes back
// (exit status, signal, separate streams, closed stdin), descriptors, ^C, the queue, a long run,
// and that nothing of it reaches the pane's screen or fish's history.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../mcp/support.js';
import { helperChildren } from '../../lab/enrollment.js';
import { waitUntil } from '../../lab/waiting.js';
import { fishFixture, FISH_SOURCE, screenOf, type FishFixture } from './support.js';

let fx: FishFixture;
beforeAll(async () => {
  fx = await fishFixture();
});
afterAll(async () => {
  await fx?.close();
});

describe('tmux_run in a fish pane', () => {
  it('sees the directory, exports and umask the person typed, not an unexported variable', async () => {
    await fx.pane.run('mkdir -p $HOME/proj; and cd $HOME/proj');
    await fx.pane.run('set -gx FISH_EXPORTED "a b"; set -g FISH_LOCAL hidden; set -gx FISH_LIST x y z');
    await fx.pane.run('set -gx MY_PATH /a /b; umask 027');
    const d = ok(await fx.run('pwd; echo "$FISH_EXPORTED|${FISH_LOCAL-unset}|$FISH_LIST|$MY_PATH"; umask'));
    expect(d.stdout.data).toBe(`${fx.server.home}/proj\na b|unset|x y z|/a:/b\n0027\n`);
  });

  it('hands on an export named like a local of the snippet (its answer runs among them), and leaves it as it was', async () => {
    // The handler's locals and the names its `string match` once set (a named group sets a
    // variable that exists under that name, wherever it is).
    const names = ['nonce', 'reason', 'mode', 'left', 'right', 'msg', 'kind', 'rest', 'fresh', 'seq', 'note', 'run'];
    names.push('said', 'drew', 'saved', 'rc', 'fields', 'n');
    await fx.pane.run(names.map((n) => `set -gx ${n} v-${n}`).join('; '));
    const d = ok(await fx.run(names.map((n) => `printf '%s ' "\${${n}-unset}"`).join('; ')));
    expect(d.stdout.data).toBe(names.map((n) => `v-${n} `).join(''));
    const after = await fx.pane.run(`printf '<%s>' ${names.map((n) => `$${n}`).join(' ')}; echo`);
    expect(after).toContain(names.map((n) => `<v-${n}>`).join(''));
    await fx.pane.run(`set -e ${names.join(' ')}`);
  });

  it('reads the exports afresh at each run: one made, then changed, by a key binding (no command line) is seen', async () => {
    await fx.pane.run(`bind \\cx 'set -gx BOUND_BY_KEY one'; bind \\cy 'set -gx BOUND_BY_KEY two'`);
    const seen = async (): Promise<string> => ok(await fx.run('echo "${BOUND_BY_KEY-unset}"')).stdout.data;
    expect(await seen()).toBe('unset\n');
    // No prompt comes between the key and the run: nothing but the run's own answer can see it.
    await fx.server.tmux(['send-keys', '-t', fx.pane.id, 'C-x']);
    await waitUntil(async () => (await seen()) === 'one\n' || undefined, 10_000, 'the new export in a run');
    await fx.server.tmux(['send-keys', '-t', fx.pane.id, 'C-y']);
    await waitUntil(async () => (await seen()) === 'two\n' || undefined, 10_000, 'the changed export in a run');
    await fx.pane.run('bind -e \\cx; bind -e \\cy; set -e BOUND_BY_KEY');
  });

  it('reports exit status, a signal and exit 143 apart, with separate streams and stdin closed', async () => {
    expect(ok(await fx.run('exit 3')).completion).toEqual({ state: 'exited', exit_status: 3, signal: null });
    expect(ok(await fx.run('kill -TERM $$')).completion).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
    expect(ok(await fx.run('exit 143')).completion).toEqual({ state: 'exited', exit_status: 143, signal: null });
    const d = ok(await fx.run('echo out; echo err >&2; cat; echo "cat: $?"'));
    expect(d.stdout.data).toBe('out\ncat: 0\n');
    expect(d.stderr.data).toBe('err\n');
  });

  it('gives a run descriptors 0-2 only, and a command the person types none of the helper', async () => {
    const d = ok(await fx.run('ls /proc/$$/fd; readlink /proc/$$/fd/0'));
    expect(d.stdout.data.split('\n').filter(Boolean)).toEqual(['0', '1', '2', '/dev/null']);
    // What a typed command inherits from fish: its terminal on 0, 1 and 2, nothing else.
    const typed = await fx.pane.run(`sh -c 'ls -l /proc/$$/fd'`);
    const tty = (await fx.server.tmux(['display-message', '-p', '-t', fx.pane.id, '#{pane_tty}'])).trim();
    const fds = [...typed.matchAll(/ (\d+) -> (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(fds).toEqual([`0 ${tty}`, `1 ${tty}`, `2 ${tty}`]);
  });

  it('queues three runs without overlap; ^C in the pane does not reach a run', async () => {
    const script = (n: number) => `echo start ${n} >> $HOME/q.log; sleep 0.3; echo end ${n} >> $HOME/q.log`;
    await Promise.all([1, 2, 3].map((n) => fx.run(script(n)).then(ok)));
    const log = ok(await fx.run('cat $HOME/q.log'))
      .stdout.data.trim()
      .split('\n');
    expect(log).toHaveLength(6);
    for (let i = 0; i < 6; i += 2) {
      const n = log[i]!.split(' ')[1];
      expect([log[i], log[i + 1]]).toEqual([`start ${n}`, `end ${n}`]);
    }
    const long = fx.run('trap "echo got INT" INT; sleep 2; echo done');
    await new Promise((r) => setTimeout(r, 700));
    await fx.server.tmux(['send-keys', '-t', fx.pane.id, 'C-c']);
    const d = ok(await long);
    expect(d.stdout.data).toBe('done\n');
    expect(d.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
  });

  it('runs a long script (8 s) through to its end', async () => {
    const d = ok(await fx.run('i=0; while [ $i -lt 8 ]; do sleep 1; i=$((i+1)); done; echo "slept $i"'));
    expect(d.stdout.data).toBe('slept 8\n');
  }, 30_000);

  it('leaves nothing on the screen and nothing in history but what the person typed', async () => {
    const before = await screenOf(fx.pane);
    ok(await fx.run('echo invisible'));
    expect(await screenOf(fx.pane)).toBe(before);
    const history = await fx.pane.run('history | cat');
    expect(history).not.toMatch(/invisible|_tmux_run|tmux_run/);
    expect(history).toContain(FISH_SOURCE);
    expect(helperChildren(await fx.pane.shellPid())).toHaveLength(1);
  });
});
