// The MCP SDK's server serving on stdio, once src/mcp/front.ts hands it the client (at the first
// message it does not answer itself): loaded from the server's one-file bundle when there is a
// safe one of this build (src/mcp/bundle.ts), else from its modules, the same code. Also the
// warm-up the build runs before it makes the bundle's code cache: a server answering initialize
// and tools/list, as a client's start asks.
import './zod-jitless.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { resolveRegistryDir } from '../core/enrollment/layout.js';
import { AuditLog, auditPath } from '../core/audit/audit-log.js';
import { packageVersion } from '../core/os/package-root.js';
import { RUN_TOOL } from './names.js';
import { createServer } from './server.js';
import type { Handover } from './bundle.js';

/**
 * Serves on stdio until the client goes, from where src/mcp/front.ts left it (`handover`);
 * `enabled` the opt-in tools (--enable-tool).
 */
export async function serve(enabled: Set<string>, log: (message: string) => void, handover: Handover): Promise<void> {
  const traceMod = process.env.TMUX_RUN_TRACE ? await import('./call-traces.js') : undefined;
  const dir = resolveRegistryDir();
  const traces = traceMod?.callTraces();
  const server = createServer({
    enabled,
    dir,
    audit: new AuditLog(auditPath()),
    log,
    version: packageVersion(),
    traces,
  });
  const transport = new StdioServerTransport(handover.stdin);
  if (handover.replayed) withheld(transport, handover.replayed, log);
  transport.onclose = () => process.exit(0);
  handover.stdin.on('end', () => process.exit(0));
  await server.connect(transport);
  traces?.attach(transport);
}

/**
 * The SDK's answer to the client's initialize told again is not sent: the front gave it. It is
 * compared with what the front gave (the same result, key for key), and a difference said on stderr.
 */
function withheld(
  transport: Transport,
  replayed: NonNullable<Handover['replayed']>,
  log: (message: string) => void,
): void {
  const send = transport.send.bind(transport);
  let pending = true;
  transport.send = async (message, options) => {
    if (!pending || !('id' in message) || message.id !== replayed.id) return send(message, options);
    pending = false;
    const given = JSON.stringify((JSON.parse(replayed.answer) as { result?: unknown }).result);
    const sdk = 'result' in message ? JSON.stringify(message.result) : undefined;
    if (sdk !== given)
      log(
        `defect: the SDK answers this client's initialize otherwise than the server's start did: ${JSON.stringify(message).slice(0, 500)} (given: ${given.slice(0, 500)})`,
      );
  };
}

/**
 * What a client's start asks, answered in memory (no stdio, no registry, no audit written): the
 * build runs it in the bundle before it makes the code cache, so that what a start compiles is in it.
 */
export async function warmUp(): Promise<void> {
  const answers: JSONRPCMessage[] = [];
  let answered: (() => void) | undefined;
  const transport: Transport = {
    start: async () => {},
    close: async () => transport.onclose?.(),
    send: async (message) => {
      answers.push(message);
      answered?.();
    },
  };
  const server = createServer({
    enabled: new Set([RUN_TOOL]),
    dir: '/nonexistent/tmux-run-warm-up',
    audit: new AuditLog('/nonexistent/tmux-run-warm-up/audit.jsonl'),
    log: () => {},
    version: packageVersion(),
  });
  await server.connect(transport);
  const ask = async (message: JSONRPCMessage): Promise<void> => {
    const before = answers.length;
    const got = new Promise<void>((r) => (answered = r));
    transport.onmessage?.(message);
    if ('id' in message) while (answers.length === before) await got;
  };
  await ask({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'warm-up', version: '0' } },
  });
  await ask({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await ask({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
  await server.close();
  const listed = answers.find((a) => 'id' in a && a.id === 2);
  if (!listed || !('result' in listed))
    throw new Error(`warm-up: tools/list was not answered: ${JSON.stringify(answers)}`);
}
