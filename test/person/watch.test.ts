// tmux-run watch as the person uses it: in a real tmux pane beside an enrolled one, it shows each
// run's script lines, its output as it comes, its end, refusals, escape sequences as \xHH; --run
// replays a held run; --json gives events a tool parses; a stopped watcher does not hold a run
// up and says what it missed; another user cannot watch.
import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { collect, runCli, watchJson } from '../../lab/cli.js';
import { enrolledPane, listed, recordOf } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { CLI_BIN, productEnv } from '../../lab/product.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { authorizeHeld } from '../../src/broker/authorize.js';
import { connectHelper, exchange } from '../../src/broker/helper-client.js';
import type { Reply } from '../../src/core/protocol/messages.js';

/** Starts a run with tmux_run_start and returns its id and final result (after wait_ms). */
async function start(mcp: McpHandle, listing: PaneListing, script: string, extra: object = {}): Promise<any> {
  const target = { kind: 'pane', id: listing.pane_id, generation: listing.generation };
  const r = (await mcp.client.callTool(
    { name: 'tmux_run_start', arguments: { target, script, wait_ms: 30000, ...extra } },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult;
  return r.structuredContent;
}

describe('tmux-run watch', () => {
  let server: TmuxServer;
  let mcp: McpHandle;
  let on: { pane: Pane; listing: PaneListing };
  let watcher: Pane;

  const scope = useServer();

  beforeAll(async () => {
    server = scope.server;
    on = await enrolledPane(server, { env: { TMUX_RUN_NOTIFY: 'off' } });
    mcp = await scope.startMcp({ clientName: 'claude-code', clientVersion: '2.0.1' });
    watcher = await server.newPane();
    await watcher.type(`NO_COLOR=1 ${process.execPath} ${CLI_BIN} watch`, { enter: true });
    await watcher.waitFor((s) => s.includes(`${on.listing.pane_id} watching this pane`));
  });

  it("shows a run's script lines, its output as it comes (the run still running), and its end", async () => {
    const script = 'echo first-line\nsleep 1\necho second-line\nsleep 1\necho third-line';
    const call = callRun(mcp.client, on.listing, script);
    const early = await watcher.waitFor((s) => / out +first-line$/m.test(s));
    // The first line is on the watcher's screen while the run still runs: its end is not shown yet.
    expect(early).not.toMatch(/ out +third-line$/m);
    expect(early).not.toMatch(/ end +exited 0 after/);
    expect((await listed(server.registryDir)).find((p) => p.pane_id === on.listing.pane_id)?.state).toBe('running');
    const r = await call;
    const id8 = (r.structured.data.authorization.run_id as string).slice(0, 8);
    const screen = await watcher.waitFor((s) => s.includes(`${id8} end     exited 0 after`));
    const mine = screen.split('\n').filter((l) => l.includes(` ${on.listing.pane_id} ${id8} `));
    console.log(`the watcher as the person sees it:\n${mine.join('\n')}`);
    expect(mine[0]).toMatch(
      new RegExp(
        `start +by claude-code 2\\.0\\.1; mode auto; sandbox off; sha256 [0-9a-f]{12}; ${Buffer.byteLength(script)} bytes, 5 lines$`,
      ),
    );
    expect(mine.slice(1, 6).map((l) => l.replace(/^.*? {2}\| +/, ''))).toEqual(script.split('\n'));
    expect(mine.filter((l) => / out /.test(l)).map((l) => l.replace(/^.* out +/, ''))).toEqual([
      'first-line',
      'second-line',
      'third-line',
    ]);
    expect(mine.at(-1)).toMatch(/ end +exited 0 after \d\.\d s \(34 bytes of stdout, 0 of stderr\)$/);
  });

  it('picks up a pane enrolled later, and shows its background runs', async () => {
    const later = await enrolledPane(server, { env: { TMUX_RUN_NOTIFY: 'off' } });
    await watcher.waitFor((s) => s.includes(`${later.listing.pane_id} watching this pane`));
    const r = await start(mcp, later.listing, 'echo from-the-background', { background: true });
    const id8 = (r.data.authorization.run_id as string).slice(0, 8);
    const screen = await watcher.waitFor((s) => s.includes(`${later.listing.pane_id} ${id8} end `));
    expect(screen).toMatch(new RegExp(`${later.listing.pane_id} ${id8} start .*; in the background$`, 'm'));
    expect(screen).toMatch(new RegExp(`${later.listing.pane_id} ${id8} out +from-the-background$`, 'm'));
  });

  it('shows a refusal', async () => {
    await on.pane.type('echo half-typed', { enter: false });
    const r = await callRun(mcp.client, on.listing, 'echo never');
    expect(r.structured.error.code).toBe('editor_not_empty');
    const id8 = (r.structured.error.effects.authorization.run_id as string).slice(0, 8);
    await watcher.waitFor((s) =>
      new RegExp(`${id8} refused +editor_not_empty: .*asked by claude-code 2\\.0\\.1`).test(s),
    );
    await server.tmux(['send-keys', '-t', on.pane.id, 'C-u']);
    await on.pane.waitForPrompt();
  });

  it('shows an escape sequence in a script or its output as \\xHH, never acting on the terminal', async () => {
    const r = await callRun(mcp.client, on.listing, "printf '\\033]2;pwned\\007\\033[31mRED\\n' # \x1b[2J");
    const id8 = (r.structured.data.authorization.run_id as string).slice(0, 8);
    const screen = await watcher.waitFor((s) => s.includes(`${id8} end `));
    expect(screen).toContain('out     \\x1b]2;pwned\\x07\\x1b[31mRED');
    expect(screen).toContain("printf '\\033]2;pwned\\007\\033[31mRED\\n' # \\x1b[2J");
    const title = await server.tmux(['display-message', '-p', '-t', watcher.id, '#{pane_title}']);
    expect(title).not.toContain('pwned');
  });

  it('--run shows what a finished held run keeps: its start, its output, its end', async () => {
    const done = await start(mcp, on.listing, 'echo held-out; echo held-err >&2; exit 3');
    const runId = done.data.authorization.run_id as string;
    const r = await runCli(['watch', '--run', runId.slice(0, 8)], productEnv(server));
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d ${on.listing.pane_id} watching this pane$`));
    expect(lines[1]).toMatch(new RegExp(`${runId.slice(0, 8)} start +by claude-code 2\\.0\\.1; mode auto`));
    expect(lines).toContainEqual(expect.stringMatching(/ out +held-out$/));
    expect(lines).toContainEqual(expect.stringMatching(/ err +held-err$/));
    expect(lines.at(-1)).toMatch(/ end +exited 3 after .* \(9 bytes of stdout, 9 of stderr\)$/);
    const unknown = await runCli(['watch', '--run', 'abcdef0123456789'], productEnv(server));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no enrolled pane's helper knows run abcdef0123456789/);
  });

  it('--run of a held run still running shows what it kept, then follows it to its end', async () => {
    const started = await start(mcp, on.listing, 'echo kept-before; sleep 2; echo came-after', { wait_ms: 0 });
    const runId = started.pending.run_id as string;
    await waitUntil(
      async () => {
        const r = (await mcp.client.callTool({
          name: 'tmux_run_output',
          arguments: { target: started.pending.target, run_id: runId, stream: 'stdout' },
        })) as CallToolResult;
        return (r.structuredContent as any).data?.total_bytes > 0 || undefined;
      },
      10_000,
      'the first line',
    );
    const r = await runCli(['watch', '--run', runId], productEnv(server));
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    const out = lines.filter((l) => / out /.test(l)).map((l) => l.replace(/^.* out +/, ''));
    expect(out).toEqual(['kept-before', 'came-after']);
    expect(lines.at(-1)).toMatch(/ end +exited 0 after /);
  });

  it('--json prints one event per line that a tool parses', async () => {
    const watch = await watchJson(on.listing.pane_id, productEnv(server));
    const r = await callRun(mcp.client, on.listing, 'echo json-out; printf "\\377" >&2; exit 2');
    const runId = r.structured.data.authorization.run_id as string;
    const { code, mine } = await watch.untilEnd(runId);
    expect(code).toBe(0);
    expect(mine.map((e) => e.event)).toEqual(['start', 'output', 'output', 'end']);
    expect(mine[0]).toMatchObject({ pane_id: on.listing.pane_id, client: 'claude-code 2.0.1', approval: 'auto' });
    expect(mine[0].preview).toEqual(['echo json-out; printf "\\377" >&2; exit 2']);
    expect(mine.find((e) => e.stream === 'stdout')).toMatchObject({ from: 0, encoding: 'utf-8', data: 'json-out\n' });
    expect(mine.find((e) => e.stream === 'stderr')).toMatchObject({ from: 0, encoding: 'base64', data: '/w==' });
    expect(mine[3]).toMatchObject({ ok: true, completion: { state: 'exited', exit_status: 2 }, stdout_bytes: 9 });
    expect(Date.parse(mine[3].time)).toBeGreaterThan(0);
  });

  it('a stopped watcher does not hold a 10 MB run up, and says how much it missed when it continues', async () => {
    const { child, untilEnd } = await watchJson(on.listing.pane_id, productEnv(server), 60_000);
    child.kill('SIGSTOP');
    // The run ends (its result comes back) while the watcher is stopped: it did not wait for it.
    const r = await start(mcp, on.listing, 'head -c 10485760 /dev/zero | tr "\\0" a', { overflow: 'tail' });
    expect(r.data.stdout).toMatchObject({ truncated: true, bytes: 10485760 });
    const runId = r.data.authorization.run_id as string;
    child.kill('SIGCONT');
    const { mine } = await untilEnd(runId, 20_000);
    const missed = mine.filter((e) => e.event === 'missed');
    expect(missed.length).toBeGreaterThan(0);
    const seen = mine.filter((e) => e.event === 'output').reduce((n, e) => n + Buffer.byteLength(e.data), 0);
    expect(seen + missed.reduce((n, e) => n + (e.bytes as number), 0)).toBe(10485760);
    expect(seen).toBeLessThan(10485760 / 2);
    expect(mine.at(-1)).toMatchObject({ event: 'end', ok: true, stdout_bytes: 10485760 });
  });

  it('a watch request not signed with the enrollment secret is refused and its link closed', async () => {
    const rec = recordOf(server, on.listing);
    const t = await connectHelper(rec.socket);
    const x = exchange(t);
    const replies: Reply[] = [];
    const closed = new Promise<void>((r) => (x.onclose = () => r()));
    x.onreply = (r) => replies.push(r);
    const auth = authorizeHeld(rec, 'watch', '');
    x.send({ type: 'watch', auth: { ...auth, token: auth.token.replace(/^./, (c) => (c === '0' ? '1' : '0')) } });
    await closed;
    expect(replies).toMatchObject([{ type: 'error', code: 'unauthorized' }]);
  });

  it.skipIf(process.getuid?.() !== 0)(
    "another user cannot watch: the registry and the sockets are the person's alone",
    async () => {
      const nobody = { uid: 65534, gid: 65534, cwd: '/' };
      const cli = spawn(process.execPath, [CLI_BIN, 'watch'], { env: productEnv(server, { HOME: '/' }), ...nobody });
      const r = await collect(cli, 20_000);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/^tmux-run: .*(permission denied|EACCES|belongs to uid|not to you)/i);
      // Even knowing the socket's path, its connection is refused.
      const sock = recordOf(server, on.listing).socket;
      const probe = spawn(
        process.execPath,
        [
          '-e',
          `require('net').connect(${JSON.stringify(sock)}).on('error',(e)=>{console.log(e.code);process.exit(0)}).on('connect',()=>{console.log('connected');process.exit(0)})`,
        ],
        { ...nobody, env: {} },
      );
      expect((await collect(probe, 10_000)).stdout.trim()).toBe('EACCES');
    },
  );
});
