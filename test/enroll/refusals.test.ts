// Refusals: every shell, terminal or directory that cannot be enrolled is refused with one clear
// line, and the refusal leaves nothing behind: no file in the registry directory, no helper
// process, no enrollment state in the shell. That holds for what the snippet checks itself and
// for what only the helper can find out (tmux disagreeing with the shell's TMUX/TMUX_PANE), and
// for a helper that crashes, hangs, or is interrupted with ^C while the shell waits for it.
import { chmodSync, chownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { filesIn, helperChildren, helpersIn, listed } from '../support/enrollment.js';
import type { Pane } from '../support/pane.js';
import { descendantsOf } from '../support/processes.js';
import { SNIPPET, SOURCE } from '../support/product.js';
import type { TmuxServer } from '../support/server.js';
import { useServer } from '../support/lifecycle.js';
import { waitUntil } from '../support/waiting.js';

let server: TmuxServer;
let pane: Pane; // one zsh pane reused by the refusals that do not need their own shell

const scope = useServer();

beforeAll(async () => {
  server = scope.server;
  pane = await server.newPane();
});

/** Nothing of an enrollment exists anywhere: no file, no helper, no state in `p`'s shell. */
async function expectNothingLeft(p: Pane, extraDirs: string[] = []): Promise<void> {
  expect(filesIn(server.registryDir)).toEqual([]);
  for (const d of extraDirs) expect([d, filesIn(d)]).toEqual([d, []]);
  expect(helpersIn(server.baseDir)).toEqual([]);
  expect(helperChildren(await p.shellPid())).toEqual([]);
  expect(await listed(server.registryDir)).toEqual([]);
}

/** Types `cmd` in `p`, expects status 1 (or `status`) and exactly one line matching `re`. */
async function expectRefusal(p: Pane, cmd: string, re: RegExp, status = 1): Promise<string> {
  const r = await p.runWithStatus(cmd, { timeoutMs: 20_000 });
  expect(r.output.split('\n')).toHaveLength(1);
  expect(r.output).toMatch(/^tmux-run: not enrolled: /);
  expect(r.output).toMatch(re);
  expect(r.status).toBe(status);
  return r.output;
}

describe('shells that cannot be enrolled', () => {
  it('bash is refused', async () => {
    const bash = await server.newPane({ shell: ['bash', '--norc', '-i'] });
    await expectRefusal(bash, SOURCE, /this shell is not zsh/);
    await expectRefusal(bash, `. ${SNIPPET}`, /this shell is not zsh/);
    await expectNothingLeft(bash);
    expect(await bash.run('echo bash goes on')).toBe('bash goes on');
    await bash.kill();
  });

  it('a zsh whose line editor is off is refused', async () => {
    await pane.run('zsh -i');
    await expectRefusal(pane, `unsetopt zle; ${SOURCE}`, /line editor is off/);
    await expectNothingLeft(pane);
    expect(await pane.run('print -r -- ${+_tmux_run_helper_pid}')).toBe('0');
    await pane.run('exit');
  });

  it('a non-interactive zsh is refused', async () => {
    await expectRefusal(pane, `zsh -c 'source ${SNIPPET}'`, /this zsh is not interactive/);
    await expectNothingLeft(pane);
  });

  it('zsh -ic (interactive, but never at a prompt) is refused', async () => {
    await expectRefusal(pane, `zsh -ic 'source ${SNIPPET}'`, /never waits at a prompt/);
    await expectNothingLeft(pane);
  });

  it('a zsh outside tmux is refused', async () => {
    await pane.run('env -u TMUX -u TMUX_PANE zsh -i');
    expect(await pane.run('print -r -- "${TMUX-unset} ${TMUX_PANE-unset}"')).toBe('unset unset');
    await expectRefusal(pane, SOURCE, /not running inside tmux/);
    await expectNothingLeft(pane);
    await pane.run('exit');
    // The outer shell is untouched and still enrollable.
    expect(await pane.run('print -r -- ${+_tmux_run_helper_pid}')).toBe('0');
  });
});

describe('registry directories that are not safe', () => {
  it('a directory open to others (0777) is refused, named with its mode', async () => {
    const dir = join(server.baseDir, 'open');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    await expectRefusal(
      pane,
      `TMUX_RUN_DIR=${dir} source ${SNIPPET}`,
      new RegExp(`${dir} is open to other users \\(mode 777\\); run: chmod 700`),
    );
    await expectNothingLeft(pane, [dir]);
    chmodSync(dir, 0o750);
    await expectRefusal(pane, `TMUX_RUN_DIR=${dir} source ${SNIPPET}`, /is open to other users \(mode 750\)/);
    await expectNothingLeft(pane, [dir]);
  });

  it('a directory owned by another user is refused, named with its owner', async () => {
    const dir = join(server.baseDir, 'theirs');
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 65534, 65534);
    await expectRefusal(
      pane,
      `TMUX_RUN_DIR=${dir} source ${SNIPPET}`,
      new RegExp(`${dir} belongs to uid 65534, not to you \\(uid ${process.getuid!()}\\)`),
    );
    await expectNothingLeft(pane, [dir]);
  });

  it('a symlink, even to a good directory, is refused', async () => {
    const good = join(server.baseDir, 'good');
    const link = join(server.baseDir, 'link');
    mkdirSync(good, { mode: 0o700 });
    symlinkSync(good, link);
    await expectRefusal(pane, `TMUX_RUN_DIR=${link} source ${SNIPPET}`, new RegExp(`${link} is a symlink`));
    await expectNothingLeft(pane, [good]);
  });

  it('a file, and a relative path, are refused', async () => {
    const file = join(server.baseDir, 'a-file');
    writeFileSync(file, '', { mode: 0o600 });
    await expectRefusal(pane, `TMUX_RUN_DIR=${file} source ${SNIPPET}`, /is not a directory/);
    await expectRefusal(pane, `TMUX_RUN_DIR=run source ${SNIPPET}`, /is not an absolute path/);
    await expectNothingLeft(pane);
  });
});

