// The empty line in a bash pane without the builtin (TMUX_RUN_NATIVE=off), read from the screen: a
// half-typed line (before or after the cursor) and a continuation line are refused
// editor_not_empty, nothing runs, and the line is still there to finish; a resize (a real
// SIGWINCH) disturbs neither a typed line nor a run. The listing says screen, and why.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../lab/waiting.js';
import { bashFixture, ok, refusal, type BashFixture } from './support.js';

let fx: BashFixture;
let n = 0;
const marker = (): string => join(fx.server.home, `editor-marker-${++n}`);
const lastLine = (screen: string): string | undefined => screen.split('\n').at(-1);

beforeAll(async () => {
  fx = await bashFixture({ rc: 'TMUX_RUN_NATIVE=off' });
});
afterAll(async () => {
  expect(await fx.scope.close()).toEqual([]);
});

/** Refused editor_not_empty by the screen check, observed, nothing run. */
async function refusedNotEmpty(): Promise<void> {
  const m = marker();
  const e = refusal(await fx.run(`touch ${m}`));
  expect(e.code).toBe('editor_not_empty');
  expect(e.delivery).toBe('observed');
  expect(e.effects.state).toBe('none');
  expect(existsSync(m)).toBe(false);
}

describe('the screen check in a bash pane without the builtin', () => {
  it('is listed screen, with the reason', () => {
    expect(fx.listing.editor_check).toBe('screen');
    expect(fx.listing.editor_check_reason).toMatch(/TMUX_RUN_NATIVE=off/);
  });

  it('refuses a half-typed line, leaves it as typed, and the person finishes it', async () => {
    await fx.pane.type('echo half');
    await fx.pane.waitFor((s) => lastLine(s) === '$ echo half');
    await refusedNotEmpty();
    const e = refusal(await fx.run('true'));
    expect(e.message).toMatch(/screen check could not confirm an empty line/);
    expect(lastLine(await fx.pane.capture())).toBe('$ echo half');
    await fx.pane.type('-done', { enter: true });
    await fx.pane.waitFor((s) => /^half-done$/m.test(s));
    await fx.pane.waitForPrompt();
    ok(await fx.run('true'));
  });

  it('refuses text after the cursor (typed, then ^A)', async () => {
    await fx.pane.type('echo after');
    await fx.pane.waitFor((s) => lastLine(s) === '$ echo after');
    await fx.server.tmux(['send-keys', '-t', fx.pane.id, 'C-a']);
    await waitUntil(
      async () => (await fx.server.tmux(['display-message', '-p', '-t', fx.pane.id, '#{cursor_x}'])).trim() === '2',
    );
    await refusedNotEmpty();
    await fx.server.tmux(['send-keys', '-t', fx.pane.id, 'C-e']);
    await fx.pane.type('-wards', { enter: true });
    await fx.pane.waitFor((s) => /^after-wards$/m.test(s));
    await fx.pane.waitForPrompt();
  });

  it('refuses a continuation line, and the command still completes as typed', async () => {
    await fx.pane.type('echo "one', { enter: true });
    await fx.pane.waitFor((s) => lastLine(s) === '>');
    const e = refusal(await fx.run('true'));
    expect(e.code).toBe('editor_not_empty');
    expect(e.message).toMatch(/continuation/);
    await fx.pane.type('two"', { enter: true });
    await fx.pane.waitFor((s) => /^one\ntwo$/m.test(s));
    await fx.pane.waitForPrompt();
    ok(await fx.run('true'));
  });

  it('a resize (a real SIGWINCH) leaves a typed line alone and does not disturb the next run', async () => {
    await fx.pane.type('echo kept');
    await fx.pane.waitFor((s) => lastLine(s) === '$ echo kept');
    await fx.server.tmux(['resize-window', '-t', fx.pane.id, '-x', '150', '-y', '40']);
    await fx.server.tmux(['resize-window', '-t', fx.pane.id, '-x', '120', '-y', '30']);
    await new Promise((r) => setTimeout(r, 300));
    expect(lastLine(await fx.pane.capture())).toBe('$ echo kept');
    await refusedNotEmpty();
    await fx.pane.type('-on', { enter: true });
    await fx.pane.waitFor((s) => /^kept-on$/m.test(s));
    await fx.pane.waitForPrompt();
    await fx.server.tmux(['resize-window', '-t', fx.pane.id, '-x', '100', '-y', '30']);
    const d = ok(await fx.run('echo after-resize'));
    expect(d.stdout.data).toBe('after-resize\n');
  });
});
