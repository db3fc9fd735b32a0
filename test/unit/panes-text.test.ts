// The text of a tmux_enrolled_panes result, for a client that shows an agent only text: each pane in
// one line with what decides how a run goes there (state, the person's ask mode and sandbox, the
// queue), and nothing a hostile name could use to break the line.
import { describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { renderPanes } from '../../src/mcp/calls.js';

const base: PaneListing = {
  pane_id: '%3',
  generation: 'g1',
  session: 'work',
  window: 2,
  window_name: 'editor',
  cwd: '/home/me/project',
  shell_pid: 100,
  helper_pid: 101,
  state: 'idle',
  mode: 'auto',
  sandbox: 'off',
  shell: 'zsh',
  editor_check: 'exact',
  editor_check_reason: null,
  queued: 0,
  enrolled_at: '2026-12-01T09:00:00.000Z',
  host: null,
  sleeps_after: '10m',
  tmux_socket: '/tmp/tmux-1000/default',
  server_generation: '1.2.abc',
  process_generation: 'd'.repeat(32),
  enrollment_generation: 'c'.repeat(32),
};

describe('tmux_enrolled_panes text', () => {
  it("names each pane's state, mode, sandbox and queue", () => {
    expect(
      renderPanes([
        base,
        { ...base, pane_id: '%4', mode: 'ask', sandbox: 'workspace', state: 'running', queued: 2 },
      ]).split('\n'),
    ).toEqual([
      '%3 generation g1 session "work" window 2 state idle shell zsh check exact mode auto sandbox off queued 0 cwd "/home/me/project"',
      '%4 generation g1 session "work" window 2 state running shell zsh check exact mode ask sandbox workspace queued 2 cwd "/home/me/project"',
    ]);
  });

  it('keeps one line per pane whatever its names hold, and says what to do when none is enrolled', () => {
    const text = renderPanes([{ ...base, session: 'a\nb', cwd: '/x\u001b[31m' }]);
    expect(text.split('\n')).toHaveLength(1);
    expect(text).not.toContain('\u001b');
    expect(renderPanes([])).toMatch(/^No pane is enrolled\. Ask the person to source shell\/tmux-run\.zsh/);
  });

  it('says which panes have a helper of another build, that refuses runs until enrolled again', () => {
    const lines = renderPanes([base, { ...base, pane_id: '%4', generation: 'g2' }], new Set(['g2'])).split('\n');
    expect(lines[0]).not.toMatch(/another build/);
    expect(lines[1]).toMatch(
      / \(its helper is of another build of tmux-run: runs are refused helper_outdated until the person enrolls the pane again\)$/,
    );
  });
});
