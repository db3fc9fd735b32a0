// The server's answers to initialize and tools/list given before the MCP SDK loads
// (src/mcp/start-answers.ts) against the SDK's real server (src/mcp/server.ts over the SDK's own
// stdio transport): every line the start answers is the line the SDK's server writes, byte for
// byte, for generated messages of every shape (well formed or not), and the start answers what
// clients send at their start.
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/core/audit/audit-log.js';
import { packageVersion } from '../../src/core/os/package-root.js';
import { RUN_TOOL } from '../../src/mcp/names.js';
import { createServer } from '../../src/mcp/server.js';
import { answerInitialize, answerToolsList, parseRequest } from '../../src/mcp/start-answers.js';

const VERSION = packageVersion();

/** The SDK's server on a pair of in-process pipes: a line in, the lines it writes back. */
class SdkServer {
  private readonly stdin = new PassThrough();
  private readonly stdout = new PassThrough();
  private out = '';
  private probes = 0;
  private readonly server;

  constructor(readonly enabled: Set<string>) {
    this.server = createServer({
      enabled,
      dir: '/nonexistent/tmux-run-test',
      audit: new AuditLog('/nonexistent/tmux-run-test/audit.jsonl'),
      log: () => {},
      version: VERSION,
    });
    this.stdout.on('data', (d: Buffer) => (this.out += d.toString('utf8')));
  }

  start = (): Promise<void> => this.server.connect(new StdioServerTransport(this.stdin, this.stdout));
  close = (): Promise<void> => this.server.close();

  /** What the SDK's server writes for `line` (nothing, or its answer), told by a ping sent after it. */
  async answer(line: string): Promise<string> {
    const probe = `probe-${++this.probes}`;
    const pong = `{"result":{},"jsonrpc":"2.0","id":"${probe}"}\n`;
    this.out = '';
    this.stdin.write(`${line}\n{"jsonrpc":"2.0","id":"${probe}","method":"ping"}\n`);
    while (!this.out.endsWith(pong)) await new Promise((r) => setTimeout(r, 1));
    return this.out.slice(0, -pong.length);
  }
}

/** What the start answers `line`, or '' when it leaves it to the SDK. */
function startAnswer(line: string, enabled: Set<string>): string {
  const request = parseRequest(line);
  if (!request) return '';
  return answerInitialize(request, VERSION) ?? answerToolsList(request, enabled) ?? '';
}

const anything = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.constant({ a: {} }),
);
/** Mostly absent (undefined: JSON.stringify leaves the key out), now and then `a`. */
const rare = (a: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: a });
/** Absent, one of the shapes given (the SDK's or nearly), or now and then anything. */
const oneOf = (...shapes: unknown[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.constantFrom(...shapes) },
    { weight: 1, arbitrary: anything },
  );
/** Mostly `valid`, now and then anything. */
const mostly = (valid: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 8, arbitrary: valid }, { weight: 1, arbitrary: anything });

const capabilities = fc.record({
  roots: oneOf({}, { listChanged: true }, { listChanged: false }, { listChanged: 'yes' }, { other: 1 }),
  sampling: oneOf({}, { context: {} }, { tools: {} }, { tools: [] }, { tools: 1 }, { other: {} }),
  elicitation: oneOf({}, { form: {} }, { form: { applyDefaults: true } }, { form: 1 }, { url: {} }, { x: 1 }),
  experimental: oneOf({}, { a: {} }, { a: 1 }, { a: [] }),
  extensions: oneOf({}, { 'v/x': {} }, { 'v/x': 'no' }),
  tasks: rare(fc.constantFrom({}, { list: {} })),
  custom: rare(anything),
});
const clientInfo = fc.record({
  name: mostly(fc.string()),
  version: mostly(fc.string()),
  title: rare(anything),
  websiteUrl: rare(fc.string()),
  description: rare(fc.string()),
  icons: rare(fc.constantFrom([], [{ src: 'x' }], [{ src: 1 }])),
  other: rare(anything),
});
const id = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.string(), fc.integer()) },
  { weight: 1, arbitrary: fc.constantFrom(2 ** 60, 1.5, null, -0, undefined) },
);
const initializeParams = fc.record({
  protocolVersion: mostly(fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, '2099-01-01', '')),
  capabilities: mostly(capabilities),
  clientInfo: mostly(clientInfo),
  _meta: rare(fc.constantFrom({}, { progressToken: 1 })),
  other: rare(anything),
});
const listParams = fc.record({
  cursor: rare(mostly(fc.string())),
  _meta: rare(fc.constant({})),
  other: rare(anything),
});
const envelope = (method: string, params: fc.Arbitrary<unknown>) =>
  fc.record({
    jsonrpc: mostly(fc.constant('2.0')),
    id,
    method: mostly(fc.constant(method)),
    params: fc.oneof(params, rare(anything)),
    extra: rare(anything),
  });
