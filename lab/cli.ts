// The tmux-run CLI run as a real process with an explicit environment (nothing inherited).
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI_BIN } from './product.js';
import { guardMs, waitUntil } from './waiting.js';

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

/** A `tmux-run watch --json` started, once it is watching. */
export interface JsonWatch {
  readonly child: ChildProcess;
  /** The events it printed so far, one JSON line each. */
  readonly events: () => any[];
  /** Once run `runId`'s end is printed: the watcher stopped (SIGINT), its exit code and that run's events. */
  readonly untilEnd: (runId: string, timeoutMs?: number) => Promise<{ code: number | null; mine: any[] }>;
}

/** Starts `tmux-run watch --json --pane PANE` and waits for its `watching` event. */
export async function watchJson(pane: string, env: Record<string, string>, timeoutMs = 30_000): Promise<JsonWatch> {
  const child = startCli(['watch', '--json', '--pane', pane], env);
  const done = collect(child, timeoutMs);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const events = (): any[] =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as unknown);
  await waitUntil(() => events().some((e) => e.event === 'watching'), 10_000, 'the watcher to link');
  const untilEnd = async (runId: string, ms = 10_000): Promise<{ code: number | null; mine: any[] }> => {
    await waitUntil(() => events().some((e) => e.event === 'end' && e.run_id === runId), ms, 'the end');
    child.kill('SIGINT');
    const { code } = await done;
    return { code, mine: events().filter((e) => e.run_id === runId) };
  };
  return { child, events, untilEnd };
}
