// bash panes for the tests: a real bash started with a clean rcfile (`bash --noprofile --rcfile
// FILE -i`) in a harness pane, enrolled as a person does it (typing `source` into it).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AwakeListing, PaneListing } from '../../src/broker/registry.js';
import { waitListed } from '../../lab/enrollment.js';
import type { Pane } from '../../lab/pane.js';
import { ROOT } from '../../lab/product.js';
import type { NewPaneOptions, TmuxServer } from '../../lab/server.js';
import { DEFAULT_PROMPT } from '../../lab/shells.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import { openScope, type Scope } from '../../lab/scope.js';
import { checkRunResult } from '../mcp/support.js';

/** The bash snippet, and the line a person types to enroll. */
export const BASH_SNIPPET = join(ROOT, 'shell', 'tmux-run.bash');
export const BASH_SOURCE = `source ${BASH_SNIPPET}`;

let rcCount = 0;

export interface BashPaneOptions extends Omit<NewPaneOptions, 'shell' | 'zshrc'> {
  /** The rcfile's text (default: nothing but a comment). */
  rc?: string;
}

/**
 * A bash pane with the harness's prompt and completion marker (PS1, PROMPT_COMMAND from the
 * environment) and `rc`. Debian's bash reads /etc/bash.bashrc first, which sets its own PS1: the
 * rcfile puts the harness's back first.
 */
export async function bashPane(server: TmuxServer, opts: BashPaneOptions = {}): Promise<Pane> {
  const file = join(server.home, `bashrc.${++rcCount}`);
  writeFileSync(file, `PS1=${JSON.stringify(opts.prompt ?? DEFAULT_PROMPT)}\n${opts.rc ?? ''}\n`, { mode: 0o600 });
  const { rc: _rc, ...rest } = opts;
  return server.newPane({ ...rest, shell: ['bash', '--noprofile', '--rcfile', file, '-i'] });
}

/** Sources the bash snippet in `pane` (it must succeed) and waits until the pane is listed. */
export async function enrollBash(pane: Pane, dir = pane.server.registryDir): Promise<AwakeListing> {
  const r = await pane.runWithStatus(BASH_SOURCE, { timeoutMs: 20_000 });
  if (r.status !== 0) throw new Error(`enrolling ${pane.id} failed (status ${r.status}): ${r.output}`);
  if (r.output !== '') throw new Error(`enrolling ${pane.id} printed ${JSON.stringify(r.output)}`);
  return waitListed(pane, await pane.shellPid(), dir);
}

/** Opens a bash pane, enrolls it and returns both. */
export async function enrolledBash(
  server: TmuxServer,
  opts: BashPaneOptions = {},
): Promise<{ pane: Pane; listing: AwakeListing }> {
  const pane = await bashPane(server, opts);
  return { pane, listing: await enrollBash(pane) };
}

/** One server, one enrolled bash pane and one tmux-run-mcp per test file; results checked against the contract. */
export interface BashFixture {
  scope: Scope;
  server: TmuxServer;
  pane: Pane;
  listing: AwakeListing;
  mcp: McpHandle;
  /** tmux_run on the fixture's pane (or `listing`), the result checked against the contract. */
  run(script: string, listing?: PaneListing): Promise<Record<string, any>>;
}

export async function bashFixture(opts: BashPaneOptions = {}): Promise<BashFixture> {
  const scope = await openScope();
  const server = scope.server;
  const { pane, listing } = await enrolledBash(server, opts);
  const mcp = await scope.startMcp();
  const run = async (script: string, l: PaneListing = listing) =>
    checkRunResult((await callRun(mcp.client, l, script)).result);
  return { scope, server, pane, listing, mcp, run };
}

/** The data of a successful result (fails the test otherwise). */
export function ok(s: Record<string, any>): Record<string, any> {
  if (s.ok !== true) throw new Error(`expected ok, got ${JSON.stringify(s).slice(0, 600)}`);
  return s.data as Record<string, any>;
}

/** The error of a refused result (fails the test otherwise). */
export function refusal(s: Record<string, any>): Record<string, any> {
  if (s.ok !== false) throw new Error(`expected a refusal, got ${JSON.stringify(s).slice(0, 600)}`);
  return s.error as Record<string, any>;
}
