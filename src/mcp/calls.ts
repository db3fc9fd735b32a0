// A tools/call, once src/mcp/server.ts has taken it: the tools that list (tmux_enrolled_panes,
// tmux_runs) and tmux_run with the long-run tools, each result checked against its output schema.
// Loaded at the first call (the broker with it), not at the server's start.
// Types only from the MCP SDK: a value import would make the bundle (scripts/build-helper.mjs) wrap
// the SDK and zod in lazy inits, which slowed the server's start (src/mcp/server.ts throws the
// protocol's errors).
import type { CallToolResult, Implementation } from '@modelcontextprotocol/sdk/types.js';
import { RegistryDirError } from '../core/enrollment/layout.js';
import { listEnrolledRecords, type Listing, type PaneListing } from '../broker/registry.js';
import { BUILD_ID } from '../core/protocol/build.js';
import { runTool as runToolCall, type Progress, type RunContext } from '../broker/run-tool.js';
import { heldTool, startTool as startToolCall } from '../broker/long-run.js';
import { heldRunListing, type RunListing, type UnansweredPane } from '../broker/held-runs.js';
import { outputTool as outputToolCall, renderOutput, type OutputResult } from '../broker/run-output.js';
import { failure, renderText, type LongResult } from '../broker/result.js';
import { escapeControls } from '../broker/escape.js';
import { clientLabel } from '../core/protocol/client.js';
import {
  validateLongOutput,
  validateOutputOutput,
  validatePanesInput,
  validatePanesOutput,
  validateRunOutput,
  validateRunsInput,
  validateRunsOutput,
} from '../broker/contract.js';
import {
  CANCEL_TOOL,
  INPUT_TOOL,
  LONG_RUN_TOOLS,
  OUTPUT_TOOL,
  PANES_TOOL,
  RUN_TOOL,
  RUNS_TOOL,
  SCREEN_TOOL,
  START_TOOL,
  WAIT_TOOL,
} from './names.js';
import { inputToolCall, screenToolCall } from './terminal-calls.js';
import type { Extra, ServerOptions } from './server-options.js';

/** Progress notifications for a call that carries a progressToken (none otherwise). */
function progressFor(token: string | number | undefined, extra: Extra): ((p: Progress) => void) | undefined {
  if (token === undefined) return undefined;
  let count = 0;
  return (p) => {
    void extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: ++count,
          message:
            p.phase === 'queued'
              ? `queued for ${Math.round(p.elapsed_ms / 1000)} s`
              : p.phase === 'awaiting_approval'
                ? `waiting for the person at the pane to approve the run (ask mode); ${Math.round(p.elapsed_ms / 1000)} s since it was queued`
                : `running for ${Math.round(p.elapsed_ms / 1000)} s; ${p.stdout_bytes} bytes of stdout, ${p.stderr_bytes} of stderr so far${p.last_line === undefined ? '' : `; last line: ${escapeControls(p.last_line)}`}`,
        },
      })
      .catch(() => {});
  };
}

/**
 * One tools/call: `params` as the SDK parsed them (`arguments` may be anything), `client` what
 * the client gave in initialize; undefined for a tool this server does not know.
 */
export async function callTool(
  o: ServerOptions,
  params: { name: string; arguments?: unknown; _meta?: { progressToken?: string | number } },
  extra: Extra,
  client: Implementation | undefined,
): Promise<CallToolResult | undefined> {
  const { name, arguments: args } = params;
  if (name === PANES_TOOL) return listPanesCall(o, args ?? {});
  if (name === RUN_TOOL || LONG_RUN_TOOLS.has(name)) {
    if (!o.enabled.has(RUN_TOOL)) return notEnabled(name, o.log);
    const ctx = {
      dir: o.dir,
      audit: o.audit,
      log: o.log,
      signal: extra.signal,
      onProgress: progressFor(params._meta?.progressToken, extra),
      // Who asked: the name and version the client gave in initialize (a label, not an identity).
      client: clientLabel(client),
    };
    return runToolsCall(o, name, args ?? {}, ctx, extra);
  }
  return undefined;
}

/** A run tool called on a server that does not offer them: refused tool_not_enabled. */
function notEnabled(name: string, log: (m: string) => void): CallToolResult {
  const refusal = failure(
    'tool_not_enabled',
    `the tool ${name} is not enabled on this server; start tmux-run-mcp with --enable-tool tmux_run to offer it (with tmux_run_start, tmux_run_wait, tmux_run_cancel, tmux_run_output, tmux_run_input, tmux_run_screen and tmux_runs)`,
    'not_sent',
  );
  if (name === RUNS_TOOL) return { content: [{ type: 'text', text: renderText(refusal, name) }], isError: true };
  return toolResult(refusal, log, name);
}

