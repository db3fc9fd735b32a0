// A fish pane's enrollment from start to end, as a person lives it: refusals that leave nothing,
// source twice, tmux_run_unenroll, revoke, a SIGKILLed helper (a clear error; the shell says so at
// its next prompt), a closed pane, `exec fish` (a new generation; the old one refused), ask mode
// (approval_unavailable, never a run unasked), the sandbox's walls and the notices.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../mcp/support.js';
import { filesIn, helperChildren, helpersIn, listed } from '../../lab/enrollment.js';
import { processAlive } from '../../lab/processes.js';
import { runCli } from '../../lab/cli.js';
import { productEnv } from '../../lab/product.js';
import { waitUntil } from '../../lab/waiting.js';
import { enrollFish, fishFixture, fishPane, FISH_SNIPPET, FISH_SOURCE, type FishFixture } from './support.js';

let fx: FishFixture;
beforeAll(async () => {
  fx = await fishFixture();
});
afterAll(async () => {
  await fx?.close();
});

const NOT_ENROLLED = 'tmux-run: not enrolled:';

describe('a fish pane enrolls and ends', () => {
  it('refuses, leaving nothing: not interactive, outside tmux, an unsafe directory, no node', async () => {
    const before = filesIn(fx.server.registryDir);
    const pane = await fishPane(fx.server);
    const cases: [string, RegExp][] = [
      [`env -u TMUX -u TMUX_PANE fish --no-config -i -C 'source ${FISH_SNIPPET}; exit'`, /not running inside tmux/],
      [
        `TMUX_RUN_NODE=/nonexistent/node fish --no-config -i -C 'source ${FISH_SNIPPET}; exit'`,
        /TMUX_RUN_NODE=\/nonexistent\/node is not a program/,
      ],
    ];
    for (const [cmd, why] of cases) {
      const out = (await pane.run(cmd)).split('\n').filter((l) => l.startsWith(NOT_ENROLLED));
      expect(out, cmd).toHaveLength(1);
      expect(out[0], cmd).toMatch(why);
    }
    // fish cannot read a mode without a fork: the helper checks the directory and refuses, said at
    // a prompt after.
    await pane.run('mkdir -m 755 $HOME/open; set -g TMUX_RUN_DIR $HOME/open');
    await pane.run(FISH_SOURCE);
    const screen = await pane.waitFor((t) => /open to other users/.test(t), 10_000);
    expect(screen.replace(/\n/g, '')).toMatch(
      /tmux-run: not enrolled: \S+\/open is open to other users \(mode 755\); run: chmod 700 '\S+\/open'/,
    );
    await pane.run('set -e TMUX_RUN_DIR');
    // A non-interactive fish (a `fish -c` a tool runs reads config.fish): the bare source line
    // prints nothing, defines nothing, and returns 0.
    const quiet = `fish --no-config -c 'source ${FISH_SNIPPET}; echo status $status; functions -a | string match -e tmux_run | count; set -n | string match -e tmux_run | count'`;
    expect(await pane.run(`${quiet} 2>&1`)).toBe('status 0\n0\n0');
    expect(filesIn(fx.server.registryDir)).toEqual(before);
    expect(filesIn(join(fx.server.home, 'open'))).toEqual([]);
    // Sourced by another shell: refused before any fish is parsed.
    expect(await pane.run(`bash -c 'source ${FISH_SNIPPET}; echo status $?'`)).toBe(
      `${NOT_ENROLLED} this shell is not fish; tmux-run.fish needs an interactive fish 3.4 or newer\nstatus 1`,
    );
    await pane.kill();
  });

  it('is harmless sourced twice, and tmux_run_unenroll ends it, leaving nothing', async () => {
    const pane = await fishPane(fx.server);
    const listing = await enrollFish(pane);
    expect(listing).toMatchObject({ shell: 'fish', editor_check: 'screen' });
    expect(await pane.run(FISH_SOURCE)).toBe(
      `tmux-run: pane ${pane.id} is already enrolled (generation ${listing.generation})`,
    );
    const shell = await pane.shellPid();
    expect(helperChildren(shell)).toHaveLength(1);
    expect((await listed(fx.server.registryDir)).filter((p) => p.pane_id === pane.id)).toHaveLength(1);
    expect(await pane.run('tmux_run_unenroll')).toBe(`tmux-run: pane ${pane.id} unenrolled`);
    expect(helperChildren(shell)).toEqual([]);
    expect((await listed(fx.server.registryDir)).some((p) => p.pane_id === pane.id)).toBe(false);
    expect(filesIn(fx.server.registryDir).filter((f) => f.includes(`ch.${shell}.`))).toEqual([]);
    expect(await pane.run('tmux_run_unenroll')).toBe('tmux-run: this shell is not enrolled');
    await pane.kill();
  });

  it('is revoked by the CLI: the helper ends, the pane can enroll again', async () => {
    const pane = await fishPane(fx.server);
    await enrollFish(pane);
    const shell = await pane.shellPid();
    const r = await runCli(['revoke', pane.id], productEnv(fx.server));
    expect(r.code, r.stderr).toBe(0);
    await waitUntil(() => helperChildren(shell).length === 0, 10_000, 'the helper to end');
    await pane.run('true');
    expect(await pane.run(FISH_SOURCE)).toBe('');
    await waitUntil(
      async () => (await listed(fx.server.registryDir)).some((p) => p.pane_id === pane.id),
      10_000,
      'enrolled again',
    );
    await pane.kill();
  });

  it('a SIGKILLed helper is a clear error; the shell says so at its next prompt and lives', async () => {
    const pane = await fishPane(fx.server);
    const listing = await enrollFish(pane);
    const [helper] = helperChildren(await pane.shellPid());
    process.kill(helper!, 'SIGKILL');
    await waitUntil(() => !processAlive(helper!), 5000, 'the helper to die');
    const s = await fx.run('echo never', listing);
    expect(s.ok).toBe(false);
    expect(['not_enrolled', 'helper_unreachable', 'helper_lost']).toContain(s.error.code);
    await pane.type('', { enter: true });
    await pane.waitFor((t) =>
      t.includes(`tmux-run: the helper for pane ${pane.id} exited; this pane is no longer enrolled`),
    );
    expect(await pane.run('echo alive')).toBe('alive');
    await waitUntil(
      async () => !(await listed(fx.server.registryDir)).some((p) => p.pane_id === pane.id),
      10_000,
      'unlisted',
    );
    await pane.kill();
  });

  it('leaves no helper when the pane closes; `exec fish` is a new generation and the old one is refused', async () => {
    const pane = await fishPane(fx.server);
    const listing = await enrollFish(pane);
    const shell = await pane.shellPid();
    const argv = readFileSync(`/proc/${shell}/cmdline`, 'utf8').split('\0').filter(Boolean);
    await pane.type(`exec ${argv.slice(0, -1).join(' ')} '${argv.at(-1)}'`, { enter: true });
    await pane.waitForPrompt();
    // The new fish (the same pid) enrolls as start-up files would: the replaced fish's helper is stopped.
    const again = await enrollFish(pane);
    expect(helperChildren(shell)).toHaveLength(1);
    expect(again.generation).not.toBe(listing.generation);
    const old = await fx.run('echo old', listing);
    expect(old.ok).toBe(false);
    expect(['stale_generation', 'not_enrolled']).toContain(old.error.code);
    expect(ok(await fx.run('echo new', again)).stdout.data).toBe('new\n');
    const helpers = helpersIn(fx.server.registryDir).length;
    await pane.kill();
    await waitUntil(() => helpersIn(fx.server.registryDir).length === helpers - 1, 10_000, 'the helper to end');
  });
});

