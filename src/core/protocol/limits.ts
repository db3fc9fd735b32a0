// The sizes tmux-run holds a run to, in one place. The JSON Schemas (schemas/) carry the same
// numbers as literals; test/unit/limits.test.ts proves they agree.

/** A script: at most this many bytes of UTF-8 (the schemas' maxLength counts characters). */
export const MAX_SCRIPT_BYTES = 65536;
/** stdout_limit and stderr_limit when the call gives none. */
export const DEFAULT_OUTPUT_LIMIT = 65536;
/** The largest stdout_limit or stderr_limit a call may ask for. */
export const MAX_OUTPUT_LIMIT = 262144;
/** The largest request frame a helper reads: a whole script plus its authorization. */
export const MAX_REQUEST_FRAME = 2 * MAX_SCRIPT_BYTES;
/** The largest frame a peer reads unless told otherwise: a reply with two full streams fits. */
export const DEFAULT_MAX_FRAME = 4 * MAX_OUTPUT_LIMIT;
/** A pending result's stdout_tail and stderr_tail hold at most this many of a stream's last bytes. */
export const TAIL_BYTES = 2048;
/** tmux_run_output returns at most this many bytes per call (its max_bytes default and maximum). */
export const OUTPUT_CHUNK_BYTES = 65536;
/** Background runs (tmux_run_start background: true) running at once per pane, at most. */
export const MAX_BACKGROUND_RUNS = 8;
/** tmux_run_input: at most this many bytes per call, once decoded. */
export const MAX_INPUT_BYTES = 65536;
/** Input given to a run but not yet delivered to it (a program that does not read), at most. */
export const INPUT_BACKLOG_BYTES = 1024 * 1024;
/**
 * What a run keeps of the input it was given (its newest bytes), for `tmux-run watch --run ID`
 * to show what the agent typed before the person started watching: in the helper's memory while
 * the run is held, never in the audit trail or on disk.
 */
export const INPUT_REPLAY_BYTES = 64 * 1024;
/** A terminal run's size when the call gives none. */
export const DEFAULT_TERMINAL_SIZE = { cols: 80, rows: 24 } as const;
/** Lines a terminal run's emulator keeps above its screen (its memory is bounded by them and its size). */
export const SCREEN_SCROLLBACK = 0;
/**
 * How long a pane's helper has to take a request (its first reply) before the call says
 * helper_unreachable: a helper that is stopped (SIGSTOP, a debugger) or hung still has its socket
 * accept connections, so only time tells. Each request carries its take-by time (`take_by`, on
 * CLOCK_MONOTONIC, system-wide on Linux: src/core/protocol/trace.ts) and the helper refuses one it reads
 * later, so a request given up on is never acted on afterwards. The same bound holds for a helper
 * that stops answering while a call waits on it (src/broker/helper-watch.ts); docs/tools.md.
 */
export const HELPER_TAKE_MS = 3000;
/**
 * What the broker waits past a take-by time before it gives the request up: a helper that took it
 * just in time has its reply on the way (the one moment it cannot cover is a helper stopped between
 * its check and its reply, which a stop of this long would have to hit within microseconds).
 */
export const HELPER_TAKE_GRACE_MS = 1000;
