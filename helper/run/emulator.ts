// A terminal run's screen as a person would see it: @xterm/headless (xterm.js without a DOM, with
// unicode 11 widths) fed every byte the run prints. Loaded on a helper's first terminal run only
// (with require: importing CommonJS from an ES module starts Node's export scanner, several MB
// resident), never in a helper that has none. Its memory is bounded by the terminal's size and
// SCREEN_SCROLLBACK (BENCHMARKS.md: what one holds).
import { createRequire } from 'node:module';
import type { Terminal as XTerminal } from '@xterm/headless';
import type { ScreenReply, TerminalSize } from '../../src/core/protocol/messages.js';
import { SCREEN_SCROLLBACK } from '../../src/core/protocol/limits.js';

type Headless = typeof import('@xterm/headless');
type Unicode11 = typeof import('@xterm/addon-unicode11');

let modules: { Terminal: Headless['Terminal']; Unicode11Addon: Unicode11['Unicode11Addon'] } | undefined;

function load(): NonNullable<typeof modules> {
  if (modules) return modules;
  const require = createRequire(import.meta.url);
  const { Terminal } = require('@xterm/headless') as Headless;
  const { Unicode11Addon } = require('@xterm/addon-unicode11') as Unicode11;
  return (modules = { Terminal, Unicode11Addon });
}

/** The longest title kept (the contract's maxLength). */
const TITLE_CHARS = 400;

/** What a screen shows: rows as text, the cursor, the alternate screen, the title. */
export type ScreenView = Pick<ScreenReply, 'cols' | 'rows' | 'lines' | 'cursor' | 'alternate' | 'title'>;

export class Emulator {
  private readonly term: XTerminal;
  private title = '';
  private cursorHidden = false;

  constructor(readonly size: TerminalSize) {
    const { Terminal, Unicode11Addon } = load();
    this.term = new Terminal({
      cols: size.cols,
      rows: size.rows,
      scrollback: SCREEN_SCROLLBACK,
      allowProposedApi: true,
    });
    this.term.loadAddon(new Unicode11Addon());
    this.term.unicode.activeVersion = '11';
    this.term.onTitleChange((t) => (this.title = t.slice(0, TITLE_CHARS)));
    // DECTCEM (CSI ? 25 h / l): xterm.js keeps it internally only; seen here, then handled as usual.
    const cursor = (shown: boolean) => (params: (number | number[])[]) => {
      if (params.includes(25)) this.cursorHidden = !shown;
      return false;
    };
    this.term.parser.registerCsiHandler({ prefix: '?', final: 'h' }, cursor(true));
    this.term.parser.registerCsiHandler({ prefix: '?', final: 'l' }, cursor(false));
  }

  write(chunk: Buffer): void {
    this.term.write(chunk);
  }

  /** The screen once everything written so far is parsed. */
  view(): Promise<ScreenView> {
    return new Promise((resolve) => this.term.write('', () => resolve(this.now())));
  }

  private now(): ScreenView {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < this.term.rows; y++)
      lines.push((b.getLine(b.baseY + y)?.translateToString(true) ?? '').replace(/ +$/, ''));
    return {
      cols: this.term.cols,
      rows: this.term.rows,
      lines,
      cursor: { x: b.cursorX, y: b.cursorY, visible: !this.cursorHidden },
      alternate: b.type === 'alternate',
      ...(this.title !== '' ? { title: this.title } : {}),
    };
  }

  /** Bytes that draw this screen (as text) on the person's terminal, cursor included. */
  async redraw(): Promise<Buffer> {
    const v = await this.view();
    const rows = v.lines.map((l, y) => `\x1b[${y + 1};1H${l}`).join('');
    return Buffer.from(
      `\x1b[H\x1b[2J${rows}\x1b[${v.cursor.y + 1};${v.cursor.x + 1}H${v.cursor.visible ? '\x1b[?25h' : '\x1b[?25l'}`,
    );
  }

  dispose(): void {
    this.term.dispose();
  }
}
