// The sandbox suites' fixture: one harness server per file whose directories (HOME, registry,
// socket) live outside /tmp, as a person's do, so a wall that holds only because the sandbox's
// private /tmp hides the whole test tree cannot pass a test; one enrolled zsh pane whose person
// (the test) sets TMUX_RUN_SANDBOX by typing at the prompt; one broker driven by the SDK Client.
// Every tmux_run result is checked against the published contract (test/mcp/support.ts).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { auditEntries, type AuditEntry } from '../../lab/audit.js';
import { enroll } from '../../lab/enrollment.js';
import { listedPanes, type McpHandle } from '../../lab/mcp.js';
import { uniqueToken } from '../../lab/markers.js';
import { allCmdlines } from '../../lab/processes.js';
import type { Pane } from '../../lab/pane.js';
import { RUN_ROOT_VAR, sweepRunRoot } from '../../lab/run-root.js';
import { openScope, type Scope } from '../../lab/scope.js';
import type { NewPaneOptions, ServerOptions, TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';
import { checkRunResult } from '../mcp/support.js';
import { targetOf, validateLong } from '../long/support.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

/** The values of TMUX_RUN_SANDBOX a person may set (`off` is also unset or empty). */
export type SandboxMode = 'off' | 'workspace' | 'workspace+net' | 'read-only';

/**
 * Where the sandbox suites keep their servers: a fresh 0700 directory under /var/tmp (or under
 * TMUX_RUN_SANDBOX_TEST_PARENT), never under /tmp, which a sandboxed run sees as its own empty
 * /tmp. Swept (leftover servers killed, the directory removed) after the file.
 */
export function sandboxTestParent(): string {
  return process.env.TMUX_RUN_SANDBOX_TEST_PARENT ?? '/var/tmp';
}

/** The fake private key the test HOME holds in ~/.ssh/id_ed25519 (its text is unique per file). */
export interface FakeSecrets {
  keyPath: string;
  keyText: string;
}

// A fake ed25519 key under home/.ssh (0700 / 0600), as ssh-keygen would leave one.
function plantFakeKey(home: string): FakeSecrets {
  const dir = join(home, '.ssh');
  mkdirSync(dir, { mode: 0o700 });
  const keyText = `-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-KEY-${uniqueToken()}${uniqueToken()}\n-----END OPENSSH PRIVATE KEY-----\n`;
  const keyPath = join(dir, 'id_ed25519');
  writeFileSync(keyPath, keyText, { mode: 0o600 });
  return { keyPath, keyText };
}

/** A unix-socket listener the test owns (an "agent" or a bus) that counts who connected. */
export interface Listener {
  /** The socket path, or `host:port` for TCP, or `@name` for an abstract socket. */
  address: string;
  /** Connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** Listens on `where` (a unix socket path, '\0name' for an abstract one, or 127.0.0.1 for TCP on a free port); each connection is greeted with `hello` and counted. */
export async function listen(where: string): Promise<Listener> {
  const sockets = new Set<Socket>();
  const l: Listener & { server: NetServer } = {
    address: where,
    connections: 0,
    server: createServer((s) => {
      l.connections += 1;
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
      s.end('hello\n');
    }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        l.server.close(() => resolve());
      }),
  };
  await new Promise<void>((resolve, reject) => {
    l.server.once('error', reject);
    if (where === '127.0.0.1') l.server.listen(0, '127.0.0.1', () => resolve());
    else l.server.listen(where, () => resolve());
  });
  const a = l.server.address();
  if (a !== null && typeof a === 'object') l.address = `127.0.0.1:${a.port}`;
  else if (where.startsWith('\0')) l.address = `@${where.slice(1)}`;
  if (!where.startsWith('\0') && where !== '127.0.0.1') chmodSync(where, 0o600);
  return l;
}

/**
 * A shell command for a script: connect to `word` (a shell word that expands to a unix path,
 * `@abstract` or `host:port`) with node and print `CONNECTED` or `REFUSED <code>`. Node is on
 * the pane's PATH inside and outside the sandbox.
 */
export function connectCommand(word: string): string {
  const js =
    "const a=process.argv[1];const net=require('net');" +
    "const o=a.startsWith('@')?{path:'\\0'+a.slice(1)}:/^[0-9.]+:[0-9]+$/.test(a)?{host:a.split(':')[0],port:+a.split(':')[1]}:{path:a};" +
    'const s=net.connect(o);s.setTimeout(3000);' +
    "s.on('connect',()=>{console.log('CONNECTED');s.destroy()});" +
    "s.on('timeout',()=>{console.log('REFUSED timeout');s.destroy()});" +
    "s.on('error',e=>console.log('REFUSED '+e.code))";
  return `node -e "${js}" ${word}`;
}

/** Every live process whose argv (NULs as spaces) contains `needle`. */
export function processesWith(needle: string): number[] {
  return allCmdlines()
    .filter((p) => p.argv.replace(/\0/g, ' ').includes(needle))
    .map((p) => p.pid);
}

/** The `sleep DURATION` processes themselves (not a bwrap, waiter or shell whose argv holds the text). */
export function sleepsOf(duration: string): number[] {
  return allCmdlines()
    .filter((p) => {
      const argv = p.argv.split('\0');
      return argv[0] === 'sleep' && argv[1] === duration;
    })
    .map((p) => p.pid);
}

/** A `sleep` duration no other process has: a name for a process the test looks for in /proc. */
export const uniqueSleep = (): string => `600.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}1`;

/** The fixture of one sandbox suite. */
export interface SandboxFixture {
  scope: Scope;
  server: TmuxServer;
  pane: Pane;
  listing: PaneListing;
  mcp: McpHandle;
  /** The test HOME's fake key. */
  secrets: FakeSecrets;
  /** Types one command at the pane's prompt as the person would; returns what it printed. */
  type(cmd: string): Promise<string>;
  /** Sets TMUX_RUN_SANDBOX at the prompt (`off` unsets it) and, when given, cds first. */
  sandbox(mode: SandboxMode | (string & {}), cwd?: string): Promise<void>;
  /** A fresh project directory under HOME (made by the test, as the person's own tree). */
  project(name?: string): string;
  /** Calls tmux_run on the pane; the structured result, checked against the contract. */
  run(script: string): Promise<Record<string, any>>;
  /** tmux_run_start and waiting until it ends; the final structured result. */
  runLong(script: string, extra?: Record<string, unknown>): Promise<Record<string, any>>;
  /** The audit trail. */
  audit(): AuditEntry[];
  /** The pane as tmux_enrolled_panes lists it, once pred holds. */
  listedWhen(pred: (p: PaneListing & Record<string, any>) => boolean): Promise<PaneListing & Record<string, any>>;
  /** Opens and enrolls one more pane in the same server. */
  extraPane(opts?: NewPaneOptions): Promise<{ pane: Pane; listing: PaneListing }>;
}

export interface SandboxFixtureOptions extends ServerOptions {
  /** Extra environment of the pane (SSH_AUTH_SOCK, say). */
  paneEnv?: Record<string, string | undefined>;
  /** Called with the server before the pane starts (to plant files, start listeners). */
  prepare?(scope: Scope): Promise<Record<string, string | undefined> | void>;
}

/**
 * One sandbox fixture for the test file: the server's directories under a fresh root outside
 * /tmp, a fake ~/.ssh key, an enrolled pane, a broker. Closed (and checked for leftovers) after
 * the file.
 */
export function useSandboxFixture(opts: SandboxFixtureOptions = {}): () => SandboxFixture {
  let fx: SandboxFixture | undefined;
  let root: string | undefined;
  const savedRoot = process.env[RUN_ROOT_VAR];
  beforeAll(async () => {
    root = mkdtempSync(join(sandboxTestParent(), 'tmux-run-sbtests-'));
    chmodSync(root, 0o700);
    process.env[RUN_ROOT_VAR] = root;
    fx = await openFixture(opts);
  });
  afterAll(async () => {
    try {
      if (fx) expect(await fx.scope.close()).toEqual([]);
    } finally {
      if (savedRoot === undefined) delete process.env[RUN_ROOT_VAR];
      else process.env[RUN_ROOT_VAR] = savedRoot;
      if (root !== undefined) expect(await sweepRunRoot(root)).toEqual([]);
    }
  });
  return () => {
    if (fx === undefined) throw new Error('the sandbox fixture starts in beforeAll');
    return fx;
  };
}

async function openFixture(opts: SandboxFixtureOptions): Promise<SandboxFixture> {
  const scope = await openScope(opts);
  try {
    const server = scope.server;
    const secrets = plantFakeKey(server.home);
    const extraEnv = (await opts.prepare?.(scope)) ?? {};
    const paneEnv = { ...(opts.paneEnv ?? {}), ...extraEnv };
    const pane = await server.newPane({ env: paneEnv });
    const listing = await enroll(pane);
    const mcp = await scope.startMcp();
    return makeFixture(scope, pane, listing, mcp, secrets, paneEnv);
  } catch (e) {
    await scope.close().catch(() => undefined);
    throw e;
  }
}

function makeFixture(
  scope: Scope,
  pane: Pane,
  listing: PaneListing,
  mcp: McpHandle,
  secrets: FakeSecrets,
  paneEnv: Record<string, string | undefined>,
): SandboxFixture {
  const server = scope.server;
  const target = () => ({ kind: 'pane' as const, id: listing.pane_id, generation: listing.generation });
  const fx: SandboxFixture = {
    scope,
    server,
    pane,
    listing,
    mcp,
    secrets,
    type: (cmd) => pane.run(cmd),
    sandbox: async (mode, cwd) => {
      const set = mode === 'off' ? 'unset TMUX_RUN_SANDBOX' : `TMUX_RUN_SANDBOX='${mode}'`;
      await pane.run(cwd === undefined ? set : `cd '${cwd}' && ${set}`);
    },
    project: (name = 'proj') => {
      const dir = join(server.home, 'src', `${name}-${uniqueToken()}`);
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      return dir;
    },
    run: async (script) => {
      const result = (await mcp.client.callTool({
        name: 'tmux_run',
        arguments: { target: target(), script },
      })) as CallToolResult;
      return checkRunResult(result);
    },
    runLong: async (script, extra = {}) => {
      const s = await startRun(mcp.client, listing, script, { wait_ms: 0, ...extra });
      return s.pending ? finalRun(mcp.client, listing, s.pending.run_id as string) : s;
    },
    audit: () => auditEntries(server),
    listedWhen: (pred) =>
      waitUntil(async () => {
        const p = (await listedPanes(mcp.client)).find((x) => x.pane_id === pane.id) as
          (PaneListing & Record<string, any>) | undefined;
        return p && pred(p) ? p : undefined;
      }),
    extraPane: async (o) => {
      const extra = await server.newPane({ env: paneEnv, ...o });
      return { pane: extra, listing: await enroll(extra) };
    },
  };
  return fx;
}

/**
 * tmux_run_start through the SDK Client; its structured result. A finished result is checked
 * against the published long-run contract; a pending one only for its run id (main's pending
 * result is still gaining fields, see test/long).
 */
export async function startRun(
  client: Client,
  listing: PaneListing,
  script: string,
  extra: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const args = { target: targetOf(listing), script, ...extra };
  return longResult((await client.callTool({ name: 'tmux_run_start', arguments: args })) as CallToolResult);
}

/** tmux_run_wait (10 s at a time) until the run has finished; its final structured result. */
export async function finalRun(client: Client, listing: PaneListing, runId: string): Promise<Record<string, any>> {
  for (let i = 0; i < 6; i++) {
    const args = { target: targetOf(listing), run_id: runId, wait_ms: 10_000 };
    const s = longResult((await client.callTool({ name: 'tmux_run_wait', arguments: args })) as CallToolResult);
    if (!s.pending) return s;
  }
  throw new Error(`run ${runId} did not finish`);
}

function longResult(result: CallToolResult): Record<string, any> {
  const s = result.structuredContent as Record<string, any>;
  expect(s, 'structuredContent').toBeDefined();
  if (s.pending) expect(typeof s.pending.run_id).toBe('string');
  else expect(validateLong(s) ? [] : validateLong.errors, JSON.stringify(s).slice(0, 400)).toEqual([]);
  expect(result.isError === true).toBe(s.ok === false);
  return s;
}

/** With TMUX_RUN_SANDBOX_TEST_VERBOSE=1, prints what an escape attempt's script saw (its streams): how each wall stopped it. */
export function observed(what: string, d: Record<string, any>): void {
  if (process.env.TMUX_RUN_SANDBOX_TEST_VERBOSE !== '1') return;
  const text = `${d.stdout?.data ?? ''}${d.stderr?.data ?? ''}`.trimEnd();
  console.log(`--- ${what}\n${text.replace(/^/gm, '  | ')}`);
}

/** The data of a successful run; fails the test, showing the result, otherwise. */
export function ran(s: Record<string, any>): Record<string, any> {
  expect(s.ok, JSON.stringify(s).slice(0, 800)).toBe(true);
  return s.data as Record<string, any>;
}

/** Asserts a sandbox refusal: sandbox_unavailable, observed, nothing run; returns the error. */
export function expectSandboxRefusal(s: Record<string, any>): Record<string, any> {
  expect(s.ok, JSON.stringify(s).slice(0, 800)).toBe(false);
  const e = s.error as Record<string, any>;
  expect(e.code, e.message).toBe('sandbox_unavailable');
  expect(e.delivery).toBe('observed');
  expect(e.effects.state).toBe('none');
  expect(typeof e.message).toBe('string');
  return e;
}

/** The file's text, or undefined when it does not exist. */
export function textOf(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** A fresh name no earlier test used. */
export const fresh = (what: string): string => `${what}-${uniqueToken()}`;
