// The screen check's one tmux call (docs/shells.md): which read-only questions
// read a pane's cursor, modes and lines. A helper asks them of its own pane's tmux
// (helper/shell/screen/); the relay of a `tmux-run ssh` session asks them of its local pane for
// the far end (src/remote/relay-screen.ts). One home, so that both read the same.

/** The call's format line: cursor, mode, alternate screen, width. */
export const SCREEN_FORMAT = '#{cursor_x} #{cursor_y} #{pane_in_mode} #{alternate_on} #{pane_width}';

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
