// The screen check, for shells whose handler cannot see the line being edited (editor_check
// `screen`): once the shell said it is idle at its primary prompt, the helper asks tmux, read-only
// and in one call, where the cursor is and what the pane shows, and compares that with the prompt
// the shell rendered. A run may start only when the cursor stands right after the prompt, with
// nothing typed before or after it on that line (a right prompt allowed at the line's end) and
// nothing below. Any doubt refuses: the check may refuse an empty line, never pass a typed one.
import { tmuxQuery } from '../../src/os/tmux.js';

/** What tmux showed of the pane. */
export interface Screen {
  cursorX: number;
  cursorY: number;
  width: number;
  /** In copy mode (or another mode): what is shown is not the shell's. */
  inMode: boolean;
  /** The alternate screen (a full-screen program). */
  alternate: boolean;
  /** The pane's visible lines, top to bottom (tmux leaves out trailing spaces). */
  lines: string[];
}

/** The prompt as the shell rendered it, with its invisible parts still in. */
export interface RenderedPrompt {
  prompt: string;
  /** A right prompt (fish), drawn at the end of the prompt's line. */
  right?: string;
  /** Text the line editor may draw before the prompt's last line (bash's show-mode-in-prompt). */
  prefixes?: readonly string[];
}

export type ScreenVerdict = { ok: true } | { ok: false; reason: string };

const INVISIBLE = /\x01[^\x02]*\x02?/g;
// CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), and two- or three-byte escapes (ESC ( B).
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]/g;
const CONTROL = /[\x00-\x1f\x7f-\x9f]/;

/**
 * The last line of a rendered prompt as it appears on the screen: bash's \001..\002 parts and
 * escape sequences removed. Undefined when a control character is left whose effect on the line
 * cannot be told (a carriage return, a tab, a lone escape). Pure.
 */
export function visiblePrompt(raw: string): string | undefined {
  const text = raw.replace(INVISIBLE, '').replace(ESCAPES, '');
  const last = text.slice(text.lastIndexOf('\n') + 1);
  return CONTROL.test(last) ? undefined : last;
}

/** Whether one code point takes exactly one cell on any terminal tmux emulates (a safe subset). */
function narrow(cp: number): boolean {
  return (
    (cp >= 0x20 && cp < 0x7f) ||
    (cp >= 0xa0 && cp < 0x300) ||
    (cp >= 0x370 && cp < 0x483) ||
    (cp >= 0x48a && cp < 0x530) ||
    (cp >= 0x2010 && cp < 0x2028) ||
    (cp >= 0x2030 && cp < 0x205f) ||
    (cp >= 0x2190 && cp < 0x2200) ||
    (cp >= 0x2500 && cp < 0x25a0)
  );
}

/** The cells `s` takes, or undefined when a character's width cannot be measured for sure. Pure. */
export function cells(s: string): number | undefined {
  let n = 0;
  for (const ch of s) {
    if (!narrow(ch.codePointAt(0)!)) return undefined;
    n++;
  }
  return n;
}

const blank = (s: string): boolean => /^ *$/.test(s);

/** The check for one possible line start (the prompt, or a prefix and the prompt). */
function checkWith(screen: Screen, line: string, right: string | undefined): ScreenVerdict {
  const w = cells(line);
  if (w === undefined) return { ok: false, reason: 'the prompt holds characters whose width cannot be measured' };
  const rows = Math.floor(w / screen.width);
  const col = w % screen.width;
  if (col === 0 && w > 0) return { ok: false, reason: 'the prompt ends at the right edge of the pane' };
  if (screen.cursorX !== col) {
    return { ok: false, reason: `the cursor is at column ${screen.cursorX}, not right after the prompt (${col})` };
  }
  const start = screen.cursorY - rows;
  if (start < 0 || screen.cursorY >= screen.lines.length) {
    return { ok: false, reason: 'the prompt is not on the screen' };
  }
  const shown = screen.lines.slice(start, screen.cursorY + 1);
  let joined = '';
  for (const row of shown) {
    const n = cells(row);
    if (n === undefined || n > screen.width) {
      return { ok: false, reason: 'the prompt line holds characters whose width cannot be measured' };
    }
    joined += row + ' '.repeat(screen.width - n);
  }
  if (joined.slice(0, w) !== line) return { ok: false, reason: 'the line does not start with the prompt' };
  const rest = joined.slice(w).replace(/ +$/, '');
  const r = right ?? '';
  if (!blank(rest) && !(r !== '' && rest.endsWith(r) && blank(rest.slice(0, -r.length)))) {
    return { ok: false, reason: 'there is text on the prompt line after the cursor' };
  }
  if (!screen.lines.slice(screen.cursorY + 1).every(blank)) {
    return { ok: false, reason: 'there is text below the prompt line' };
  }
  return { ok: true };
}

/** Whether the screen shows the prompt with an empty line after it (pure). */
export function checkScreen(screen: Screen, prompt: RenderedPrompt): ScreenVerdict {
  if (screen.inMode) return { ok: false, reason: 'the pane is in copy mode' };
  if (screen.alternate) return { ok: false, reason: 'the pane shows a full-screen program' };
  if (screen.width < 1) return { ok: false, reason: 'the pane has no width' };
  const line = visiblePrompt(prompt.prompt);
  if (line === undefined) return { ok: false, reason: 'the prompt holds control characters that cannot be placed' };
  let right: string | undefined;
  if (prompt.right) {
    right = visiblePrompt(prompt.right);
    if (right === undefined || cells(right) === undefined) {
      return { ok: false, reason: 'the right prompt cannot be measured' };
    }
  }
  const first = checkWith(screen, line, right);
  if (first.ok) return first;
  for (const prefix of prompt.prefixes ?? []) {
    const p = visiblePrompt(prefix);
    if (p !== undefined && checkWith(screen, p + line, right).ok) return { ok: true };
  }
  return first;
}

/** The one tmux call's format line: cursor, mode, alternate screen, width. */
export const SCREEN_FORMAT = '#{cursor_x} #{cursor_y} #{pane_in_mode} #{alternate_on} #{pane_width}';

/** Parses the call's output: the format line, then the pane's lines (pure). */
export function parseScreen(out: string): Screen | undefined {
  const lines = out.split('\n');
  const head = /^(\d+) (\d+) (\d+) (\d+) (\d+)$/.exec(lines.shift() ?? '');
  if (!head) return undefined;
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return {
    cursorX: Number(head[1]),
    cursorY: Number(head[2]),
    inMode: head[3] !== '0',
    alternate: head[4] !== '0',
    width: Number(head[5]),
    lines,
  };
}

/** Asks tmux, read-only and in one call, for the pane's cursor, modes and lines. */
export async function readScreen(socket: string, paneId: string): Promise<Screen | undefined> {
  const out = await tmuxQuery(socket, [
    'display-message',
    '-p',
    '-t',
    paneId,
    SCREEN_FORMAT,
    ';',
    'capture-pane',
    '-p',
    '-t',
    paneId,
  ]);
  return parseScreen(out);
}
