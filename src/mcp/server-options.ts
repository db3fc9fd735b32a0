// What the server's request handlers are given (src/mcp/server.ts) and hand to a tool call
// (src/mcp/calls.ts, loaded at the first call): one home for both, so that neither imports the other.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuditLog } from '../core/audit/audit-log.js';
import type { CallTraces } from './call-traces.js';

/** The extra argument the SDK gives a request handler (its signal, request id, notifications). */
export type Extra = Parameters<Parameters<McpServer['server']['setRequestHandler']>[1]>[1];

export interface ServerOptions {
  enabled: Set<string>;
  dir: string;
  audit: AuditLog;
  log: (message: string) => void;
  version: string;
  /** Trace of each tmux_run call (TMUX_RUN_TRACE); attach it to the transport once connected. */
  traces?: CallTraces;
}