describe('what only the helper can find out, and helpers that fail', () => {
  it('TMUX_PANE naming another pane is refused by the helper with its reason', async () => {
    // %0 is the harness's placeholder pane: a real pane, but not this shell's terminal.
    await expectRefusal(pane, `TMUX_PANE=%0 source ${SNIPPET}`, /this shell is not running on pane %0's terminal/);
    await expectNothingLeft(pane);
  });

  it('TMUX_PANE naming no pane is refused', async () => {
    await expectRefusal(pane, `TMUX_PANE=%999 source ${SNIPPET}`, /tmux does not know pane %999$/);
    await expectNothingLeft(pane);
  });

  it('TMUX naming another server, or no server, is refused', async () => {
    await expectRefusal(pane, `TMUX=\${TMUX%%,*},1,0 source ${SNIPPET}`, /TMUX names a different tmux server/);
    await expectNothingLeft(pane);
    const gone = join(server.baseDir, 'no-such-socket');
    await expectRefusal(
      pane,
      `TMUX=${gone},\${\${TMUX#*,}%%,*},0 source ${SNIPPET}`,
      new RegExp(`tmux could not describe pane %\\d+: .*${gone}`),
    );
    await expectNothingLeft(pane);
  });

  it('a helper that exits before it is ready is reported at once, with its last word', async () => {
    const fake = join(server.baseDir, 'crashing-node');
    writeFileSync(fake, '#!/bin/sh\necho "boom: this node cannot start" >&2\nexit 3\n', { mode: 0o700 });
    const t0 = Date.now();
    await expectRefusal(
      pane,
      `TMUX_RUN_NODE=${fake} source ${SNIPPET}`,
      /the helper exited before it was ready: boom: this node cannot start$/,
    );
    expect(Date.now() - t0).toBeLessThan(5000);
    await expectNothingLeft(pane);
  });

  it('a helper that never answers is given 10 seconds, then stopped and cleaned up', async () => {
    const fake = join(server.baseDir, 'hanging-node');
    writeFileSync(fake, '#!/bin/sh\nexec sleep 600\n', { mode: 0o700 });
    const t0 = Date.now();
    await expectRefusal(
      pane,
      `TMUX_RUN_NODE=${fake} source ${SNIPPET}`,
      /the helper did not become ready within 10 seconds$/,
    );
    const took = Date.now() - t0;
    expect(took).toBeGreaterThan(9_500);
    expect(took).toBeLessThan(16_000);
    expect(descendantsOf(await pane.shellPid())).toEqual([]);
    await expectNothingLeft(pane);
  }, 40_000);

  it('^C while the shell waits for the helper abandons the enrollment cleanly', async () => {
    const fake = join(server.baseDir, 'slow-node');
    writeFileSync(fake, '#!/bin/sh\nexec sleep 600\n', { mode: 0o700 });
    const shellPid = await pane.shellPid();
    await pane.waitForPrompt();
    await pane.type(`TMUX_RUN_NODE=${fake} source ${SNIPPET}`, { enter: true });
    await waitUntil(
      () => descendantsOf(shellPid).length > 0 && filesIn(server.registryDir).length > 0,
      5000,
      'the fake helper to start',
    );
    const t0 = Date.now();
    await server.tmux(['send-keys', '-t', pane.id, 'C-c']);
    await pane.waitForPrompt();
    expect(Date.now() - t0).toBeLessThan(5000);
    const screen = await pane.capture();
    expect(screen.split('\n').slice(-3)).toEqual(['^C', 'tmux-run: not enrolled: interrupted', '$']);
    await waitUntil(() => descendantsOf(shellPid).length === 0, 5000, 'the fake helper to be gone');
    await expectNothingLeft(pane);
    expect(await pane.runWithStatus('echo $?')).toEqual({ output: '130', status: 0 });
  });

  it('after all that, this same shell enrolls normally', async () => {
    const r = await pane.runWithStatus(SOURCE);
    expect(r).toEqual({ output: '', status: 0 });
    const all = await listed(server.registryDir);
    expect(all.map((p) => p.pane_id)).toEqual([pane.id]);
    expect((await pane.runWithStatus('tmux_run_unenroll')).status).toBe(0);
    expect(filesIn(server.registryDir)).toEqual([]);
  });
});
