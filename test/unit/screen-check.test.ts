// The screen check (helper/shell/screen.ts), case by case: a run may start only when the cursor
// stands right after the rendered prompt on an otherwise empty line, with nothing below; any
// doubt refuses. The screens are what `capture-pane -p` prints (trailing spaces left out).
import { describe, expect, it } from 'vitest';
import { cells, checkScreen, parseScreen, visiblePrompt, type Screen } from '../../helper/shell/screen.js';

/** A screen of `width` columns and 6 rows: `rows` from the top, the cursor at (x, y). */
function screen(rows: string[], x: number, y: number, width = 40, more: Partial<Screen> = {}): Screen {
  const lines = [...rows];
  while (lines.length < 6) lines.push('');
  return { cursorX: x, cursorY: y, width, inMode: false, alternate: false, lines, ...more };
}

const ok = { ok: true };
const refused = (reason: RegExp) => ({ ok: false, reason: expect.stringMatching(reason) });

describe('visiblePrompt', () => {
  it("removes bash's \\001..\\002 parts and escape sequences, and keeps the last line", () => {
    expect(visiblePrompt('\x01\x1b[32m\x02root@vm\x01\x1b[0m\x02:/tmp$ ')).toBe('root@vm:/tmp$ ');
    expect(visiblePrompt('\x1b[1;34mdir\x1b[0m $ ')).toBe('dir $ ');
    expect(visiblePrompt('\x1b]0;title\x07$ ')).toBe('$ ');
    expect(visiblePrompt('\x1b]2;title\x1b\\$ ')).toBe('$ ');
    expect(visiblePrompt('\x1b(B$ ')).toBe('$ ');
    expect(visiblePrompt('first line\nsecond $ ')).toBe('second $ ');
    expect(visiblePrompt('')).toBe('');
  });

  it('gives up on control characters whose effect on the line it cannot tell', () => {
    expect(visiblePrompt('a\rb $ ')).toBeUndefined();
    expect(visiblePrompt('a\tb $ ')).toBeUndefined();
    expect(visiblePrompt('\x07$ ')).toBeUndefined();
  });
});

describe('cells', () => {
  it('counts narrow characters and refuses ones whose width it cannot be sure of', () => {
    expect(cells('abc $ ')).toBe(6);
    expect(cells('café ─ → ')).toBe(9);
    expect(cells('日本 $ ')).toBeUndefined();
    expect(cells('🙂 $ ')).toBeUndefined();
    expect(cells('e\u0301')).toBeUndefined(); // a combining accent takes no cell of its own
  });
});

