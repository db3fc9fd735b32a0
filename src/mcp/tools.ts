// The tools' published descriptions: what an agent reads to decide what to call and what to do next.
// Every agent's context carries this whole list before its first call, so it stays light (at most
// 32 KB, test/mcp/tools-list.test.ts): tmux_run's schemas are the contract's exactly; every other
// tool is served its schemas' lean form (no descriptions: src/mcp/lean-schemas.ts), and the tools
// that answer about a held run (start, wait, cancel, output) leave their output schema out: the
// SDK's Client only validates a result against a listed outputSchema, and the server validates
// every result against the contract's full schema before it answers. The full reference is the
// contract's files (schemas/) and the README.
import { runInputSchema, runOutputSchema } from '../broker/contract.js';
import {
  DEFAULT_OUTPUT_LIMIT,
  INPUT_BACKLOG_BYTES,
  MAX_INPUT_BYTES,
  MAX_OUTPUT_LIMIT,
  MAX_SCRIPT_BYTES,
  OUTPUT_CHUNK_BYTES,
  TAIL_BYTES,
} from '../core/protocol/limits.js';

import { leanSchema } from './lean-schemas.js';
import {
  CANCEL_TOOL,
  INPUT_TOOL,
  OUTPUT_TOOL,
  PANES_TOOL,
  RUN_TOOL,
  RUNS_TOOL,
  SCREEN_TOOL,
  START_TOOL,
  WAIT_TOOL,
} from './names.js';

export const panesTool = {
  name: PANES_TOOL,
  title: 'List enrolled tmux panes',
  description: [
    'Lists the tmux panes whose person enrolled their shell (zsh, bash or fish) for tmux_run by sourcing the snippet in it.',
    "Only live, verified enrollments are listed. Pass a pane's `pane_id` and `generation` as tmux_run's",
    '`target: {kind: "pane", id, generation}`. `state`: `idle` (ready), `busy` (the person is running a command',
    'there; tmux_run would be refused), `running` (a run is executing; new runs queue), `awaiting_approval` (the',
    'person is being asked), `dormant` (its helper sleeps, helper_pid null; the next call starts it, a run about',
    '0.25 s slower; `sleeps_after` says after how long unused, `never` on another host), `unresponsive` (its helper lives but answers nothing, `helper_problem` says why: calls are',
    'refused helper_unreachable until it answers; tell the person).',
    "As of the shell's last prompt: `mode` `ask` means the person approves each run (it",
    'waits for them and may be denied); `sandbox` other than `off` means runs are confined (`workspace`: writes only in the',
    'cwd tree and a private /tmp, no network; `workspace+net`: with network; `read-only`: writes only in a private',
    "/tmp, no network). `queued` counts the runs waiting in the pane's queue. A pane whose text line says its",
    'helper is of another build refuses runs (helper_outdated) until the person enrolls it again. An empty list:',
    'no pane is enrolled; ask the person to run `tmux-run setup` or source shell/tmux-run.zsh (.bash, .fish) in a pane.',
  ].join(' '),
  inputSchema: leanSchema('tmux_enrolled_panes.input.schema.json'),
  outputSchema: leanSchema('tmux_enrolled_panes.output.schema.json'),
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
    'For anything that may take more than about a minute (a test suite, a build), use tmux_run_start and',
    'tmux_run_wait instead: most clients give up on a call after 60 s, and a cancelled tmux_run is stopped.',
    'Target: call tmux_enrolled_panes first and pass `{kind: "pane", id: pane_id, generation}` from it.',
    `Limits: script at most ${MAX_SCRIPT_BYTES} bytes of UTF-8, no NUL; stdout_limit and stderr_limit default to ${DEFAULT_OUTPUT_LIMIT} bytes`,
    `(at most ${MAX_OUTPUT_LIMIT}); output over a limit stops the run (error output_limit_exceeded), output is never`,
    'truncated silently. Output that is not UTF-8 comes back base64-encoded. Background processes are stopped when',
    'the script exits; detach them with setsid and redirected output if they must outlive it.',
    'On errors read `code`, `delivery` (not_sent: nothing reached the pane; possibly_sent/observed: see `effects`):',
    'stale_generation or not_enrolled: call tmux_enrolled_panes and retry with the new generation;',
    'editor_not_empty: the person is typing; wait and retry later, do not ask them to clear it;',
    'shell_busy: a command is running in the pane; retry when it is idle;',
    'output_limit_exceeded: raise the limit or reduce output (the script was stopped; its effects so far remain), or for',
    'output that may be bigger than any limit (a verbose build) use tmux_run_start with overflow "tail", which keeps the end',
    'and the real exit status (piping into `tail` loses it);',
    "shell_exited, helper_lost: the enrollment ended; re-list panes; helper_unreachable: the pane's helper did not",
    'take the call within a few seconds (gone, stopped or hung; `effects` says what ran: a request it did not take it',
    'never acts on); re-list panes;',
    'invalid_arguments: fix the arguments; audit_unavailable or unsafe_directory: tell the person;',
    'denied: the person refused it at the pane (ask mode); do not retry it without talking to them;',
    'approval_timeout: the person did not answer within their timeout; ask them before retrying (a tmux_run_start',
    "run's question outlasts your call); sandbox_unavailable: the pane's sandbox (TMUX_RUN_SANDBOX, the person's setting)",
    'cannot be used for this run, the message says why; nothing ran; tell the person, do not retry unchanged;',
    'helper_outdated: the pane enrolled before an upgrade; ask the person to enroll it again;',
    "cwd_unavailable: the shell's current directory no longer exists; tell the person;",
    'approval_unavailable: the person asked to approve each run (ask mode) in a shell that cannot ask; nothing ran; tell them.',
    'In a pane whose listing shows a `sandbox` other than `off`, a write outside the allowed paths fails',
    '("Read-only file system") and network access fails without `+net`: that is the person\'s choice, not a',
    'fault to work around; tell them what the task needs. There nothing a run starts outlives it (setsid',
    'included): start a service with tmux_run_start and background: true instead.',
  ].join(' '),
  inputSchema: runInputSchema,
  outputSchema: runOutputSchema,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

