// The MCP server: hand-written JSON Schemas served through the SDK's low-level request handlers.
// A client's start (initialize, tools/list) is answered before this loads, the same way
// (src/mcp/start-answers.ts, src/mcp/front.ts); a tool call loads src/mcp/calls.ts, and with it
// the broker, at the first call: clients start their servers at launch (issue 42). What it checks
// of each call: docs/protocol-mcp.md.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { z } from 'zod';
import { OPT_IN_TOOLS } from './names.js';
import { listedTools } from './tools.js';
import { SERVER_NAME, serverCapabilities } from './start-answers.js';
import type { ServerOptions } from './server-options.js';

/**
 * tools/call as the SDK reads it, except that `arguments` may be anything. The SDK's server checks
 * every tools/call against its own schema first and answers arguments that are not an object (a
 * string, an array) with Invalid params (-32602), as the MCP spec has it; with the SDK's schema
 * here as well, the same request failed this handler's parse first, an internal error (-32603).
 */
const CallAnyArgumentsSchema = CallToolRequestSchema.extend({
  params: CallToolRequestSchema.shape.params.extend({ arguments: z.unknown().optional() }),
});

/**
 * The SDK's own JSON Schema validator (it checks what a client answers to an elicitation, which
 * this server never asks for), made at its first use rather than with the server: making it (an
 * ajv with its formats) was about a tenth of a start beyond Node's own.
 */
function validatorWhenUsed(): jsonSchemaValidator {
  let made: AjvJsonSchemaValidator | undefined;
  return { getValidator: (schema) => (made ??= new AjvJsonSchemaValidator()).getValidator(schema) };
}

/** Builds the server; connect it to a transport to serve. */
export function createServer(o: ServerOptions): McpServer {
  const mcp = new McpServer(
    { name: SERVER_NAME, version: o.version },
    { capabilities: serverCapabilities(), jsonSchemaValidator: validatorWhenUsed() },
  );
  const server = mcp.server;
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools(o.enabled) }));
  server.setRequestHandler(CallAnyArgumentsSchema, async (request, extra): Promise<CallToolResult> => {
    const { callTool } = await import('./calls.js');
    const result = await callTool(o, request.params, extra, server.getClientVersion());
    if (result) return result;
    const { name } = request.params;
    const known = OPT_IN_TOOLS.has(name) ? ` (start the server with --enable-tool ${name})` : '';
    throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(name).slice(0, 100)}${known}`);
  });
  return mcp;
}
