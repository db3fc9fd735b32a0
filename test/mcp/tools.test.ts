// What tmux-run-mcp offers: tools/list with and without --enable-tool tmux_run, the contract's
// schemas and annotations served exactly, and the refusal of a tool that is not enabled.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_TOOLS, type McpHandle, startMcp } from '../../lab/mcp.js';
import { MCP_BIN, productEnv, ROOT } from '../../lab/product.js';
import { checkRunResult, CONTRACT_DIR, contractInput, contractOutput, type Fixture, setupFixture } from './support.js';

let fx: Fixture;
let disabled: McpHandle;
beforeAll(async () => {
  fx = await setupFixture();
  disabled = await startMcp(fx.server, { enable: false });
});
afterAll(async () => {
  await disabled?.close();
  await fx?.close();
});

/** Runs tmux-run-mcp with args and stdin closed; resolves with its exit code and stderr. */
function runMcp(args: string[]): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [MCP_BIN, ...args],
      { env: productEnv(fx.server), timeout: 10_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr, stdout });
      },
    );
    child.stdin?.end();
  });
}

describe('tools/list', () => {
  it('offers tmux_run only with --enable-tool tmux_run', async () => {
    const on = (await fx.mcp.client.listTools()).tools.map((t) => t.name).sort();
    expect(on).toEqual(ALL_TOOLS);
    const off = (await disabled.client.listTools()).tools.map((t) => t.name);
    expect(off).toEqual(['tmux_enrolled_panes']);
  });

  it('serves the contract input and output schemas exactly', async () => {
    const tool = (await fx.mcp.client.listTools()).tools.find((t) => t.name === 'tmux_run')!;
    expect(tool.inputSchema).toStrictEqual(contractInput);
    expect(tool.outputSchema).toStrictEqual(contractOutput);
  });

  it('ships copies of the contract in schemas/ equal to the published contract', () => {
    for (const name of [
      'tmux_run.input.schema.json',
      'tmux_run.output.schema.json',
      'tmux_run_start.input.schema.json',
      'tmux_run_long.output.schema.json',
      'tmux_run_input.input.schema.json',
      'tmux_run_input.output.schema.json',
      'tmux_run_screen.input.schema.json',
      'tmux_run_screen.output.schema.json',
    ]) {
      const copy = JSON.parse(readFileSync(join(ROOT, 'schemas', name), 'utf8'));
      const published = JSON.parse(readFileSync(join(CONTRACT_DIR, name), 'utf8'));
      expect(copy, name).toStrictEqual(published);
    }
  });

  it('annotates tmux_run as destructive, not idempotent, closed-world, not read-only', async () => {
    const tool = (await fx.mcp.client.listTools()).tools.find((t) => t.name === 'tmux_run')!;
    expect(tool.annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
      readOnlyHint: false,
    });
    expect(tool.description).toMatch(/tmux_enrolled_panes/);
  });

  it('lists the enrolled pane through tmux_enrolled_panes on both servers', async () => {
    for (const client of [fx.mcp.client, disabled.client]) {
      const r = (await client.callTool({ name: 'tmux_enrolled_panes', arguments: {} })) as CallToolResult;
      expect(r.isError).not.toBe(true);
      const panes = (r.structuredContent as { panes: Array<Record<string, unknown>> }).panes;
      const p = panes.find((x) => x.pane_id === fx.pane.id);
      expect(p).toMatchObject({ pane_id: fx.pane.id, generation: fx.listing.generation, state: 'idle' });
      for (const key of ['session', 'window', 'cwd', 'shell_pid', 'helper_pid', 'enrolled_at'])
        expect(p).toHaveProperty(key);
    }
  });

  it('answers tmux_enrolled_panes with arguments it does not take with an error result, not a crash', async () => {
    const r = (await fx.mcp.client.callTool({
      name: 'tmux_enrolled_panes',
      arguments: { pane: '%1' },
    })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect((r.content as Array<{ text: string }>)[0]!.text).toMatch(/unknown property "pane"/);
  });

  it('answers arguments that are not an object with Invalid params (-32602), for every tool, and the server goes on', async () => {
    for (const name of ALL_TOOLS) {
      for (const args of ['foo', [1], 7]) {
        const err = await fx.mcp.client
          .request({ method: 'tools/call', params: { name, arguments: args as never } }, CallToolResultSchema)
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(err, `${name} ${JSON.stringify(args)}`).toBeInstanceOf(McpError);
        expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
        expect((err as McpError).message).toMatch(/arguments/);
      }
    }
    expect((await fx.mcp.client.listTools()).tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);
  });
});

describe('tmux_run when not enabled', () => {
  it('refuses a call with an error naming --enable-tool tmux_run, and nothing runs', async () => {
    const marker = fx.marker();
    const script = `touch '${marker}'`;
    const result = (await disabled.client.callTool({
      name: 'tmux_run',
      arguments: { target: fx.target(), script },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    const s = checkRunResult(result);
    expect(s.error.message).toContain('--enable-tool tmux_run');
    expect(s.error.delivery).toBe('not_sent');
    expect(s.error.effects).toEqual({ state: 'none', authorization: null, completion: { state: 'unobserved' } });
    expect(s.error.message).not.toContain(marker);
    await fx.assertNothingRan(script, marker);
  });
});

describe('tmux-run-mcp arguments', () => {
  it('exits non-zero at start on an unknown --enable-tool, saying why', async () => {
    const r = await runMcp(['--enable-tool', 'foo']);
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.stderr).toMatch(/unknown tool "foo"/);
    expect(r.stderr).toMatch(/tmux_run/);
    expect(r.stdout).toBe('');
  });

  it('exits non-zero on --enable-tool without a name and on an unknown argument', async () => {
    const a = await runMcp(['--enable-tool']);
    expect(a.code).not.toBe(0);
    expect(a.stderr).toMatch(/--enable-tool/);
    const b = await runMcp(['--bogus']);
    expect(b.code).not.toBe(0);
    expect(b.stderr).toMatch(/unknown argument/);
  });

  it('accepts --enable-tool=tmux_run', async () => {
    const h = await startMcp(fx.server, { args: ['--enable-tool=tmux_run'] });
    try {
      expect((await h.client.listTools()).tools.map((t) => t.name)).toContain('tmux_run');
    } finally {
      await h.close();
    }
  });
});
