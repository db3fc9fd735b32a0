// tmux-run-mcp: the MCP server on stdio. stdout belongs to the protocol; logs go to stderr.
// Arguments are parsed before the SDK and the validators load, so --help and mistakes answer at
// once; the server's start (src/mcp/front.ts) then answers initialize and tools/list itself, and
// loads the SDK's server from its one-file bundle (src/mcp/bundle.ts) or its modules when needed.
// bin/tmux-run-mcp.js runs this module's CommonJS bundle (dist/generated/server-main.cjs, made by
// scripts/build-helper.mjs) when there is one: Node then starts no ES module loader (about 15% of
// a bare Node's start); else this module.
import { OPT_IN_TOOLS } from './names.js';
import { packageVersion } from '../core/os/package-root.js';
import { serveFront } from './front.js';

const USAGE = `usage: tmux-run-mcp [--enable-tool tmux_run]

The tmux-run MCP server, on stdio. Lists enrolled tmux panes (tmux_enrolled_panes); with
--enable-tool tmux_run it also offers tmux_run, which runs scripts in an enrolled pane's shell,
and the long-run tools tmux_run_start, tmux_run_wait, tmux_run_cancel, tmux_run_output, tmux_run_input, tmux_run_screen and tmux_runs.
Environment: TMUX_RUN_DIR (registry directory), XDG_STATE_HOME (audit trail location).
`;

const log = (message: string): void => {
  process.stderr.write(`tmux-run-mcp: ${message}\n`);
};

function parseArgs(argv: string[]): Set<string> {
  const enabled = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    let value: string | undefined;
    if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE);
      process.exit(0);
    } else if (a === '--version') {
      process.stdout.write(`${packageVersion()}\n`);
      process.exit(0);
    } else if (a === '--enable-tool') {
      value = argv[++i];
      if (value === undefined) fatal('--enable-tool needs a tool name (tmux_run)');
    } else if (a.startsWith('--enable-tool=')) {
      value = a.slice('--enable-tool='.length);
    } else {
      fatal(`unknown argument ${JSON.stringify(a)}`);
    }
    if (value !== undefined) {
      if (!OPT_IN_TOOLS.has(value))
        fatal(`--enable-tool: unknown tool ${JSON.stringify(value)} (known: ${[...OPT_IN_TOOLS].join(', ')})`);
      enabled.add(value);
    }
  }
  return enabled;
}

function fatal(reason: string): never {
  process.stderr.write(`tmux-run-mcp: ${reason}\n${USAGE}`);
  process.exit(2);
}

const enabled = parseArgs(process.argv.slice(2));
// The SDK's server, when the start hands it the client: node:v8 and node:vm load only then.
serveFront(enabled, log, async () => {
  const { loadBundled, setServerFlags } = await import('./bundle.js');
  setServerFlags();
  return loadBundled(log) ?? (await import('./serve.js'));
});
