// Shared pieces of the input suites: tmux_run_input and tmux_run_screen through the SDK Client,
// each result checked against the published contract with ajv; the cases every shell shows, local
// or at the far end of ssh (test/remote/support.ts): a password prompt, `tmux-run attach` from a
// second window.
import { userInfo } from 'node:os';
import Ajv2020Module from 'ajv/dist/2020.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { loadContract } from '../mcp/support.js';
import { finalOf, heldRuns, runIdOf, start, targetOf, wait } from '../long/support.js';
import { waitUntil } from '../../lab/waiting.js';
import { CLI_BIN } from '../../lab/product.js';
import { notice } from '../../lab/notices.js';
import type { Pane as TmuxPane } from '../../lab/pane.js';

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
  return (await callWithText(client, name, args)).structured;
}

async function callWithText(
  client: Client,
  name: 'tmux_run_input' | 'tmux_run_screen',
  args: Record<string, unknown>,
): Promise<{ structured: Record<string, any>; text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const s = result.structuredContent as Record<string, any>;
  expect(s, `${name} structuredContent`).toBeDefined();
  const validate = name === 'tmux_run_input' ? validateInput : validateScreen;
  expect(validate(s) ? [] : validate.errors, `${name} valid: ${JSON.stringify(s).slice(0, 400)}`).toEqual([]);
  expect(result.isError === true, 'isError agrees with the variant').toBe(s.ok === false);
  const text = result.content.find((c) => c.type === 'text') as { text: string } | undefined;
  expect(text?.text.length).toBeGreaterThan(0);
  return { structured: s, text: text?.text ?? '' };
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

/** tmux_run_screen's text, what the agent reads beside the structured screen. */
export const screenText = async (client: Client, l: Pane, run_id: string): Promise<string> =>
  (await callWithText(client, 'tmux_run_screen', { target: targetOf(l), run_id })).text;

/**
 * Whether `line` stands on the screen with a REPL's prompt on the next line. A program writes its
 * answer and its next prompt apart: a screen may show the one without the other yet.
 */
export const answeredAtPrompt = (lines: string[], line: string, prompt = '>>>'): boolean =>
  lines.includes(line) && lines[lines.indexOf(line) + 1] === prompt;

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

/** How a case starts a terminal run in its pane, and whose it is (local or at the far end of ssh). */
export interface RunsAs {
  /** tmux_run_start's structured part (default: one call; a far pane's suite asks again while its shell is not yet reading). */
  start?: (script: string, extra: Record<string, unknown>) => Promise<Record<string, any>>;
  /** The user the run runs as (default: this process's; at the far end, the remote user). */
  user?: string;
}

const starter = (client: Client, listing: PaneListing, how: RunsAs) =>
  how.start ?? ((script: string, extra: Record<string, unknown>) => start(client, listing, script, extra));

/**
 * A terminal run at a password prompt (stty -echo) in `pane`, local or far: tmux_run_screen and
 * tmux_run_wait say echo: false, the screen's text names `tmux-run attach`, and the pane's shell
 * draws the notice naming `tmux-run attach RUN` (`notice: false`: a shell that draws none, bash on
 * the screen check, shows no line of the run at all); the answer given is echoed neither by the run
 * nor in the pane.
 */
export async function expectPasswordPrompt(
  client: Client,
  listing: PaneListing,
  pane: TmuxPane,
  { notice: drawn = true, ...how }: { notice?: boolean } & RunsAs = {},
): Promise<void> {
  const script = `printf 'Password: '; stty -echo; read pw; stty echo; echo; echo "length \${#pw}"`;
  const id = runIdOf(await starter(client, listing, how)(script, { input: 'terminal' }));
  const id8 = id.slice(0, 8);
  await running(client, listing, id);
  const d = await screenUntil(client, listing, id, (d) => d.echo === false, 'echo off');
  expect(d.lines[0]).toBe('Password:');
  expect((await wait(client, listing, id, 0)).pending).toMatchObject({ echo: false, input: 'terminal' });
  expect(await screenText(client, listing, id)).toContain(
    'echo off (a password prompt?): the person can answer it with tmux-run attach',
  );
  if (drawn) await pane.waitFor((s) => s.includes(notice.echoOff(id8)), 8000);
  await input(client, listing, id, 'hunter2\r');
  const final = await finalOf(client, listing, id);
  expect(final.data.stdout.data).toContain('length 7');
  expect(final.data.stdout.data).not.toContain('hunter2');
  const shown = await pane.capture();
  expect(shown).not.toContain('hunter2');
  if (!drawn) expect(shown).not.toContain(`tmux-run: run ${id8}`);
}

/**
 * `tmux-run attach` typed in the person's second window (`person`, always local) takes over a
 * terminal run of `listing`'s pane, local or far: the run's screen is redrawn there, the agent's
 * input is refused run_attached meanwhile, the person's keys reach the run (as its user), Ctrl-]
 * gives their terminal back as it was, and the run goes on with the agent's input.
 */
export async function expectAttach(
  client: Client,
  listing: PaneListing,
  person: TmuxPane,
  how: RunsAs = {},
): Promise<void> {
  const hello = `hello Alice from ${how.user ?? userInfo().username}`;
  const script = `printf 'name? '; read name; echo "hello $name from $(id -un)"; printf 'more? '; read more; echo "more=$more"`;
  const id = runIdOf(await starter(client, listing, how)(script, { input: 'terminal' }));
  const id8 = id.slice(0, 8);
  await screenUntil(client, listing, id, (d) => d.lines[0] === 'name?', 'the question');
  await person.run('echo before-attach');
  await person.type(`NO_COLOR=1 ${process.execPath} ${CLI_BIN} attach ${id8}`, { enter: true });
  // The run's screen is redrawn in the person's terminal.
  await person.waitFor((s) => s.trimStart().startsWith('name?') && !s.includes('before-attach'));
  expect((await screen(client, listing, id)).data.attached).toBe(true);
  expect((await wait(client, listing, id, 0)).pending).toMatchObject({ attached: true });
  expect((await heldRuns(client)).find((r) => r.run_id === id)).toMatchObject({ attached: true });
  const refused = await input(client, listing, id, 'agent\r');
  expect(refused.error).toMatchObject({ code: 'run_attached', delivery: 'observed' });
  // The person's keys reach the run.
  await person.type('Alice', { enter: true });
  await person.waitFor((s) => s.includes(hello) && s.includes('more?'));
  // Ctrl-]: the person's terminal is back as it was, and the run goes on.
  await person.server.tmux(['send-keys', '-t', person.id, 'C-]']);
  const back = await person.waitFor((s) => s.includes('before-attach') && s.includes(`detached from run ${id8}`));
  expect(back).not.toContain('hello Alice');
  await person.waitForPrompt();
  expect((await screen(client, listing, id)).data.attached).toBe(false);
  expect((await input(client, listing, id, 'Bob\r')).ok).toBe(true);
  const final = await finalOf(client, listing, id);
  expect(final.data.stdout.data).toContain(hello);
  expect(final.data.stdout.data, JSON.stringify(final.data.stdout.data)).toContain('more=Bob');
  expect(final.data.stdout.data).not.toContain('agent');
}
