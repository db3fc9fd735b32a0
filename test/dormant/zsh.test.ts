// A zsh pane's helper goes dormant after TMUX_RUN_IDLE and the next call starts it again from the
// shell's own side (its line editor's handler on the request FIFO), with the same generations and
// the shell's cwd and environment as they are then; what keeps it awake, and what ends it.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enroll, filesIn, helperChildren, listed, recordOf } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, listedPanes, startMcp } from '../../lab/mcp.js';
import { waitUntil } from '../../lab/waiting.js';
import { runIdOf, start, wait } from '../long/support.js';
import { explain, helperStarts, IDLE_S, waitDormant } from './support.js';
import { expectExecNewGeneration, expectRevokedNotWoken } from '../../lab/dormant.js';

const scope = useServer({ env: { TMUX_RUN_IDLE: IDLE_S } });

describe('a dormant zsh pane', () => {
  it('goes dormant, is listed so, and a run wakes it with the cwd and environment of now', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const first = await enroll(pane);
    const dormant = await waitDormant(pane);
    expect(dormant).toMatchObject({ generation: first.generation, helper_pid: null, state: 'dormant' });
    await pane.run('mkdir -p wd/sub && cd wd/sub && export DORMANT_VAR=later');
    const mcp = await startMcp(server);
    try {
      // A listing never wakes it.
      expect((await listedPanes(mcp.client)).find((p) => p.pane_id === pane.id)?.state).toBe('dormant');
      expect(helperChildren(await pane.shellPid())).toHaveLength(0);
      const r = await callRun(mcp.client, first, 'pwd; echo "$DORMANT_VAR"');
      expect(r.isError, JSON.stringify(r.structured)).toBe(false);
      expect(r.structured.data.stdout.data).toBe(`${server.home}/wd/sub\nlater\n`);
      expect(r.structured.data.authorization.enrollment_generation).toBe(first.enrollment_generation);
      expect(helperChildren(await pane.shellPid())).toHaveLength(1);
      const awake = (await listed(server.registryDir)).find((p) => p.pane_id === pane.id);
      expect(awake).toMatchObject({
        generation: first.generation,
        state: 'idle',
        mode: 'auto',
        sleeps_after: `${IDLE_S}s`,
      });
      expect(awake?.helper_pid).not.toBe(first.helper_pid);
      expect(recordOf(server, first).secret).toBe(recordOf(server, awake!).secret);
      expect((await callRun(mcp.client, first, 'echo again')).structured.data.stdout.data).toBe('again\n');
      // Nothing of it on the screen or in the history.
      expect(await pane.capture()).not.toContain('DORMANT_VAR"');
      expect(await pane.run('fc -ln -1')).not.toContain('pwd;');
    } finally {
      await mcp.close();
    }
  });

  it('runs called at once while it wakes go in call order; two brokers waking it at once start one helper', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await waitDormant(pane);
    const a = await startMcp(server);
    try {
      const calls = ['1', '2', '3'].map((n) => callRun(a.client, listing, `echo ${n} >> order; echo ${n}`));
      for (const r of await Promise.all(calls))
        expect(r.isError, JSON.stringify(r.structured) + (r.isError ? await explain(pane) : '')).toBe(false);
      expect(readFileSync(join(server.home, 'order'), 'utf8')).toBe('1\n2\n3\n');
    } finally {
      await a.close();
    }
    await waitDormant(pane);
    const [b, c] = [await startMcp(server), await startMcp(server)];
    try {
      const both = await Promise.all([callRun(b.client, listing, 'echo b'), callRun(c.client, listing, 'echo c')]);
      const why = both.some((r) => r.isError)
        ? JSON.stringify(both.map((r) => r.structured)) + (await explain(pane))
        : '';
      expect(
        both.map((r) => r.structured.data?.stdout?.data),
        why,
      ).toEqual(['b\n', 'c\n']);
      expect(helperChildren(await pane.shellPid())).toHaveLength(1);
      expect(helperStarts(server.registryDir, listing)).toBe(3); // the first, and one for each wake
    } finally {
      await b.close();
      await c.close();
    }
  });

  it('in ask mode set while dormant, the woken helper asks the person first', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await waitDormant(pane);
    await pane.run('TMUX_RUN_APPROVE=ask');
    const mcp = await startMcp(server);
    try {
      const call = callRun(mcp.client, listing, 'echo approved');
      await pane.waitFor((s) => s.includes('asks to run a script in this shell'), 30_000);
      await pane.type('y');
      const r = await call;
      expect(r.isError, JSON.stringify(r.structured)).toBe(false);
      expect(r.structured.data.stdout.data).toBe('approved\n');
    } finally {
      await mcp.close();
    }
  });

  it('lists the modes of its last prompt while dormant (the shell writes them itself, 0600), never waking', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await waitDormant(pane);
    const shown = async (mode: string, sandbox: string): Promise<void> => {
      await waitUntil(
        async () => {
          const p = (await listed(server.registryDir)).find((l) => l.pane_id === pane.id);
          return p?.state === 'dormant' && p.mode === mode && p.sandbox === sandbox;
        },
        10_000,
        `pane listed dormant, ${mode} ${sandbox}`,
      );
    };
    await pane.run('TMUX_RUN_APPROVE=ask TMUX_RUN_SANDBOX=read-only');
    await shown('ask', 'read-only');
    const modes = recordOf(server, listing).channel + '.mode';
    expect(statSync(modes).mode & 0o777).toBe(0o600);
    await pane.run('TMUX_RUN_APPROVE=auto TMUX_RUN_SANDBOX=nowhere');
    await shown('auto', 'invalid');
    await pane.run('unset TMUX_RUN_APPROVE TMUX_RUN_SANDBOX');
    await shown('auto', 'off');
    expect(helperChildren(await pane.shellPid())).toHaveLength(0);
    expect(helperStarts(server.registryDir, listing)).toBe(1);
  });

  it('never goes dormant with a run running, nor with its result held; then does', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    const mcp = await startMcp(server);
    try {
      const s = await start(mcp.client, listing, 'sleep 5; echo held');
      const id = runIdOf(s);
      const helper = helperChildren(await pane.shellPid());
      expect(helper).toHaveLength(1);
      // Twice the idle time with the run running, then more with its result held.
      await new Promise((r) => setTimeout(r, 7000));
      expect(helperChildren(await pane.shellPid())).toEqual(helper);
      expect((await listed(server.registryDir)).find((p) => p.pane_id === pane.id)?.state).not.toBe('dormant');
      const done = await wait(mcp.client, listing, id, 5000);
      expect(done.result?.stdout?.data ?? done.data?.stdout?.data).toBe('held\n');
      expect(helperChildren(await pane.shellPid())).toEqual(helper);
    } finally {
      await mcp.close();
    }
  });

  it('a dormant pane whose shell exits leaves nothing', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await waitDormant(pane);
    const base = recordOf(server, listing).channel.split('/').pop()!;
    await pane.kill();
    await waitUntil(
      async () => !(await listed(server.registryDir)).some((p) => p.pane_id === listing.pane_id),
      10_000,
      'the exited pane out of the listing',
    );
    const mine = filesIn(server.registryDir).filter(
      (f) => f.startsWith(listing.enrollment_generation) || f.startsWith(base),
    );
    expect(mine).toEqual([]);
  });

  it('a revoked dormant pane cannot be woken', async () => {
    const pane = await scope.server.newPane();
    const listing = await enroll(pane);
    await waitDormant(pane);
    await expectRevokedNotWoken(pane, listing, 'print -r -- "${_tmux_run_generation:-none}"');
  });

  it('exec zsh in a dormant pane is a new generation; the old one is never woken into it', async () => {
    const pane = await scope.server.newPane();
    const old = await enroll(pane);
    await waitDormant(pane);
    await expectExecNewGeneration(pane, old, 'exec zsh -i', enroll);
  });

  it('a wake that fails is said once in the pane and refused wake_failed, nothing run', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await waitDormant(pane);
    await pane.run('TMUX_RUN_NODE=/bin/false');
    const mcp = await startMcp(server);
    try {
      const r = await callRun(mcp.client, listing, 'touch woke-ran');
      expect(r.isError).toBe(true);
      expect(r.structured.error).toMatchObject({ code: 'wake_failed', delivery: 'not_sent' });
      expect(r.structured.error.message).toContain('nothing was run');
      expect(existsSync(join(server.home, 'woke-ran'))).toBe(false);
      const screen = await pane.waitFor((s) => s.includes('could not be started again'), 10_000);
      expect(screen.split('could not be started again').length - 1).toBe(1);
      expect((await callRun(mcp.client, listing, 'touch woke-ran')).structured.error?.code).toBe('not_enrolled');
      expect((await pane.capture()).split('could not be started again').length - 1).toBe(1);
    } finally {
      await mcp.close();
    }
  });

  it('TMUX_RUN_IDLE=off keeps the helper up; a bad value is said once and the default used', async () => {
    const server = scope.server;
    const off = await server.newPane({ env: { TMUX_RUN_IDLE: 'off' } });
    const bad = await server.newPane({ env: { TMUX_RUN_IDLE: 'soon' } });
    await enroll(off);
    await enroll(bad);
    await bad.waitFor((s) => s.includes('TMUX_RUN_IDLE="soon" is not seconds'), 10_000);
    const helpers = [helperChildren(await off.shellPid()), helperChildren(await bad.shellPid())];
    await new Promise((r) => setTimeout(r, 3 * Number(IDLE_S) * 1000));
    expect([helperChildren(await off.shellPid()), helperChildren(await bad.shellPid())]).toEqual(helpers);
    const states = (await listed(server.registryDir)).filter((p) => [off.id, bad.id].includes(p.pane_id));
    expect(states.map((p) => p.state)).toEqual(['idle', 'idle']);
    // Listings say it: off never sleeps, the bad value's default is ten minutes.
    expect(states.map((p) => p.sleeps_after)).toEqual(['never', '10m']);
    expect((await bad.capture()).split('TMUX_RUN_IDLE="soon"').length - 1).toBe(1);
  });
});
