// The screen check (helper/shell/screen/screen.ts), case by case: a run may start only when the cursor
// stands right after the rendered prompt on an otherwise empty line, with nothing below; any
// doubt refuses. The screens are what `capture-pane -p` prints (trailing spaces left out).
import { describe, expect, it } from 'vitest';
import { checkScreen, parseScreen, screenAnswered, type Screen } from '../../helper/shell/screen/screen.js';

/** A screen of `width` columns and 6 rows: `rows` from the top, the cursor at (x, y). */
function screen(rows: string[], x: number, y: number, width = 40, more: Partial<Screen> = {}): Screen {
  const lines = [...rows];
  while (lines.length < 6) lines.push('');
  return { cursorX: x, cursorY: y, width, inMode: false, alternate: false, lines, ...more };
}

const ok = { ok: true };
const refused = (reason: RegExp, cause = 'line') => ({ ok: false, reason: expect.stringMatching(reason), cause });

describe('checkScreen', () => {
  const prompt = { prompt: '$ ' };

  it('passes an empty line right after the prompt', async () => {
    expect(await checkScreen(screen(['$ ls', 'a b', '$'], 2, 2), prompt)).toEqual(ok);
  });

  it('refuses typed text (the cursor is past the prompt)', async () => {
    expect(await checkScreen(screen(['$ echo abc'], 10, 0), prompt)).toEqual(refused(/column 10/));
  });

  it("says a notice's mark after the prompt is a redraw, wherever the cursor is", async () => {
    expect(await checkScreen(screen(['$ \u2060'], 3, 0), prompt)).toEqual(refused(/notice/, 'redraw'));
    expect(await checkScreen(screen(['$ \u2060'], 2, 0), prompt)).toEqual(refused(/notice/, 'redraw'));
  });

  it('refuses text after the cursor (typed, then ^A)', async () => {
    expect(await checkScreen(screen(['$ echo abc'], 2, 0), prompt)).toEqual(refused(/after the cursor/));
  });

  it('refuses a continuation line (the prompt is not the primary one)', async () => {
    expect(await checkScreen(screen(['$ echo "abc', '>'], 2, 1), prompt)).toEqual(
      refused(/does not start with the prompt/),
    );
  });

  it('refuses a line that wrapped below the prompt, and any text below', async () => {
    const long = '$ ' + 'x'.repeat(38);
    expect(await checkScreen(screen([long, 'yyy'], 3, 1), prompt)).toEqual(refused(/does not start with the prompt/));
    expect(await checkScreen(screen(['$', 'leftover'], 2, 0), prompt)).toEqual(refused(/below the prompt/));
  });

  it('passes a right prompt at the end of the line, and refuses text before it', async () => {
    const right = { prompt: '> ', right: 'RIGHT' };
    const line = '>' + ' '.repeat(34) + 'RIGHT';
    expect(await checkScreen(screen([line], 2, 0), right)).toEqual(ok);
    const typed = '> ab' + ' '.repeat(31) + 'RIGHT';
    expect(await checkScreen(screen([typed], 2, 0), right)).toEqual(refused(/after the cursor/));
    expect(await checkScreen(screen(['> ls'], 2, 0), right)).toEqual(refused(/after the cursor/));
  });

  it('checks only the last line of a multi-line prompt', async () => {
    const p = { prompt: '\x1b[1m~/src\x1b[0m (main)\n$ ' };
    expect(await checkScreen(screen(['~/src (main)', '$'], 2, 1), p)).toEqual(ok);
    expect(await checkScreen(screen(['~/src (main)', '$ x'], 3, 1), p)).toEqual(refused(/column 3/));
  });

  it('places a prompt that wraps past the width', async () => {
    const p = { prompt: 'p'.repeat(45) + '$ ' };
    expect(await checkScreen(screen(['p'.repeat(40), 'ppppp$'], 7, 1), p)).toEqual(ok);
    expect(await checkScreen(screen(['p'.repeat(40), 'ppppp$ x'], 8, 1), p)).toEqual(refused(/column 8/));
    expect(await checkScreen(screen(['ppppp$'], 7, 0), p)).toEqual(refused(/does not show the prompt/, 'prompt'));
    expect(await checkScreen(screen(['p'.repeat(40)], 0, 1), { prompt: 'p'.repeat(40) })).toEqual(
      refused(/right edge/, 'prompt'),
    );
  });

  it('passes a coloured prompt once its codes are removed', async () => {
    const p = { prompt: '\x01\x1b[32m\x02root@vm\x01\x1b[0m\x02:/tmp$ ' };
    expect(await checkScreen(screen(['root@vm:/tmp$'], 14, 0), p)).toEqual(ok);
    expect(await checkScreen(screen(['root@vm:/tmp$ l'], 15, 0), p)).toEqual(refused(/column 15/));
  });

  it('passes an empty prompt on an empty line only', async () => {
    expect(await checkScreen(screen(['out', ''], 0, 1), { prompt: '' })).toEqual(ok);
    expect(await checkScreen(screen(['out', 'ls'], 0, 1), { prompt: '' })).toEqual(refused(/after the cursor/));
  });

  it('accepts a vi mode indicator the line editor draws before the prompt, only one it named', async () => {
    const p = { prompt: '$ ', prefixes: ['(ins)', '(cmd)'] };
    expect(await checkScreen(screen(['(ins)$'], 7, 0), p)).toEqual(ok);
    expect(await checkScreen(screen(['(cmd)$'], 7, 0), p)).toEqual(ok);
    expect(await checkScreen(screen(['(xyz)$'], 7, 0), p)).toEqual(refused(/does not show the prompt/, 'prompt'));
    expect(await checkScreen(screen(['(ins)$ ls'], 9, 0), p)).toEqual(refused(/column 9/));
  });

  it('refuses copy mode, the alternate screen, and what it cannot measure', async () => {
    expect(await checkScreen(screen(['$'], 2, 0, 40, { inMode: true }), prompt)).toEqual(refused(/copy mode/, 'pane'));
    expect(await checkScreen(screen(['$'], 2, 0, 40, { alternate: true }), prompt)).toEqual(
      refused(/full-screen/, 'pane'),
    );
    expect(await checkScreen(screen(['>'], 2, 0), { prompt: '> ', right: 'a\nb' })).toEqual(
      refused(/right prompt/, 'prompt'),
    );
  });
});

