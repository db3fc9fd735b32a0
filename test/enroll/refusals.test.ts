// Refusals: every shell, terminal or directory that cannot be enrolled is refused with one clear
// line, and the refusal leaves nothing behind: no file in the registry directory, no helper
// process, no enrollment state in the shell. That holds for what the snippet checks itself and
// for what only the helper can find out (tmux disagreeing with the shell's TMUX/TMUX_PANE), and
// for a helper that crashes or hangs; those arrive after `source` has returned and are shown once,
// with the helper's log (the one file such a failure keeps, until the shell enrolls again).
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { filesIn, helperChildren, helpersIn, listed, waitListed } from '../../lab/enrollment.js';
import type { Pane } from '../../lab/pane.js';
import { descendantsOf } from '../../lab/processes.js';
import { SNIPPET, SOURCE } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { useServer } from '../../lab/lifecycle.js';
import { sleep } from '../../lab/waiting.js';

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

/**
 * Types `cmd` in `p`: the snippet returns at once (status 0) and the helper's refusal is shown
 * once, at the next prompt or later through the line editor, naming the helper's log (kept, 0600,
 * the only file left). Returns the reason; the log is removed afterwards.
 */
async function expectHelperRefusal(p: Pane, cmd: string, re: RegExp): Promise<string> {
  const r = await p.runWithStatus(cmd, { timeoutMs: 20_000 });
  expect(r.status).toBe(0);
  // (A helper that fails within a few milliseconds is found gone at the prompt that follows; a
  // slower one is said through the line editor, above a prompt that may already be drawn.)
  expect(r.output).toMatch(/^(?:\$\n)?(|tmux-run: not enrolled: .*)$/);
  const line = /^tmux-run: not enrolled: (.*) \(the helper's log: (\S+)\)$/;
  // The refusal after this command's echo (earlier ones stay in the history).
  const after = (screen: string): string[] => {
    const lines = screen.split('\n');
    return lines.slice(lines.map((l) => l.startsWith(`$ ${cmd}`)).lastIndexOf(true) + 1);
  };
  // Then the prompt, drawn again below it (through the line editor the line comes first, and the
  // prompt a moment later: wait for both, not just the line).
  const screen = await p.waitFor((s) => {
    const [said, prompt] = s.split('\n').slice(-2);
    return after(s).some((l) => line.test(l)) && line.test(said ?? '') && prompt === '$';
  });
  const [shown, reason, log] = line.exec(after(screen).find((l) => line.test(l))!)!;
  expect(reason).toMatch(re);
  expect(screen.split('\n').slice(-2)).toEqual([shown, '$']);
  // Shown once: not again at the next prompts.
  await p.run('true');
  expect((await p.capture()).split(shown)).toHaveLength(2);
  expect(filesIn(server.registryDir)).toEqual([basename(log!)]);
  expect(lstatSync(log!).mode & 0o777).toBe(0o600);
  // The log says it too (the helper's own line, or the last word of a node that did not start).
  expect(readFileSync(log!, 'utf8')).toContain(
    reason!.replace(/^the helper exited before it was ready: /, '').slice(0, 40),
  );
  rmSync(log!);
  return reason!;
}

describe('what only the helper can find out, and helpers that fail', () => {
  it('TMUX_PANE naming another pane is refused by the helper with its reason', async () => {
    // %0 is the harness's placeholder pane: a real pane, but not this shell's terminal.
    await expectHelperRefusal(
      pane,
      `TMUX_PANE=%0 source ${SNIPPET}`,
      /this shell is not running on pane %0's terminal/,
    );
    await expectNothingLeft(pane);
  });

  it('TMUX_PANE naming no pane is refused', async () => {
    await expectHelperRefusal(pane, `TMUX_PANE=%999 source ${SNIPPET}`, /tmux does not know pane %999$/);
    await expectNothingLeft(pane);
  });

  it('TMUX naming another server, or no server, is refused', async () => {
    await expectHelperRefusal(pane, `TMUX=\${TMUX%%,*},1,0 source ${SNIPPET}`, /TMUX names a different tmux server/);
    await expectNothingLeft(pane);
    const gone = join(server.baseDir, 'no-such-socket');
    await expectHelperRefusal(
      pane,
      `TMUX=${gone},\${\${TMUX#*,}%%,*},0 source ${SNIPPET}`,
      new RegExp(`tmux could not describe pane %\\d+: .*${gone}`),
    );
    await expectNothingLeft(pane);
  });

  it('a node that is not found is refused at once, by the snippet', async () => {
    // A TMUX_RUN_NODE that is wrong is named as such (it said "node was not found on PATH (set
    // TMUX_RUN_NODE to its path)" to a person who had set it), a directory included.
    const wrong =
      /: TMUX_RUN_NODE=\S+ is not a program that can be run \(set it to node's absolute path, or unset it to use node on PATH\)$/;
    await expectRefusal(pane, `TMUX_RUN_NODE=/nonexistent/node source ${SNIPPET}`, wrong);
    await expectRefusal(pane, `TMUX_RUN_NODE=no-such-node-here source ${SNIPPET}`, wrong);
    await expectRefusal(pane, `TMUX_RUN_NODE=${server.baseDir} source ${SNIPPET}`, wrong);
    await expectRefusal(
      pane,
      `PATH=/nonexistent source ${SNIPPET}`,
      /: node was not found on PATH \(set TMUX_RUN_NODE to its path\)$/,
    );
    await expectNothingLeft(pane);
  });

  it('a helper that exits before it is ready is reported at once, with its last word', async () => {
    const fake = join(server.baseDir, 'crashing-node');
    writeFileSync(fake, '#!/bin/sh\necho "boom: this node cannot start" >&2\nexit 3\n', { mode: 0o700 });
    await expectHelperRefusal(
      pane,
      `TMUX_RUN_NODE=${fake} source ${SNIPPET}`,
      /^the helper exited before it was ready: boom: this node cannot start$/,
    );
    await expectNothingLeft(pane);
  });

  it('a node that exits 1 without a word is reported without a key pressed', async () => {
    await pane.waitForPrompt();
    await pane.type(`TMUX_RUN_NODE=/bin/false source ${SNIPPET}`, { enter: true });
    const screen = await pane.waitFor(
      (s) => /the helper exited before it was ready: it printed nothing$/m.test(s) && s.endsWith('\n$'),
    );
    expect(screen.split('\n').slice(-2)).toEqual([
      'tmux-run: not enrolled: the helper exited before it was ready: it printed nothing',
      '$',
    ]);
    await expectNothingLeft(pane);
  });

  it('a helper that never answers is stopped at the first prompt after 10 seconds, and cleaned up', async () => {
    const fake = join(server.baseDir, 'hanging-node');
    writeFileSync(fake, '#!/bin/sh\necho "hanging on purpose" >&2\nexec sleep 600\n', { mode: 0o700 });
    const shellPid = await pane.shellPid();
    expect(await pane.runWithStatus(`TMUX_RUN_NODE=${fake} source ${SNIPPET}`)).toEqual({ output: '', status: 0 });
    expect(descendantsOf(shellPid)).toHaveLength(1);
    await sleep(10_500);
    const r = await pane.runWithStatus('true');
    expect(r.output).toMatch(
      /^tmux-run: not enrolled: the helper did not become ready within 10 seconds \(the helper's log: \S+\.log\)$/,
    );
    expect(descendantsOf(shellPid)).toEqual([]);
    for (const f of filesIn(server.registryDir)) rmSync(join(server.registryDir, f));
    await expectNothingLeft(pane);
  });

  it("a failed helper's log is removed when the same shell enrolls again", async () => {
    // The pane's history holds the same messages from the tests above: wait for one more of each.
    const count = (s: string, text: string): number => s.split(text).length - 1;
    const nothing = 'it printed nothing';
    const boom = "boom: this node cannot start (the helper's log:";
    const before = await pane.capture();
    expect((await pane.runWithStatus(`TMUX_RUN_NODE=/bin/false source ${SNIPPET}`)).status).toBe(0);
    await pane.waitFor((s) => count(s, nothing) > count(before, nothing));
    const fake = join(server.baseDir, 'crashing-node');
    expect((await pane.runWithStatus(`TMUX_RUN_NODE=${fake} source ${SNIPPET}`)).status).toBe(0);
    await pane.waitFor((s) => count(s, boom) > count(before, boom));
    expect(filesIn(server.registryDir)).toHaveLength(1);
    expect((await pane.runWithStatus(SOURCE)).status).toBe(0);
    await waitListed(pane, await pane.shellPid());
    expect(filesIn(server.registryDir).filter((f) => f.endsWith('.log'))).toHaveLength(1);
    expect((await pane.runWithStatus('tmux_run_unenroll')).status).toBe(0);
    expect(filesIn(server.registryDir)).toEqual([]);
  });

  it('after all that, this same shell enrolls normally', async () => {
    const r = await pane.runWithStatus(SOURCE);
    expect(r).toEqual({ output: '', status: 0 });
    await waitListed(pane, await pane.shellPid());
    const all = await listed(server.registryDir);
    expect(all.map((p) => p.pane_id)).toEqual([pane.id]);
    expect((await pane.runWithStatus('tmux_run_unenroll')).status).toBe(0);
    expect(filesIn(server.registryDir)).toEqual([]);
  });
});
