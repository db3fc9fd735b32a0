// What the remote suites share: a test sshd with one remote user of a given login shell, set up
// with `tmux-run setup --remote` from the harness server's home, the line the person types, and
// the cases every far shell's features suite shows (a REPL, a password prompt, attach, the queue,
// background runs, watch; the password prompt and attach are the local panes' checks, from
// test/input/support.ts, given how a run starts there and whose it is).
import { execFile } from 'node:child_process';
import { chownSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI_BIN, productEnv } from '../../lab/product.js';
import { callRun, listedPanes, type RunCall } from '../../lab/mcp.js';
import { runCli, watchJson } from '../../lab/cli.js';
import { waitUntil } from '../../lab/waiting.js';
import { ok } from '../mcp/support.js';
import { cancel, finalOf, heldRuns, runIdOf, wait } from '../long/support.js';
import { answeredAtPrompt, expectAttach, expectPasswordPrompt, input, screen, screenUntil } from '../input/support.js';
import type { Scope } from '../../lab/scope.js';
import type { PaneListing } from '../../src/broker/registry.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { startSshd, userCmdlines, type RemoteUser, type Sshd } from './sshd.js';

const run = promisify(execFile);

export interface Remote {
  readonly sshd: Sshd;
  readonly user: RemoteUser;
  /** `tmux-run ARGS` with the harness's environment. */
  cli(args: string[]): Promise<{ stdout: string; stderr: string }>;
  /** What the person types in a local pane to reach the far end. */
  sshLine(): string;
}

/** A far end for the file: sshd, the user (its start-up file holding `rc`), set up once. */
export function useRemote(scope: Scope, name: string, shell: string, rc: { file: string; text: string }): Remote {
  let sshd: Sshd | undefined;
  const remote: Remote = {
    get sshd() {
      return sshd!;
    },
    get user() {
      return sshd!.users[0]!;
    },
    cli: (args) => run(process.execPath, [CLI_BIN, ...args], { env: productEnv(scope.server), encoding: 'utf8' }),
    sshLine: () => `${process.execPath} ${CLI_BIN} ssh -F ${sshd!.clientConfig} ${name}`,
  };
  beforeAll(async () => {
    sshd = await startSshd({ users: [{ name, shell }], acceptEnv: 'fedora' });
    const u = sshd.users[0]!;
    const file = join(u.home, rc.file);
    writeFileSync(file, rc.text);
    chownSync(file, u.uid, u.uid);
  });
  afterAll(async () => {
    await sshd?.close();
  });
  return remote;
}

/** The listed panes that are on another host. */
export async function remoteListings(mcp: McpHandle): Promise<PaneListing[]> {
  return (await listedPanes(mcp.client)).filter((p) => p.host !== null);
}

let typed = 0;

/**
 * The person types `cmd` at the far prompt (`prompt` as the far shell draws it; any of zsh, bash
 * or fish); done when it has run and the prompt is back.
 */
export async function typeAtFar(pane: Pane, prompt: string, cmd: string): Promise<void> {
  const n = ++typed;
  const mark = `typed-${n}`;
  // Quoted as typed, so that only the output is the bare mark (the same in the three shells).
  await pane.type(`${cmd}; echo typed-'${n}'`, { enter: true });
  await pane.waitFor((s) => {
    const lines = s.split('\n');
    const at = lines.lastIndexOf(mark);
    return at >= 0 && lines.slice(at + 1).some((l) => l === prompt.trimEnd());
  });
}

/**
 * The run every far shell's suite shows, once the person has typed `cd /tmp` and exported
 * TRR_SEEN=far-value at the far prompt: exit status, separate streams, the remote user `user`, the
 * live cwd and the variable; nothing of it on the pane's screen.
 */
export async function expectFarRun(mcp: McpHandle, target: PaneListing, pane: Pane, user: string): Promise<void> {
  const r = await callRun(mcp.client, target, 'id -un; pwd; printf "%s\\n" "$TRR_SEEN"; echo to-stderr >&2; exit 3');
  const d = ok(r.structured);
  expect(d.completion).toEqual({ state: 'exited', exit_status: 3, signal: null });
  expect(d.stdout.data).toBe(`${user}\n/tmp\nfar-value\n`);
  expect(d.stderr.data).toBe('to-stderr\n');
  const screen = await pane.capture();
  expect(screen).not.toContain('to-stderr');
  expect(screen).not.toContain('id -un');
}

