// The MCP server: hand-written JSON Schemas served through the SDK's low-level request handlers.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuditLog } from '../audit/audit-log.js';
import { RegistryDirError } from '../enrollment/layout.js';
import { listEnrolled, type PaneListing } from '../broker/registry.js';
import { runTool as runToolCall } from '../broker/run-tool.js';
import { failure, renderText, type ToolResult } from '../broker/result.js';
import { escapeControls } from '../broker/escape.js';
import { validatePanesInput, validatePanesOutput, validateRunOutput } from '../broker/contract.js';
import { OPT_IN_TOOLS, PANES_TOOL, RUN_TOOL, panesTool, runTool } from './tools.js';

export interface ServerOptions {
  enabled: Set<string>;
  dir: string;
  audit: AuditLog;
  log: (message: string) => void;
  version: string;
}

/** Builds the server; connect it to a transport to serve. */
export function createServer(o: ServerOptions): McpServer {
  const mcp = new McpServer({ name: 'tmux-run', version: o.version }, { capabilities: { tools: {} } });
  const server = mcp.server;

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [panesTool, ...(o.enabled.has(RUN_TOOL) ? [runTool] : [])],
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    if (name === PANES_TOOL) return listPanesCall(o, args ?? {});
    if (name === RUN_TOOL) {
      if (!o.enabled.has(RUN_TOOL)) {
        return toolResult(
          failure(
            'tool_not_enabled',
            'the tool tmux_run is not enabled on this server; start tmux-run-mcp with --enable-tool tmux_run to offer it',
            'not_sent',
          ),
        );
      }
      const token = request.params._meta?.progressToken;
      let count = 0;
      const result = await runToolCall(args ?? {}, {
        dir: o.dir,
        audit: o.audit,
        log: o.log,
        signal: extra.signal,
        onProgress:
          token === undefined
            ? undefined
            : (p) => {
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
                            : `running for ${Math.round(p.elapsed_ms / 1000)} s; ${p.stdout_bytes} bytes of stdout, ${p.stderr_bytes} of stderr so far`,
                    },
                  })
                  .catch(() => {});
              },
      });
      return toolResult(result, o.log);
    }
    const known = OPT_IN_TOOLS.has(name) ? ` (start the server with --enable-tool ${name})` : '';
    throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(name).slice(0, 100)}${known}`);
  });
  return mcp;
}

/** Wraps a tool result; one that does not match the output schema becomes an internal_error. */
function toolResult(r: ToolResult, log?: (m: string) => void): CallToolResult {
  const v = validateRunOutput(r);
  if (!v.ok) {
    log?.(`internal error: a result did not match the output schema (${v.message})`);
    r = failure(
      'internal_error',
      'tmux-run produced a result that does not match its schema; what happened is unknown',
      r.ok ? 'observed' : r.error.delivery,
      { state: 'unknown', authorization: null, completion: { state: 'unobserved' } },
    );
  }
  return {
    content: [{ type: 'text', text: renderText(r) }],
    structuredContent: r,
    isError: !r.ok,
  };
}

async function listPanesCall(o: ServerOptions, args: unknown): Promise<CallToolResult> {
  const v = validatePanesInput(args);
  if (!v.ok)
    return {
      content: [{ type: 'text', text: `tmux_enrolled_panes failed: invalid arguments: ${v.message} (it takes none)` }],
      isError: true,
    };
  let panes: PaneListing[];
  try {
    panes = await listEnrolled(o.dir, { cleanup: true });
  } catch (e) {
    if (e instanceof RegistryDirError && e.reason === 'missing') panes = [];
    else
      return {
        content: [{ type: 'text', text: `tmux_enrolled_panes failed: ${(e as Error).message}` }],
        isError: true,
      };
  }
  const structured = { panes };
  const out = validatePanesOutput(structured);
  if (!out.ok) o.log(`internal error: the pane listing does not match its schema (${out.message})`);
  const text =
    panes.length === 0
      ? 'No pane is enrolled. Ask the person to source shell/tmux-run.zsh in a zsh pane inside tmux.'
      : panes
          .map((p) =>
            // One line per pane, whatever its names hold (a newline in a directory name included).
            escapeControls(
              `${p.pane_id} generation ${p.generation} session ${JSON.stringify(p.session)} window ${p.window} state ${p.state} cwd ${JSON.stringify(p.cwd)}`,
            ),
          )
          .join('\n');
  return { content: [{ type: 'text', text }], structuredContent: structured };
}
