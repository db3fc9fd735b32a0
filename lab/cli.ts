// The tmux-run CLI run as a real process with an explicit environment (nothing inherited).
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI_BIN } from './product.js';
import { guardMs } from './waiting.js';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `node bin/tmux-run.js ...args` with exactly `env`. */
export function startCli(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [CLI_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs the CLI to completion (killed, and the promise rejected, after `timeoutMs`). */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<CliResult> {
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
      reject(new Error(`tmux-run did not exit within ${guardMs(timeoutMs)} ms; stdout: ${stdout} stderr: ${stderr}`));
    }, guardMs(timeoutMs));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
