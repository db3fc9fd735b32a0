// What every section of the bench (scripts/bench/bench.ts) shares: the scripts it runs and their sizes,
// its statistics, its options (--quick, --profile, BENCH_NOTIFY), /proc readings and versions.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDescriptors, rssKiB } from '../../lab/processes.js';
import { helperFlags } from '../helper-flags.mjs';

/** The flags shell/tmux-run.zsh starts the helper with (read from it: scripts/helper-flags.mjs); the floor runs under the same ones. */
export const HELPER_FLAGS = helperFlags();
export const BIG = 262144;
/** Idle time before a memory sample: V8's memory reducer collects after about 8 s without work. */
export const IDLE_MS = 12000;
export const BIG_SCRIPT = `head -c ${BIG} /dev/zero | tr '\\0' a`;
export const MID = 65536;
export const MID_SCRIPT = `head -c ${MID} /dev/zero | tr '\\0' a`;

export const now = (): number => performance.now();

/**
 * The pause before each call of the shells' side-by-side runs (bench-fish, bench-shells), as an
 * agent's calls come (never back to back): what a helper does once a run is over (the screen
 * check's next tmux client, helper/shell/screen/pane-screen.ts) is then on no run's way, as in use.
 */
export const SIDE_BY_SIDE_GAP_MS = 20;
export const sideBySidePause = (): Promise<unknown> => new Promise((r) => setTimeout(r, SIDE_BY_SIDE_GAP_MS));

export interface Stats {
  median: number;
  p90: number;
  min: number;
  n: number;
}

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
export const stats = (values: number[]): Stats => ({
  median: percentile(values, 50),
  p90: percentile(values, 90),
  min: Math.min(...values),
  n: values.length,
});

// ------------------------------------------------------------------ options

const argv = process.argv.slice(2);
export const QUICK = argv.includes('--quick');
export const PROFILE = argv.includes('--profile')
  ? resolve(argv[argv.indexOf('--profile') + 1] ?? 'bench-results/profiles')
  : undefined;
export const N = QUICK
  ? {
      warm: 10,
      rtt: 40,
      floor: 60,
      bigWarm: 2,
      big: 10,
      windows: 2,
      window: 60,
      perPane: 2,
      leak: 200,
      enroll: 3,
      starts: 3,
    }
  : {
      warm: 30,
      rtt: 300,
      floor: 300,
      bigWarm: 5,
      big: 60,
      windows: 5,
      window: 200,
      perPane: 2,
      leak: 1000,
      enroll: 10,
      starts: 10,
    };
export const NOTIFY = process.env.BENCH_NOTIFY === 'off' ? 'off' : 'on';

/** A line of progress on stderr (stdout is the report's). */
export const progress = (s: string): void => void process.stderr.write(`bench: ${s}\n`);

// ------------------------------------------------------------------ /proc

export interface ProcStatus {
  rssKb: number;
  fds: number;
}

/** Resident memory and open descriptors of pid, or undefined when it is gone. */
export function procStatus(pid: number): ProcStatus | undefined {
  try {
    return { rssKb: rssKiB(pid), fds: openDescriptors(pid) };
  } catch {
    return undefined;
  }
}

/** procStatus of a process that must be there. */
export function mustStatus(pid: number): ProcStatus {
  const s = procStatus(pid);
  if (s === undefined) throw new Error(`process ${pid} is gone`);
  return s;
}

export function versionOf(cmd: string | undefined, args: string[]): string {
  if (cmd === undefined) return 'unknown';
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).trim().split('\n')[0] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
