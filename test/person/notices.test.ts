// The person's side: notices drawn by zsh's line editor when a run starts and ends, the typing
// they do meanwhile left intact, and the audit trail of every run.
import { closeSync, constants, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { enrolledPane, recordOf } from '../../lab/enrollment.js';
import { CHANNEL } from '../../src/core/enrollment/layout.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import type { TmuxServer } from '../../lab/server.js';
import { useServer } from '../../lab/lifecycle.js';
import { waitUntil } from '../../lab/waiting.js';
import type { PaneListing } from '../../src/broker/registry.js';

describe('notices and the audit trail', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let on: { pane: Pane; listing: PaneListing };
  let off: { pane: Pane; listing: PaneListing };

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    on = await enrolledPane(server, { env: { TMUX_RUN_NOTIFY: 'on' } });
    off = await enrolledPane(server, { env: { TMUX_RUN_NOTIFY: 'off' } });
    mcp = await scope.startMcp();
  });

  it('draws a start and an end notice naming tmux-run and the run id', async () => {
    const call = callRun(mcp.client, on.listing, 'sleep 1; exit 5');
    // `by` the name and version the test's MCP client gave in initialize.
    const started = await on.pane.waitFor((s) => /tmux-run: run [0-9a-f]{8} by tmux-run-tests 1\.0\.0 started/.test(s));
    const r = await call;
    expect(r.structured.ok).toBe(true);
    const id8 = (r.structured.data.authorization.run_id as string).slice(0, 8);
    expect(started).toContain(
      `tmux-run: run ${id8} by tmux-run-tests 1.0.0 started (script sha256 ${(r.structured.data.authorization.script_digest as string).slice(0, 12)})`,
    );
    const ended = await on.pane.waitFor((s) =>
      s.includes(`tmux-run: run ${id8} by tmux-run-tests 1.0.0 exited 5 after`),
    );
    expect(ended).toMatch(new RegExp(`tmux-run: run ${id8} by tmux-run-tests 1\\.0\\.0 exited 5 after \\d+ ms`));
  });

  it("draws notices that reach the shell in one read as one message, leaving the prompt's line alone", async () => {
    // A run's start and end notices often reach zsh in one read (a short run, a loaded machine):
    // zsh 5.9 drew a second zle -M of one widget call over the prompt's line ("tm" where the
    // prompt was). The test speaks as the helper does, into the channel's request FIFO: one
    // notice, then two in a single write.
    const fifo = `${recordOf(server, on.listing).channel}${CHANNEL.request}`;
    const say = (text: string): void => {
      const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      try {
        writeSync(fd, text);
      } finally {
        closeSync(fd);
      }
    };
    say('N tmux-run: notice one\n');
    await on.pane.waitFor((s) => s.trimEnd().endsWith('tmux-run: notice one'));
    say('N tmux-run: notice two\nN tmux-run: notice three\n');
    const screen = await on.pane.waitFor((s) => s.trimEnd().endsWith('tmux-run: notice three'));
    expect(screen.trimEnd().split('\n').slice(-3)).toEqual(['$', 'tmux-run: notice two', 'tmux-run: notice three']);
  });

  it('leaves a line the person types during a run intact', async () => {
    const call = callRun(mcp.client, on.listing, 'sleep 1');
    await on.pane.waitFor((s) => / started \(/.test(s.split('\n').slice(-3).join('\n')));
    await on.pane.type('echo typed-during-run', { enter: false });
    const r = await call;
    const id8 = (r.structured.data.authorization.run_id as string).slice(0, 8);
    const screen = await on.pane.waitFor((s) => s.includes(`run ${id8} by tmux-run-tests 1.0.0 exited 0`));
    expect(screen).toContain('$ echo typed-during-run');
    await on.pane.type('', { enter: true });
    await on.pane.waitFor((s) => /^typed-during-run$/m.test(s));
  });

  it('draws nothing with TMUX_RUN_NOTIFY=off, and the screen shows nothing of the run', async () => {
    const before = await off.pane.capture();
    const r = await callRun(mcp.client, off.listing, 'echo secret-output; echo more >&2');
    expect(r.structured.ok).toBe(true);
    // Give a notice every chance to be drawn, then check none was.
    await new Promise((res) => setTimeout(res, 300));
    const after = await off.pane.capture();
    expect(after).toBe(before);
    expect(after).not.toMatch(/tmux-run: run/);
    expect(after).not.toContain('secret-output');
  });

  it('records every run in the audit trail (0600), by digest, never by text or output', async () => {
    const marker = `audit-marker-${Date.now()}`;
    const r = await callRun(mcp.client, off.listing, `echo ${marker}`);
    const runId = r.structured.data.authorization.run_id as string;
    const path = join(server.env.XDG_STATE_HOME!, 'tmux-run', 'audit.jsonl');
    const entries = await waitUntil(() => {
      const lines = readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const mine = lines.filter((e) => e.run_id === runId);
      return mine.some((e) => e.event === 'end') ? mine : undefined;
    });
    expect(entries.map((e) => e.event)).toEqual(['start', 'end']);
    for (const e of entries) {
      expect(e.script_digest).toBe(r.structured.data.authorization.script_digest);
      expect(typeof e.outcome).toBe('string');
    }
    expect(entries[1]).toMatchObject({
      outcome: 'exited',
      exit_status: 0,
      stdout_bytes: marker.length + 1,
      stderr_bytes: 0,
    });
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(marker);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
