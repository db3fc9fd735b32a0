// tmux-run-mcp: the MCP server on stdio. stdout belongs to the protocol; logs go to stderr.
// Arguments are parsed before the SDK and the validators load, so --help and mistakes answer at once.
import { setFlagsFromString } from 'node:v8';
import { OPT_IN_TOOLS } from './names.js';
import { packageVersion } from '../core/os/package-root.js';

// V8 grows the young generation from 2 MB to 32 MB under a steady stream of calls (the broker
// was 65 MB at start and 108 MB after 1000 runs); kept at its initial size, a run's garbage is
// still collected young, for a few scavenges more. Set before anything big is allocated.
setFlagsFromString('--semi-space-growth-factor=1');

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
const [{ StdioServerTransport }, { resolveRegistryDir }, { AuditLog, auditPath }, { createServer }, traceMod] =
  await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../core/enrollment/layout.js'),
    import('../core/audit/audit-log.js'),
    import('./server.js'),
    process.env.TMUX_RUN_TRACE ? import('./call-traces.js') : undefined,
  ]);
const dir = resolveRegistryDir();
const traces = traceMod?.callTraces();
const server = createServer({
  enabled,
  dir,
  audit: new AuditLog(auditPath()),
  log,
  version: packageVersion(),
  traces,
});
const transport = new StdioServerTransport();
transport.onclose = () => process.exit(0);
process.stdin.on('end', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
await server.connect(transport);
traces?.attach(transport);
log(
  `serving on stdio (registry ${dir}; tools: tmux_enrolled_panes${enabled.has('tmux_run') ? ', tmux_run, tmux_run_start, tmux_run_wait, tmux_run_cancel, tmux_run_output, tmux_run_input, tmux_run_screen, tmux_runs' : ''})`,
);
