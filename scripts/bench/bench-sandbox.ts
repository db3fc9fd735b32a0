// The sandbox in the bench (scripts/bench/bench.ts): a sandboxed `true` beside a plain one, paced as an
// agent's calls are and back to back.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AwakeListing } from '../../src/broker/registry.js';
import type { Scope } from '../../lab/scope.js';
import { sleep } from '../../lab/waiting.js';
import { mustStatus, N, stats, type Stats } from './bench-common.js';
import { enroll, run } from './bench-calls.js';
import { PACE_MS } from './bench-walls.js';

export interface SandboxMetrics {
  /** Paced (PACE_MS between calls). */
  plain_true_ms: Stats;
  sandboxed_true_ms: Stats;
  /** Median sandboxed minus median plain. */
  cost_ms: number;
  /** The same, a third as many, each call right after the one before. */
  back_to_back: { plain_true_ms: Stats; sandboxed_true_ms: Stats };
  /** RSS of the sandboxed pane's helper before its first sandboxed run and after them. */
  helper_rss_kb_before: number;
  helper_rss_kb_after: number;
  /** The sandboxed pane, for the traced runs. */
  boxed: AwakeListing;
}

/**
 * A sandboxed `true` beside a plain one, in this same run: a pane of the bench and a fifth one
 * with TMUX_RUN_SANDBOX=workspace in a project directory holding a git repository (so the
 * repository search and the locks are paid for), called in alternation.
 */
export async function sandboxBench(
  c: Client,
  plain: AwakeListing,
  server: Scope['server'],
  n: number,
): Promise<SandboxMetrics> {
  const project = join(server.home, 'bench-project');
  mkdirSync(join(project, 'src'), { recursive: true });
  execFileSync('git', ['init', '-q', project]);
  const pane = await server.newPane({ cwd: project });
  const boxed = { pane, listing: (await enroll(pane, server.registryDir)).listing };
  await boxed.pane.run('TMUX_RUN_SANDBOX=workspace');
  const before = mustStatus(boxed.listing.helper_pid).rssKb;
  for (let i = 0; i < N.warm; i++) {
    await run(c, plain, 'true');
    await run(c, boxed.listing, 'true');
  }
  // Each call PACE_MS after the one before ended, as an agent's calls are (seconds apart): the
  // walls fork the next run's processes once a run is over, and back to back that work lands on
  // whichever run comes next, the plain one as much as the next sandboxed one (the second pair).
  const a: number[] = [];
  const b: number[] = [];
  const a2: number[] = [];
  const b2: number[] = [];
  for (let i = 0; i < n; i++) {
    a.push((await run(c, plain, 'true')).ms);
    await sleep(PACE_MS);
    b.push((await run(c, boxed.listing, 'true')).ms);
    await sleep(PACE_MS);
  }
  for (let i = 0; i < n / 3; i++) {
    a2.push((await run(c, plain, 'true')).ms);
    b2.push((await run(c, boxed.listing, 'true')).ms);
  }
  const after = mustStatus(boxed.listing.helper_pid).rssKb;
  const plainStats = stats(a);
  const boxedStats = stats(b);
  return {
    plain_true_ms: plainStats,
    sandboxed_true_ms: boxedStats,
    cost_ms: boxedStats.median - plainStats.median,
    back_to_back: { plain_true_ms: stats(a2), sandboxed_true_ms: stats(b2) },
    helper_rss_kb_before: before,
    helper_rss_kb_after: after,
    boxed: boxed.listing,
  };
}
