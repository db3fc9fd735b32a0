// The person's pane and the script: the script gets the shell's state as of dispatch (cwd,
// exported variables, umask), and the pane keeps nothing of any run (screen, history).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNIPPET } from '../../lab/product.js';
import { type Fixture, ok, setupFixture } from './support.js';

let fx: Fixture;
/** Every line typed into the pane in this file, in order (the fixture typed the first). */
const typedLines = [`source ${SNIPPET}`];
const typeLine = (cmd: string): Promise<string> => {
  typedLines.push(cmd);
  return fx.pane.run(cmd);
};
beforeAll(async () => {
  fx = await setupFixture();
});
afterAll(async () => {
  await fx?.close();
});

describe("the shell's state at dispatch", () => {
  it('runs in the cwd and exported environment set after enrollment; unexported variables stay out', async () => {
    const dir = join(fx.server.home, 'x dir');
    mkdirSync(dir);
    const script = 'pwd; printf "%s|%s|%s\\n" "${FOO-unset}" "${BAZ-unset}" "$PWD"';
    // Before: the enrollment-time state.
    const before = ok(await fx.run(script));
    expect(before.stdout.data).toBe(`${fx.server.home}\nunset|unset|${fx.server.home}\n`);

    await typeLine(`cd '${dir}'; export FOO=bar; BAZ=1`);
    const after = ok(await fx.run(script));
    expect(after.stdout.data).toBe(`${dir}\nbar|unset|${dir}\n`);

    // Later changes are seen too: state is taken at each dispatch, never cached.
    await typeLine('export FOO="two words"; unset BAZ; export BAZ=exported; cd ..');
    const again = ok(await fx.run(script));
    expect(again.stdout.data).toBe(`${fx.server.home}\ntwo words|exported|${fx.server.home}\n`);
    await typeLine('unset FOO BAZ');
    expect(ok(await fx.run(script)).stdout.data).toBe(`${fx.server.home}\nunset|unset|${fx.server.home}\n`);
  });

  it('hands on an export named like a local of the snippet (its answer runs among them)', async () => {
    // The names the snippet's functions used as locals before they were prefixed _tmux_run_.
    const names = ['n', 'kv', 'fd', 'nonce', 'reason', 'line', 'chunk', 'rc'];
    await typeLine(names.map((n) => `export ${n}=v-${n}`).join('; '));
    const d = ok(await fx.run(names.map((n) => `printf '%s ' "\${${n}-unset}"`).join('; ')));
    expect(d.stdout.data).toBe(names.map((n) => `v-${n} `).join(''));
    await typeLine(`unset ${names.join(' ')}`);
  });

  it("applies the shell's umask, changed after enrollment, to files the script creates", async () => {
    const name = `umask-${Date.now()}`;
    const script = `umask; touch ${name}.f; mkdir ${name}.d; stat -c %a ${name}.f ${name}.d; rm -r ${name}.f ${name}.d`;
    await typeLine('umask 027');
    try {
      expect(ok(await fx.run(script)).stdout.data).toBe('0027\n640\n750\n');
    } finally {
      await typeLine('umask 022');
    }
    expect(ok(await fx.run(script)).stdout.data).toBe('0022\n644\n755\n');
  });
});

describe('nothing of a run reaches the pane', () => {
  it('leaves the screen as typed and the history as typed', async () => {
    const { pane } = fx;
    // Start from a known screen: clear it and tmux's scrollback (test-side only).
    typedLines.push('clear');
    await pane.type('clear', { enter: true });
    await pane.waitFor((screen) => screen.trim() === '$');
    await pane.waitForPrompt();
    await fx.server.tmux(['clear-history', '-t', pane.id]);
    expect(await pane.capture()).toBe('$');

    const transcript: string[] = [];
    const typed: string[] = [];
    const type = async (cmd: string): Promise<void> => {
      const out = await typeLine(cmd);
      typed.push(cmd);
      transcript.push(`$ ${cmd}`, ...(out === '' ? [] : out.split('\n')));
    };

    await type('echo one');
    for (const script of [
      'echo visible?',
      'echo to-stderr >&2',
      'printf "\\033[2J\\033[H"',
      'exit 3',
      'kill -TERM $$',
    ]) {
      expect((await fx.run(script)).ok).toBe(true);
    }
    await type('echo two');
    for (let i = 0; i < 5; i++) expect((await fx.run(`echo run ${i}`)).ok).toBe(true);
    // A refused run leaves nothing either.
    expect((await fx.run('head -c 100 /dev/zero', { stdout_limit: 10 })).ok).toBe(false);

    expect(await pane.capture()).toBe([...transcript, '$'].join('\n'));
    expect(transcript).toEqual(['$ echo one', 'one', '$ echo two', 'two']);

    // zsh's history holds only what was typed (fc -l lists the session's events by number).
    const history = (await typeLine('fc -ln 1'))
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    expect(history).toEqual(typedLines.slice(0, -1)); // fc -l does not list itself
    expect(history.slice(-3)).toEqual(['clear', ...typed]);
  });
});
