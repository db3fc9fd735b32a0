// The sandbox fails closed: a value the person did not mean (a typo, `on`), a relative or
// forbidden writable path, or a machine without bwrap refuses the run with sandbox_unavailable
// (observed, effects none), and the script, which would leave a marker file, never runs.
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../lab/cli.js';
import { productEnv } from '../../lab/product.js';
import { findExecutable, STANDARD_PATH } from '../../lab/tmux-command.js';
import { sha256 } from '../mcp/support.js';
import { expectSandboxRefusal, fresh, ran, type SandboxFixture, useSandboxFixture } from './support.js';

/** dir, made when missing (a TMUX_RUN_SANDBOX_WRITE path that does not exist grants nothing and is skipped). */
function existingDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** A script that leaves proof of having run: a marker in the cwd (writable in every sandbox). */
async function refusedWithNothingRun(fx: SandboxFixture, cwd: string): Promise<Record<string, any>> {
  const marker = join(cwd, fresh('ran'));
  const script = `touch '${marker}'; echo ran`;
  const e = expectSandboxRefusal(await fx.run(script));
  expect(existsSync(marker), `${marker} must not exist`).toBe(false);
  // No start entry in the audit trail for it either: it never ran.
  expect(fx.audit().filter((a) => a.event === 'start' && a.script_digest === sha256(script))).toEqual([]);
  // Its refusal is there, saying which walls were asked for and why they could not be built.
  const refusals = fx.audit().filter((a) => a.event === 'refused' && a.script_digest === sha256(script));
  expect(refusals).toHaveLength(1);
  expect(refusals[0]!.outcome).toBe('sandbox_unavailable');
  expect(typeof refusals[0]!.sandbox).toBe('string');
  expect(refusals[0]!.reason).toMatch(/\w{10}/);
  expect(e.message.startsWith(refusals[0]!.reason)).toBe(true);
  return e;
}

describe('values the sandbox does not know', () => {
  const fx = useSandboxFixture();

  it.each(['Workspace', 'on', 'true', 'workspace ', 'WORKSPACE+NET', 'readonly', 'workspace,net'])(
    'TMUX_RUN_SANDBOX=%j refuses every run, and nothing runs',
    async (value) => {
      const proj = fx().project();
      await fx().sandbox(value, proj);
      await refusedWithNothingRun(fx(), proj);
      // The next run is refused the same way: a typo never runs unconfined.
      await refusedWithNothingRun(fx(), proj);
      expect(
        fx()
          .audit()
          .filter((a) => a.event === 'refused')
          .at(-1)!.sandbox,
      ).toBe(value);
      // And the person sees it: tmux_enrolled_panes says the pane's sandbox is invalid.
      expect((await fx().listedWhen((p) => p.sandbox === 'invalid')).sandbox).toBe('invalid');
    },
  );

  it('in ask mode too: an unknown value is refused sandbox_unavailable without asking the person', async () => {
    const proj = fx().project();
    await fx().sandbox('Workspace', proj);
    await fx().type('TMUX_RUN_APPROVE=ask');
    try {
      const e = await refusedWithNothingRun(fx(), proj);
      expect(e.code).toBe('sandbox_unavailable');
      expect(await fx().pane.capture()).not.toContain('Run it?');
    } finally {
      await fx().type('unset TMUX_RUN_APPROVE');
    }
  });

  it('tmux-run doctor names a pane whose TMUX_RUN_SANDBOX is not known, as a warning', async () => {
    // A typo refuses every agent's run there, and nothing in the pane says so: doctor, which
    // "checks the whole chain and says what to fix", passed it without a word.
    const proj = fx().project();
    await fx().sandbox('Workspace', proj);
    const pane = await fx().listedWhen((p) => p.sandbox === 'invalid');
    const r = await runCli(['doctor', '--json'], productEnv(fx().server));
    expect(r.code, r.stdout).toBe(0);
    const check = (JSON.parse(r.stdout) as Array<Record<string, any>>).find((c) => c.check === 'enrollments')!;
    expect(check).toMatchObject({ ok: true, warning: true });
    expect(check.detail).toContain(`${pane.pane_id} sets a TMUX_RUN_SANDBOX that tmux-run does not know`);
    expect(check.fix).toMatch(/set TMUX_RUN_SANDBOX to off, workspace, workspace\+net or read-only/);
  });

  it.each<[string, (fx: SandboxFixture, proj: string) => string, string]>([
    ['a relative TMUX_RUN_SANDBOX_WRITE', () => `TMUX_RUN_SANDBOX_WRITE=build/out`, 'build/out'],
    ['a relative entry in a TMUX_RUN_SANDBOX_WRITE array', (_f, p) => `TMUX_RUN_SANDBOX_WRITE=('${p}' cache)`, 'cache'],
    ['a relative entry in a colon list', (_f, p) => `TMUX_RUN_SANDBOX_WRITE='${p}:rel/dir'`, 'rel/dir'],
    ['a relative TMUX_RUN_SANDBOX_HIDE', () => `TMUX_RUN_SANDBOX_HIDE=secrets`, 'secrets'],
    ['TMUX_RUN_SANDBOX_WRITE=~', (f) => `TMUX_RUN_SANDBOX_WRITE='${f.server.home}'`, ''],
    ['TMUX_RUN_SANDBOX_WRITE=~/.ssh (hidden)', (f) => `TMUX_RUN_SANDBOX_WRITE='${f.server.home}/.ssh'`, '.ssh'],
    ['TMUX_RUN_SANDBOX_WRITE holding the registry', (f) => `TMUX_RUN_SANDBOX_WRITE='${f.server.baseDir}'`, ''],
    ['TMUX_RUN_SANDBOX_WRITE=the registry', (f) => `TMUX_RUN_SANDBOX_WRITE='${f.server.registryDir}'`, ''],
    [
      'TMUX_RUN_SANDBOX_WRITE holding the audit trail',
      (f) => `TMUX_RUN_SANDBOX_WRITE='${existingDir(f.server.env.XDG_STATE_HOME ?? '/nonexistent')}'`,
      '',
    ],
    [
      'TMUX_RUN_SANDBOX_WRITE holding git’s config',
      (f) => `TMUX_RUN_SANDBOX_WRITE='${existingDir(`${f.server.home}/.config`)}'`,
      '',
    ],
  ])('%s refuses the run (workspace), and nothing runs', async (_what, setting, named) => {
    const proj = fx().project();
    await fx().type(`cd '${proj}' && TMUX_RUN_SANDBOX=workspace && ${setting(fx(), proj)}`);
    try {
      const e = await refusedWithNothingRun(fx(), proj);
      if (named !== '') expect(e.message).toContain(named);
    } finally {
      await fx().type('unset TMUX_RUN_SANDBOX_WRITE TMUX_RUN_SANDBOX_HIDE');
    }
    // Set right, the same pane runs sandboxed again.
    expect(ran(await fx().run('echo ok')).stdout.data).toBe('ok\n');
  });

  it('TMUX_RUN_BWRAP naming a file that is not there (a person’s setting) refuses, and nothing runs', async () => {
    const { pane: extra, listing } = await fx().extraPane({ env: { TMUX_RUN_BWRAP: '/nonexistent/bwrap' } });
    try {
      const proj = fx().project();
      await extra.run(`cd '${proj}' && TMUX_RUN_SANDBOX=workspace`);
      const marker = join(proj, fresh('ran'));
      const r = await fx().mcp.client.callTool({
        name: 'tmux_run',
        arguments: {
          target: { kind: 'pane', id: listing.pane_id, generation: listing.generation },
          script: `touch '${marker}'`,
        },
      });
      expectSandboxRefusal(r.structuredContent as Record<string, any>);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await extra.kill();
    }
  });
});

