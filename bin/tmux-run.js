#!/usr/bin/env node
// The tmux-run CLI (compiled from src/cli/). `npm install` builds dist/ through the prepare script.
import('../dist/src/cli/main.js').catch((e) => {
  process.stderr.write(
    `tmux-run: cannot start (${e.code ?? e.message}); run 'npm install' (or 'npm run build') in the tmux-run directory\n`,
  );
  process.exit(1);
});
