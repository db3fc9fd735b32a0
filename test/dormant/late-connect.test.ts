// A broker that found a pane awake and connects only after its helper let itself go (a broker
// stalled longer than the 100 ms a dormant helper still serves: load, a long GC) finds no socket.
// Nothing was sent, so the call wakes the pane (once) and goes on, as it would have had it found
// the pane dormant. The broker's run path runs here in the test's process, on a real tmux, zsh
// and helper; its link pool's first connection waits until the helper is gone, as a stalled broker's would.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/core/audit/audit-log.js';
import { connectHelper } from '../../src/broker/helper-client.js';
import { LinkPool } from '../../src/broker/link-pool.js';
import { runTool } from '../../src/broker/run-tool.js';
import { readStatus } from '../../src/core/enrollment/pane-status.js';
import { enroll, helperChildren, recordOf } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { waitUntil } from '../../lab/waiting.js';
import { explain, IDLE_S } from './support.js';

const scope = useServer({ env: { TMUX_RUN_IDLE: IDLE_S } });

describe('a broker that connects after the helper it found awake went dormant', () => {
  it('wakes the pane and runs, once; a second connection failure is helper_unreachable, nothing run', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    const shellPid = await pane.shellPid();
    const dir = server.registryDir;
    const stateDir = join(server.home, 'state');
    mkdirSync(stateDir, { recursive: true });
    const ctx = (links: LinkPool) => ({
      dir,
      audit: new AuditLog(join(stateDir, 'audit.jsonl')),
      log: () => {},
      links,
    });
    // The first connection is made only once the helper is gone: dormant, socket removed, exited.
    const gone = async (): Promise<void> => {
      await waitUntil(
        () => readStatus(dir, recordOf(server, listing))?.dormant === true && helperChildren(shellPid).length === 0,
        20_000,
        'the helper dormant and gone',
      );
    };
    let connections = 0;
    const late = new LinkPool(10_000, 2, async (path) => {
      if (connections++ === 0) await gone();
      return connectHelper(path);
    });
    const r = await runTool(
      { target: { kind: 'pane', id: pane.id, generation: listing.generation }, script: 'echo late; pwd' },
      ctx(late),
    );
    expect(r.ok, JSON.stringify(r) + (r.ok ? '' : await explain(pane))).toBe(true);
    if (r.ok) expect(r.data.stdout.data).toBe(`late\n${server.home}\n`);
    expect(connections).toBe(2);
    expect(helperChildren(shellPid)).toHaveLength(1);
    late.closeAll();

    // Once only: a pane that is dormant again at the second try is not woken a second time.
    const again = new LinkPool(10_000, 2, async (path) => {
      await gone();
      return connectHelper(path);
    });
    const refused = await runTool(
      { target: { kind: 'pane', id: pane.id, generation: listing.generation }, script: 'touch twice' },
      ctx(again),
    );
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error).toMatchObject({ code: 'helper_unreachable', delivery: 'not_sent' });
    expect(existsSync(join(server.home, 'twice'))).toBe(false);
  });
});
