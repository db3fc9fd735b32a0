// The MCP server entry every client gets: this install's node and bin/tmux-run-mcp.js, both
// absolute, with tmux_run enabled, and TMUX_RUN_DIR when the server would not find the
// registry by itself.
import { isAbsolute, join } from 'node:path';
import { resolveRegistryDir } from '../../core/enrollment/layout.js';
import { packageRoot } from '../../core/os/package-root.js';
import { CliError } from '../common/errors.js';

/** The name the server is registered under in every client. */
export const SERVER_NAME = 'tmux-run';

export interface ServerEntry {
  command: string;
  args: string[];
  /** Empty when the server finds the registry without help. */
  env: Record<string, string>;
}

/** The MCP server's launcher in this install. */
export const mcpBinPath = (): string => join(packageRoot(), 'bin', 'tmux-run-mcp.js');

/**
 * TMUX_RUN_DIR for the client's env: the variable when it is set here, or the directory these
 * shells use when a server started with almost no environment (as clients start them) would
 * pick another one (an unusual XDG_RUNTIME_DIR). Nothing when both agree.
 */
export function registryEnv(
  env: NodeJS.ProcessEnv,
  resolve: (env: NodeJS.ProcessEnv) => string = (e) => resolveRegistryDir(e),
): Record<string, string> {
  const dir = resolve(env);
  if (!isAbsolute(dir)) throw new CliError(`TMUX_RUN_DIR (${dir}) is not an absolute path; set it to one`);
  if (env.TMUX_RUN_DIR) return { TMUX_RUN_DIR: dir };
  return dir === resolve({}) ? {} : { TMUX_RUN_DIR: dir };
}

/** The entry for `node` (absolute) running `bin` (absolute) with `env`. */
export function serverEntry(node: string, bin: string, env: Record<string, string>): ServerEntry {
  return { command: node, args: [bin, '--enable-tool', 'tmux_run'], env };
}
