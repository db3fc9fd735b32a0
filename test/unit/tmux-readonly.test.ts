// Only read-only questions reach tmux (src/core/os/tmux.ts), also in a `;` sequence: the screen check's
// one call (display-message -p, then capture-pane -p) passes; anything that types, pastes or
// saves a buffer is refused before tmux is run.
import { describe, expect, it } from 'vitest';
import { notReadOnly, tmuxQuery } from '../../src/core/os/tmux.js';
import { SCREEN_FORMAT } from '../../helper/shell/screen/screen.js';

describe('notReadOnly', () => {
  it("passes the screen check's call and the other questions", () => {
    expect(
      notReadOnly(['display-message', '-p', '-t', '%1', SCREEN_FORMAT, ';', 'capture-pane', '-p', '-t', '%1']),
    ).toBeUndefined();
    expect(notReadOnly(['list-panes', '-a', '-F', '#{pane_id}'])).toBeUndefined();
  });

  it('refuses a command that is not a question, wherever it stands in the sequence', () => {
    expect(notReadOnly(['send-keys', '-t', '%1', 'x'])).toBe('send-keys');
    expect(notReadOnly(['display-message', '-p', 'x', ';', 'send-keys', '-t', '%1', 'x'])).toBe('send-keys');
    expect(notReadOnly(['display-message', '-p', 'x', ';', 'paste-buffer'])).toBe('paste-buffer');
    expect(notReadOnly(['capture-pane', '-t', '%1'])).toBe('capture-pane without -p');
    expect(notReadOnly(['display-message', '-p', 'x', ';'])).toBe('undefined');
    expect(notReadOnly([])).toBe('undefined');
  });

  it('tmuxQuery refuses before running tmux', async () => {
    await expect(tmuxQuery('/nonexistent', ['list-panes', ';', 'send-keys', 'x'])).rejects.toThrow(
      /refusing to run tmux command send-keys/,
    );
  });
});
