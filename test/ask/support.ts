// Shared steps for the ask-mode suites: a real tmux server, an enrolled zsh pane whose person
// (the test) sets TMUX_RUN_APPROVE and answers questions with send-keys, and a spawned broker.
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { callRun, listedPanes, type RunCall } from '../../lab/mcp.js';
import { uniqueToken } from '../../lab/markers.js';
import type { Pane } from '../../lab/pane.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';

/** The last line of every question. */
export const QUESTION = '[y]es / [n]o / [a]lways';

/** Presses one key in the pane as the person would (a key name such as `y`, `Escape`). */
export async function press(pane: Pane, key: string): Promise<void> {
  await pane.server.tmux(['send-keys', '-t', pane.id, key]);
}

/** Waits until the pane shows a question and returns the screen. */
export function questionShown(pane: Pane): Promise<string> {
  return pane.waitFor((s) => s.includes(QUESTION));
}

/**
 * Checks that the screen holds nothing tmux-run drew for the question: no question text left
 * anywhere, the cursor right after an empty prompt on the last line.
 */
export async function assertScreenClean(pane: Pane): Promise<string> {
  const screen = await pane.waitFor((s) => !s.includes(QUESTION) && !s.includes('asks to run a script'));
  await pane.waitForPrompt();
  const lines = (await pane.capture()).split('\n');
  expect(lines[lines.length - 1]).toBe(pane.prompt.trimEnd());
  return screen;
}

/** A script that proves it ran by creating a fresh file under the server's home. */
export function markerScript(server: TmuxServer, label = 'ran'): { script: string; marker: string } {
  const marker = join(server.home, `${label}-${uniqueToken()}`);
  return { script: `echo ${label}; touch '${marker}'`, marker };
}

/** Types a one-line command at the pane's idle prompt and waits for the next prompt. */
export async function typed(pane: Pane, cmd: string): Promise<string> {
  return pane.run(cmd);
}

/** The pane as tmux_enrolled_panes lists it now. */
export async function listingNow(client: Client, pane: Pane): Promise<PaneListing> {
  return waitUntil(async () => (await listedPanes(client)).find((p) => p.pane_id === pane.id));
}

/** Waits until tmux_enrolled_panes shows the pane with `pred` true. */
export function listedWhen(client: Client, pane: Pane, pred: (p: PaneListing) => boolean): Promise<PaneListing> {
  return waitUntil(async () => {
    const p = (await listedPanes(client)).find((x) => x.pane_id === pane.id);
    return p && pred(p) ? p : undefined;
  });
}

/** Asserts a refusal made by the person's step: observed, nothing run, authorization reported. */
export function expectRefused(r: RunCall, code: 'denied' | 'approval_timeout'): void {
  expect(r.isError, JSON.stringify(r.structured)).toBe(true);
  const e = r.structured.error as Record<string, any>;
  expect(e.code).toBe(code);
  expect(e.delivery).toBe('observed');
  expect(e.effects.state).toBe('none');
  expect(e.effects.authorization.state).toBe('authorized');
  expect(e.message).toMatch(/nothing was run/);
}

export { callRun };
