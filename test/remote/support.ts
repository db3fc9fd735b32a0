// What the remote suites share: a test sshd with one remote user of a given login shell, set up
// with `tmux-run setup --remote` from the harness server's home, and the line the person types.
import { execFile } from 'node:child_process';
import { chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect } from 'vitest';
import { CLI_BIN, productEnv } from '../../lab/product.js';
import { callRun, listedPanes } from '../../lab/mcp.js';
import { ok } from '../mcp/support.js';
import type { Scope } from '../../lab/scope.js';
import type { PaneListing } from '../../src/broker/registry.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { startSshd, type RemoteUser, type Sshd } from './sshd.js';

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
