// tmux-run-mcp's start (src/mcp/front.ts): initialize and tools/list answered before the MCP SDK
// loads, the SDK's server taking over at the first other message. Over real stdio (the bytes as a
// client sends them, in one write or in pieces) and with the SDK's real Client: the answers, their
// order, the client the SDK's server knows after the take-over (the audit trail's `client`), no
// answer to the initialize told again, and the end of stdin.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_BIN, productEnv } from '../../lab/product.js';
import { packageVersion } from '../../src/core/os/package-root.js';
import { REPLAY_ID } from '../../src/mcp/front.js';
import { type Fixture, setupFixture } from './support.js';

let fx: Fixture;
/** Every server spawned here: one a failed test left running is ended before the fixture's check. */
const spawned: ChildProcessWithoutNullStreams[] = [];
beforeAll(async () => {
  fx = await setupFixture();
});
afterAll(async () => {
  for (const c of spawned) if (c.exitCode === null && c.signalCode === null) c.kill();
  await fx?.close();
});

interface Raw {
  child: ChildProcessWithoutNullStreams;
  /** The lines it wrote to stdout so far, parsed. */
  lines: Array<Record<string, any>>;
  stderr: () => string;
  /** Resolves once it wrote `n` lines. */
  lines_(n: number): Promise<Array<Record<string, any>>>;
  exited: Promise<number | null>;
}

/** tmux-run-mcp spawned with --enable-tool tmux_run, spoken to in raw lines. */
function raw(env: Record<string, string> = {}): Raw {
  const child = spawn(process.execPath, [MCP_BIN, '--enable-tool', 'tmux_run'], { env: productEnv(fx.server, env) });
  spawned.push(child);
  let out = '';
  let err = '';
  const lines: Array<Record<string, any>> = [];
  const waiting: Array<() => void> = [];
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    for (let i = out.indexOf('\n'); i !== -1; i = out.indexOf('\n')) {
      lines.push(JSON.parse(out.slice(0, i)) as Record<string, any>);
      out = out.slice(i + 1);
    }
    for (const w of waiting.splice(0)) w();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  return {
    child,
    lines,
    stderr: () => err,
    exited,
    async lines_(n) {
      while (lines.length < n) await new Promise<void>((r) => waiting.push(r));
      return lines;
    },
  };
}

const line = (m: object): string => `${JSON.stringify(m)}\n`;
const initialize = (id: number | string, params: object = {}): string =>
  line({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw-client', version: '3.1' },
      ...params,
    },
  });
const initialized = line({ jsonrpc: '2.0', method: 'notifications/initialized' });
const toolsList = (id: number): string => line({ jsonrpc: '2.0', id, method: 'tools/list' });
const runCall = (id: number, script: string): string =>
  line({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'tmux_run', arguments: { target: fx.target(), script } },
  });

const INITIALIZE_RESULT = {
  protocolVersion: '2025-06-18',
  capabilities: { tools: { listChanged: true } },
  serverInfo: { name: 'tmux-run', version: packageVersion() },
};