/**
 * The person half-types `echo half-typ` (seen at the far end when `atFar` holds for the screen:
 * the keys went through ssh); a run is refused `editor_not_empty`, and the line, finished, runs.
 */
export async function expectHalfTypedKept(
  mcp: McpHandle,
  target: PaneListing,
  pane: Pane,
  atFar: (screen: string) => boolean = (s) => s.endsWith('echo half-typ'),
): Promise<void> {
  await pane.type('echo half-typ');
  await pane.waitFor(atFar);
  const r = await callRun(mcp.client, target, 'true');
  expect(r.isError).toBe(true);
  expect(r.structured.error.code).toBe('editor_not_empty');
  await pane.type('ed', { enter: true });
  await pane.waitFor((s) => s.includes('half-typed'));
}

/** A far pane's suite, as its cases use it (built once its beforeAll is done). */
export interface Far {
  readonly mcp: McpHandle;
  readonly scope: Scope;
  readonly listing: PaneListing;
  readonly user: RemoteUser;
  /** The pane the ssh session runs in: what the far shell draws. */
  readonly pane: Pane;
  /** A local window of the person's. */
  readonly person: Pane;
  /** tmux_run_start's structured part (bash and fish: asked again while the far shell is not yet reading). */
  readonly start: (script: string, extra?: Record<string, unknown>) => Promise<Record<string, any>>;
  /** tmux_run (the same). */
  readonly run: (script: string) => Promise<RunCall>;
}

/**
 * A terminal run (a Python REPL at the far end) driven through tmux_run_input and read through
 * tmux_run_screen, as the remote user in their home; its terminal its own, nothing of it in the
 * pane; exit() ends it with 0.
 */
