// The start-up file's block: added once, found again, removed exactly, and a person's own line
// respected; for zsh (.zshrc), bash (.bashrc) and fish (conf.d/tmux-run.fish).
import { describe, expect, it } from 'vitest';
import {
  addBlock as addTo,
  BLOCK_BEGIN,
  BLOCK_END,
  findSourceLines as findIn,
  rcBlock,
  RcEditedError as ZshrcEditedError,
  removeBlock as removeFrom,
} from '../../src/cli/setup/rc.js';
import { fishQuote, loginShell, shellNamed, type Shell } from '../../src/cli/common/shells.js';

const ZSH = shellNamed('zsh')!;
const BASH = shellNamed('bash')!;
const FISH = shellNamed('fish')!;
const SNIPPET = '/opt/tmux run/shell/tmux-run.zsh';
const LINE = ZSH.rcLine(SNIPPET);
const zshrcLine = (p: string): string => ZSH.rcLine(p);
const zshrcBlock = (l: string): string => rcBlock(ZSH, l);
const addBlock = (text: string, line: string, snippet: string) => addTo(ZSH, text, line, snippet);
const removeBlock = (text: string) => removeFrom(ZSH, text);
const findSourceLines = (text: string) => findIn(ZSH, text);
const zshrcPath = (env: NodeJS.ProcessEnv, home: string): string => ZSH.rcFile(env, home);

describe('the .zshrc block', () => {
  it('uses the line tmux-run snippet prints, between two marker lines', () => {
    expect(LINE).toBe(`[[ -n $TMUX ]] && source '/opt/tmux run/shell/tmux-run.zsh'`);
    const lines = zshrcBlock(LINE).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]!.startsWith(BLOCK_BEGIN)).toBe(true);
    expect(lines.slice(1)).toEqual([LINE, BLOCK_END, '']);
  });

  it('is appended once: a second add finds it and changes nothing', () => {
    const original = 'export EDITOR=vim\nsource ~/.p10k.zsh\n';
    const first = addBlock(original, LINE, SNIPPET);
    expect(first.status).toBe('added');
    expect(first.text).toBe(original + zshrcBlock(LINE));
    const second = addBlock(first.text, LINE, SNIPPET);
    expect(second).toEqual({ status: 'present', text: first.text });
  });

  it('is removed exactly, wherever it ended up, and removing twice is a no-op', () => {
    const original = 'a=1\n';
    const added = addBlock(original, LINE, SNIPPET).text + 'b=2\n';
    const removed = removeBlock(added);
    expect(removed).toEqual({ status: 'removed', text: 'a=1\nb=2\n' });
    expect(removeBlock(removeBlock(addBlock(original, LINE, SNIPPET).text).text)).toEqual({
      status: 'absent',
      text: original,
    });
  });

  it('adds to an empty file and to one without a final newline', () => {
    expect(addBlock('', LINE, SNIPPET).text).toBe(zshrcBlock(LINE));
    expect(addBlock('x=1', LINE, SNIPPET).text).toBe(`x=1\n${zshrcBlock(LINE)}`);
  });

  it('points an old block at this install', () => {
    const old = addBlock('', zshrcLine('/old/shell/tmux-run.zsh'), '/old/shell/tmux-run.zsh').text;
    const r = addBlock(old, LINE, SNIPPET);
    expect(r.status).toBe('updated');
    expect(r.text).toBe(zshrcBlock(LINE));
  });

  it("adds nothing when the person's own line sources the snippet, and says which line", () => {
    const own = `# my setup\n[[ -n $TMUX ]] && source '${SNIPPET}'\n`;
    expect(addBlock(own, LINE, SNIPPET)).toEqual({ status: 'unmarked', text: own, line: 2, path: SNIPPET });
    const other = 'if [[ -n $TMUX ]]; then\n  . ~/src/tmux-run/shell/tmux-run.zsh\nfi\n';
    expect(addBlock(other, LINE, SNIPPET)).toMatchObject({
      status: 'other_install',
      text: other,
      line: 2,
      path: '~/src/tmux-run/shell/tmux-run.zsh',
    });
  });

  it('ignores commented-out lines and other files', () => {
    expect(findSourceLines(`# source ${SNIPPET}\nsource ~/.tmux-run.zsh.bak\nsource ~/other.zsh\n`)).toEqual([]);
    expect(findSourceLines(`foo; source "/a b/tmux-run.zsh"\n`)).toEqual([{ line: 1, path: '/a b/tmux-run.zsh' }]);
  });

  it('leaves an edited or half-removed block alone', () => {
    const edited = addBlock('', LINE, SNIPPET).text.replace(LINE, `${LINE}\nexport MORE=1`);
    expect(() => removeBlock(edited)).toThrow(ZshrcEditedError);
    expect(() => addBlock(edited, LINE, SNIPPET)).toThrow(ZshrcEditedError);
    expect(() => removeBlock(`${BLOCK_BEGIN}\n${LINE}\n`)).toThrow(/without its end line/);
    expect(() => addBlock(`${LINE}\n${BLOCK_END}\n`, LINE, SNIPPET)).toThrow(ZshrcEditedError);
  });

  it('is ~/.zshrc, or $ZDOTDIR/.zshrc when ZDOTDIR is set', () => {
    expect(zshrcPath({}, '/home/p')).toBe('/home/p/.zshrc');
    expect(zshrcPath({ ZDOTDIR: '' }, '/home/p')).toBe('/home/p/.zshrc');
    expect(zshrcPath({ ZDOTDIR: '/home/p/.config/zsh' }, '/home/p')).toBe('/home/p/.config/zsh/.zshrc');
  });
});

