// Input runs in a pane's kept-alive walls with the real bwrap and both real waiters, without tmux
// or a shell: a pipe run reads what it is given in order and ends at eof; a terminal run (the C
// waiter) runs on a pseudo-terminal of its own made in the walls, whose master the helper gets on
// the terminal channel, while the run holds nothing but that terminal; the perl waiter refuses a
// terminal run, saying why.
import { mkdtempSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { InputFeed } from '../../helper/run/input-feed.js';
import type { Run } from '../../helper/run/runner.js';
import { RunTerminal } from '../../helper/run/terminal.js';
import { Walls } from '../../helper/walls/walls.js';
import { processWalls } from '../../src/core/os/bwrap.js';
import { waitUntil } from '../../lab/waiting.js';
import { testBwrap, TEST_MOUNTS, TEST_WAITERS, wallsRun, wallsUsable } from '../../lab/walls.js';

const home = mkdtempSync('/var/tmp/tmux-run-walls-input-');
const open: Walls[] = [];
afterAll(() => {
  for (const w of open) w.close();
  rmSync(home, { recursive: true, force: true });
});

function walls(waiter: (typeof TEST_WAITERS)[number]): Walls {
  const w = new Walls(testBwrap!, [...TEST_MOUNTS, ...processWalls(false)], home, waiter, `input-${waiter.kind}`);
  open.push(w);
  return w;
}

/** A run with input in `w`, started as the helper starts one. */
const inputRun = (w: Walls, script: string, input: InputFeed, terminal?: RunTerminal): Run =>
  wallsRun(w, script, undefined, { input, ...(terminal ? { terminal } : {}) });

describe.skipIf(!wallsUsable).each(TEST_WAITERS)('input pipe in the walls, the $kind waiter', (waiter) => {
  it('reads the lines it is given in order, given before and after its start, and ends at eof', async () => {
    const w = walls(waiter);
    const feed = new InputFeed('pipe');
    feed.take(Buffer.from('one\n'), false);
    const run = inputRun(w, 'while IFS= read -r l; do echo "got $l"; done; echo "eof"', feed);
    await waitUntil(() => run.stdout.total > 0, 10_000, 'the first line echoed');
    feed.take(Buffer.from('two\nthree\n'), false);
    await waitUntil(() => run.stdout.contents().toString().includes('three'), 10_000, 'the later lines echoed');
    feed.take(Buffer.alloc(0), true);
    const o = await run.done;
    expect(o.stdout.toString()).toBe('got one\ngot two\ngot three\neof\n');
    expect(o.completion).toMatchObject({ state: 'exited', exit_status: 0 });
  }, 30_000);

  it('gives the run its stdin only: nothing written to it comes back, and it holds no other descriptor', async () => {
    const w = walls(waiter);
    const feed = new InputFeed('pipe');
    feed.take(Buffer.from('x\n'), true);
    // stdin is read only (a write to it fails, here SIGPIPE in a subshell); ls as a plain simple
    // command (see sandbox-run's descriptor test; 200 and above are the test runner's own).
    const run = inputRun(w, '(echo up >&0) 2>/dev/null && echo wrote || echo refused; ls /proc/$$/fd; cat', feed);
    const o = await run.done;
    const [first, ...rest] = o.stdout.toString().trim().split('\n');
    expect(first).toBe('refused');
    expect(rest.at(-1)).toBe('x');
    expect(rest.slice(0, -1).filter((f) => Number(f) > 2 && Number(f) < 200)).toEqual([]);
  }, 30_000);
});

describe.skipIf(!wallsUsable)('input terminal in the walls, the C waiter', () => {
  const [native] = TEST_WAITERS;

  it('runs on its own pts of the asked size, leads its session, and holds nothing but the terminal', async () => {
    const w = walls(native!);
    expect(w.terminals).toBe(true);
    const terminal = new RunTerminal({ cols: 100, rows: 30 });
    const feed = new InputFeed('terminal');
    const script =
      'tty; stty size; for f in 0 1 2; do [ -t $f ] && echo "fd$f tty"; done; echo "TERM=$TERM"; ' +
      'ps -o sid= -o pgid= -o tty= -p $$; echo "pid $$"; ls /proc/$$/fd';
    const o = await inputRun(w, script, feed, terminal).done;
    const lines = o.stdout.toString().split('\r\n');
    expect(lines[0]).toMatch(/^\/dev\/pts\/\d+$/);
    expect(lines.slice(1, 5)).toEqual(['30 100', 'fd0 tty', 'fd1 tty', 'fd2 tty']);
    expect(lines[5]).toBe('TERM=xterm-256color');
    const pid = /pid (\d+)/.exec(o.stdout.toString())?.[1];
    expect(lines[6]?.trim().split(/\s+/)).toEqual([pid, pid, lines[0]!.slice(5)]);
    // The run holds the terminal only (no channel, no connection, no master); 200 and above are the test runner's.
    const fds = lines.slice(8).join(' ').trim().split(/\s+/);
    expect(fds.filter((f) => Number(f) < 200)).toEqual(['0', '1', '2']);
    expect(o.stderr.length).toBe(0);
    expect(o.completion).toMatchObject({ state: 'exited', exit_status: 0 });
  }, 30_000);

  it('keeps the terminal up until the run has ended: one that closes it first is not hung up (SIGHUP)', async () => {
    const w = walls(native!);
    const script = 'echo bye; exec 0<&- 1>&- 2>&-; sleep 0.5; exit 7';
    const o = await inputRun(w, script, new InputFeed('terminal'), new RunTerminal({ cols: 80, rows: 24 })).done;
    expect(o.stdout.toString()).toBe('bye\r\n');
    expect(o.completion).toMatchObject({ state: 'exited', exit_status: 7 });
  }, 30_000);

  it('takes input through the terminal (echoed), and ^D ends a cat with 0; echo off shows', async () => {
    const w = walls(native!);
    const terminal = new RunTerminal({ cols: 80, rows: 24 });
    const feed = new InputFeed('terminal');
    const run = inputRun(w, 'stty -echo; read -r secret; stty echo; echo "len ${#secret}"; exec cat', feed, terminal);
    await waitUntil(
      () => {
        terminal.checkEcho();
        return !terminal.echo;
      },
      10_000,
      'echo off',
    );
    feed.take(Buffer.from('hunter2\r'), false);
    await waitUntil(() => run.stdout.contents().toString().includes('len 7'), 10_000, 'the line read');
    feed.take(Buffer.from('hello\r'), false);
    await waitUntil(() => /hello\r\n.*hello\r\n/s.test(run.stdout.contents().toString()), 10_000, "cat's copy");
    feed.take(Buffer.from('\x04'), false);
    const o = await run.done;
    expect(o.stdout.toString()).not.toContain('hunter2');
    expect(o.completion).toMatchObject({ state: 'exited', exit_status: 0 });
  }, 30_000);
});

describe.skipIf(!wallsUsable)('input terminal in the walls, the perl waiter', () => {
  it('is refused, saying that the C waiter is needed', () => {
    const w = walls(TEST_WAITERS[1]!);
    expect(w.terminals).toMatch(/needs the C waiter .* uses the perl one \(tested\)/);
  });
});