describe('ask mode, the sandbox and notices in a fish pane', () => {
  it('refuses every run approval_unavailable in ask mode: fish cannot ask without a corrupted line', async () => {
    await fx.pane.run('set -g TMUX_RUN_APPROVE ask');
    const marker = join(fx.server.home, 'asked');
    const s = await fx.run(`touch ${marker}`);
    expect(s.error).toMatchObject({ code: 'approval_unavailable', delivery: 'observed', effects: { state: 'none' } });
    expect(existsSync(marker)).toBe(false);
    await fx.pane.run('set -e TMUX_RUN_APPROVE');
    expect(ok(await fx.run('echo asked-no-more')).stdout.data).toBe('asked-no-more\n');
  });

  it('keeps a sandboxed run inside its walls: the cwd only, no ~/.ssh, no tmux socket', async () => {
    const project = join(fx.server.home, 'walls');
    mkdirSync(join(fx.server.home, '.ssh'), { recursive: true, mode: 0o700 });
    writeFileSync(join(fx.server.home, '.ssh', 'id_test'), 'secret\n', { mode: 0o600 });
    mkdirSync(project);
    chmodSync(project, 0o755);
    await fx.pane.run(`cd ${project}; set -g TMUX_RUN_SANDBOX workspace`);
    const outside = join(fx.server.home, 'outside');
    const d = ok(
      await fx.run(
        `touch in.txt && echo in; touch ${outside} 2>/dev/null; ls ~/.ssh 2>/dev/null | wc -l; ` +
          `tmux -S ${fx.server.socket} list-panes >/dev/null 2>&1 || echo tmux-refused`,
      ),
    );
    expect(d.stdout.data).toBe('in\n0\ntmux-refused\n');
    expect(existsSync(join(project, 'in.txt'))).toBe(true);
    expect(existsSync(outside)).toBe(false);
    await fx.pane.run(`set -e TMUX_RUN_SANDBOX; cd ${fx.server.home}`);
  });

  it('draws a notice at the start of a run and replaces it at its end, keeping what the person typed meanwhile', async () => {
    await fx.pane.run('set -gx TMUX_RUN_NOTIFY on');
    const running = fx.run('sleep 1.5; echo noticed');
    await fx.pane.waitFor((s) => /tmux-run: run [0-9a-f]{8}/.test(s));
    await fx.pane.type('echo typed');
    const d = ok(await running);
    const id = String(d.authorization.run_id).slice(0, 8);
    // The end's notice takes the start's row: one row per run.
    await fx.pane.waitFor((s) => new RegExp(`run ${id} .*exited 0 after`).test(s));
    expect((await fx.pane.capture()).split(id)).toHaveLength(2);
    await fx.pane.waitFor((s) => s.split('\n').at(-1) === '$ echo typed');
    await fx.pane.type(' done', { enter: true });
    await fx.pane.waitFor((s) => s.includes('\ntyped done\n'));
    await fx.pane.waitForPrompt();
    await fx.pane.run('set -gx TMUX_RUN_NOTIFY off');
  });
});
