// Everything one run of the bench (scripts/bench/bench.ts) measures, as bench-results/latest.json keeps it.
import type { InitializeFigures } from './bench-initialize.js';
import type { Stats } from './bench-common.js';
import type { EnrollCost, Memory } from './bench-enroll.js';
import type { FishCost } from './bench-fish.js';
import type { SandboxMetrics } from './bench-sandbox.js';
import type { ShellsCost } from './bench-shells.js';
import type { SpawnMetrics } from './bench-spawn.js';
import type { Traces } from './bench-trace.js';
import type { WallsBench } from './bench-walls.js';
import type { WatchCost } from './bench-watch.js';
import type { InputBench } from './bench-input.js';
import type { LightCost } from './bench-light.js';
import type { StartCost } from './bench-start.js';
import type { DormantCost } from './bench-dormant.js';
import type { RemoteCost } from './bench-remote.js';
import type { PromptCost } from './bench-zsh.js';
import type { FirstPromptCost } from './bench-first-prompt.js';

export interface HelperMetrics {
  pid: number;
  runs: number;
  rss_kb_start: number;
  rss_kb_after_warmup: number;
  rss_kb_after: number;
  rss_kb_after_more: number;
  fds_start: number;
  fds_after: number;
  fds_after_more: number;
  rss_kb_after_big?: number;
  rss_kb_after_big_idle?: number;
}

export interface Metrics {
  loadavg_start: number[];
  loadavg_end: number[];
  enroll_ms: Stats;
  node_start_ms: Stats;
  server_start_ms: Stats;
  /** tmux-run-mcp's answer to initialize beside a bare Node's to one line, alternating (scripts/bench/bench-initialize.ts). */
  initialize?: InitializeFigures;
  floor_true_ms: Stats;
  run_true_ms: Stats;
  cpu_ms_per_run: Record<string, number>;
  ratio_true: number;
  helper: HelperMetrics;
  rate_one_pane: Stats;
  rate_four_panes: Stats;
  rate_ratio: number;
  floor_big_ms: Stats;
  run_big_ms: Stats;
  ratio_big: number;
  floor_mid_ms: Stats;
  run_mid_ms: Stats;
  ratio_mid: number;
  output_full_ms: Stats;
  output_poll_ms: Stats;
  /** The per-stage tables of the traced runs (scripts/bench/bench-trace.ts). */
  trace: Traces;
  broker_rss_kb: number | undefined;
  broker_rss_kb_start: number | undefined;
  broker_rss_kb_after: number | undefined;
  broker_rss_kb_after_more: number | undefined;
  failed_runs: number;
  /** What enrolling costs the shell (scripts/bench/bench-enroll.ts); the helper's PSS after the runs. */
  enroll_cost: EnrollCost;
  /** What a fish pane costs: source, first prompt, a run (scripts/bench/bench-fish.ts). */
  fish_cost: FishCost;
  helper_memory_after: Memory | undefined;
  sandbox?: SandboxMetrics;
  /** Plain runs spawned natively and by Node, alternating on two panes. */
  spawn?: SpawnMetrics;
  /** The spawn path and the sandbox, the base tree against this one in one process (scripts/bench/bench-walls.ts). */
  walls?: WallsBench;
  /** A 10 MB run with nobody watching, a live watcher, a stopped one (scripts/bench/bench-watch.ts). */
  watch?: WatchCost;
  /** Input round trips and a terminal run's emulator (scripts/bench/bench-input.ts). */
  input?: InputBench;
  /** zsh-bench-style first prompt and first command, minimal and with plugins, before and after (scripts/bench/bench-zsh.ts). */
  prompt_cost?: PromptCost;
  /** bash and fish: first prompt and first command from a new window, without the snippet, before and after (scripts/bench/bench-first-prompt.ts). */
  first_prompt?: FirstPromptCost;
  /** What bash panes cost, and the screen check per run (scripts/bench/bench-shells.ts). */
  shells?: ShellsCost;
  /** The listing and the helpers' memory at rest at 1 and at 20 panes (scripts/bench/bench-light.ts). */
  light?: LightCost;
  /** A helper's own start: from its modules, its bundle, its bundle with the code cache (scripts/bench/bench-start.ts). */
  start?: StartCost;
  /** The same with every helper dormant, and a dormant pane's first run (scripts/bench/bench-dormant.ts). */
  dormant?: DormantCost;
  /** A zsh at the far end of `tmux-run ssh` over loopback beside a local one (scripts/bench/bench-remote.ts). */
  remote?: RemoteCost;
  /** The same with bash (its builtin), fish and bash without its builtin (the screen check, read by the relay). */
  remote_screen?: RemoteCost[];
}