describe("bash's and fish's start-up files", () => {
  const cases: [Shell, string, string][] = [
    [BASH, '/opt/tmux run/shell/tmux-run.bash', `[[ -n $TMUX ]] && source '/opt/tmux run/shell/tmux-run.bash'`],
    [
      FISH,
      '/opt/tmux run/shell/tmux-run.fish',
      `set -q TMUX; and status is-interactive; and source '/opt/tmux run/shell/tmux-run.fish'`,
    ],
  ];
  it.each(cases)('%s: the line, added once, removed byte for byte', (shell, snippet, line) => {
    expect(shell.rcLine(snippet)).toBe(line);
    const original = 'set -g x 1\n';
    const added = addTo(shell, original, line, snippet);
    expect(added).toEqual({ status: 'added', text: original + rcBlock(shell, line) });
    expect(rcBlock(shell, line)).toContain(`(enrolls every ${shell.name} inside tmux;`);
    expect(addTo(shell, added.text, line, snippet).status).toBe('present');
    expect(removeFrom(shell, added.text)).toEqual({ status: 'removed', text: original });
    expect(removeFrom(shell, addTo(shell, '', line, snippet).text)).toEqual({ status: 'removed', text: '' });
    // Another install's block is pointed at this one; an edited block is left alone.
    const old = addTo(shell, '', shell.rcLine(`/old/shell/tmux-run.${shell.name}`), 'x').text;
    expect(addTo(shell, old, line, snippet)).toEqual({ status: 'updated', text: rcBlock(shell, line) });
    expect(() => removeFrom(shell, added.text.replace(line, `${line}; echo hi`))).toThrow(ZshrcEditedError);
    // A block of another shell's line is not this shell's.
    expect(() => removeFrom(shell, rcBlock(ZSH, LINE))).toThrow(ZshrcEditedError);
  });

  it("finds the person's own line for this shell only", () => {
    expect(findIn(FISH, `if set -q TMUX\n  source ~/tmux-run/shell/tmux-run.fish\nend\n`)).toEqual([
      { line: 2, path: '~/tmux-run/shell/tmux-run.fish' },
    ]);
    expect(findIn(FISH, `source ~/tmux-run/shell/tmux-run.zsh\n`)).toEqual([]);
    expect(findIn(BASH, `. "/a b/tmux-run.bash"\n`)).toEqual([{ line: 1, path: '/a b/tmux-run.bash' }]);
  });

  it('are ~/.bashrc and conf.d/tmux-run.fish under $XDG_CONFIG_HOME or ~/.config', () => {
    expect(BASH.rcFile({ ZDOTDIR: '/z' }, '/home/p')).toBe('/home/p/.bashrc');
    expect(FISH.rcFile({}, '/home/p')).toBe('/home/p/.config/fish/conf.d/tmux-run.fish');
    expect(FISH.rcFile({ XDG_CONFIG_HOME: '/x' }, '/home/p')).toBe('/x/fish/conf.d/tmux-run.fish');
  });

  it("quotes for fish, whose single quotes take \\\\ and \\' as escapes", () => {
    expect(fishQuote('/plain/path.fish')).toBe('/plain/path.fish');
    expect(fishQuote(`/it's a\\b`)).toBe(`'/it\\'s a\\\\b'`);
  });

  it('takes the shell from $SHELL by its basename', () => {
    expect(loginShell({ SHELL: '/usr/bin/fish' })?.name).toBe('fish');
    expect(loginShell({ SHELL: '/bin/bash' })?.name).toBe('bash');
    expect(loginShell({ SHELL: '/bin/sh' })).toBeUndefined();
    expect(loginShell({})).toBeUndefined();
  });
});