// Prompts as their shells write them (bytes seen in fish 3.6 and bash 5.2 under tmux 3.3a), and
// the screens tmux showed for them.
const SGR0 = '\x1b[m\x0f'; // terminfo's sgr0 under TERM=tmux-256color and TERM=screen
const FISH_DEFAULT = `\x1b[92mroot${SGR0}@vm${SGR0} \x1b[31m/tmp${SGR0}${SGR0}# `;
const FISH_VI_INSERT = `\x1b[1m\x1b[32m[I]${SGR0} `;
const POWERLINE =
  '\x1b[0;38;5;231;48;5;31;1m root \x1b[0;38;5;31;48;5;240;22m\ue0b0\x1b[0;38;5;250;48;5;240m tmp \x1b[0;38;5;240;49;22m\ue0b0 \x1b[0m';

describe('checkScreen with the prompts people run', () => {
  it("passes fish's default prompt with its SI bytes, and refuses a typed line after it", async () => {
    expect(await checkScreen(screen(['root@vm /tmp#'], 14, 0), { prompt: FISH_DEFAULT })).toEqual(ok);
    expect(await checkScreen(screen(['root@vm /tmp# ls'], 16, 0), { prompt: FISH_DEFAULT })).toEqual(
      refused(/column 16/),
    );
    expect(await checkScreen(screen(['root@vm /tmp# ls'], 14, 0), { prompt: FISH_DEFAULT })).toEqual(
      refused(/after the cursor/),
    );
  });

  it("passes fish's vi mode indicator before the default prompt", async () => {
    const p = { prompt: FISH_VI_INSERT + FISH_DEFAULT };
    expect(await checkScreen(screen(['[I] root@vm /tmp#'], 18, 0), p)).toEqual(ok);
    expect(await checkScreen(screen(['[N] root@vm /tmp#'], 18, 0), p)).toEqual(
      refused(/does not show the prompt/, 'prompt'),
    );
  });

  it('passes symbols and private-use glyphs, one cell each, and an emoji of two', async () => {
    const omb = { prompt: '\x1b[0;33m±\x1b[0m|\x1b[1;32mmain\x1b[0;32m✔\x1b[0m|→ ' };
    expect(await checkScreen(screen(['±|main✔|→'], 10, 0), omb)).toEqual(ok);
    expect(await checkScreen(screen([' root \ue0b0 tmp \ue0b0'], 14, 0), { prompt: POWERLINE })).toEqual(ok);
    expect(await checkScreen(screen([' root \ue0b0 tmp \ue0b0 x'], 15, 0), { prompt: POWERLINE })).toEqual(
      refused(/column 15/),
    );
    const glyphs = { prompt: '\x1b[44m ⎇ main ± \x1b[34;49m\ue0b0\x1b[m ✓ ✗ ○ ● ❯ ➜ ' };
    expect(await checkScreen(screen([' ⎇ main ± \ue0b0 ✓ ✗ ○ ● ❯ ➜'], 24, 0), glyphs)).toEqual(ok);
    expect(await checkScreen(screen(['🐟 $'], 5, 0), { prompt: '🐟 $ ' })).toEqual(ok);
    expect(await checkScreen(screen(['日本 $'], 7, 0), { prompt: '日本 $ ' })).toEqual(ok);
    expect(await checkScreen(screen(['$ 日本'], 2, 0), { prompt: '$ ' })).toEqual(refused(/after the cursor/));
  });

  it('places OSC titles, 133;A marks and charset selections nowhere, as a terminal does', async () => {
    const p = { prompt: '\x1b]0;fish /tmp\x07\x1b]133;A\x1b\\\x1b(B\x1b)0\x0e\x0f> ' };
    expect(await checkScreen(screen(['>'], 2, 0), p)).toEqual(ok);
    // A carriage return: the text after it overwrites the line's start, as on the screen.
    expect(await checkScreen(screen(['b $'], 4, 0), { prompt: 'a\rb $ ' })).toEqual(ok);
  });

  it('passes a pure-like two-line prompt, checking its upper line too', async () => {
    const pure = { prompt: '\n\x1b[34m~/src\x1b[m \x1b[90mmain\x1b[m\n\x1b[35m❯\x1b[m ' };
    expect(await checkScreen(screen(['out', '', '~/src main', '❯'], 2, 3), pure)).toEqual(ok);
    expect(await checkScreen(screen(['out', '', '~/src main', '❯ x'], 3, 3), pure)).toEqual(refused(/column 3/));
    // A command's output that ends in `❯ ` is not the prompt: its upper line is missing.
    expect(await checkScreen(screen(['out', '❯'], 2, 1), pure)).toEqual(refused(/does not show the prompt/, 'prompt'));
  });

  it('passes a tide-like right prompt with a date at the line end, and refuses when it differs', async () => {
    const p = { prompt: '\x1b[32m~\x1b[m ❯ ', right: `\x1b[90m2026-12-03 \ue0b3 10:41${SGR0}` };
    const row = (mid: string) => '~ ❯ ' + mid + ' '.repeat(80 - 4 - mid.length - 18) + '2026-12-03 \ue0b3 10:41';
    expect(await checkScreen(screen([row('')], 4, 0, 80), p)).toEqual(ok);
    expect(await checkScreen(screen([row('ls')], 4, 0, 80), p)).toEqual(refused(/after the cursor/));
    const old = '~ ❯' + ' '.repeat(59) + '2026-12-03 \ue0b3 10:40';
    expect(await checkScreen(screen([old], 4, 0, 80), p)).toEqual(refused(/after the cursor/));
  });

  it("refuses a prompt that moves the cursor to a fixed place or clears the screen, as the prompt's", async () => {
    expect(await checkScreen(screen(['$'], 2, 0), { prompt: '\x1b[H$ ' })).toEqual(refused(/fixed place/, 'prompt'));
    expect(await checkScreen(screen(['$'], 2, 0), { prompt: '\x1b[2J$ ' })).toEqual(refused(/fixed place/, 'prompt'));
    expect(await checkScreen(screen(['$'], 2, 0), { prompt: '\x1b[A$ ' })).toEqual(refused(/fixed place/, 'prompt'));
  });
});

