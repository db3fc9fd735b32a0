// Dormant bash and fish panes: the helper goes after TMUX_RUN_IDLE and the next call has the shell
// start it again from its WINCH handler (BASE.wake and SIGWINCH, as the helper reaches it), with
// the same generations and the shell's cwd and environment as they are then.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesIn, helperChildren, listed, recordOf } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, listedPanes, startMcp } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import type { TmuxServer } from '../../lab/server.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { waitUntil } from '../../lab/waiting.js';
import { bashPane, enrollBash } from '../bash/support.js';
import { enrollFish, FISH_HARNESS, fishPane } from '../fish/support.js';
import { DEFAULT_PROMPT } from '../../lab/shells.js';
import { expectExecNewGeneration, expectRevokedNotWoken } from '../../lab/dormant.js';
import { helperStarts, IDLE_S, waitDormant } from './support.js';

const scope = useServer({ env: { TMUX_RUN_IDLE: IDLE_S } });

interface ShellCase {
  name: 'bash' | 'fish';
  open: (server: TmuxServer) => Promise<Pane>;
  enroll: (pane: Pane) => Promise<PaneListing>;
  /** A command line that sets a shell parameter (not exported). */
  set: (name: string, value: string) => string;
  exportVar: (name: string, value: string) => string;
  /** What the shell says about itself being enrolled or not. */
  generationVar: string;
  /** A command line that replaces the shell with a new one of its kind (`exec`), as the harness starts it. */
  execSelf: (server: TmuxServer) => string;
}

let execs = 0;

const SHELLS: ShellCase[] = [
  {
    name: 'bash',
    open: (s) => bashPane(s),
    enroll: (p) => enrollBash(p),
    set: (n, v) => `${n}=${v}`,
    exportVar: (n, v) => `export ${n}=${v}`,
    generationVar: 'printf "%s\\n" "${_tmux_run_generation:-none}"',
    execSelf: (server) => {
      const rc = join(server.home, `bashrc.exec-${++execs}`);
      writeFileSync(rc, `PS1=${JSON.stringify(DEFAULT_PROMPT)}\n`, { mode: 0o600 });
      return `exec bash --noprofile --rcfile ${rc} -i`;
    },
  },
  {
    name: 'fish',
    open: (s) => fishPane(s),
    enroll: (p) => enrollFish(p),
    set: (n, v) => `set -g ${n} ${v}`,
    exportVar: (n, v) => `set -gx ${n} ${v}`,
    generationVar: 'if set -q _tmux_run_generation[1]; echo $_tmux_run_generation; else; echo none; end',
    execSelf: (server) => {
      const config = join(server.home, `config-exec-${++execs}.fish`);
      writeFileSync(config, FISH_HARNESS, { mode: 0o600 });
      return `exec fish --no-config -i -C 'source ${config}'`;
    },
  },
];

describe.each(SHELLS)('a dormant $name pane', (sh) => {
  it('goes dormant, and a run wakes it with the cwd and environment of now, in call order; two brokers at once start one helper', async () => {
    const server = scope.server;
    const pane = await sh.open(server);
    const first = await sh.enroll(pane);
    expect(await waitDormant(pane)).toMatchObject({ generation: first.generation, helper_pid: null, state: 'dormant' });
    await pane.run(`mkdir -p ${sh.name}-wd; cd ${sh.name}-wd; ${sh.exportVar('DORMANT_VAR', 'later')}`);
    const a = await startMcp(server);
    try {
      expect((await listedPanes(a.client)).find((p) => p.pane_id === pane.id)?.state).toBe('dormant');
      const calls = ['1', '2', '3'].map((n) =>
        callRun(a.client, first, `echo ${n} >> order; pwd; echo "$DORMANT_VAR"`),
      );
      const results = await Promise.all(calls);
      for (const r of results) expect(r.isError, JSON.stringify(r.structured)).toBe(false);
      expect(results[0]!.structured.data.stdout.data).toBe(`${server.home}/${sh.name}-wd\nlater\n`);
      expect(readFileSync(join(server.home, `${sh.name}-wd`, 'order'), 'utf8')).toBe('1\n2\n3\n');
      // (The status follows the last reply within a moment.)
      const awake = await waitUntil(
        async () => (await listed(server.registryDir)).find((p) => p.pane_id === pane.id && p.state === 'idle'),
        10_000,
        'the woken pane listed idle',
      );
      expect(awake.generation).toBe(first.generation);
      expect((await callRun(a.client, first, 'echo again')).structured.data.stdout.data).toBe('again\n');
    } finally {
      await a.close();
    }
    // Dormant again (the broker's kept link went with it); two brokers wake it at once: one helper.
    await waitDormant(pane);
    const [b, c] = [await startMcp(server), await startMcp(server)];
    try {
      const both = await Promise.all([callRun(b.client, first, 'echo b'), callRun(c.client, first, 'echo c')]);
      expect(both.map((r) => r.structured.data?.stdout?.data)).toEqual(['b\n', 'c\n']);
      expect(helperChildren(await pane.shellPid())).toHaveLength(1);
      expect(helperStarts(server.registryDir, first)).toBe(3);
    } finally {
      await b.close();
      await c.close();
    }
  });

  it('a revoked dormant pane cannot be woken; one whose shell exits leaves nothing', async () => {
    const server = scope.server;
    const pane = await sh.open(server);
    const listing = await sh.enroll(pane);
    await waitDormant(pane);
    await expectRevokedNotWoken(pane, listing, sh.generationVar);
    const gone = await sh.open(server);
    const second = await sh.enroll(gone);
    await waitDormant(gone);
    const base = recordOf(server, second).channel.split('/').pop()!;
    await gone.kill();
    await waitUntil(
      async () => !(await listed(server.registryDir)).some((p) => p.pane_id === second.pane_id),
      10_000,
      'the exited pane out of the listing',
    );
    expect(
      filesIn(server.registryDir).filter((f) => f.startsWith(second.enrollment_generation) || f.startsWith(base)),
    ).toEqual([]);
  });

  it(`exec ${sh.name} in a dormant pane is a new generation; the old one is never woken into it`, async () => {
    const pane = await sh.open(scope.server);
    const old = await sh.enroll(pane);
    await waitDormant(pane);
    await expectExecNewGeneration(pane, old, sh.execSelf(scope.server), sh.enroll);
  });

  it('a wake that fails is said once in the pane and refused wake_failed, nothing run', async () => {
    const server = scope.server;
    const pane = await sh.open(server);
    const listing = await sh.enroll(pane);
    await waitDormant(pane);
    await pane.run(sh.set('TMUX_RUN_NODE', '/bin/false'));
    const mcp = await startMcp(server);
    try {
      const r = await callRun(mcp.client, listing, 'touch woke-ran');
      expect(r.structured.error).toMatchObject({ code: 'wake_failed', delivery: 'not_sent' });
      expect(existsSync(join(server.home, 'woke-ran'))).toBe(false);
      // bash says it before its next prompt (a trap cannot print); fish at once.
      await pane.run('true');
      await pane.run('true');
      const screen = await pane.capture();
      expect(screen.split('could not be started again').length - 1, screen).toBe(1);
      expect((await callRun(mcp.client, listing, 'touch woke-ran')).structured.error?.code).toBe('not_enrolled');
    } finally {
      await mcp.close();
    }
  });
});
