#!/usr/bin/env node
// The tmux-run MCP server on stdio (compiled from src/mcp/). Logs go to stderr only.
import('../dist/src/mcp/main.js').catch((e) => {
  process.stderr.write(
    `tmux-run-mcp: cannot start (${e.code ?? e.message}); run 'npm install' (or 'npm run build') in the tmux-run directory\n`,
  );
  process.exit(1);
});
