// The screen check's one tmux call (docs/shells.md): which read-only questions
// read a pane's cursor, modes and lines, and when their answer is all there. A helper asks them of
// its own pane's tmux (helper/shell/screen/); the relay of a `tmux-run ssh` session asks them of
// its local pane for the far end (src/remote/relay-screen.ts). One home, so that both read the same.

/** The call's format line: cursor, mode, alternate screen, width, height. */
export const SCREEN_FORMAT = '#{cursor_x} #{cursor_y} #{pane_in_mode} #{alternate_on} #{pane_width} #{pane_height}';

/** The call's arguments: display-message for the cursor and modes, then capture-pane -p. */
export const screenArgs = (paneId: string): string[] => [
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
];

/**
 * Whether `out`, what the call printed so far, is its whole answer (pure): the format line, then
 * as many lines as it says the pane is high. capture-pane -p prints each row of the pane's screen,
 * as many as the pane's height, each ended by a newline, and nothing comes after it; so the answer
 * is taken as soon as tmux printed it, without waiting for the client to exit and close its pipes
 * (src/core/os/screen-read.ts). Counted in bytes: a newline byte is never part of a UTF-8
 * character. An answer that never looks whole (an error, an odd tmux) is taken when tmux ends.
 */
export function screenAnswered(out: Buffer): boolean {
  const head = out.indexOf(0x0a);
  if (head < 0 || out[out.length - 1] !== 0x0a) return false;
  const m = /^\d+ \d+ \d+ \d+ \d+ (\d+)$/.exec(out.toString('latin1', 0, head));
  if (!m) return false;
  let rows = 0;
  for (let i = out.indexOf(0x0a, head + 1); i >= 0; i = out.indexOf(0x0a, i + 1)) rows++;
  return rows === Number(m[1]);
}