/** tmux_run and the long-run tools, on a server that offers them; undefined for any other name. */
async function runToolsCall(
  o: ServerOptions,
  name: string,
  args: unknown,
  ctx: RunContext,
  extra: Extra,
): Promise<CallToolResult | undefined> {
  switch (name) {
    case RUN_TOOL:
      return tracedRun(o, args, ctx, extra);
    case START_TOOL:
      return toolResult(await startToolCall(args, ctx), o.log, name);
    case WAIT_TOOL:
      return toolResult(await heldTool(args, ctx, 'wait'), o.log, name);
    case CANCEL_TOOL:
      return toolResult(await heldTool(args, ctx, 'cancel_held'), o.log, name);
    case RUNS_TOOL:
      return listRunsCall(o, args);
    case OUTPUT_TOOL:
      return outputResult(await outputToolCall(args, ctx), o.log);
    case INPUT_TOOL:
      return inputToolCall(args, ctx);
    case SCREEN_TOOL:
      return screenToolCall(args, ctx);
  }
  return undefined;
}

/** A tmux_run call, its stages traced when the server keeps traces (TMUX_RUN_TRACE). */
async function tracedRun(o: ServerOptions, args: unknown, ctx: RunContext, extra: Extra): Promise<CallToolResult> {
  const trace = o.traces?.begin(extra.requestId);
  const result = await runToolCall(args, { ...ctx, trace });
  if (!trace) return toolResult(result, o.log);
  if (!result.ok) trace.info.code = result.error.code;
  const reply = toolResult(result, o.log);
  trace.mark('checked');
  // A cancelled request gets no response: its trace ends here.
  if (extra.signal.aborted) o.traces?.finish(extra.requestId, false);
  return reply;
}

/**
 * Wraps a tool result; one that does not match the tool's output schema (tmux_run's, or the long
 * runs' one for the other three) becomes an internal_error.
 */
function toolResult(r: LongResult, log?: (m: string) => void, tool: string = RUN_TOOL): CallToolResult {
  const v = tool === RUN_TOOL ? validateRunOutput(r) : validateLongOutput(r);
  if (!v.ok) {
    log?.(`internal error: a ${tool} result did not match the output schema (${v.message})`);
    r = failure(
      'internal_error',
      'tmux-run produced a result that does not match its schema; what happened is unknown',
      'pending' in r || r.ok ? 'observed' : r.error.delivery,
      { state: 'unknown', authorization: null, completion: { state: 'unobserved' } },
    );
  }
  return {
    content: [{ type: 'text', text: renderText(r, tool) }],
    structuredContent: r,
    isError: !('pending' in r) && !r.ok,
  };
}

/** Wraps a tmux_run_output result; one that does not match its output schema becomes an internal_error. */
function outputResult(r: OutputResult, log: (m: string) => void): CallToolResult {
  const v = validateOutputOutput(r);
  if (!v.ok) {
    log(`internal error: a tmux_run_output result did not match the output schema (${v.message})`);
    r = failure('internal_error', 'tmux-run produced a result that does not match its schema', 'observed', {
      state: 'none',
      authorization: null,
      completion: { state: 'unobserved' },
    }) as OutputResult;
  }
  return { content: [{ type: 'text', text: renderOutput(r) }], structuredContent: r, isError: !r.ok };
}

/** The text of a tmux_runs result: one line per held run, that a person reads as a sentence; then the panes that did not answer. */
export function renderRuns(runs: RunListing[], unanswered: UnansweredPane[] = []): string {
  const silent = unanswered.map((u) =>
    escapeControls(
      `pane ${u.pane_id} (generation ${u.generation}): its runs are unknown: ${u.reason}; calls to it are refused helper_unreachable until it answers`,
    ),
  );
  if (runs.length === 0)
    return [
      `No run is held${silent.length > 0 ? ' by the panes whose helpers answered' : ''}. Runs started with tmux_run_start are listed here until their results are dropped.`,
      ...silent,
    ].join('\n');
  const outcome = (o: NonNullable<RunListing['outcome']>): string =>
    o.ok ? (o.exit_status !== null ? `exit ${o.exit_status}` : `signal ${o.signal}`) : (o.code ?? 'failed');
  return runs
    .map((r) =>
      escapeControls(
        `${r.run_id} pane ${r.pane_id}${r.host ? `@${r.host.name}` : ''} (generation ${r.generation})${r.client ? ` by ${r.client}` : ''}: ${r.state.replace('_', ' ')}${r.background ? ' in the background' : ''}${r.input !== 'closed' ? `, input ${r.input} (${r.input_bytes} bytes given${r.attached ? ', the person has taken it over' : ''})` : ''}${r.outcome ? ` (${outcome(r.outcome)})` : ''}; ${r.stdout_bytes} bytes of stdout, ${r.stderr_bytes} of stderr; queued at ${r.queued_at}${r.held_until ? `; result held until ${r.held_until}` : ''}`,
      ),
    )
    .concat(silent)
    .join('\n');
}

