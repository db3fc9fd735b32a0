#!/usr/bin/env node
// The tmux-run MCP server on stdio (compiled from src/mcp/). Logs go to stderr only. CommonJS
// (bin/package.json): from the server's start bundle (dist/generated/server-main.cjs, see
// src/mcp/main.ts) Node starts no ES module loader; without it (not built, or
// TMUX_RUN_BUNDLE=off) from its modules, the same code.
'use strict';
const cannotStart = (e) => {
  process.stderr.write(
    `tmux-run-mcp: cannot start (${e.code ?? e.message}); run 'npm install' (or 'npm run build') in the tmux-run directory\n`,
  );
  process.exit(1);
};
let bundled = false;
if (process.env.TMUX_RUN_BUNDLE !== 'off') {
  try {
    require('../dist/generated/server-main.cjs');
    bundled = true;
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND' || !String(e.message).includes('server-main.cjs'))
      process.stderr.write(`tmux-run-mcp: loading from its modules: ${e.stack ?? e}\n`);
  }
}
if (!bundled) import('../dist/src/mcp/main.js').catch(cannotStart);
