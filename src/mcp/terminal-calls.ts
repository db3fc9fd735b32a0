// tmux_run_input and tmux_run_screen as MCP calls: the broker's result checked against the tool's
// output schema (one that does not match becomes an internal_error), with its text rendering.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { validateInputOutput, validateScreenOutput, type Validation } from '../broker/contract.js';
import {
  inputTool,
  renderInput,
  renderScreen,
  screenTool,
  type InputResult,
  type ScreenResult,
} from '../broker/run-input.js';
import type { RunContext } from '../broker/run-tool.js';

function wrap<R extends InputResult | ScreenResult>(
  r: R,
  tool: string,
  validate: (d: unknown) => Validation,
  render: (r: R) => string,
  log: (m: string) => void,
): CallToolResult {
  const v = validate(r);
  if (!v.ok) {
    log(`internal error: a ${tool} result did not match the output schema (${v.message})`);
    r = {
      ok: false,
      error: {
        code: 'internal_error',
        message: 'tmux-run produced a result that does not match its schema',
        delivery: 'observed',
      },
    } as R;
  }
  return {
    content: [{ type: 'text', text: render(r) }],
    structuredContent: r,
    isError: !r.ok,
  };
}

export async function inputToolCall(args: unknown, ctx: Pick<RunContext, 'dir' | 'log'>): Promise<CallToolResult> {
  return wrap(await inputTool(args, ctx), 'tmux_run_input', validateInputOutput, renderInput, ctx.log);
}

export async function screenToolCall(args: unknown, ctx: Pick<RunContext, 'dir' | 'log'>): Promise<CallToolResult> {
  return wrap(await screenTool(args, ctx), 'tmux_run_screen', validateScreenOutput, renderScreen, ctx.log);
}
