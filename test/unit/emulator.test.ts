// A terminal run's screen (helper/run/emulator.ts, @xterm/headless): rows as text, the cursor and
// whether it shows, the alternate screen, the title, wide characters once, and the redraw that
// puts the same screen on the person's terminal.
import { describe, expect, it } from 'vitest';
import { Emulator } from '../../helper/run/emulator.js';

const fed = async (bytes: string, size = { cols: 40, rows: 5 }) => {
  const e = new Emulator(size);
  e.write(Buffer.from(bytes));
  return { e, v: await e.view() };
};

describe('the emulator', () => {
  it('gives the rows as text, colours dropped and trailing spaces trimmed, with the cursor', async () => {
    const { v } = await fed('\x1b[31mred\x1b[0m text   \r\n>>> ');
    expect(v.lines).toEqual(['red text', '>>>', '', '', '']);
    expect(v.cursor).toEqual({ x: 4, y: 1, visible: true });
    expect([v.cols, v.rows, v.alternate, v.title]).toEqual([40, 5, false, undefined]);
  });

  it('sees the alternate screen, a hidden cursor and the title, and the normal screen back', async () => {
    const { e, v } = await fed('before\r\n\x1b]2;editor\x07\x1b[?1049h\x1b[H\x1b[?25lfull');
    expect(v).toMatchObject({ alternate: true, title: 'editor', cursor: { visible: false } });
    expect(v.lines[0]).toBe('full');
    e.write(Buffer.from('\x1b[?25h\x1b[?1049l'));
    const back = await e.view();
    expect(back).toMatchObject({ alternate: false, cursor: { visible: true } });
    expect(back.lines[0]).toBe('before');
  });

  it('counts a wide character once in its row, and keeps only the screen (no scrollback)', async () => {
    const { v } = await fed(`${'x\r\n'.repeat(10)}wide 🐟 end`);
    expect(v.lines.at(-1)).toBe('wide 🐟 end');
    expect(v.cursor.x, 'the fish takes two cells').toBe(11);
    expect(v.lines.filter((l) => l === 'x')).toHaveLength(4);
  });

  it('redraws the same screen on another terminal', async () => {
    const { e } = await fed('a\r\n  b');
    const other = new Emulator({ cols: 40, rows: 5 });
    other.write(await e.redraw());
    expect(await other.view()).toEqual(await e.view());
  });
});