const LONG_ERRORS = [
  "On errors read `code` and `delivery` as for tmux_run; unknown_run: the pane's helper does not hold that run",
  '(wrong pane, never started with tmux_run_start, or its result was dropped: results are kept 10 minutes, at most 32',
  'per pane; `tmux-run log --run ID` keeps every outcome); helper_lost: the helper died and its runs were stopped;',
  "not_enrolled or stale_generation: the pane's enrollment ended, and its held runs with it.",
].join(' ');

const PENDING = [
  "The result is tmux_run's (success or error, exactly as tmux_run would have returned it) once the run has",
  'finished, or `{pending: {run_id, state, elapsed_ms, stdout_bytes, stderr_bytes, stdout_tail, stderr_tail, background}}`',
  `while it is queued or running: each tail holds the stream's last bytes so far (at most ${TAIL_BYTES}; \`from\` is their`,
  'offset), so you can see progress and failures as they happen; call tmux_run_wait with the same target and run_id',
  'for more, or tmux_run_output to read a stream from any offset.',
].join(' ');

/** wait and cancel answer as start does: said once, in start's description, which an agent reads too. */
const SAME_AS_START =
  'Result (final, or pending with the tails; tmux_run_output to read a stream from any offset) and errors as for tmux_run_start.';

export const startTool = {
  name: START_TOOL,
  title: 'Start a script in an enrolled tmux pane and return without waiting for it to end',
  description: [
    'Starts a script exactly as tmux_run runs it (same target, checks, queue, idle-prompt rule, limits and result),',
    'but the run is not tied to this call: it goes on when the call returns, is cancelled, or the MCP server exits.',
    'Use it for anything that may take more than about a minute. `wait_ms` (0 to 30000, default 0) is how long',
    'this call waits for the run to finish before returning.',
    '`overflow: "tail"`: for a run that may print more than its limit (a verbose build or test suite): instead of being',
    'stopped with output_limit_exceeded it goes on, keeps the last stdout_limit/stderr_limit bytes of each stream, and',
    'ends ok with that stream `truncated: true`, `bytes` (all it printed) and `kept_from`, with the real exit status;',
    'prefer this to piping into `tail`, which loses the exit status. Default "stop" (as tmux_run).',
    '`background: true`: for a service or watcher that should keep running while you go on (a dev server, `npm run',
    "watch`): once it has started it no longer holds the pane's queue, so your next runs in that pane start at once",
    '(for example `curl` against the server). Overflow is then tail (overflow "stop" is refused); at most 8 run at once',
    'per pane (too_many_background_runs). Read its log with tmux_run_output; stop it with tmux_run_cancel when done;',
    'it also ends when its script exits, the person runs `tmux-run stop RUN`, or the enrollment ends. It is not a daemon.',
    "In a sandboxed pane the runs share the pane's sandbox (its private /tmp and network): a service started there",
    'answers your later runs in that pane on 127.0.0.1, even without network (`workspace`, `read-only`), where nothing',
    'outside the sandbox is reachable.',
    PENDING,
    LONG_ERRORS,
  ].join(' '),
  inputSchema: leanSchema('tmux_run_start.input.schema.json'),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

export const waitTool = {
  name: WAIT_TOOL,
  title: 'Wait for a run started with tmux_run_start',
  description: [
    'Waits up to `wait_ms` (default 10000, at most 30000) for a run that tmux_run_start started, and returns its',
    'result, or pending if it is still going. Waiting again is harmless and returns the same final result;',
    'cancelling this call leaves the run alone. Pass the target and run_id from tmux_run_start (tmux_runs lists them).',
    'Poll it to watch a long run: each pending result carries the tails of stdout and stderr.',
    SAME_AS_START,
  ].join(' '),
  inputSchema: leanSchema('tmux_run_wait.input.schema.json'),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

export const cancelTool = {
  name: CANCEL_TOOL,
  title: 'Stop a run started with tmux_run_start',
  description: [
    'Stops a held run: a queued one never runs (error cancelled, effects none); a running one has its process group',
    "sent SIGTERM, then SIGKILL after a second (descendants that left the group may still run). Returns the run's",
    'result once known, within `wait_ms` (default 10000), else pending. A run that had already finished is left',
    'as it was and its result returned. This is how a background run (a service) is stopped when you are done with it;',
    'its output stays readable with tmux_run_output while the result is held.',
    SAME_AS_START,
  ].join(' '),
  inputSchema: leanSchema('tmux_run_cancel.input.schema.json'),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
};

export const runsTool = {
  name: RUNS_TOOL,
  title: 'List the runs held for tmux_run_wait',
  description: [
    "Lists the runs started with tmux_run_start that the enrolled panes' helpers hold: queued, running, and",
    'finished ones whose result can still be fetched with tmux_run_wait (until `held_until`). Each has run_id,',
    'pane_id and generation (the target), script_digest, state, times, the outcome in brief, byte counts, and',
    '`background` (true for a service started with background: true: stop it with tmux_run_cancel when done),',
    '`client` (who asked: the name and version the MCP client gave in initialize, a label; null when none), and',
    '`host` (its pane on another host, as tmux_enrolled_panes gives it; null for a local pane).',
    'For an agent that lost a run_id. Runs started with tmux_run are not held and not listed.',
  ].join(' '),
  inputSchema: leanSchema('tmux_runs.input.schema.json'),
  outputSchema: leanSchema('tmux_runs.output.schema.json'),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

export const outputTool = {
  name: OUTPUT_TOOL,
  title: 'Read the output of a run started with tmux_run_start, while it runs or after',
  description: [
    'Returns at once up to `max_bytes` (default and at most ' +
      OUTPUT_CHUNK_BYTES +
      ') of one stream (`stream`: stdout or stderr)',
    'of a held run, running or finished, from the absolute byte offset `from` (default 0). Use it to read a',
    "background service's log, or more of a long run's output than the " +
      TAIL_BYTES +
      '-byte tails in its pending results.',
    'The result has `from` and `to` (offsets of the bytes in `data`), `total_bytes` (produced so far), `kept_from`',
    '(the oldest byte still held: above 0 only when overflow tail dropped the start) and `finished`. To read',
    'everything, call again with `from` = the last `to` until `to` = `total_bytes` and `finished` is true; a `from` at or',
    'past the end returns no data, so you may poll ahead. `data` is UTF-8 text (a chunk may end up to 3 bytes early',
    'rather than split a character) or base64 (`encoding`) when the bytes are not UTF-8 or start inside a character.',
    'Errors as for tmux_run_wait: unknown_run, stale_generation, not_enrolled, invalid_arguments; nothing changes.',
  ].join(' '),
  inputSchema: leanSchema('tmux_run_output.input.schema.json'),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

export const inputTool = {
  name: INPUT_TOOL,
  title: 'Send input to a run started with tmux_run_start input pipe or terminal',
  description: [
    `Gives \`data\` (UTF-8, or base64 with \`encoding\`; at most ${MAX_INPUT_BYTES} bytes a call) to a held run's stdin,`,
    'or to its terminal (input terminal: send \\r for Enter, \\u0003 for ^C, \\u0004 for EOF), in call order. Input given',
    'while the run is queued or awaiting approval is delivered once it starts. `eof: true` closes a pipe. Then read',
    'the result with tmux_run_wait, tmux_run_output or tmux_run_screen. Errors (nothing of the call is written):',
    'unknown_run; input_closed (started without input, after eof, or finished); input_backlog (the program has',
    `not read ${INPUT_BACKLOG_BYTES} bytes given to it: wait and retry); run_attached (the person took the terminal over`,
    'with tmux-run attach: wait for them); stale_generation, not_enrolled, invalid_arguments as for tmux_run_wait.',
  ].join(' '),
  inputSchema: leanSchema('tmux_run_input.input.schema.json'),
  outputSchema: leanSchema('tmux_run_input.output.schema.json'),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

export const screenTool = {
  name: SCREEN_TOOL,
  title: 'Read the screen of a run started with tmux_run_start input terminal',
  description: [
    "Returns at once a terminal run's screen as a person would see it, rendered by a terminal emulator from all",
    'it printed: `lines` (rows as text), `cursor`, `alternate` (a full-screen program), `title`, `echo` (false:',
    'a password prompt; ask the person to answer it with `tmux-run attach RUN` rather than sending a secret) and',
    '`attached` (the person has it). Use it to read a REPL, a prompt or a menu. Errors: not_a_terminal (use',
    'tmux_run_output), unknown_run, stale_generation, not_enrolled, invalid_arguments; nothing changes.',
  ].join(' '),
  inputSchema: leanSchema('tmux_run_screen.input.schema.json'),
  outputSchema: leanSchema('tmux_run_screen.output.schema.json'),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

/** What tools/list lists: tmux_enrolled_panes, and with --enable-tool tmux_run every run tool. */
export function listedTools(enabled: ReadonlySet<string>) {
  return [
    panesTool,
    ...(enabled.has(RUN_TOOL)
      ? [runTool, startTool, waitTool, cancelTool, outputTool, inputTool, screenTool, runsTool]
      : []),
  ];
}