describe('checkScreen', () => {
  const prompt = { prompt: '$ ' };

  it('passes an empty line right after the prompt', () => {
    expect(checkScreen(screen(['$ ls', 'a b', '$'], 2, 2), prompt)).toEqual(ok);
  });

  it('refuses typed text (the cursor is past the prompt)', () => {
    expect(checkScreen(screen(['$ echo abc'], 10, 0), prompt)).toEqual(refused(/column 10/));
  });

  it('refuses text after the cursor (typed, then ^A)', () => {
    expect(checkScreen(screen(['$ echo abc'], 2, 0), prompt)).toEqual(refused(/after the cursor/));
  });

  it('refuses a continuation line (the prompt is not the primary one)', () => {
    expect(checkScreen(screen(['$ echo "abc', '>'], 2, 1), prompt)).toEqual(refused(/does not start with the prompt/));
  });

  it('refuses a line that wrapped below the prompt, and any text below', () => {
    const long = '$ ' + 'x'.repeat(38);
    expect(checkScreen(screen([long, 'yyy'], 3, 1), prompt)).toEqual(refused(/column 3/));
    expect(checkScreen(screen(['$', 'leftover'], 2, 0), prompt)).toEqual(refused(/below the prompt/));
  });

  it('passes a right prompt at the end of the line, and refuses text before it', () => {
    const right = { prompt: '> ', right: 'RIGHT' };
    const line = '>' + ' '.repeat(34) + 'RIGHT';
    expect(checkScreen(screen([line], 2, 0), right)).toEqual(ok);
    const typed = '> ab' + ' '.repeat(31) + 'RIGHT';
    expect(checkScreen(screen([typed], 2, 0), right)).toEqual(refused(/after the cursor/));
    expect(checkScreen(screen(['> ls'], 2, 0), right)).toEqual(refused(/after the cursor/));
  });

  it('checks only the last line of a multi-line prompt', () => {
    const p = { prompt: '\x1b[1m~/src\x1b[0m (main)\n$ ' };
    expect(checkScreen(screen(['~/src (main)', '$'], 2, 1), p)).toEqual(ok);
    expect(checkScreen(screen(['~/src (main)', '$ x'], 3, 1), p)).toEqual(refused(/column 3/));
  });

  it('places a prompt that wraps past the width', () => {
    const p = { prompt: 'p'.repeat(45) + '$ ' };
    expect(checkScreen(screen(['p'.repeat(40), 'ppppp$'], 7, 1), p)).toEqual(ok);
    expect(checkScreen(screen(['p'.repeat(40), 'ppppp$ x'], 8, 1), p)).toEqual(refused(/column 8/));
    expect(checkScreen(screen(['ppppp$'], 7, 0), p)).toEqual(refused(/not on the screen/));
    expect(checkScreen(screen(['p'.repeat(40)], 0, 1), { prompt: 'p'.repeat(40) })).toEqual(refused(/right edge/));
  });

  it('passes a coloured prompt once its codes are removed', () => {
    const p = { prompt: '\x01\x1b[32m\x02root@vm\x01\x1b[0m\x02:/tmp$ ' };
    expect(checkScreen(screen(['root@vm:/tmp$'], 14, 0), p)).toEqual(ok);
    expect(checkScreen(screen(['root@vm:/tmp$ l'], 15, 0), p)).toEqual(refused(/column 15/));
  });

  it('passes an empty prompt on an empty line only', () => {
    expect(checkScreen(screen(['out', ''], 0, 1), { prompt: '' })).toEqual(ok);
    expect(checkScreen(screen(['out', 'ls'], 0, 1), { prompt: '' })).toEqual(refused(/after the cursor/));
  });

  it('accepts a vi mode indicator the line editor draws before the prompt, only one it named', () => {
    const p = { prompt: '$ ', prefixes: ['(ins)', '(cmd)'] };
    expect(checkScreen(screen(['(ins)$'], 7, 0), p)).toEqual(ok);
    expect(checkScreen(screen(['(cmd)$'], 7, 0), p)).toEqual(ok);
    expect(checkScreen(screen(['(xyz)$'], 7, 0), p)).toEqual(refused(/column 7/));
    expect(checkScreen(screen(['(ins)$ ls'], 9, 0), p)).toEqual(refused(/column 9/));
  });

  it('refuses copy mode, the alternate screen, and what it cannot measure', () => {
    expect(checkScreen(screen(['$'], 2, 0, 40, { inMode: true }), prompt)).toEqual(refused(/copy mode/));
    expect(checkScreen(screen(['$'], 2, 0, 40, { alternate: true }), prompt)).toEqual(refused(/full-screen/));
    expect(checkScreen(screen(['日本 $'], 7, 0), { prompt: '日本 $ ' })).toEqual(refused(/width/));
    expect(checkScreen(screen(['$ 日本'], 2, 0), prompt)).toEqual(refused(/width/));
    expect(checkScreen(screen(['a\rb $'], 2, 0), { prompt: 'a\rb $ ' })).toEqual(refused(/control/));
    expect(checkScreen(screen(['>'], 2, 0), { prompt: '> ', right: '\x07' })).toEqual(refused(/right prompt/));
  });
});

describe('parseScreen', () => {
  it("reads the one call's format line and the pane's lines", () => {
    expect(parseScreen('2 1 0 0 80\n$ ls\n$\n')).toEqual({
      cursorX: 2,
      cursorY: 1,
      inMode: false,
      alternate: false,
      width: 80,
      lines: ['$ ls', '$'],
    });
    expect(parseScreen('2 1 1 0 80\n')?.inMode).toBe(true);
    expect(parseScreen('garbage\n$\n')).toBeUndefined();
  });
});
