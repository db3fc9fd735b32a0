// Shared pieces of the long-run suites: calls of tmux_run_start, tmux_run_wait, tmux_run_cancel and
// tmux_runs through the SDK Client, each result checked against the published contract with ajv.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { connectHelper, exchange } from '../../src/broker/helper-client.js';
import type { Reply, Request } from '../../src/core/protocol/messages.js';
import { ROOT } from '../../lab/product.js';
import { loadContract } from '../mcp/support.js';

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const ajv = new Ajv2020({ allErrors: true, strict: false });
/** The published contract's output schema of the three long-run tools. */
export const validateLong = ajv.compile(loadContract('tmux_run_long.output.schema.json'));
/** The published contract's output schema of tmux_run_output. */
export const validateOutput = ajv.compile(loadContract('tmux_run_output.output.schema.json'));
/** tmux_runs has no published schema: the repository's own. */
export const validateRuns = ajv.compile(
  JSON.parse(readFileSync(join(ROOT, 'schemas', 'tmux_runs.output.schema.json'), 'utf8')) as object,
);

export type Target = { kind: 'pane'; id: string; generation: string };
export const targetOf = (l: Pick<PaneListing, 'pane_id' | 'generation'>): Target => ({
  kind: 'pane',
  id: l.pane_id,
  generation: l.generation,
});

export type CallOptions = Parameters<Client['callTool']>[2];

/** Calls one of the three long-run tools; asserts the result is valid against the contract; returns its structured part. */
export async function callLong(
  client: Client,
  name: 'tmux_run_start' | 'tmux_run_wait' | 'tmux_run_cancel',
  args: Record<string, unknown>,
  options?: CallOptions,
): Promise<Record<string, any>> {
  const result = (await client.callTool({ name, arguments: args }, undefined, options)) as CallToolResult;
  const s = result.structuredContent as Record<string, any>;
  expect(s, `${name} structuredContent`).toBeDefined();
  expect(
    validateLong(s) ? [] : validateLong.errors,
    `${name} result valid: ${JSON.stringify(s).slice(0, 400)}`,
  ).toEqual([]);
  const text = result.content.find((c) => c.type === 'text') as { text: string } | undefined;
  expect(text?.text.length).toBeGreaterThan(0);
  expect(result.isError === true, 'isError agrees with the variant').toBe(s.ok === false);
  return s;
}

export const start = (
  client: Client,
  l: PaneListing,
  script: string,
  extra: Record<string, unknown> = {},
  o?: CallOptions,
) => callLong(client, 'tmux_run_start', { target: targetOf(l), script, ...extra }, o);
export const wait = (client: Client, l: PaneListing, run_id: string, wait_ms?: number, o?: CallOptions) =>
  callLong(client, 'tmux_run_wait', { target: targetOf(l), run_id, ...(wait_ms === undefined ? {} : { wait_ms }) }, o);
export const cancel = (client: Client, l: PaneListing, run_id: string, wait_ms?: number) =>
  callLong(client, 'tmux_run_cancel', { target: targetOf(l), run_id, ...(wait_ms === undefined ? {} : { wait_ms }) });

/** tmux_run_output; asserts the result is valid against the contract; returns its structured part. */
export async function readOutput(
  client: Client,
  l: Pick<PaneListing, 'pane_id' | 'generation'>,
  args: { run_id: string; stream: 'stdout' | 'stderr'; from?: number; max_bytes?: number },
): Promise<Record<string, any>> {
  const result = (await client.callTool({
    name: 'tmux_run_output',
    arguments: { target: targetOf(l), ...args },
  })) as CallToolResult;
  const s = result.structuredContent as Record<string, any>;
  expect(s, 'tmux_run_output structuredContent').toBeDefined();
  expect(
    validateOutput(s) ? [] : validateOutput.errors,
    `tmux_run_output result valid: ${JSON.stringify(s).slice(0, 400)}`,
  ).toEqual([]);
  expect(result.isError === true, 'isError agrees with the variant').toBe(s.ok === false);
  return s;
}

/** The bytes of one tmux_run_output chunk. */
export const chunkBytes = (d: Record<string, any>): Buffer =>
  Buffer.from(d.data as string, d.encoding === 'base64' ? 'base64' : 'utf8');

/**
 * Reads a stream with tmux_run_output from offset 0 until the run has finished and every byte was
 * read, polling while it runs; returns the bytes and every chunk's data.
 */
export async function readAll(
  client: Client,
  l: Pick<PaneListing, 'pane_id' | 'generation'>,
  run_id: string,
  stream: 'stdout' | 'stderr',
  max_bytes?: number,
): Promise<{ bytes: Buffer; chunks: Array<Record<string, any>> }> {
  const parts: Buffer[] = [];
  const chunks: Array<Record<string, any>> = [];
  let from = 0;
  for (let i = 0; i < 2000; i++) {
    const r = await readOutput(client, l, { run_id, stream, from, ...(max_bytes ? { max_bytes } : {}) });
    expect(r.ok, JSON.stringify(r).slice(0, 300)).toBe(true);
    const d = r.data;
    expect(d.from).toBe(from);
    const b = chunkBytes(d);
    expect(b.length).toBe(d.to - d.from);
    if (d.from < d.total_bytes) expect(b.length, 'never empty while bytes are available').toBeGreaterThan(0);
    parts.push(b);
    if (b.length > 0) chunks.push(d);
    from = d.to;
    if (d.finished && from === d.total_bytes) return { bytes: Buffer.concat(parts), chunks };
    if (b.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`run ${run_id}: ${stream} not read to its end`);
}

/** tmux_runs, its result checked against its schema. */
export async function heldRuns(client: Client): Promise<Array<Record<string, any>>> {
  const result = (await client.callTool({ name: 'tmux_runs', arguments: {} })) as CallToolResult;
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  const s = result.structuredContent as { runs: Array<Record<string, any>> };
  expect(validateRuns(s) ? [] : validateRuns.errors).toEqual([]);
  return s.runs;
}

/** The run id of any long-run result (pending, success or error with an authorization). */
export const runIdOf = (s: Record<string, any>): string =>
  s.pending?.run_id ?? s.data?.authorization.run_id ?? s.error?.effects?.authorization?.run_id;

/** Waits (tmux_run_wait, 10 s at a time) until the run is finished; returns its final result. */
export async function finalOf(client: Client, l: PaneListing, runId: string, tries = 6): Promise<Record<string, any>> {
  for (let i = 0; i < tries; i++) {
    const r = await wait(client, l, runId, 10_000);
    if (!r.pending) return r;
  }
  throw new Error(`run ${runId} did not finish`);
}

/** Sends one request to a helper socket; resolves with every reply up to the final one (or the link's end). */
export async function exchangeAll(socket: string, req: Request, timeoutMs = 10_000): Promise<Reply[]> {
  const x = exchange(await connectHelper(socket));
  return new Promise((resolve, reject) => {
    const got: Reply[] = [];
    const timer = setTimeout(() => reject(new Error(`no final reply in time: ${JSON.stringify(got)}`)), timeoutMs);
    const finish = (): void => {
      clearTimeout(timer);
      x.close();
      resolve(got);
    };
    x.onreply = (r) => {
      got.push(r);
      if (['done', 'error', 'pending', 'runs', 'output'].includes(r.type)) finish();
    };
    x.onclose = () => finish();
    x.send(req);
  });
}
