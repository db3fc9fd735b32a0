// Runs the built CLI as a real process with an explicit environment.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'tmux-run.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `node bin/tmux-run.js ...args` with exactly `env` (plus nothing inherited). */
export function startCli(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs the CLI to completion (killed after `timeoutMs`). */
export function cli(args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<CliResult> {
  return collect(startCli(args, env), timeoutMs);
}

/** Collects a started CLI's output until it exits. */
export function collect(child: ChildProcess, timeoutMs = 20_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tmux-run did not exit within ${timeoutMs} ms; stdout: ${stdout} stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface Sandbox {
  dir: string;
  registryDir: string;
  stateDir: string;
  env: Record<string, string>;
  remove(): void;
}

/** A private temporary HOME, TMUX_RUN_DIR (0700) and XDG_STATE_HOME, for tests without tmux. */
export function sandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'tmux-run-cli-'));
  chmodSync(dir, 0o700);
  const registryDir = join(dir, 'run');
  const stateDir = join(dir, 'state');
  mkdirSync(registryDir, { mode: 0o700 });
  mkdirSync(stateDir, { mode: 0o700 });
  return {
    dir,
    registryDir,
    stateDir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      TMUX_RUN_DIR: registryDir,
      XDG_STATE_HOME: stateDir,
      LANG: 'C.UTF-8',
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
