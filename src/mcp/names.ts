// The tools' names, apart from their descriptions so that argument parsing loads nothing else.
export const RUN_TOOL = 'tmux_run';
export const PANES_TOOL = 'tmux_enrolled_panes';
/** Tools that exist only when named with --enable-tool. */
export const OPT_IN_TOOLS: ReadonlySet<string> = new Set([RUN_TOOL]);
