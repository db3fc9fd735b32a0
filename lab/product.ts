// The product under test as tests start it: where its parts are, and the environment its
// clients (tmux-run-mcp and the tmux-run CLI) get for a harness server.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TmuxServer } from './server.js';

/** The repository root. */
export const ROOT = join(import.meta.dirname, '..');
/**
 * The published contract (shared/ beside the checkout, as CI lays it, or this workplace's copy),
 * or undefined where neither is there; the repository's schemas/ holds copies.
 */
export const SHARED_CONTRACT: string | undefined = [
  join(ROOT, '..', 'shared', 'contract'),
  '/work/shared/contract',
].find((d) => existsSync(d));
/** The enrollment snippet a person sources. */
export const SNIPPET = join(ROOT, 'shell', 'tmux-run.zsh');
/** What a person types to enroll a pane. */
export const SOURCE = `source ${SNIPPET}`;
/** The built helper the snippet starts. */
export const HELPER_MAIN = join(ROOT, 'dist', 'helper', 'main.js');
/** The MCP server's bin. */
export const MCP_BIN = join(ROOT, 'bin', 'tmux-run-mcp.js');
/** The CLI's bin. */
export const CLI_BIN = join(ROOT, 'bin', 'tmux-run.js');

/** The environment a broker or CLI started by a test gets: the server's registry and audit locations, a plain PATH. */
export function productEnv(server: TmuxServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: server.home,
    TMUX_RUN_DIR: server.registryDir,
    XDG_STATE_HOME: server.env.XDG_STATE_HOME ?? join(server.home, '.local', 'state'),
    LANG: 'C.UTF-8',
    ...extra,
  };
}
