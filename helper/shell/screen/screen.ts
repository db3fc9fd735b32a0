// The screen check, for shells whose handler cannot see the line being edited (editor_check
// `screen`: fish 3, and bash where its exact builtin cannot load): once the shell said it is idle
// at its primary prompt, the helper asks tmux, read-only and in one call, where the cursor is and
// what the pane shows, and compares that with the prompt the shell rendered, measured the way a
// terminal measures it (helper/shell/screen/prompt-shape.ts: a terminal emulator renders its bytes at the
// pane's width). A run may start only when the rows above the cursor show the prompt's rows, the
// cursor stands right after it, nothing is typed before or after it on that line (a right prompt
// allowed at the line's end) and nothing below. Any doubt refuses: the check may refuse an empty
// line, never pass a typed one. A refusal says whether the prompt is its cause (said once when the
// pane enrolls, helper/shell/screen/prompt-probe.ts) or only the moment.
import { measurePrompt, type PromptShape } from './prompt-shape.js';
import { screenQuery as askTmux } from '../../../src/core/os/screen-read.js';
import { SCREEN_FORMAT, screenAnswered, screenArgs } from '../../../src/core/os/screen-questions.js';

export { SCREEN_FORMAT, screenAnswered, screenArgs };

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

/** The prompt as the shell rendered it: the bytes it writes, escape sequences and all. */
export interface RenderedPrompt {
  prompt: string;
  /** A right prompt (fish), drawn at the end of the prompt's line. */
  right?: string;
  /** Text the line editor may draw before the prompt's last line (bash's show-mode-in-prompt). */
  prefixes?: readonly string[];
}

/**
 * The check's answer. A refusal says whether the prompt itself is the cause (`prompt`: it cannot
 * be placed for sure, or the screen does not show it as it renders, so runs here would keep being
 * refused) or only the moment (`line`: typed text, a line below, the cursor elsewhere; `pane`:
 * the pane shows something else, copy mode or a full-screen program, whatever the prompt).
 */
export type ScreenVerdict = { ok: true } | { ok: false; reason: string; cause: 'prompt' | 'line' | 'pane' | 'redraw' };

/**
 * What fish's snippet draws after the prompt when it draws a notice (shell/tmux-run.fish,
 * _tmux_run_say), until fish's repaint puts the line back: U+2060, zero-width, a cell in tmux.
 * A row that shows it after the prompt is being redrawn (cause `redraw`: looked at again).
 */
export const REDRAW_MARK = '\u2060';

const line = (reason: string): ScreenVerdict => ({ ok: false, reason, cause: 'line' });
const pane = (reason: string): ScreenVerdict => ({ ok: false, reason, cause: 'pane' });
const unservable = (reason: string): ScreenVerdict => ({ ok: false, reason, cause: 'prompt' });

/** bash's \001..\002 markers are readline's: never written to the terminal. */
const MARKERS = /[\x01\x02]/g;

