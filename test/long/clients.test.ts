// Long runs seen through other clients: the MCP Inspector's CLI (tmux_run_start, then
// tmux_run_wait with the run_id it returned), and the tmux-run CLI (`runs`, `log`).
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { runCli } from '../../lab/cli.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { inspectorCall } from '../../lab/client-clis.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import { MCP_BIN, productEnv } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { cancel, finalOf, runIdOf, start, validateLong } from './support.js';

/** The MCP Inspector's CLI, installed (once, into the cache) on first use, against tmux-run-mcp --enable-tool tmux_run. */
const inspector = (server: TmuxServer, args: string[]): ReturnType<typeof inspectorCall> =>
  inspectorCall(productEnv(server), MCP_BIN, args, ['--enable-tool', 'tmux_run']);

describe('long runs through other clients', () => {
  const scope = useServer();
  let server: TmuxServer;
  let listing: PaneListing;
  let mcp: McpHandle;

  beforeAll(async () => {
    server = scope.server;
    ({ listing } = await enrolledPane(server));
    mcp = await scope.startMcp();
  });

  it('the Inspector CLI starts a run with tmux_run_start, then fetches its result with tmux_run_wait', async () => {
    const target = JSON.stringify({ kind: 'pane', id: listing.pane_id, generation: listing.generation });
    const started = await inspector(server, [
      '--method',
      'tools/call',
      '--tool-name',
      'tmux_run_start',
      '--tool-arg',
      `target=${target}`,
      '--tool-arg',
      'script=sleep 1; echo "inspector long run in $TMUX_PANE"',
    ]);
    expect(started.code, started.stderr).toBe(0);
    const s = JSON.parse(started.stdout) as { structuredContent: any; isError?: boolean };
    expect(s.isError ?? false).toBe(false);
    expect(validateLong(s.structuredContent)).toBe(true);
    expect(['queued', 'running']).toContain(s.structuredContent.pending.state);
    const runId = s.structuredContent.pending.run_id as string;
    const waited = await inspector(server, [
      '--method',
      'tools/call',
      '--tool-name',
      'tmux_run_wait',
      '--tool-arg',
      `target=${target}`,
      '--tool-arg',
      `run_id=${runId}`,
      '--tool-arg',
      'wait_ms=10000',
    ]);
    expect(waited.code, waited.stderr).toBe(0);
    const w = JSON.parse(waited.stdout) as { structuredContent: any; isError?: boolean };
    expect(validateLong(w.structuredContent)).toBe(true);
    expect(w.structuredContent.ok).toBe(true);
    expect(w.structuredContent.data.authorization.run_id).toBe(runId);
    expect(w.structuredContent.data.stdout.data).toBe(`inspector long run in ${listing.pane_id}\n`);
  });

  it('tmux-run runs lists held runs (table and --json); tmux-run log shows held, wait and cancel', async () => {
    const finished = await start(mcp.client, listing, 'echo listed; exit 5', { wait_ms: 10_000 });
    const running = await start(mcp.client, listing, 'sleep 100');
    const json = await runCli(['runs', '--json'], productEnv(server));
    expect(json.code, json.stderr).toBe(0);
    const list = JSON.parse(json.stdout) as Array<Record<string, any>>;
    expect(list.find((r) => r.run_id === runIdOf(finished))).toMatchObject({
      pane_id: listing.pane_id,
      generation: listing.generation,
      state: 'finished',
      outcome: { ok: true, exit_status: 5 },
      stdout_bytes: 7,
    });
    expect(['queued', 'running']).toContain(list.find((r) => r.run_id === runIdOf(running))?.state);
    const table = await runCli(['runs'], productEnv(server));
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^RUN +PANE +STATE +OUTCOME/);
    expect(table.stdout).toContain(runIdOf(finished));
    expect(table.stdout).toMatch(new RegExp(`${runIdOf(finished)} +${listing.pane_id} +finished +exit 5`));

    const stopped = await cancel(mcp.client, listing, runIdOf(running), 10_000);
    expect(stopped.error.code).toBe('cancelled');
    await finalOf(mcp.client, listing, runIdOf(finished));
    const log = await runCli(['log', '--json', '--run', runIdOf(running)], productEnv(server));
    const events = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['held', 'start', 'cancel', 'end']));
    expect(events.find((e) => e.event === 'cancel')).toMatchObject({ outcome: 'finished', state: 'running' });
    const waits = await runCli(['log', '--run', runIdOf(finished)], productEnv(server));
    expect(waits.stdout).toMatch(/ wait +finished/);
  });
});