const lines = fc.oneof(
  { weight: 4, arbitrary: envelope('initialize', initializeParams).map((m) => JSON.stringify(m)) },
  { weight: 2, arbitrary: envelope('tools/list', listParams).map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.constantFrom('', 'not json', '[]', '{"jsonrpc":"2.0","id":1,"method":"ping"}') },
);

/** What clients send at their start: the start answers each itself. */
const CLIENT_STARTS = [
  { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'sdk-client', version: '1.0.0' } },
  {
    protocolVersion: '2025-06-18',
    capabilities: { roots: {}, elicitation: {} },
    clientInfo: { name: 'claude-code', version: '2.1.0' },
  },
  {
    protocolVersion: '2025-03-26',
    capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } },
    clientInfo: { name: 'Visual Studio Code', title: 'VS Code', version: '1.107.0' },
  },
  {
    protocolVersion: '2024-11-05',
    capabilities: { experimental: {} },
    clientInfo: { name: 'codex-mcp-client', version: '0.60.0' },
  },
  { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 'from-the-future', version: '9' } },
];

describe("the start's answers are the SDK server's", () => {
  const servers = [new SdkServer(new Set([RUN_TOOL])), new SdkServer(new Set())];
  beforeAll(() => Promise.all(servers.map((s) => s.start())));
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  it('for what clients send at their start, answered by the start itself', async () => {
    for (const server of servers)
      for (const [k, params] of CLIENT_STARTS.entries()) {
        for (const line of [
          JSON.stringify({ jsonrpc: '2.0', id: k, method: 'initialize', params }),
          JSON.stringify({ jsonrpc: '2.0', id: `list-${k}`, method: 'tools/list' }),
          JSON.stringify({ method: 'tools/list', params: {}, jsonrpc: '2.0', id: k }),
        ]) {
          const own = startAnswer(line, server.enabled);
          expect(own, line).not.toBe('');
          expect(own).toBe(await server.answer(line));
        }
      }
  });

  it('for generated messages of every shape: the same line, or left to the SDK', async () => {
    let answered = 0;
    let left = 0;
    await fc.assert(
      fc.asyncProperty(lines, fc.boolean(), async (line, runTool) => {
        const server = servers[runTool ? 0 : 1]!;
        const own = startAnswer(line, server.enabled);
        if (own === '') left++;
        else {
          answered++;
          expect(own, line).toBe(await server.answer(line));
        }
      }),
      { numRuns: 1000 },
    );
    // Both kinds were generated (else the property above says little).
    expect(answered).toBeGreaterThan(30);
    expect(left).toBeGreaterThan(30);
  });

  it('leaves to the SDK what it refuses: each a plain start with one thing wrong', async () => {
    const base = { jsonrpc: '2.0', id: 7, method: 'initialize', params: CLIENT_STARTS[2]! };
    const params = (p: object) => ({ ...base, params: { ...base.params, ...p } });
    const info = (i: object) => params({ clientInfo: { ...base.params.clientInfo, ...i } });
    const caps = (c: object) => params({ capabilities: { ...base.params.capabilities, ...c } });
    for (const m of [
      { ...base, id: 1.5 },
      { ...base, id: null },
      { ...base, id: 2 ** 60 },
      { ...base, jsonrpc: '1.0' },
      { ...base, extra: 1 },
      params({ protocolVersion: 1 }),
      params({ capabilities: [] }),
      info({ version: undefined }),
      info({ name: 1 }),
      info({ title: 1 }),
      info({ icons: [{ src: 1 }] }),
      caps({ roots: { listChanged: 'yes' } }),
      caps({ sampling: { tools: 1 } }),
      caps({ elicitation: { form: 1 } }),
      caps({ elicitation: { form: { applyDefaults: 'yes' } } }),
      caps({ experimental: { a: 1 } }),
      caps({ extensions: { 'v/x': 'no' } }),
    ]) {
      const line = JSON.stringify(m);
      const sdk = await servers[0]!.answer(line);
      expect(sdk.includes('"result"'), `${line} -> ${sdk}`).toBe(false);
      expect(startAnswer(line, servers[0]!.enabled), line).toBe('');
    }
  });

  it('negotiates as the SDK does: a version it knows is echoed, any other gets its latest', async () => {
    for (const v of [...SUPPORTED_PROTOCOL_VERSIONS, '1999-01-01', 'x']) {
      const line = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { ...CLIENT_STARTS[0], protocolVersion: v },
      });
      const own = JSON.parse(startAnswer(line, servers[0]!.enabled)) as { result: { protocolVersion: string } };
      expect(own.result.protocolVersion).toBe(SUPPORTED_PROTOCOL_VERSIONS.includes(v) ? v : LATEST_PROTOCOL_VERSION);
      expect(JSON.stringify(own) + '\n').toBe(await servers[0]!.answer(line));
    }
  });
});