async function expectRepl(f: Far): Promise<void> {
  const { mcp, listing } = f;
  const s = await f.start('exec python3 -q', { input: 'terminal' });
  const id = runIdOf(s);
  try {
    expect(s.pending).toMatchObject({ input: 'terminal', attached: false });
    await screenUntil(mcp.client, listing, id, (d) => d.lines.some((l: string) => l === '>>>'), 'the REPL prompt');
    await input(mcp.client, listing, id, 'import getpass, os; print(getpass.getuser(), os.getcwd(), 6*7)\r');
    const want = `${f.user.name} ${f.user.home} 42`;
    const d = await screenUntil(
      mcp.client,
      listing,
      id,
      (d) => answeredAtPrompt(d.lines, want),
      'the answer, then the REPL prompt, on the screen',
    );
    expect(d).toMatchObject({ cols: 80, rows: 24, alternate: false, attached: false, finished: false });
    // Its terminal is its own, at the far end: never the pane's, and nothing of it on the pane's screen.
    expect(await f.pane.capture()).not.toContain('getpass');
    await input(mcp.client, listing, id, 'exit()\r');
    const final = await finalOf(mcp.client, listing, id);
    expect(final.data.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
    expect(final.data.stdout.data).toContain(want);
    expect((await screen(mcp.client, listing, id)).data).toMatchObject({ finished: true });
  } catch (e) {
    // A REPL left running would hold the pane for every case after this one.
    await cancel(mcp.client, listing, id).catch(() => undefined);
    throw e;
  }
}

/** The queue: a run waits behind the pane's current one (listed so), a queued run cancelled never runs. */
async function expectQueue(f: Far): Promise<void> {
  const { mcp, listing } = f;
  const first = runIdOf(await f.start('sleep 1; echo first', { wait_ms: 0 }));
  const second = await f.start('echo second', { wait_ms: 0 });
  expect(second.pending).toMatchObject({ state: 'queued' });
  // The listing says so, as the far end answers for it.
  expect((await remoteListings(mcp)).find((p) => p.pane_id === listing.pane_id)).toMatchObject({
    state: 'running',
    queued: 1,
  });
  const marker = join(f.user.home, `queued-${process.pid}`);
  const third = runIdOf(await f.start(`touch ${marker}`, { wait_ms: 0 }));
  const c = await cancel(mcp.client, listing, third);
  expect(c.error).toMatchObject({ code: 'cancelled', delivery: 'observed' });
  expect(c.error.effects).toMatchObject({ state: 'none', completion: { state: 'unobserved' } });
  expect((await finalOf(mcp.client, listing, runIdOf(second))).data.stdout.data).toBe('second\n');
  expect((await finalOf(mcp.client, listing, first)).data.stdout.data).toBe('first\n');
  expect(existsSync(marker)).toBe(false);
}

/** Background runs: the queue stays free, tmux_runs and `tmux-run runs` list them, `tmux-run stop` stops one. */
async function expectBackground(f: Far): Promise<void> {
  const { mcp, listing } = f;
  const marker = `sleep 303.${process.pid}`;
  const id = runIdOf(await f.start(marker, { background: true }));
  await waitUntil(
    async () => (await heldRuns(mcp.client)).find((r) => r.run_id === id && r.state === 'running'),
    10_000,
    'the background run running',
  );
  await waitUntil(() => userCmdlines(f.user.uid).some((c) => c.includes(marker)), 10_000, 'it runs there');
  expect(ok((await f.run('echo beside')).structured).stdout.data).toBe('beside\n');
  const held = (await heldRuns(mcp.client)).find((r) => r.run_id === id)!;
  expect(held).toMatchObject({
    background: true,
    pane_id: listing.pane_id,
    generation: listing.generation,
    host: listing.host,
  });
  const env = productEnv(f.scope.server);
  const table = await runCli(['runs'], env);
  expect(table.code, table.stderr).toBe(0);
  expect(table.stdout.split('\n').find((l) => l.includes(id.slice(0, 8)))).toContain(
    ` ${listing.pane_id}@${listing.host!.name} `,
  );
  const json = JSON.parse((await runCli(['runs', '--json'], env)).stdout) as Array<Record<string, any>>;
  expect(json.find((r) => r.run_id === id)).toMatchObject({ background: true, host: listing.host });
  const stopped = await runCli(['stop', id.slice(0, 8)], env);
  expect(stopped.code, stopped.stderr).toBe(0);
  expect(stopped.stdout).toMatch(new RegExp(`^stopped: run ${id.slice(0, 8)} in pane ${listing.pane_id}`));
  const r = await wait(mcp.client, listing, id, 5000);
  expect(r.error).toMatchObject({ code: 'cancelled' });
  expect(r.error.message).toMatch(/tmux-run stop/);
  await waitUntil(() => !userCmdlines(f.user.uid).some((c) => c.includes(marker)), 10_000, 'gone there');
}

/** `tmux-run watch --json` here shows a far run: its start, its output as it comes, its end. */
async function expectWatch(f: Far): Promise<void> {
  const { listing } = f;
  const watch = await watchJson(listing.pane_id, productEnv(f.scope.server));
  const r = await f.run('echo watched-out; echo watched-err >&2; exit 2');
  const id = r.structured.data.authorization.run_id as string;
  const { code, mine } = await watch.untilEnd(id);
  expect(code).toBe(0);
  expect(mine.map((e) => e.event)).toEqual(['start', 'output', 'output', 'end']);
  expect(mine[0]).toMatchObject({ pane_id: listing.pane_id, approval: 'auto' });
  expect(mine.find((e) => e.stream === 'stdout')).toMatchObject({ data: 'watched-out\n' });
  expect(mine.find((e) => e.stream === 'stderr')).toMatchObject({ data: 'watched-err\n' });
  expect(mine[3]).toMatchObject({ ok: true, completion: { state: 'exited', exit_status: 2 } });
}

/** The cases every far shell's features suite shows, in its describe (`far`: its suite once set up). */
export function itShowsTheSharedCases(far: () => Far): void {
  it('drives a Python REPL at the far end through tmux_run_input and tmux_run_screen; exit() ends it with 0', () =>
    expectRepl(far()));
  it('a password prompt at the far end: echo false, the remote shell names tmux-run attach in the pane', () => {
    const f = far();
    return expectPasswordPrompt(f.mcp.client, f.listing, f.pane, { start: f.start });
  });
  it('tmux-run attach in a local window takes a far terminal run over, refuses the agent meanwhile, and gives it back at Ctrl-]', () => {
    const f = far();
    return expectAttach(f.mcp.client, f.listing, f.person, { start: f.start, user: f.user.name });
  });
  it("the queue: a run waits behind the pane's current one, a queued run cancelled never runs", () =>
    expectQueue(far()));
  it('background runs: the queue stays free, tmux_runs and `tmux-run runs` list them, `tmux-run stop` stops one', () =>
    expectBackground(far()));
  it('tmux-run watch here shows a far run: its start, its output as it comes, its end', () => expectWatch(far()));
}
