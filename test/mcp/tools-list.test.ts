// The weight of tools/list, which every agent's context carries before its first call: the real
// answer as the SDK's Client receives it, at most 32 KB with every tool listed (and room kept for
// the contract's tools not listed yet); tmux_run's schemas exact (tools.test.ts), every other
// tool's the contract's lean form; a tool listed without an output schema still answers documents
// valid against the contract's full one, and the SDK's Client takes them as they are.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import type { JSONRPCMessage, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leanSchema } from '../../scripts/lean-schema.mjs';
import { ROOT } from '../../lab/product.js';
import { CONTRACT_DIR, loadContract, type Fixture, setupFixture } from './support.js';

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;

/** What every agent reads first may weigh at most this (about 8k tokens). */
const TOOLS_LIST_BUDGET = 32 * 1024;
/** What a tool not listed yet is allowed for its title, description and annotations. */
const NEW_TOOL_ALLOWANCE = 2000;
/** The tools whose results are the long-run output schema. */
const LONG_OUTPUT = new Set(['tmux_run_start', 'tmux_run_wait', 'tmux_run_cancel']);

/** The repository's copy of a schema (schemas/: the published contract's, and the two listings' own). */
const shipped = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(ROOT, 'schemas', file), 'utf8')) as Record<string, unknown>;
const outputFile = (tool: string): string =>
  LONG_OUTPUT.has(tool) ? 'tmux_run_long.output.schema.json' : `${tool}.output.schema.json`;

let fx: Fixture;
let tools: Tool[];
let listBytes = 0;
beforeAll(async () => {
  fx = await setupFixture();
  // The answer's bytes as they came over stdio (the transport writes one JSON line per message).
  const t = fx.mcp.transport;
  const deliver = t.onmessage!;
  t.onmessage = (m: JSONRPCMessage) => {
    if ('result' in m && Array.isArray((m.result as { tools?: unknown }).tools))
      listBytes = Buffer.byteLength(JSON.stringify(m));
    deliver(m);
  };
  tools = (await fx.mcp.client.listTools()).tools;
});
afterAll(async () => {
  await fx?.close();
});

describe('tools/list', () => {
  it('weighs at most 32 KB with every tool, and keeps room for the contract tools still to come', () => {
    expect(listBytes).toBeGreaterThan(0);
    expect(listBytes).toBeLessThanOrEqual(TOOLS_LIST_BUDGET);
    const listed = new Set(tools.map((t) => t.name));
    const coming = readdirSync(CONTRACT_DIR)
      .filter((f) => f.endsWith('.input.schema.json'))
      .map((f) => f.replace('.input.schema.json', ''))
      .filter((name) => !listed.has(name));
    // Each served as the held-run tools are: its lean input schema, no output schema.
    const projected =
      listBytes +
      coming.reduce(
        (sum, name) =>
          sum +
          JSON.stringify(leanSchema(loadContract(`${name}.input.schema.json`))).length +
          name.length +
          NEW_TOOL_ALLOWANCE,
        0,
      );
    expect(projected, `with ${coming.join(', ') || 'nothing more'}`).toBeLessThanOrEqual(TOOLS_LIST_BUDGET);
  });

  it("serves every other tool the contract's schemas in lean form, and an output schema only where it is the contract's", () => {
    for (const tool of tools.filter((t) => t.name !== 'tmux_run')) {
      expect(tool.inputSchema, tool.name).toStrictEqual(leanSchema(shipped(`${tool.name}.input.schema.json`)));
      if (tool.outputSchema !== undefined)
        expect(tool.outputSchema, tool.name).toStrictEqual(leanSchema(shipped(outputFile(tool.name))));
      expect(JSON.stringify(tool.inputSchema), tool.name).not.toMatch(/"description":"/);
      // The description still says when and how to use it.
      expect(tool.description!.length, tool.name).toBeGreaterThan(200);
    }
  });

  it('answers a tool listed without an output schema with a document the contract accepts, which the Client takes as is', async () => {
    const wait = tools.find((t) => t.name === 'tmux_run_wait')!;
    expect(wait.outputSchema).toBeUndefined();
    const r = await fx.mcp.client.callTool({
      name: 'tmux_run_wait',
      arguments: { target: fx.target(), run_id: 'a'.repeat(32), wait_ms: 0 },
    });
    expect(r.isError).toBe(true);
    const validate = new Ajv2020({ strict: false }).compile(loadContract(outputFile('tmux_run_wait')));
    expect(validate(r.structuredContent), JSON.stringify(validate.errors)).toBe(true);
    expect((r.structuredContent as { error: { code: string } }).error.code).toBe('unknown_run');
  });
});
