// The spawn in the bench (scripts/bench/bench.ts): plain runs started natively (the helper's vfork) and
// by Node's spawn (TMUX_RUN_SPAWN=node), alternating on two panes.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaneListing } from '../../src/broker/registry.js';
import type { Scope } from '../../lab/scope.js';
import { BIG, BIG_SCRIPT, MID_SCRIPT, N, stats, type Stats } from './bench-common.js';
import { enroll, run } from './bench-calls.js';

/** One figure on the pane that spawns natively and on one with TMUX_RUN_SPAWN=node, alternating. */
export interface SpawnPair {
  native_ms: Stats;
  node_ms: Stats;
}

export interface SpawnMetrics {
  true: SpawnPair;
  mid: SpawnPair;
  big: SpawnPair;
}

/**
 * Plain runs the two ways a helper can start them (src/core/os/native-spawn.ts), in this same run:
 * a pane of the bench (the native vfork) and one enrolled with TMUX_RUN_SPAWN=node (Node's
 * spawn, which forks the helper: how every plain run started before), called in alternation.
 */
export async function spawnBench(
  c: Client,
  native: PaneListing,
  server: Scope['server'],
  n: number,
  nBig: number,
): Promise<SpawnMetrics> {
  const pane = await server.newPane({ env: { TMUX_RUN_SPAWN: 'node' } });
  const node = (await enroll(pane, server.registryDir)).listing;
  const pair = async (script: string, count: number, extra: { stdout_limit?: number } = {}): Promise<SpawnPair> => {
    for (let i = 0; i < N.bigWarm; i++) {
      await run(c, native, script, extra);
      await run(c, node, script, extra);
    }
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < count; i++) {
      a.push((await run(c, native, script, extra)).ms);
      b.push((await run(c, node, script, extra)).ms);
    }
    return { native_ms: stats(a), node_ms: stats(b) };
  };
  return {
    true: await pair('true', n),
    mid: await pair(MID_SCRIPT, nBig),
    big: await pair(BIG_SCRIPT, nBig, { stdout_limit: BIG }),
  };
}