async function listRunsCall(o: ServerOptions, args: unknown): Promise<CallToolResult> {
  const v = validateRunsInput(args);
  if (!v.ok)
    return {
      content: [{ type: 'text', text: `tmux_runs failed: invalid arguments: ${v.message} (it takes none)` }],
      isError: true,
    };
  let runs: RunListing[];
  let unanswered: UnansweredPane[] = [];
  try {
    ({ runs, unanswered } = await heldRunListing(o.dir, { by: 'broker', audit: o.audit }));
  } catch (e) {
    if (e instanceof RegistryDirError && e.reason === 'missing') runs = [];
    else return { content: [{ type: 'text', text: `tmux_runs failed: ${(e as Error).message}` }], isError: true };
  }
  const structured = { runs, ...(unanswered.length > 0 ? { unanswered } : {}) };
  const out = validateRunsOutput(structured);
  if (!out.ok) {
    o.log(`internal error: the run listing does not match its schema (${out.message})`);
    return {
      content: [{ type: 'text', text: 'tmux_runs failed: internal error (see the server log)' }],
      isError: true,
    };
  }
  const text = renderRuns(runs, unanswered);
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

async function listPanesCall(o: ServerOptions, args: unknown): Promise<CallToolResult> {
  const v = validatePanesInput(args);
  if (!v.ok)
    return {
      content: [{ type: 'text', text: `tmux_enrolled_panes failed: invalid arguments: ${v.message} (it takes none)` }],
      isError: true,
    };
  let listing: Listing;
  try {
    listing = await listEnrolledRecords(o.dir, { cleanup: true });
  } catch (e) {
    if (e instanceof RegistryDirError && e.reason === 'missing') listing = { panes: [], records: [] };
    else
      return {
        content: [{ type: 'text', text: `tmux_enrolled_panes failed: ${(e as Error).message}` }],
        isError: true,
      };
  }
  const { panes } = listing;
  const structured = { panes };
  const out = validatePanesOutput(structured);
  if (!out.ok) o.log(`internal error: the pane listing does not match its schema (${out.message})`);
  // A helper of another build is live, so listed, but refuses this server's runs: the text says so.
  const outdated = new Set(listing.records.filter((r) => r.build !== BUILD_ID).map((r) => r.generation));
  return { content: [{ type: 'text', text: renderPanes(panes, outdated) }], structuredContent: structured };
}

/**
 * The text of a tmux_enrolled_panes result, for a client that shows only text: one line per pane,
 * whatever its names hold (a newline in a directory name included), with what decides how a run
 * goes there: its state, the person's ask mode and sandbox as of their last prompt, and the queue;
 * and, for a generation in `outdated`, that its helper is of another build and refuses runs.
 */
export function renderPanes(panes: PaneListing[], outdated: ReadonlySet<string> = new Set()): string {
  if (panes.length === 0)
    return 'No pane is enrolled. Ask the person to source shell/tmux-run.zsh in a zsh pane inside tmux.';
  return panes
    .map((p) =>
      escapeControls(
        `${p.pane_id} generation ${p.generation} session ${JSON.stringify(p.session)} window ${p.window} state ${p.state} shell ${p.shell}${p.host ? ` host ${JSON.stringify(p.host.destination)} (${JSON.stringify(p.host.name)})` : ''} check ${p.editor_check}${p.editor_check_reason !== null ? ` (${JSON.stringify(p.editor_check_reason)})` : ''} mode ${p.mode} sandbox ${p.sandbox} queued ${p.queued} cwd ${JSON.stringify(p.cwd)}${outdated.has(p.generation) ? ' (its helper is of another build of tmux-run: runs are refused helper_outdated until the person enrolls the pane again)' : ''}${p.helper_problem ? ` (${p.helper_problem}; calls are refused helper_unreachable until it answers)` : ''}`,
      ),
    )
    .join('\n');
}
