// Test support for the broker side: enroll a real pane, and drive tmux-run-mcp with the SDK's
// real Client over stdio (no mocks: the spawned server, helper, zsh and tmux are all real).
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { listEnrolled, type PaneListing } from '../../src/broker/registry.js';
import { scriptDigest } from '../../src/enrollment/generation.js';
import type { Binding } from '../../src/protocol/token.js';
import type { EnrollmentRecord } from '../../src/enrollment/record.js';
import { waitUntil, type NewPaneOptions, type Pane, type TmuxServer } from './tmux.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const SNIPPET = join(ROOT, 'shell', 'tmux-run.zsh');
export const MCP_BIN = join(ROOT, 'bin', 'tmux-run-mcp.js');
export const CLI_BIN = join(ROOT, 'bin', 'tmux-run.js');

/** Opens a zsh pane, sources the snippet in it as a person would, and waits until it is listed. */
export async function enrolledPane(
  server: TmuxServer,
  opts?: NewPaneOptions,
): Promise<{ pane: Pane; listing: PaneListing }> {
  const pane = await server.newPane(opts);
  await pane.run(`source ${SNIPPET}`);
  const listing = await waitUntil(
    async () => {
      const all = await listEnrolled(server.registryDir);
      return all.find((p) => p.pane_id === pane.id && p.tmux_socket === server.socket);
    },
    10_000,
    `pane ${pane.id} to be listed`,
  );
  return { pane, listing };
}

export interface McpHandle {
  client: Client;
  transport: StdioClientTransport;
  /** Lines the server wrote to stderr. */
  stderr: string[];
  pid: number | null;
  close(): Promise<void>;
}

/** The environment a broker started by a test gets: the server's registry and audit locations. */
export function brokerEnv(server: TmuxServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: server.home,
    TMUX_RUN_DIR: server.registryDir,
    XDG_STATE_HOME: server.env.XDG_STATE_HOME ?? join(server.home, '.local', 'state'),
    ...extra,
  };
}

/** Spawns tmux-run-mcp (with --enable-tool tmux_run unless `enable` is false) and connects a Client. */
export async function startMcp(
  server: TmuxServer,
  opts: { enable?: boolean; args?: string[]; env?: Record<string, string> } = {},
): Promise<McpHandle> {
  const args = [MCP_BIN, ...(opts.args ?? (opts.enable === false ? [] : ['--enable-tool', 'tmux_run']))];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: brokerEnv(server, opts.env),
    stderr: 'pipe',
  });
  const stderr: string[] = [];
  transport.stderr?.on('data', (c: Buffer) => stderr.push(...c.toString('utf8').split('\n').filter(Boolean)));
  const client = new Client({ name: 'tmux-run-tests', version: '1.0.0' });
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

/** A binding for `script` aimed at the enrollment `rec`, as the broker would make it. */
export function bindingFor(rec: EnrollmentRecord, script: string, over: Partial<Binding> = {}): Binding {
  return {
    run_id: randomBytes(16).toString('hex'),
    script_digest: scriptDigest(script),
    server_generation: rec.server_generation,
    pane_id: rec.pane_id,
    enrollment_generation: rec.enrollment_generation,
    process_generation: rec.process_generation,
    stdout_limit: 65536,
    stderr_limit: 65536,
    issued_at: Date.now(),
    ...over,
  };
}