/** The bytes of `prompt` with `prefix` drawn before its last line (bash's mode strings). */
function withPrefix(prompt: string, prefix: string): string {
  const nl = prompt.lastIndexOf('\n');
  return prompt.slice(0, nl + 1) + prefix + prompt.slice(nl + 1);
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const blank = (s: string): boolean => /^ *$/.test(s);
/** Trailing blanks as tmux leaves them out: spaces only (a no-break space is a character). */
const trimSpaces = (s: string): string => s.replace(/ +$/, '');

/** Whether rows `start`.. of the screen show the prompt's rows, its last one up to the cursor. */
function showsAt(screen: Screen, shape: PromptShape, start: number): boolean {
  const last = shape.rows.length - 1;
  for (let i = 0; i < last; i++) if (trimSpaces(screen.lines[start + i] ?? '') !== shape.rows[i]) return false;
  return (screen.lines[start + last] ?? '').startsWith(trimSpaces(shape.lead));
}

/** Whether the prompt stands anywhere on the screen (then a refusal is the moment's, not the prompt's). */
function shownAnywhere(screen: Screen, shape: PromptShape): boolean {
  for (let start = screen.lines.length - shape.rows.length; start >= 0; start--) {
    if (showsAt(screen, shape, start)) return true;
  }
  return false;
}

/** The check against the measured prompt and right prompt (pure). */
export function checkShape(screen: Screen, shape: PromptShape, right?: PromptShape): ScreenVerdict {
  if (shape.unsure) return unservable(`the prompt cannot be placed for sure: ${shape.unsure}`);
  if (right && (right.unsure || right.rows.length !== 1)) {
    return unservable(`the right prompt cannot be placed for sure: ${right.unsure ?? 'it takes more than one row'}`);
  }
  const start = screen.cursorY - (shape.rows.length - 1);
  if (start < 0 || screen.cursorY >= screen.lines.length || !showsAt(screen, shape, start)) {
    if (shape.rows.length > screen.lines.length) return unservable('the prompt has more rows than the pane');
    return shownAnywhere(screen, shape)
      ? line('the line does not start with the prompt')
      : unservable(
          'the pane does not show the prompt as it renders now (does it change from one draw to the next, a clock with seconds?)',
        );
  }
  if ((screen.lines[screen.cursorY] ?? '').slice(trimSpaces(shape.lead).length).includes(REDRAW_MARK)) {
    return { ok: false, reason: 'the shell is drawing a notice: its line is not back yet', cause: 'redraw' };
  }
  if (screen.cursorX !== shape.x) {
    return line(`the cursor is at column ${screen.cursorX}, not right after the prompt (${shape.x})`);
  }
  const rest = (screen.lines[screen.cursorY] ?? '').slice(trimSpaces(shape.lead).length);
  const r = (right?.rows[0] ?? '').replace(/^ +| +$/g, '');
  if (!blank(rest) && !(r !== '' && new RegExp(`^ *${escapeRe(r)} *$`).test(rest))) {
    return line('there is text on the prompt line after the cursor');
  }
  if (!screen.lines.slice(screen.cursorY + 1).every(blank)) return line('there is text below the prompt line');
  return { ok: true };
}

/** Whether the screen shows the prompt with an empty line after it. */
export async function checkScreen(screen: Screen, prompt: RenderedPrompt): Promise<ScreenVerdict> {
  if (screen.inMode) return pane('the pane is in copy mode');
  if (screen.alternate) return pane('the pane shows a full-screen program');
  if (screen.width < 1) return pane('the pane has no width');
  const bytes = prompt.prompt.replace(MARKERS, '');
  const right = prompt.right ? await measurePrompt(prompt.right.replace(MARKERS, ''), screen.width) : undefined;
  const first = checkShape(screen, await measurePrompt(bytes, screen.width), right);
  if (first.ok) return first;
  let moment = first.cause === 'line' ? first : undefined;
  for (const prefix of prompt.prefixes ?? []) {
    const shape = await measurePrompt(withPrefix(bytes, prefix.replace(MARKERS, '')), screen.width);
    const v = checkShape(screen, shape, right);
    if (v.ok) return v;
    // The prompt with one of the prefixes stands there: the refusal is the moment's.
    if (v.cause === 'line') moment ??= v;
  }
  return moment ?? first;
}

/** Parses the call's output: the format line (its last field the pane's height), then the pane's lines (pure). */
export function parseScreen(out: string): Screen | undefined {
  const lines = out.split('\n');
  const head = /^(\d+) (\d+) (\d+) (\d+) (\d+) \d+$/.exec(lines.shift() ?? '');
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
  return parseScreen(await askTmux(socket, screenArgs(paneId), screenAnswered));
}

/** How many times the screen is read before the check refuses, and the pause between reads. */
export const SCREEN_TRIES = 3;
export const SCREEN_PAUSE_MS = 15;

/**
 * The screen check of a pane, as a run needs it. The line editor redraws its line when SIGWINCH
 * arrives, and may still be at it when the answer comes (bash's readline runs the trap before
 * it redraws: the cursor then stands at column 0): the screen is read again, SCREEN_TRIES times
 * at most, SCREEN_PAUSE_MS apart, until it shows the prompt with an empty line. `tries` says how
 * many reads it took (the bench reads it). `first`: a read already made for this answer (fish's,
 * begun while its handler answered: helper/shell/signal/signal.ts), taken for the first.
 */
export async function checkPane(
  socket: string,
  paneId: string,
  prompt: RenderedPrompt,
  first?: Promise<Screen | undefined>,
): Promise<{ verdict: ScreenVerdict; tries: number }> {
  return checkWith(() => readScreen(socket, paneId), prompt, first);
}

/** checkPane's tries, each read with `read` (the pane's tmux here, or a far end's relay: ShellPlace.screen). */
export async function checkWith(
  read: () => Promise<Screen | undefined>,
  prompt: RenderedPrompt,
  first?: Promise<Screen | undefined>,
): Promise<{ verdict: ScreenVerdict; tries: number }> {
  let verdict: ScreenVerdict = { ok: false, reason: 'the screen was not read', cause: 'line' };
  for (let i = 0; i < SCREEN_TRIES; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, SCREEN_PAUSE_MS));
    let screen: Screen | undefined;
    try {
      screen = i === 0 && first ? await first : await read();
    } catch (e) {
      return {
        verdict: { ok: false, reason: `tmux could not show the pane (${(e as Error).message})`, cause: 'line' },
        tries: 0,
      };
    }
    verdict = screen ? await checkScreen(screen, prompt) : { ok: false, reason: 'tmux answered oddly', cause: 'line' };
    if (verdict.ok) return { verdict, tries: i + 1 };
  }
  return { verdict, tries: SCREEN_TRIES };
}
