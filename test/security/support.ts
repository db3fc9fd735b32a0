// Shared pieces of the security suites: the record behind a listing, raw connections to a
// helper socket, process facts from /proc, and marker files that prove nothing ran.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { readRecord, type EnrollmentRecord } from '../../src/enrollment/record.js';
import { signBinding, type Binding } from '../../src/protocol/token.js';
import type { Reply, Request } from '../../src/protocol/messages.js';
import { connectHelper, exchange } from '../../src/broker/helper-client.js';
import type { PaneListing } from '../../src/broker/registry.js';
import { CLI_BIN } from '../support/mcp.js';
import { uniqueToken, type TmuxServer } from '../support/tmux.js';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The enrollment record behind a listed pane (read the way the broker reads it). */
export function recordOf(server: TmuxServer, listing: Pick<PaneListing, 'enrollment_generation'>): EnrollmentRecord {
  return readRecord(join(server.registryDir, `${listing.enrollment_generation}.json`));
}

/** A path under the server's temporary directory that a script may create; it must not exist yet. */
export function markerPath(server: TmuxServer, what = 'marker'): string {
  return join(server.baseDir, `${what}-${uniqueToken()}`);
}

/** A script that leaves proof of having run. */
export const touchScript = (marker: string): string => `touch '${marker}'; echo ran`;

/** Resident set size of a process in KiB (VmRSS of /proc/PID/status). */
export function rssKiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  if (!m?.[1]) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]);
}

/** Connects to a Unix socket; resolves once connected. */
export function rawConnect(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    s.once('connect', () => {
      s.removeAllListeners('error');
      s.on('error', () => {});
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** Resolves when the peer ends or closes the connection, with what it sent; rejects after `timeoutMs`. */
export function untilClosed(s: Socket, timeoutMs = 5000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    if (s.destroyed || s.readableEnded) return resolve(Buffer.concat(chunks));
    const timer = setTimeout(() => reject(new Error(`the connection stayed open for ${timeoutMs} ms`)), timeoutMs);
    s.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

/** The NUL-separated argv of every live process, as one string per process. */
export function allCmdlines(): Array<{ pid: number; argv: string }> {
  const out: Array<{ pid: number; argv: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      out.push({ pid: Number(name), argv: readFileSync(`/proc/${name}/cmdline`).toString('latin1') });
    } catch {
      /* gone */
    }
  }
  return out;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`bin/tmux-run.js`) with exactly `env`. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tmux-run ${args.join(' ')} did not exit in ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The CLI's environment for a test server (its registry, audit trail and a plain PATH). */
export function cliEnv(server: TmuxServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: server.home,
    TMUX_RUN_DIR: server.registryDir,
    XDG_STATE_HOME: server.env.XDG_STATE_HOME ?? join(server.home, '.local', 'state'),
    LANG: 'C.UTF-8',
    ...extra,
  };
}

/** Sends one request on a fresh connection; resolves with its final reply (done or error). */
export async function sendRequest(socket: string, req: Request, timeoutMs = 10_000): Promise<Reply> {
  const x = exchange(await connectHelper(socket));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no final reply in time')), timeoutMs);
    x.onreply = (r) => {
      if (r.type !== 'done' && r.type !== 'error' && r.type !== 'revoked') return;
      clearTimeout(timer);
      x.close();
      resolve(r);
    };
    x.onclose = (e) => {
      clearTimeout(timer);
      reject(new Error(`the helper closed the link${e ? `: ${e.message}` : ''}`));
    };
    x.send(req);
  });
}

export { bindingFor } from '../support/mcp.js';

/** A run request for `binding`, signed with `secretHex`. */
export function runRequest(binding: Binding, secretHex: string, script: string): Extract<Request, { type: 'run' }> {
  return { type: 'run', binding, token: signBinding(Buffer.from(secretHex, 'hex'), binding), script, progress: false };
}
