// What kept-alive walls could get wrong (issue 23): a pane's runs share one sandbox per policy, so
// what one run leaves must still be gone before the next starts, the walls must follow the policy
// at the very next run (a cd into another tree, a changed TMUX_RUN_SANDBOX_HIDE, a repository that
// a run created), the non-UTF-8 cwd and export must reach the run as bytes, and a SIGKILLed helper
// must leave no waiter and no run.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helperChildren } from '../../lab/enrollment.js';
import { killHard } from '../../lab/processes.js';
import { waitUntil } from '../../lab/waiting.js';
import { INNER_SOCKET } from '../../helper/walls/waiter.js';
import { processesWith, ran, sleepsOf, startRun, uniqueSleep, useSandboxFixture } from './support.js';

const fx = useSandboxFixture();

/** The processes of kept-alive walls (bwrap, its waiter, the runs' reapers): their argv names the socket inside. */
const waiters = (): number[] => processesWith(INNER_SOCKET);

describe('kept-alive walls, run after run', () => {
  it('a process left by one run (setsid, nohup, a double fork) is gone before the next run starts', async () => {
    await fx().sandbox('workspace', fx().project());
    const [a, b, c] = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
    ran(await fx().run(`setsid sleep ${a} & nohup sleep ${b} >/dev/null 2>&1 & (sleep ${c} &); echo left`));
    // Gone on the host as soon as the run's result is back, and not seen by the next run in the same walls.
    expect([a, b, c].flatMap(sleepsOf)).toEqual([]);
    const d = ran(await fx().run('cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" " "; echo'));
    for (const s of [a, b, c]) expect(d.stdout.data).not.toContain(`sleep ${s}`);
  });

  it('follows a cd into another tree at the very next run', async () => {
    const [one, two] = [fx().project('one'), fx().project('two')];
    await fx().sandbox('workspace', one);
    expect(ran(await fx().run('touch mine && echo ok')).stdout.data).toBe('ok\n');
    await fx().type(`cd '${two}'`);
    const d = ran(await fx().run(`touch mine; touch '${one}/not-mine' 2>/dev/null; echo "other $?"`));
    expect(d.stdout.data).toBe('other 1\n');
    expect([existsSync(join(two, 'mine')), existsSync(join(one, 'not-mine'))]).toEqual([true, false]);
  });

  it('follows a changed TMUX_RUN_SANDBOX_HIDE at the very next run', async () => {
    const proj = fx().project();
    const secret = join(fx().server.home, 'secret-dir');
    mkdirSync(secret, { recursive: true });
    writeFileSync(join(secret, 'note'), 'seen\n');
    await fx().sandbox('workspace', proj);
    const look = `cat '${secret}/note' 2>/dev/null || echo hidden`;
    expect(ran(await fx().run(look)).stdout.data).toBe('seen\n');
    await fx().type(`TMUX_RUN_SANDBOX_HIDE='${secret}'`);
    expect(ran(await fx().run(look)).stdout.data).toBe('hidden\n');
    await fx().type('unset TMUX_RUN_SANDBOX_HIDE');
    expect(ran(await fx().run(look)).stdout.data).toBe('seen\n');
  });

  it('walls a repository created by one run for the next (its .git/hooks read-only)', async () => {
    const proj = fx().project();
    await fx().sandbox('workspace', proj);
    ran(
      await fx().run(
        'mkdir -p sub/.git/hooks sub/.git/objects sub/.git/refs && echo "ref: refs/heads/main" > sub/.git/HEAD',
      ),
    );
    const d = ran(
      await fx().run('(echo planted > sub/.git/hooks/pre-commit) 2>/dev/null && echo planted || echo refused'),
    );
    expect(d.stdout.data).toBe('refused\n');
    expect(existsSync(join(proj, 'sub', '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('hands a non-UTF-8 cwd and export to the run as bytes, walled around that exact directory', async () => {
    const proj = fx().project();
    await fx().type(
      `cd '${proj}' && mkdir $'lat\\xe9n' && cd $'lat\\xe9n' && export BAD=$'\\xff\\xfe ok' && TMUX_RUN_SANDBOX=workspace`,
    );
    try {
      const d = ran(
        await fx().run(
          'pwd | od -An -tx1; printf %s "$BAD" | od -An -tx1 >&2; touch here; touch ../beside 2>/dev/null; echo "beside $?"',
        ),
      );
      const hex = (b: Buffer): string => [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ');
      const out = (d.stdout.data as string).split('beside')[0]!.trim().split(/\s+/).join(' ');
      expect(out).toBe(hex(Buffer.from(`${proj}/lat\xe9n\n`, 'latin1')));
      expect((d.stderr.data as string).trim().split(/\s+/).join(' ')).toBe('ff fe 20 6f 6b');
      expect(d.stdout.data).toContain('beside 1');
      expect(existsSync(Buffer.from(`${proj}/lat\xe9n/here`, 'latin1'))).toBe(true);
      expect(existsSync(join(proj, 'beside'))).toBe(false);
    } finally {
      await fx().type(`unset BAD; cd '${proj}'`);
    }
  });
});

describe('kept-alive walls and their helper', () => {
  it('a SIGKILLed helper leaves no waiter and no run', async () => {
    const { pane: extra, listing } = await fx().extraPane();
    try {
      await extra.run(`cd '${fx().project()}' && TMUX_RUN_SANDBOX=workspace`);
      const before = new Set(waiters());
      const hold = uniqueSleep();
      const s = await startRun(
        fx().mcp.client,
        listing,
        `setsid sleep ${hold} </dev/null >/dev/null 2>&1 & sleep ${hold}`,
        {
          wait_ms: 0,
          background: true,
        },
      );
      expect(s.pending, JSON.stringify(s)).toBeDefined();
      await waitUntil(() => sleepsOf(hold).length === 2 || undefined, 10_000, 'the sandboxed sleeps to start');
      const mine = waiters().filter((p) => !before.has(p));
      expect(mine.length).toBeGreaterThan(0);
      const [helperPid] = helperChildren(await extra.shellPid());
      killHard(helperPid!);
      await waitUntil(
        () => (sleepsOf(hold).length === 0 && waiters().every((p) => !mine.includes(p))) || undefined,
        10_000,
        'the walls and the run to end with their helper',
      );
    } finally {
      await extra.kill();
    }
  });
});
