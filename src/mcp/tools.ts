// The tools' published descriptions: what an agent reads to decide what to call and what to do next.
import { panesInputSchema, panesOutputSchema, runInputSchema, runOutputSchema } from '../broker/contract.js';
import { DEFAULT_OUTPUT_LIMIT, MAX_OUTPUT_LIMIT, MAX_SCRIPT_BYTES } from '../protocol/limits.js';
import { PANES_TOOL, RUN_TOOL } from './names.js';

export { OPT_IN_TOOLS, PANES_TOOL, RUN_TOOL } from './names.js';

export const panesTool = {
  name: PANES_TOOL,
  title: 'List enrolled tmux panes',
  description: [
    'Lists the tmux panes whose person has enrolled their zsh for tmux_run (by sourcing shell/tmux-run.zsh in it).',
    "Only live, verified enrollments are listed. Use a pane's `pane_id` and `generation` as tmux_run's",
    '`target: {kind: "pane", id, generation}`. `state` is `idle` (ready), `busy` (the person is running a',
    'command in it; tmux_run would be refused) or `running` (a tmux_run is executing; new runs queue).',
    'An empty list means no pane is enrolled: ask the person to run `source <tmux-run>/shell/tmux-run.zsh` in a zsh pane.',
  ].join(' '),
  inputSchema: panesInputSchema,
  outputSchema: panesOutputSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

export const runTool = {
  name: RUN_TOOL,
  title: 'Run a script in an enrolled tmux pane',
  description: [
    'Runs a POSIX sh script in the zsh of a tmux pane that its person enrolled, without typing into the terminal:',
    'nothing appears on their command line or in their history. The script runs as `/bin/sh -c SCRIPT` in the',
    "shell's current directory and exported environment, with stdin closed (/dev/null), in its own session;",
    'you get its stdout and stderr separately and its real exit status or signal. It starts only when the',
    "person's prompt is idle and empty; one run at a time per pane, in arrival order.",
    'Target: call tmux_enrolled_panes first and pass `{kind: "pane", id: pane_id, generation}` from it.',
    `Limits: script at most ${MAX_SCRIPT_BYTES} bytes of UTF-8, no NUL; stdout_limit and stderr_limit default to ${DEFAULT_OUTPUT_LIMIT} bytes`,
    `(at most ${MAX_OUTPUT_LIMIT}); output over a limit stops the run (error output_limit_exceeded), output is never`,
    'truncated silently. Output that is not UTF-8 comes back base64-encoded. Background processes are stopped when',
    'the script exits; detach them with setsid and redirected output if they must outlive it.',
    'On errors read `code`, `delivery` (not_sent: nothing reached the pane; possibly_sent/observed: see `effects`):',
    'stale_generation or not_enrolled: call tmux_enrolled_panes and retry with the new generation;',
    'editor_not_empty: the person is typing; wait and retry later, do not ask them to clear it;',
    'shell_busy: a command is running in the pane; retry when it is idle;',
    'output_limit_exceeded: raise the limit or reduce output (the script was stopped; its effects so far remain);',
    'helper_unreachable, shell_exited, helper_lost: the enrollment ended; re-list panes;',
    'invalid_arguments: fix the arguments; audit_unavailable or unsafe_directory: tell the person.',
  ].join(' '),
  inputSchema: runInputSchema,
  outputSchema: runOutputSchema,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};
