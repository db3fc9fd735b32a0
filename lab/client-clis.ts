// The MCP clients' own CLIs that some tests drive (Claude Code, Codex and Gemini CLI read what
// `tmux-run setup` wrote; the MCP Inspector's CLI calls the tools). They are large (about 750 MB
// together), so they are not dependencies of tmux-run: they are installed on first use, pinned to
// the versions in client-clis.json, into a cache outside the checkout
// (`${XDG_CACHE_HOME:-~/.cache}/tmux-run/test-clients/<digest of the versions>`), and reused on the
// next run. .ci/run installs them before the suite (`npx tsx lab/client-clis.ts`).
// Where they cannot be installed, the tests that need them fail saying why; they never skip.
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const VERSIONS_FILE = join(dirname(fileURLToPath(import.meta.url)), 'client-clis.json');
/** Marks a finished install (an interrupted one leaves none and is done again). */
const DONE = '.installed';

/** The pinned packages, `name@version`. */
function packages(): string[] {
  const pins = JSON.parse(readFileSync(VERSIONS_FILE, 'utf8')) as Record<string, string>;
  return Object.entries(pins).map(([name, version]) => `${name}@${version}`);
}

/** Where this set of versions lives in the cache. */
export function clientsDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const cache = xdg !== undefined && isAbsolute(xdg) ? xdg : join(env.HOME ?? homedir(), '.cache');
  const digest = createHash('sha256').update(packages().join('\n')).digest('hex').slice(0, 16);
  return join(cache, 'tmux-run', 'test-clients', digest);
}

/**
 * Installs the pinned CLIs into the cache unless they are there already; returns the directory.
 * Two test runs at once each install into a directory of their own and the first rename wins.
 * Throws an Error that says what failed (npm's last words) and how to retry.
 */
export function ensureClients(): string {
  const dir = clientsDir();
  if (existsSync(join(dir, DONE))) return dir;
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  writeFileSync(join(tmp, 'package.json'), '{ "private": true }\n');
  const npm = spawnSync(
    'npm',
    ['install', '--prefix', tmp, '--no-audit', '--no-fund', '--loglevel=error', ...packages()],
    { encoding: 'utf8', timeout: 15 * 60_000 },
  );
  if (npm.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    const said = `${npm.stderr ?? ''}${npm.error ? String(npm.error) : ''}`.trim().split('\n').slice(-5).join('\n');
    throw new Error(
      `cannot install the MCP clients' CLIs the test needs (${packages().join(' ')}) into ${dir}: npm install ` +
        `${npm.status === null ? `ended by ${npm.signal ?? 'a timeout'}` : `exited ${npm.status}`}:\n${said}\n` +
        'They come from the npm registry; run `npx tsx lab/client-clis.ts` to try again.',
    );
  }
  writeFileSync(join(tmp, DONE), `${packages().join('\n')}\n`);
  try {
    renameSync(tmp, dir);
  } catch (e) {
    // Another run installed the same versions first: use theirs.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(dir, DONE))) throw e;
  }
  return dir;
}

/** The path of a client's command (`claude`, `codex`, `gemini`), installed on first use. */
export const clientBin = (name: string): string => join(ensureClients(), 'node_modules', '.bin', name);

/** The MCP Inspector CLI's entry script, installed on first use. */
export const inspectorScript = (): string =>
  join(ensureClients(), 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build', 'index.js');

/**
 * Runs the MCP Inspector's CLI against tmux-run-mcp (`mcpBin` with `serverArgs`) in `env`;
 * resolves its exit code and output (a 30 s guard against a hung client).
 */
export function inspectorCall(
  env: Record<string, string>,
  mcpBin: string,
  args: string[],
  serverArgs: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = inspectorScript();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [script, process.execPath, mcpBin, ...args, '--', ...serverArgs],
      // inspector-cli 1.0.3 looks for its package.json relative to the working directory.
      { env, timeout: 30_000, cwd: dirname(script) },
      (e, stdout, stderr) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout, stderr }),
    );
  });
}

// `npx tsx lab/client-clis.ts`: install them now (.ci/run does, before the suite).
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.stdout.write(`MCP clients' CLIs for the tests: ${ensureClients()}\n`);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  }
}