describe('checkScreen, more real prompts', () => {
  it("keeps a no-break space at a prompt's end (powerline's segments end in one)", async () => {
    const p = { prompt: '\x1b[0;38;5;231;48;5;31;1m\u00a0root\u00a0\x1b[0;38;5;31;49;22m\ue0b0\u00a0\x1b[0m' };
    expect(await checkScreen(screen(['\u00a0root\u00a0\ue0b0\u00a0'], 8, 0), p)).toEqual(ok);
    expect(await checkScreen(screen(['\u00a0root\u00a0\ue0b0\u00a0x'], 9, 0), p)).toEqual(refused(/column 9/));
  });
});

describe('parseScreen', () => {
  it("reads the one call's format line and the pane's lines", () => {
    expect(parseScreen('2 1 0 0 80 2\n$ ls\n$\n')).toEqual({
      cursorX: 2,
      cursorY: 1,
      inMode: false,
      alternate: false,
      width: 80,
      lines: ['$ ls', '$'],
    });
    expect(parseScreen('2 1 1 0 80 0\n')?.inMode).toBe(true);
    expect(parseScreen('garbage\n$\n')).toBeUndefined();
    expect(parseScreen('2 1 0 0 80\n$ ls\n$\n')).toBeUndefined();
  });
});

describe('screenAnswered', () => {
  const b = (s: string): Buffer => Buffer.from(s, 'utf8');

  it('is true once the format line and as many rows as the pane is high are there, ends included', () => {
    expect(screenAnswered(b('2 1 0 0 80 3\n$ ls\n$\n\n'))).toBe(true);
    expect(screenAnswered(b('0 0 0 0 80 1\n\n'))).toBe(true);
    expect(screenAnswered(b('2 0 0 0 80 1\n✔ ❯ \n'))).toBe(true);
  });

  it("is false before the last row has ended, and for what is not the call's answer", () => {
    expect(screenAnswered(b('2 1 0 0 80 3\n$ ls\n$\n'))).toBe(false); // a row to come
    expect(screenAnswered(b('2 1 0 0 80 3\n$ ls\n$\n\nmore\n'))).toBe(false); // more than the pane
    expect(screenAnswered(b('2 1 0 0 80 3\n$ ls\n$\n '))).toBe(false); // a row begun
    expect(screenAnswered(b('2 1 0 0 80 3'))).toBe(false); // the format line not ended
    expect(screenAnswered(b('2 1 0 0 80\n$\n'))).toBe(false); // no height
    expect(screenAnswered(b(''))).toBe(false);
    expect(screenAnswered(b("can't find pane: %9\n"))).toBe(false);
  });
});
