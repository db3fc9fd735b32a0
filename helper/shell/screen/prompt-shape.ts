// A prompt measured the way a terminal measures it: its bytes written into a real terminal
// emulator (xterm.js without a DOM, @xterm/headless, with Unicode 11 widths: the cell widths tmux
// 3.3a gives the symbols and glyphs prompts draw, FACTS.md) of the pane's width, then its rows read
// back as cells' text and the cursor where it stood after the last byte. SI and SO, SGR, OSC titles
// and marks, charset selections: the emulator does with them what a terminal does. The emulator is
// loaded at the first measure only (an idle helper never loads it) and one Terminal is reused; a
// shape is kept by bytes and width, since a prompt rarely changes between runs.
import { createRequire } from 'node:module';
import type { Terminal as XTerm } from '@xterm/headless';

/** A prompt as a terminal shows it, starting at column 0 of an empty row. */
export interface PromptShape {
  /** The rows it covers, top to bottom, as their cells' text with trailing blanks left out. */
  rows: string[];
  /** The cursor's column after the prompt (on the last row). */
  x: number;
  /** The last row's first `x` cells exactly (blanks included): what stands before the cursor. */
  lead: string;
  /** Why the prompt cannot be placed for sure, when it cannot (it moves the cursor, clears, ...). */
  unsure?: string;
}

/** Rows the emulator has: a prompt that needs more is not measured. */
const ROWS = 40;
/** Rows of filler above the second rendering: a prompt that moves to a fixed place shows there. */
const OFFSET = 3;
const FILLER = '#';
const CACHE_MAX = 16;

let term: XTerm | undefined;
const cache = new Map<string, PromptShape>();

/** The one emulator (loaded and made at the first use), cleared for a new rendering of `cols` columns. */
function emulator(cols: number): XTerm {
  if (!term) {
    const require = createRequire(import.meta.url);
    const { Terminal } = require('@xterm/headless') as typeof import('@xterm/headless');
    const { Unicode11Addon } = require('@xterm/addon-unicode11') as typeof import('@xterm/addon-unicode11');
    term = new Terminal({ cols, rows: ROWS, scrollback: 0, allowProposedApi: true, convertEol: true });
    term.loadAddon(new Unicode11Addon());
    term.unicode.activeVersion = '11';
  }
  if (term.cols !== cols) term.resize(cols, ROWS);
  term.reset();
  return term;
}

interface Rendering {
  rows: string[];
  x: number;
  y: number;
  lead: string;
  /** The filler rows as they stood afterwards. */
  above: string[];
}

function render(t: XTerm, before: string, bytes: string, top: number): Promise<Rendering> {
  return new Promise((resolve) => {
    t.write(before + bytes, () => {
      const b = t.buffer.active;
      // Trailing spaces left out, as tmux's capture does (spaces only: a no-break space is a character).
      const text = (i: number): string => (b.getLine(i)?.translateToString(true) ?? '').replace(/ +$/, '');
      const rows: string[] = [];
      for (let i = top; i <= b.cursorY; i++) rows.push(text(i));
      const above = Array.from({ length: top }, (_, i) => text(i));
      const lead = b.getLine(b.cursorY)?.translateToString(false, 0, b.cursorX) ?? '';
      resolve({ rows, x: b.cursorX, y: b.cursorY - top, lead, above });
    });
  });
}

/** Measures `bytes` (what the shell writes for its prompt) at `cols` columns. */
export async function measurePrompt(bytes: string, cols: number): Promise<PromptShape> {
  const key = `${cols}\0${bytes}`;
  const known = cache.get(key);
  if (known) return known;
  const shape = await measureNew(bytes, cols);
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, shape);
  return shape;
}

async function measureNew(bytes: string, cols: number): Promise<PromptShape> {
  // Rendered twice: at the top of an empty screen, and below rows of filler. A prompt drawn
  // relative to where it starts (all of them but ones that move the cursor to a fixed place,
  // clear the screen or scroll) looks the same both times, and leaves the filler alone.
  const fresh = await render(emulator(cols), '', bytes, 0);
  const filler = `${FILLER}\r\n`.repeat(OFFSET);
  const lower = await render(emulator(cols), filler, bytes, OFFSET);
  const shape: PromptShape = { rows: fresh.rows, x: fresh.x, lead: fresh.lead };
  const same =
    lower.x === fresh.x &&
    lower.y === fresh.y &&
    lower.rows.join('\n') === fresh.rows.join('\n') &&
    lower.above.every((r) => r === FILLER);
  if (!same) return { ...shape, unsure: 'it moves the cursor to a fixed place, or clears or scrolls the screen' };
  if (fresh.y < 0 || fresh.y + OFFSET >= ROWS - 1)
    return { ...shape, unsure: `it takes more than ${ROWS - OFFSET - 1} rows` };
  // A cursor past the last column waits to wrap: terminals do not agree where it then stands.
  if (fresh.x >= cols) return { ...shape, unsure: 'it ends at the right edge of the pane' };
  return shape;
}
