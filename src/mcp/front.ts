// The server's start on stdio: it answers what a client's start asks (initialize, tools/list:
// src/mcp/start-answers.ts) without the MCP SDK, and loads the SDK's server (the bundle or the
// modules: src/mcp/serve.ts) at the first message it leaves to the SDK, a tool call say, or
// anything it is not sure of. The SDK's server is then told the client's initialize again (under
// an id of its own, its answer checked against the one given and not sent) and its
// notifications/initialized, and reads everything from there on, in order: from outside it is the
// SDK's server from the first line (issue 42: clients start their servers at launch).
import { PassThrough } from 'node:stream';
import { resolveRegistryDir } from '../core/enrollment/layout.js';
import { packageVersion } from '../core/os/package-root.js';
import { RUN_TOOL } from './names.js';
import { answerInitialize, answerToolsList, isInitializedNotification, parseRequest } from './start-answers.js';
import type { Handover, ServeModule } from './bundle.js';

/** The id under which the SDK's server is told the client's initialize again (its answer is not sent). */
export const REPLAY_ID = 'tmux-run:initialize-again';

/** A line longer than this without its end is left to the SDK (which holds up to 10 MB). */
const MAX_FRONT_LINE = 1 << 20;

/** Serves on stdio until the client goes; `enabled` the opt-in tools (--enable-tool). */
export function serveFront(
  enabled: Set<string>,
  log: (message: string) => void,
  load: () => Promise<ServeModule>,
): void {
  const version = packageVersion();
  let buffer: Buffer | undefined;
  /** The client's initialize as answered here, and what it was answered. */
  let initialize: { line: string; answer: string } | undefined;
  let initialized: string | undefined;
  const exit = (): never => process.exit(0);
  process.stdin.on('end', exit);
  // As the SDK's transport did with them: nothing to answer on a stdin that fails.
  process.stdin.on('error', () => {});
  process.on('SIGTERM', exit);
  process.on('SIGINT', exit);

  /** The line's answer written here (true), or false: from this line on, the SDK's. */
  const answered = (line: string): boolean => {
    if (!initialized && initialize && isInitializedNotification(line)) {
      initialized = line;
      return true;
    }
    const request = parseRequest(line);
    if (!request) return false;
    const answer = initialize
      ? answerToolsList(request, enabled)
      : (answerInitialize(request, version) ?? answerToolsList(request, enabled));
    if (answer === undefined) return false;
    if (request.method === 'initialize') initialize = { line: JSON.stringify({ ...request, id: REPLAY_ID }), answer };
    process.stdout.write(answer);
    return true;
  };

  const onData = (chunk: Buffer): void => {
    buffer = buffer ? Buffer.concat([buffer, chunk]) : chunk;
    for (;;) {
      const end = buffer.indexOf(10);
      if (end === -1 ? buffer.length > MAX_FRONT_LINE : !answered(buffer.toString('utf8', 0, end).replace(/\r$/, '')))
        return handOver();
      if (end === -1) return;
      buffer = buffer.subarray(end + 1);
    }
  };

  /** The SDK's server from here: told what was answered here, then reads what is left and stdin. */
  const handOver = (): void => {
    process.stdin.off('data', onData);
    process.stdin.off('end', exit);
    const stdin = new PassThrough();
    if (initialize) stdin.write(`${initialize.line}\n`);
    if (initialized) stdin.write(`${initialized}\n`);
    if (buffer && buffer.length > 0) stdin.write(buffer);
    process.stdin.pipe(stdin);
    const handover: Handover = {
      stdin,
      ...(initialize ? { replayed: { id: REPLAY_ID, answer: initialize.answer } } : {}),
    };
    load()
      .then((m) => m.serve(enabled, log, handover))
      .catch((e: unknown) => {
        log(`cannot start: ${(e as Error).stack ?? String(e)}`);
        process.exit(1);
      });
  };

  process.stdin.on('data', onData);
  log(
    `serving on stdio (registry ${resolveRegistryDir()}; tools: tmux_enrolled_panes${enabled.has(RUN_TOOL) ? ', tmux_run, tmux_run_start, tmux_run_wait, tmux_run_cancel, tmux_run_output, tmux_run_input, tmux_run_screen, tmux_runs' : ''})`,
  );
}