// Every place the product could find bwrap at (its own list, src/core/os/bwrap.ts), where present.
const BWRAP_PLACES = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap', '/usr/sbin/bwrap'];
const bwrap = findExecutable('bwrap', STANDARD_PATH);

/**
 * A machine without bubblewrap, made honestly on one that has it: the tmux server (and so every
 * pane, shell and helper it starts) lives in a mount namespace where each place bwrap could be
 * holds /dev/null instead, made with bwrap itself (`--dev-bind / /`: the rest is the real
 * machine, same pids, same network). Without bwrap on the machine no launcher is needed.
 */
function withoutBwrap(): string[] {
  if (bwrap === undefined) return [];
  const places = [...new Set(BWRAP_PLACES.filter((p) => existsSync(p)).map((p) => realpathSync(p)))];
  return [bwrap, '--dev-bind', '/', '/', ...places.flatMap((p) => ['--ro-bind', '/dev/null', p]), '--'];
}

describe('a machine without bwrap', () => {
  const fx = useSandboxFixture({ launcher: withoutBwrap() });

  it('the pane really has no bwrap (the test is not fooling itself)', async () => {
    await fx().sandbox('off', fx().project());
    const d = ran(
      await fx().run(
        BWRAP_PLACES.map((p) => `test -x ${p} && test -f ${p} && echo "found ${p}"`).join('\n') + '\ntrue',
      ),
    );
    expect(d.stdout.data).toBe('');
  });

  it.each(['workspace', 'workspace+net', 'read-only'])(
    'TMUX_RUN_SANDBOX=%s is sandbox_unavailable, saying to install bubblewrap, and nothing runs',
    async (mode) => {
      const proj = fx().project();
      await fx().sandbox(mode, proj);
      const e = await refusedWithNothingRun(fx(), proj);
      expect(e.message).toMatch(/bubblewrap|bwrap/);
    },
  );

  it('with the sandbox off, runs go on as before', async () => {
    await fx().sandbox('off', fx().project());
    expect(ran(await fx().run('echo plain')).stdout.data).toBe('plain\n');
  });
});
