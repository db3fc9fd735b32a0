// Notices in a fish pane at its idle empty prompt are drawn above the prompt without drawing the
// prompt again (rows inserted above it; the prompt and the cursor stay as fish drew them): a slow
// prompt (powerline without its daemon starts python for each rendering) is not rendered for each
// notice, and the run that follows a notice is answered at once. After ^L, the end notice of a run
// whose start notice was cleared leaves the prompt whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitListed } from '../../lab/enrollment.js';
import { waitUntil } from '../../lab/waiting.js';
import type { Pane } from '../../lab/pane.js';
import { openScope, type Scope } from '../../lab/scope.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import { checkRunResult } from '../mcp/support.js';
import { fishPane, FISH_SOURCE, screenOf } from './support.js';
import type { PaneListing } from '../../src/broker/registry.js';

let scope: Scope;
let mcp: McpHandle;
beforeAll(async () => {
  scope = await openScope();
  mcp = await scope.startMcp();
});
afterAll(async () => {
  expect(await scope?.close()).toEqual([]);
});

/** A fish pane with notices on, `define` typed at the harness's prompt, then enrolled. */
async function enrolled(define?: string): Promise<{ pane: Pane; listing: PaneListing }> {
  const pane = await fishPane(scope.server, { cwd: '/tmp', env: { TMUX_RUN_NOTIFY: 'on' } });
  if (define) {
    await pane.type(define, { enter: true });
    await pane.waitForPrompt();
  }
  await pane.type(FISH_SOURCE, { enter: true });
  const listing = await waitListed(pane, await pane.shellPid());
  await pane.waitForPrompt();
  return { pane, listing };
}

const run = async (listing: PaneListing, script: string): Promise<Record<string, any>> =>
  checkRunResult((await callRun(mcp.client, listing, script)).result);

describe('notices in fish', () => {
  it('are drawn without rendering the prompt again: a slow two-line prompt serves ten runs in a row', async () => {
    // Each rendering takes 300 ms (an external command, as powerline's python) and counts itself
    // in an exported variable, which every run's snapshot carries.
    const { pane, listing } = await enrolled(
      `set -gx RENDERS 0; function fish_prompt; set -gx RENDERS (math $RENDERS + 1); command sleep 0.3; printf 'slow prompt\\n$ '; end`,
    );
    const counts: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await run(listing, 'echo "$RENDERS"');
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      counts.push(Number(r.data.stdout.data));
      // The run's notice drawn before the next run (a run that follows it is answered at once).
      const id = String(r.data.authorization.run_id).slice(0, 8);
      await pane.waitFor((t) => new RegExp(`run ${id}.* exited 0 after \\d+ ms\\nslow prompt\\n\\$$`).test(t));
    }
    // The first answer at this prompt may render it once; no notice renders it again.
    expect(counts.at(-1)).toBe(counts[1]);
    const screen = await screenOf(pane);
    expect(screen.split('\n').filter((l) => l === 'slow prompt').length, screen).toBeLessThanOrEqual(3);
    expect(screen.endsWith('slow prompt\n$'), screen).toBe(true);
    await pane.type('echo kept', { enter: true });
    await pane.waitFor((t) => t.includes('\nkept\n'));
    await pane.kill();
  });

  it('leave the prompt whole when ^L cleared the screen between a run start and its end', async () => {
    const { pane, listing } = await enrolled();
    const slow = run(listing, 'sleep 1; echo slow');
    await pane.waitFor((t) => /tmux-run: run .* started/.test(t));
    await pane.server.tmux(['send-keys', '-t', pane.id, 'C-l']);
    await waitUntil(async () => !/ started /.test(await screenOf(pane)), 10_000, 'the screen cleared');
    const r = await slow;
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    await pane.waitForPrompt();
    // The next run is served, and a line typed after it is the person's, whole.
    const next = await run(listing, 'echo next');
    expect(next.data.stdout.data).toBe('next\n');
    await pane.type('echo typed');
    await pane.waitFor((t) => t.split('\n').at(-1) === '$ echo typed');
    await pane.type('', { enter: true });
    await pane.waitFor((t) => t.includes('\ntyped\n'));
    await pane.kill();
  });
});
