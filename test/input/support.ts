// Shared pieces of the input suites: tmux_run_input and tmux_run_screen through the SDK Client,
// each result checked against the published contract with ajv.
import Ajv2020Module from 'ajv/dist/2020.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { loadContract } from '../mcp/support.js';
import { targetOf, wait } from '../long/support.js';
import { waitUntil } from '../../lab/waiting.js';

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const ajv = new Ajv2020({ allErrors: true, strict: false });
const validateInput = ajv.compile(loadContract('tmux_run_input.output.schema.json'));
const validateScreen = ajv.compile(loadContract('tmux_run_screen.output.schema.json'));

type Pane = Pick<PaneListing, 'pane_id' | 'generation'>;

async function call(
  client: Client,
  name: 'tmux_run_input' | 'tmux_run_screen',
  args: Record<string, unknown>,
): Promise<Record<string, any>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const s = result.structuredContent as Record<string, any>;
  expect(s, `${name} structuredContent`).toBeDefined();
  const validate = name === 'tmux_run_input' ? validateInput : validateScreen;
  expect(validate(s) ? [] : validate.errors, `${name} valid: ${JSON.stringify(s).slice(0, 400)}`).toEqual([]);
  expect(result.isError === true, 'isError agrees with the variant').toBe(s.ok === false);
  const text = result.content.find((c) => c.type === 'text') as { text: string } | undefined;
  expect(text?.text.length).toBeGreaterThan(0);
  return s;
}

/** tmux_run_input with `data` as UTF-8 (or base64 when `encoding` says so). */
export const input = (
  client: Client,
  l: Pane,
  run_id: string,
  data: string,
  extra: { encoding?: 'utf-8' | 'base64'; eof?: boolean } = {},
) => call(client, 'tmux_run_input', { target: targetOf(l), run_id, data, ...extra });

export const screen = (client: Client, l: Pane, run_id: string) =>
  call(client, 'tmux_run_screen', { target: targetOf(l), run_id });

/** Polls the screen until `pred` holds; returns that screen. */
export async function screenUntil(
  client: Client,
  l: Pane,
  run_id: string,
  pred: (d: Record<string, any>) => boolean,
  what: string,
  ms = 10_000,
): Promise<Record<string, any>> {
  let last: Record<string, any> = {};
  try {
    await waitUntil(
      async () => {
        last = await screen(client, l, run_id);
        return last.ok === true && pred(last.data);
      },
      ms,
      what,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last screen: ${JSON.stringify(last).slice(0, 1500)}`, { cause: e });
  }
  return last.data;
}

/** Waits until the run is running (a pending result says so). */
export async function running(client: Client, l: PaneListing, run_id: string): Promise<Record<string, any>> {
  let p: Record<string, any> | undefined;
  await waitUntil(async () => (p = (await wait(client, l, run_id, 0)).pending)?.state === 'running', 10_000, 'running');
  return p!;
}