describe("tmux-run-mcp's start", () => {
  it('answers a whole start in one write, in order, and the SDK takes the call after it knowing the client', async () => {
    const s = raw();
    s.child.stdin.write(initialize(0) + initialized + toolsList(1) + runCall(2, 'echo start-one'));
    const got = await s.lines_(3);
    expect(got.map((m) => m.id)).toEqual([0, 1, 2]);
    expect(got[0]!.result).toEqual(INITIALIZE_RESULT);
    expect(got[1]!.result.tools.map((t: { name: string }) => t.name)).toContain('tmux_run');
    expect(got[2]!.result.structuredContent).toMatchObject({ ok: true, data: { stdout: { data: 'start-one\n' } } });
    s.child.stdin.end();
    expect(await s.exited).toBe(0);
    // Nothing answered the initialize told again; nothing said the two differ.
    expect(s.lines.map((m) => m.id)).toEqual([0, 1, 2]);
    expect(JSON.stringify(s.lines)).not.toContain(REPLAY_ID);
    expect(s.stderr()).not.toContain('defect');
    const runId = got[2]!.result.structuredContent.data.authorization.run_id as string;
    let start: Record<string, unknown> | undefined;
    while (!(start = fx.audit().find((e) => e.event === 'start' && e.run_id === runId)))
      await new Promise((r) => setTimeout(r, 20));
    expect(start?.client).toBe('raw-client 3.1');
  });

  it('answers bytes that come in pieces, lines split anywhere and \\r\\n ends', async () => {
    const s = raw();
    const bytes = Buffer.from(initialize('a').replace('\n', '\r\n') + toolsList(1) + runCall(2, 'echo pieces'));
    for (const cut of [5, 60, 61, bytes.length - 3]) {
      s.child.stdin.write(bytes.subarray(0, cut));
      await new Promise((r) => setTimeout(r, 30));
      s.child.stdin.write(bytes.subarray(cut));
      const got = await s.lines_(3);
      expect(got.map((m) => m.id)).toEqual(['a', 1, 2]);
      expect(got[2]!.result.structuredContent).toMatchObject({ ok: true, data: { stdout: { data: 'pieces\n' } } });
      s.lines.length = 0;
    }
    s.child.stdin.end();
    expect(await s.exited).toBe(0);
    expect(s.stderr()).not.toContain('defect');
  });

  it('leaves to the SDK what it is not sure of: a line that is not JSON (ignored), a ping, an initialize with _meta, an unknown version', async () => {
    const s = raw();
    s.child.stdin.write('not json\n' + line({ jsonrpc: '2.0', id: 9, method: 'ping' }));
    expect((await s.lines_(1))[0]).toEqual({ result: {}, jsonrpc: '2.0', id: 9 });
    s.child.stdin.write(initialize(10, { _meta: { progressToken: 1 }, protocolVersion: '1999-01-01' }) + toolsList(11));
    const got = await s.lines_(3);
    expect(got[1]).toEqual({
      result: { ...INITIALIZE_RESULT, protocolVersion: LATEST_PROTOCOL_VERSION },
      jsonrpc: '2.0',
      id: 10,
    });
    expect(got[2]!.id).toBe(11);
    s.child.stdin.write(runCall(12, 'echo after'));
    expect((await s.lines_(4))[3]!.result.structuredContent).toMatchObject({
      ok: true,
      data: { stdout: { data: 'after\n' } },
    });
    s.child.stdin.end();
    expect(await s.exited).toBe(0);
  });

  it('hands over the same from its modules (TMUX_RUN_BUNDLE=off), where the SDK loads while bytes still come', async () => {
    const s = raw({ TMUX_RUN_BUNDLE: 'off' });
    s.child.stdin.write(initialize(0) + toolsList(1) + runCall(2, 'echo modules'));
    s.child.stdin.write(line({ jsonrpc: '2.0', id: 3, method: 'ping' }));
    const got = await s.lines_(4);
    // The ping may be answered before the call: the SDK's, as ever.
    expect(got.map((m) => m.id).sort()).toEqual([0, 1, 2, 3]);
    const call = got.find((m) => m.id === 2)!;
    expect(call.result.structuredContent).toMatchObject({ ok: true, data: { stdout: { data: 'modules\n' } } });
    s.child.stdin.end();
    expect(await s.exited).toBe(0);
    expect(s.stderr()).not.toContain('defect');
  });

  it('ends when stdin ends, before and after the SDK took over', async () => {
    const before = raw();
    before.child.stdin.end(initialize(1) + toolsList(2));
    expect(await before.exited).toBe(0);
    expect(before.lines.map((m) => m.id)).toEqual([1, 2]);
    const after = raw();
    after.child.stdin.write(initialize(1) + line({ jsonrpc: '2.0', id: 2, method: 'ping' }));
    await after.lines_(2);
    after.child.stdin.end();
    expect(await after.exited).toBe(0);
  });

  it("is a whole MCP server to the SDK's Client: identity, capabilities, tools, a call", async () => {
    const { client } = fx.mcp;
    expect(client.getServerVersion()).toEqual(INITIALIZE_RESULT.serverInfo);
    expect(client.getServerCapabilities()).toEqual(INITIALIZE_RESULT.capabilities);
    expect(client.getInstructions()).toBeUndefined();
    expect((await client.listTools()).tools.length).toBe(9);
    expect(await fx.run('echo client')).toMatchObject({ ok: true, data: { stdout: { data: 'client\n' } } });
    expect(fx.mcp.stderr.join('\n')).not.toContain('defect');
  });
});
