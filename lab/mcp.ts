// tmux-run-mcp driven with the SDK's real Client over stdio (no mocks: the spawned server,
// helper, zsh and tmux are all real).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaneListing } from '../src/broker/registry.js';
import { MCP_BIN, productEnv } from './product.js';
import type { TmuxServer } from './server.js';

/** Every tool a server started with --enable-tool tmux_run lists, sorted by name. */
export const ALL_TOOLS = [
  'tmux_enrolled_panes',
  'tmux_run',
  'tmux_run_cancel',
  'tmux_run_input',
  'tmux_run_output',
  'tmux_run_screen',
  'tmux_run_start',
  'tmux_run_wait',
  'tmux_runs',
];

export interface McpHandle {
  client: Client;
  transport: StdioClientTransport;
  /** Lines the server wrote to stderr. */
  stderr: string[];
  pid: number | null;
  close(): Promise<void>;
}

export interface McpOptions {
  /** Start with --enable-tool tmux_run (the default) or without. */
  enable?: boolean;
  /** The server's arguments instead of the default ones. */
  args?: string[];
  /** Node's own flags, before the server's script (--cpu-prof, say). */
  nodeArgs?: string[];
  /** The name the client gives itself. */
  clientName?: string;
  /** The version the client gives itself (1.0.0 unless said). */
  clientVersion?: string;
  /** Added to (or replacing parts of) productEnv(server). */
  env?: Record<string, string>;
}

/** Spawns tmux-run-mcp (with --enable-tool tmux_run unless `enable` is false) and connects a Client. */
export async function startMcp(server: TmuxServer, opts: McpOptions = {}): Promise<McpHandle> {
  const args = [
    ...(opts.nodeArgs ?? []),
    MCP_BIN,
    ...(opts.args ?? (opts.enable === false ? [] : ['--enable-tool', 'tmux_run'])),
  ];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: productEnv(server, opts.env),
    stderr: 'pipe',
  });
  const stderr: string[] = [];
  transport.stderr?.on('data', (c: Buffer) => stderr.push(...c.toString('utf8').split('\n').filter(Boolean)));
  const client = new Client({ name: opts.clientName ?? 'tmux-run-tests', version: opts.clientVersion ?? '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    stderr,
    pid: transport.pid,
    close: async () => {
      await client.close().catch(() => {});
    },
  };
}

export interface RunCall {
  result: CallToolResult;
  structured: Record<string, any>;
  isError: boolean;
}

/** Calls tmux_run on a listed pane. */
export async function callRun(
  client: Client,
  listing: Pick<PaneListing, 'pane_id' | 'generation'>,
  script: string,
  extra: { stdout_limit?: number; stderr_limit?: number } = {},
  options?: Parameters<Client['callTool']>[2],
): Promise<RunCall> {
  const result = (await client.callTool(
    {
      name: 'tmux_run',
      arguments: { target: { kind: 'pane', id: listing.pane_id, generation: listing.generation }, script, ...extra },
    },
    undefined,
    options,
  )) as CallToolResult;
  return { result, structured: result.structuredContent as Record<string, any>, isError: result.isError === true };
}

/** The panes tmux_enrolled_panes reports. */
export async function listedPanes(client: Client): Promise<PaneListing[]> {
  const r = (await client.callTool({ name: 'tmux_enrolled_panes', arguments: {} })) as CallToolResult;
  return (r.structuredContent as { panes: PaneListing[] }).panes;
}
