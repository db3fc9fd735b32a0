// What every shell's dormant pane must show (test/dormant): checks written once, for zsh, bash and
// fish alike. Each takes a pane already dormant (test/dormant/support.ts waitDormant).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { PaneListing } from '../src/broker/registry.js';
import { runCli } from './cli.js';
import { helperChildren } from './enrollment.js';
import { callRun, listedPanes, startMcp } from './mcp.js';
import type { Pane } from './pane.js';
import { waitUntil } from './waiting.js';

/**
 * `tmux-run revoke` of the dormant `pane` tells its shell (which then says it is not enrolled:
 * `generationVar` is a command line printing its generation, or `none`), and a run is refused
 * not_enrolled: nothing run, no helper started.
 */
export async function expectRevokedNotWoken(pane: Pane, listing: PaneListing, generationVar: string): Promise<void> {
  const server = pane.server;
  const r = await runCli(['revoke', pane.id], server.env);
  expect(r.code, r.stderr).toBe(0);
  await waitUntil(
    async () => (await pane.run(generationVar)).trim() === 'none',
    10_000,
    'the shell to learn of the revocation',
  );
  const mcp = await startMcp(server);
  try {
    const run = await callRun(mcp.client, listing, 'touch revoked-ran');
    expect(run.structured.error?.code).toBe('not_enrolled');
    expect(existsSync(join(server.home, 'revoked-ran'))).toBe(false);
    expect(helperChildren(await pane.shellPid())).toHaveLength(0);
  } finally {
    await mcp.close();
  }
}

/**
 * `execLine` (the shell replacing itself with `exec`) in the dormant `pane` enrolled as `old`: the
 * new shell is not that enrollment. A run for it is refused (stale_generation or not_enrolled), no
 * helper is started in the new shell, the pane is not listed; enrolled again (`enroll`) it is a new
 * generation that runs.
 */
export async function expectExecNewGeneration(
  pane: Pane,
  old: PaneListing,
  execLine: string,
  enroll: (pane: Pane) => Promise<PaneListing>,
): Promise<void> {
  const server = pane.server;
  await pane.run(execLine);
  const mcp = await startMcp(server);
  try {
    const r = await callRun(mcp.client, old, 'touch exec-ran');
    expect(['stale_generation', 'not_enrolled']).toContain(r.structured.error?.code);
    expect(existsSync(join(server.home, 'exec-ran'))).toBe(false);
    expect(helperChildren(await pane.shellPid())).toHaveLength(0);
    expect((await listedPanes(mcp.client)).some((p) => p.pane_id === pane.id)).toBe(false);
    const fresh = await enroll(pane);
    expect(fresh.generation).not.toBe(old.generation);
    expect((await callRun(mcp.client, fresh, 'echo new')).structured.data.stdout.data).toBe('new\n');
  } finally {
    await mcp.close();
  }
}
