// The .zshrc block: added once, found again, removed exactly, and a person's own line respected.
import { describe, expect, it } from 'vitest';
import {
  addBlock,
  BLOCK_BEGIN,
  BLOCK_END,
  findSourceLines,
  removeBlock,
  zshrcBlock,
  ZshrcEditedError,
  zshrcPath,
} from '../../src/cli/setup/zshrc.js';
import { zshrcLine } from '../../src/cli/snippet.js';

const SNIPPET = '/opt/tmux run/shell/tmux-run.zsh';
const LINE = zshrcLine(SNIPPET);

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
