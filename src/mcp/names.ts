// The tools' names, apart from their descriptions so that argument parsing loads nothing else.
export const RUN_TOOL = 'tmux_run';
export const PANES_TOOL = 'tmux_enrolled_panes';
export const START_TOOL = 'tmux_run_start';
export const WAIT_TOOL = 'tmux_run_wait';
export const CANCEL_TOOL = 'tmux_run_cancel';
export const RUNS_TOOL = 'tmux_runs';
export const OUTPUT_TOOL = 'tmux_run_output';
export const INPUT_TOOL = 'tmux_run_input';
export const SCREEN_TOOL = 'tmux_run_screen';
/** Tools that come with tmux_run: `--enable-tool tmux_run` offers them too. */
export const LONG_RUN_TOOLS: ReadonlySet<string> = new Set([
  START_TOOL,
  WAIT_TOOL,
  CANCEL_TOOL,
  RUNS_TOOL,
  OUTPUT_TOOL,
  INPUT_TOOL,
  SCREEN_TOOL,
]);
/** Tools that exist only when named with --enable-tool. */
export const OPT_IN_TOOLS: ReadonlySet<string> = new Set([RUN_TOOL]);
