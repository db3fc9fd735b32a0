// Dormant helpers (docs/light.md): panes whose helper let itself go after TMUX_RUN_IDLE, and the
// ways a test sees it: listed `dormant`, no helper process, the status file.
import type { PaneListing } from '../../src/broker/registry.js';
import type { Pane } from '../../lab/pane.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { filesIn, helperChildren, listed } from '../../lab/enrollment.js';
import { waitUntil } from '../../lab/waiting.js';

/** The idle time the dormant suites set (seconds), short so that they are quick. */
export const IDLE_S = '2';

/** Waits until `pane` is listed dormant and its shell has no helper child; returns the listing. */
export async function waitDormant(pane: Pane, timeoutMs = 20_000): Promise<PaneListing> {
  const shellPid = await pane.shellPid();
  const dir = pane.server.registryDir;
  return waitUntil(
    async () => {
      const p = (await listed(pane.server.registryDir)).find((l) => l.pane_id === pane.id);
      return p?.state === 'dormant' && helperChildren(shellPid).length === 0 ? p : undefined;
    },
    timeoutMs,
    `pane ${pane.id} dormant with no helper`,
  ).catch(async (e: Error) => {
    const screen = await pane.capture().catch(() => '?');
    const logs = filesIn(dir)
      .filter((f) => f.endsWith('.log') || f.endsWith('.status'))
      .map((f) => `${f}: ${readFileSync(join(dir, f), 'utf8')}`);
    throw new Error(`${e.message}; files: ${filesIn(dir).join(' ')}; ${logs.join('; ')}; screen:\n${screen}`, {
      cause: e,
    });
  });
}

/** How many helpers served the enrollment of `listing` so far (each logs its enrollment once). */
export function helperStarts(dir: string, listing: { generation: string }): number {
  return (
    filesIn(dir)
      .filter((f) => f.endsWith('.log'))
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('')
      .split(`(generation ${listing.generation},`).length - 1
  );
}

/** What the registry's logs and the pane's screen say (for a failure's message). */
export async function explain(pane: Pane): Promise<string> {
  const dir = pane.server.registryDir;
  const logs = filesIn(dir)
    .filter((f) => f.endsWith('.log') || f.endsWith('.status'))
    .map((f) => `${f}: ${readFileSync(join(dir, f), 'utf8')}`);
  return `files: ${filesIn(dir).join(' ')}\n${logs.join('\n')}\nscreen:\n${await pane.capture().catch(() => '?')}`;
}
