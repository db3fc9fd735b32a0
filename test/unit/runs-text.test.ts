// The text of a tmux_runs result, for a client that shows text: each held run in one line a person
// reads as a sentence (state, outcome, byte counts, when it was queued and until when it is held).
import { describe, expect, it } from 'vitest';
import type { RunListing } from '../../src/broker/held-runs.js';
import { renderRuns } from '../../src/mcp/calls.js';

const base: RunListing = {
  run_id: 'a'.repeat(32),
  pane_id: '%3',
  generation: 'g1',
  script_digest: 'b'.repeat(64),
  state: 'running',
  queued_at: '2026-12-01T09:00:00.000Z',
  started_at: '2026-12-01T09:00:00.010Z',
  finished_at: null,
  outcome: null,
  stdout_bytes: 20,
  stderr_bytes: 0,
  held_until: null,
  background: true,
  input: 'closed',
  input_bytes: 0,
  attached: false,
  client: null,
  host: null,
};

describe('tmux_runs text', () => {
  it('says the state, the outcome, the byte counts and the times in words', () => {
    const finished: RunListing = {
      ...base,
      run_id: 'c'.repeat(32),
      state: 'finished',
      background: false,
      outcome: { ok: false, code: 'cancelled', exit_status: null, signal: 15 },
      finished_at: '2026-12-01T09:00:05.000Z',
      held_until: '2026-12-01T09:10:05.000Z',
    };
    expect(renderRuns([base, finished]).split('\n')).toEqual([
      `${'a'.repeat(32)} pane %3 (generation g1): running in the background; 20 bytes of stdout, 0 of stderr; queued at 2026-12-01T09:00:00.000Z`,
      `${'c'.repeat(32)} pane %3 (generation g1): finished (cancelled); 20 bytes of stdout, 0 of stderr; queued at 2026-12-01T09:00:00.000Z; result held until 2026-12-01T09:10:05.000Z`,
    ]);
    const ok = { ...base, state: 'finished' as const, outcome: { ok: true, code: null, exit_status: 0, signal: null } };
    expect(renderRuns([ok])).toContain(': finished in the background (exit 0);');
    expect(renderRuns([{ ...base, state: 'awaiting_approval' }])).toContain(': awaiting approval in the background;');
  });

  it('says who asked, escaped, when the client named itself', () => {
    expect(renderRuns([{ ...base, client: 'claude-code 2.0.1' }])).toContain(
      ' (generation g1) by claude-code 2.0.1: running',
    );
    expect(renderRuns([{ ...base, client: 'evil\x1b[2J 1' }])).toContain(' by evil\\x1b[2J 1: ');
  });

  it("names a pane on another host as %N@HOST, the host's name escaped", () => {
    expect(renderRuns([{ ...base, host: { destination: 'me@box', name: 'box' } }])).toContain(
      ' pane %3@box (generation g1)',
    );
    expect(renderRuns([{ ...base, host: { destination: 'x', name: 'b\x1b[2Jx' } }])).toContain(' pane %3@b\\x1b[2Jx (');
  });

  it('says when nothing is held', () => {
    expect(renderRuns([])).toMatch(/^No run is held/);
  });
});
