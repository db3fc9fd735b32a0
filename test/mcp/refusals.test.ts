// Calls that must be refused with nothing run: stale, unknown and malformed targets, malformed
// arguments, a half-typed line in the person's editor, and a shell busy with a command.
import { readFileSync } from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { descendantsOf } from '../../lab/processes.js';
import { waitUntil } from '../../lab/waiting.js';
import { checkRunResult, type Fixture, setupFixture, sha256 } from './support.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await setupFixture();
});
afterAll(async () => {
  await fx?.close();
});

const cmdline = (pid: number): string =>
  readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');

const NONE = { state: 'none', authorization: null, completion: { state: 'unobserved' } };

/** Calls with args built around a marker-creating script; expects a refusal with `code`, and proves nothing ran. */
async function expectRefused(build: (script: string) => unknown, code: string): Promise<Record<string, any>> {
  const marker = fx.marker();
  const script = `touch '${marker}'`;
  const { result, s } = await fx.call(build(script));
  expect(result.isError).toBe(true);
  expect(s.ok).toBe(false);
  expect(s.error.code, s.error.message).toBe(code);
  expect(s.error.message).not.toContain(marker);
  await fx.assertNothingRan(script, marker);
  return s.error;
}

describe('targets', () => {
  it('refuses a wrong generation as stale_generation', async () => {
    const e = await expectRefused(
      (script) => ({ target: { ...fx.target(), generation: 'g' + fx.listing.generation.slice(1) }, script }),
      'stale_generation',
    );
    expect(e).toMatchObject({ delivery: 'not_sent', effects: NONE });
    expect(e.message).toMatch(/tmux_enrolled_panes/);
  });

  it('refuses an unknown pane id as not_enrolled', async () => {
    const e = await expectRefused((script) => ({ target: { ...fx.target(), id: '%99999' }, script }), 'not_enrolled');
    expect(e).toMatchObject({ delivery: 'not_sent', effects: NONE });
  });

  it.each<[string, (t: Record<string, unknown>, script: string) => unknown]>([
    ["id 'x'", (t, script) => ({ target: { ...t, id: 'x' }, script })],
    ["id '3' without %", (t, script) => ({ target: { ...t, id: '3' }, script })],
    ['kind window', (t, script) => ({ target: { ...t, kind: 'window' }, script })],
    ['an empty generation', (t, script) => ({ target: { ...t, generation: '' }, script })],
    ['a generation of 129 characters', (t, script) => ({ target: { ...t, generation: 'a'.repeat(129) }, script })],
    ['a numeric generation', (t, script) => ({ target: { ...t, generation: 5 }, script })],
    ['no generation', (t, script) => ({ target: { kind: t.kind, id: t.id }, script })],
    ['no kind', (t, script) => ({ target: { id: t.id, generation: t.generation }, script })],
    ['no target', (_t, script) => ({ script })],
    ['no script', (t) => ({ target: t })],
    ['a target that is a string', (t, script) => ({ target: t.id, script })],
    ['a script that is not a string', (t) => ({ target: t, script: ['touch', 'x'] })],
    ['an extra field in target', (t, script) => ({ target: { ...t, window: 1 }, script })],
    ['an extra top-level field', (t, script) => ({ target: t, script, timeout: 5 })],
  ])('refuses %s as invalid_arguments', async (_what, build) => {
    const e = await expectRefused((script) => build(fx.target(), script), 'invalid_arguments');
    expect(e).toMatchObject({ delivery: 'not_sent', effects: NONE });
    expect(e.message).toMatch(/argument/);
  });

  it('refuses a call with no arguments at all as invalid_arguments', async () => {
    const r = await fx.mcp.client.callTool({ name: 'tmux_run' });
    expect(r.isError).toBe(true);
    expect(checkRunResult(r as CallToolResult).error).toMatchObject({
      code: 'invalid_arguments',
      delivery: 'not_sent',
      effects: NONE,
    });
  });
});

describe("the person's shell", () => {
  it('refuses while a line is half-typed, leaving it exactly as typed', async () => {
    const { pane, server } = fx;
    const marker = fx.marker();
    const script = `touch '${marker}'`;
    await pane.type('echo half', { enter: false });
    await pane.waitFor((screen) => screen.split('\n').at(-1) === '$ echo half');
    try {
      for (let i = 0; i < 3; i++) {
        const { s } = await fx.call({ target: fx.target(), script });
        expect(s.ok).toBe(false);
        expect(s.error.code).toBe('editor_not_empty');
        expect(s.error.delivery).toBe('observed');
        expect(s.error.effects.state).toBe('none');
        expect(s.error.effects.completion).toEqual({ state: 'unobserved' });
        expect(s.error.effects.authorization).toMatchObject({
          state: 'authorized',
          pane_id: pane.id,
          script_digest: sha256(script),
        });
        expect(s.error.message).not.toContain(marker);
      }
      // The prompt line holds exactly what was typed, with the cursor at its end.
      const screen = await pane.capture();
      expect(screen.split('\n').at(-1)).toBe('$ echo half');
      const [x, y] = (await server.tmux(['display-message', '-p', '-t', pane.id, '#{cursor_x} #{cursor_y}']))
        .trim()
        .split(' ')
        .map(Number);
      const visible = (await server.tmux(['capture-pane', '-p', '-t', pane.id])).split('\n');
      expect(visible[y!]!.trimEnd()).toBe('$ echo half');
      expect(x).toBe('$ echo half'.length);
    } finally {
      await server.tmux(['send-keys', '-t', pane.id, 'C-u']);
      await pane.waitForPrompt();
    }
    await fx.assertNothingRan(script, marker);
  });

  it('refuses while the editor is on a continuation line (PREBUFFER), leaving it intact', async () => {
    const { pane, server } = fx;
    const marker = fx.marker();
    const script = `touch '${marker}'`;
    await pane.type('echo "open', { enter: true });
    await pane.waitFor((screen) => screen.split('\n').at(-1) === 'dquote>');
    try {
      const { s } = await fx.call({ target: fx.target(), script });
      expect(s.ok).toBe(false);
      expect(s.error).toMatchObject({ code: 'editor_not_empty', delivery: 'observed', effects: { state: 'none' } });
      const lines = (await pane.capture()).split('\n');
      expect(lines.slice(-2)).toEqual(['$ echo "open', 'dquote>']);
    } finally {
      await server.tmux(['send-keys', '-t', pane.id, 'C-c']);
      await pane.waitForPrompt();
    }
    await fx.assertNothingRan(script, marker);
  });

  it('refuses while zle edits for another purpose (vared), with an empty buffer', async () => {
    const { pane, server } = fx;
    const marker = fx.marker();
    const script = `touch '${marker}'`;
    await pane.type('vared -c VAREDTEST', { enter: true });
    await pane.waitFor((screen) => screen.split('\n').at(-1) === '$ vared -c VAREDTEST');
    // vared draws an empty line below its command; wait until zle sits there.
    await waitUntil(
      async () => (await server.tmux(['display-message', '-p', '-t', pane.id, '#{cursor_x}'])).trim() === '0',
      5000,
      'vared to start',
    );
    try {
      const { s } = await fx.call({ target: fx.target(), script });
      expect(s.ok).toBe(false);
      expect(s.error).toMatchObject({ code: 'editor_not_empty', delivery: 'observed', effects: { state: 'none' } });
      expect(s.error.message).toContain('vared');
    } finally {
      await server.tmux(['send-keys', '-t', pane.id, 'C-c']);
      await pane.waitForPrompt();
    }
    await fx.assertNothingRan(script, marker);
  });

  it('refuses after its bounded wait when the shell is busy in a builtin (read), and ignores the late answer', async () => {
    const { pane } = fx;
    const marker = fx.marker();
    const script = `touch '${marker}'`;
    await pane.type('read -r READTEST', { enter: true });
    await pane.waitFor((screen) => screen.split('\n').at(-1) === '$ read -r READTEST');
    await new Promise((r) => setTimeout(r, 200));
    try {
      const { s } = await fx.call({ target: fx.target(), script });
      expect(s.ok).toBe(false);
      expect(s.error).toMatchObject({ code: 'shell_busy', delivery: 'observed', effects: { state: 'none' } });
      // The bounded wait gave up: the builtin still waits for its line (no prompt drawn since).
      expect(s.error.message).toMatch(/did not answer within 1000 ms/);
      expect((await pane.capture()).split('\n').at(-1)).toBe('$ read -r READTEST');
    } finally {
      await pane.type('', { enter: true });
      await pane.waitForPrompt();
    }
    // The shell answers the old question when its prompt comes back: that answer is ignored,
    // and the next run gets a fresh, correct answer.
    await fx.assertNothingRan(script, marker);
    const d = await fx.run('echo "$PWD"');
    expect(d.ok).toBe(true);
  });

  it('refuses while the shell runs a command, seen from /proc without waiting (shell_busy)', async () => {
    const { pane } = fx;
    const shellPid = await pane.shellPid();
    await pane.type('sleep 3', { enter: true });
    try {
      await waitUntil(
        () =>
          descendantsOf(shellPid).some((pid) => {
            try {
              return cmdline(pid) === 'sleep 3';
            } catch {
              return false;
            }
          }),
        5000,
        'sleep 3 to run in the pane',
      );
      const marker = fx.marker();
      const script = `touch '${marker}'`;
      const { s } = await fx.call({ target: fx.target(), script });
      expect(s.ok).toBe(false);
      expect(s.error.code).toBe('shell_busy');
      expect(s.error.delivery).toBe('observed');
      expect(s.error.effects.state).toBe('none');
      // Seen from /proc (the terminal's foreground job), not by waiting for the line editor's silence.
      expect(s.error.message).toMatch(/running a command in the foreground/);
      await pane.waitForPrompt(10_000);
      await fx.assertNothingRan(script, marker);
    } finally {
      await pane.waitForPrompt(10_000);
    }
  });
});
