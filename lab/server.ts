// A real tmux server on a private socket (`tmux -S <socket> -f /dev/null`) with a clean
// environment, in its own directory under the run root; kill() waits for everything it started
// to exit and removes the directory, assertNoLeftovers() says what did not go.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { TmuxPane, type Pane } from './pane.js';
import { cmdlineOf, descendantsOf, killHard, processAlive, processesReferencing } from './processes.js';
import { makePrivateDir, SOCKET_NAME } from './run-root.js';
import { BASH_PROMPT_COMMAND, DEFAULT_PROMPT, DEFAULT_ZSHRC, ZSHENV } from './shells.js';
import { killServerSync, panePath, runTmux, startTmuxServer, tmuxArg, tmuxBinary, zshBinary } from './tmux-command.js';
import { DEFAULT_TIMEOUT_MS, waitUntil } from './waiting.js';

/** The session every harness server holds its panes in. */
export const SESSION = 'harness';

export interface TmuxServer {
  /** Absolute path of the private socket (`tmux -S <socket> -f /dev/null`). */
  socket: string;
  /** A fresh temporary HOME (0700) used by the panes; also their ZDOTDIR. */
  home: string;
  /** A fresh TMUX_RUN_DIR (0700) for the product under test. */
  registryDir: string;
  /** The temporary directory holding socket, home and registryDir; removed by kill(). */
  baseDir: string;
  /** The environment panes get (and every tmux client call runs with). */
  env: Record<string, string>;
  /** Pid of the tmux server as started or last restarted (serverPid() asks it). */
  pid: number;
  /** Run `tmux -S socket ...` and return its stdout; rejects with its stderr on failure. */
  tmux(args: string[]): Promise<string>;
  /** Ask the server for its current pid. */
  serverPid(): Promise<number>;
  /** Start a fresh server on the same socket, directories and environment, once the old one has exited (kill it first). */
  restart(): Promise<void>;
  /** Open a new window running `shell` (default zsh -i) and wait for its first prompt. */
  newPane(opts?: NewPaneOptions): Promise<Pane>;
  /** Kill the server, wait for it and all it started to exit, remove the temp dirs. */
  kill(opts?: { timeoutMs?: number }): Promise<void>;
}

export interface ServerOptions {
  /** Added to (or, where undefined, removed from) the environment panes get. */
  env?: Record<string, string | undefined>;
  /** A command (argv) the tmux server is started under, e.g. a mount namespace without some file. */
  launcher?: string[];
}

export interface NewPaneOptions {
  /** Command of the pane, argv style; default `['zsh', '-i']`. */
  shell?: string[];
  /** Extra environment for this pane only; a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
  /** Text of $ZDOTDIR/.zshrc, written before the pane starts; default DEFAULT_ZSHRC. */
  zshrc?: string;
  /** The prompt exactly as drawn, when it is not DEFAULT_PROMPT. */
  prompt?: string;
  /** Working directory of the new shell; default the server's home. */
  cwd?: string;
  /** How long to wait for the first prompt. */
  timeoutMs?: number;
}

// Servers not yet killed, so a crashing test run still cleans them up.
const liveServers = new Set<Server>();
let exitHookInstalled = false;

// Best-effort synchronous cleanup when the test process exits with servers still running.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const server of liveServers) server.killSync();
  });
}

class Server implements TmuxServer {
  killed = false;
  /** Processes still around when kill() gave up waiting (they were then SIGKILLed). */
  leftovers: string[] = [];
  private readonly knownPids = new Set<number>();
  private paneLock: Promise<void> = Promise.resolve();

  constructor(
    readonly tmuxBin: string,
    readonly socket: string,
    readonly home: string,
    readonly registryDir: string,
    readonly baseDir: string,
    readonly env: Record<string, string>,
    public pid: number,
    readonly launcher: string[] = [],
  ) {
    this.knownPids.add(pid);
  }

  // Run `tmux -S socket ...` and return stdout.
  tmux(args: string[]): Promise<string> {
    return runTmux(this.tmuxBin, this.socket, this.env, args);
  }

  // The current server pid, as the server reports it.
  async serverPid(): Promise<number> {
    const pid = Number((await this.tmux(['display-message', '-p', '#{pid}'])).trim());
    if (!Number.isInteger(pid) || pid <= 0) throw new Error('tmux reported no server pid');
    this.knownPids.add(pid);
    return pid;
  }

  // A new server on the same socket, as startServer starts one, once every earlier one is gone.
  async restart(): Promise<void> {
    if (this.killed) throw new Error('restart on a killed server');
    await waitUntil(
      () => [...this.knownPids].every((pid) => !processAlive(pid)),
      DEFAULT_TIMEOUT_MS,
      'the old tmux server to exit before the restart',
    );
    await startTmuxServer(this.tmuxBin, this.socket, this.env, sessionArgs(this.home), this.launcher);
    this.pid = await this.serverPid();
  }

  // Open a window with the requested shell; serialised so each pane reads its own zshrc.
  newPane(opts: NewPaneOptions = {}): Promise<Pane> {
    const result = this.paneLock.then(() => this.openPane(opts));
    this.paneLock = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  // The body of newPane, run under the pane lock.
  private async openPane(opts: NewPaneOptions): Promise<Pane> {
    if (this.killed) throw new Error('newPane on a killed server');
    const shell = opts.shell ?? ['zsh', '-i'];
    const program = shell[0];
    if (program === undefined) throw new Error('newPane: empty shell command');
    writeFileSync(join(this.home, '.zshrc'), opts.zshrc ?? DEFAULT_ZSHRC, { mode: 0o600 });

    const paneEnv: Record<string, string | undefined> = {};
    if (basename(program) === 'bash') {
      paneEnv.PS1 = DEFAULT_PROMPT;
      paneEnv.PROMPT_COMMAND = BASH_PROMPT_COMMAND;
    }
    Object.assign(paneEnv, opts.env ?? {});

    const args = ['new-window', '-d', '-P', '-F', '#{pane_id}', '-t', `${SESSION}:`, '-c', opts.cwd ?? this.home];
    const unset: string[] = [];
    for (const [name, value] of Object.entries(paneEnv)) {
      if (value === undefined) unset.push('-u', name);
      else args.push('-e', `${name}=${value}`);
    }
    // tmux execs an argv of two or more words directly; `env` keeps that true for one word
    // and removes unset variables, then execs the shell in the same process.
    const argv = unset.length > 0 || shell.length < 2 ? ['env', ...unset, ...shell] : shell;
    args.push('--', ...argv);
    const id = (await this.tmux(args.map(tmuxArg))).trim();
    if (!/^%\d+$/.test(id)) throw new Error(`new-window printed ${JSON.stringify(id)} instead of a pane id`);

    const pane = new TmuxPane(id, this, opts.prompt ?? DEFAULT_PROMPT);
    try {
      await pane.waitForPrompt(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    } catch (err) {
      await pane.kill().catch(() => undefined);
      throw err;
    }
    return pane;
  }

  // Kill the server and wait for every process it started (or that mentions it) to end.
  async kill(opts: { timeoutMs?: number } = {}): Promise<void> {
    if (this.killed) return;
    this.killed = true;
    liveServers.delete(this);
    await this.serverPid().catch(() => undefined);
    const watched = new Set<number>(this.knownPids);
    for (const pid of this.knownPids) for (const child of descendantsOf(pid)) watched.add(child);
    await this.tmux(['kill-server']).catch(() => undefined); // already gone is fine
    const needles = this.needles();
    try {
      await waitUntil(
        () => [...watched].every((pid) => !processAlive(pid)) && processesReferencing(needles).length === 0,
        opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        'the tmux server and its processes to exit',
      );
    } catch {
      // Record what refused to go, then stop it so it cannot disturb other tests.
      const stuck = new Map<number, string>();
      for (const pid of watched) {
        if (processAlive(pid)) stuck.set(pid, `pid ${pid} (${cmdlineOf(pid).trim() || '?'}): started by the server`);
      }
      for (const ref of processesReferencing(needles)) if (!stuck.has(ref.pid)) stuck.set(ref.pid, ref.what);
      for (const [pid, what] of stuck) {
        this.leftovers.push(`${what}; still running after kill()`);
        killHard(pid);
      }
      await waitUntil(
        () => [...stuck.keys()].every((pid) => !processAlive(pid)),
        2000,
        'SIGKILLed leftovers to exit',
      ).catch(() => undefined);
    }
    rmSync(this.baseDir, { recursive: true, force: true });
  }

  // Synchronous last-resort cleanup for process exit.
  killSync(): void {
    if (this.killed) return;
    this.killed = true;
    killServerSync(this.tmuxBin, this.socket, this.env);
    rmSync(this.baseDir, { recursive: true, force: true });
  }

  // Strings whose presence in a process's argv or environment ties it to this server.
  needles(): string[] {
    return [this.baseDir];
  }

  // Pids this harness has seen as the server's.
  serverPids(): number[] {
    return [...this.knownPids];
  }
}

// The first session of a server: its placeholder window keeps the session (and so the server)
// alive while tests add and kill panes. Options are set in the same client call, before any
// test pane exists.
function sessionArgs(home: string): string[] {
  return [
    'new-session',
    '-d',
    '-x',
    '200',
    '-y',
    '50',
    '-s',
    SESSION,
    '-n',
    'placeholder',
    '-c',
    home,
    'sleep',
    '2147483647',
    ';',
    'set-option',
    '-g',
    'default-terminal',
    'xterm-256color',
    ';',
    'set-option',
    '-g',
    'history-limit',
    '100000',
    ';',
    'set-option',
    '-g',
    'remain-on-exit',
    'off',
  ];
}

/** Start a tmux server on a private socket with a clean environment; opts.env adds to or (undefined) removes from it. */
export async function startServer(opts: ServerOptions = {}): Promise<TmuxServer> {
  const tmuxBin = tmuxBinary();
  const zshBin = zshBinary();
  if (tmuxBin === undefined) throw new Error('tmux not found on PATH');
  if (zshBin === undefined) throw new Error('zsh not found');

  const baseDir = makePrivateDir('srv-', ['home', 'run']);
  const home = join(baseDir, 'home');
  const registryDir = join(baseDir, 'run');
  writeFileSync(join(home, '.zshenv'), ZSHENV, { mode: 0o600 });
  writeFileSync(join(home, '.zshrc'), DEFAULT_ZSHRC, { mode: 0o600 });
  const socket = join(baseDir, SOCKET_NAME);

  const env: Record<string, string> = {
    HOME: home,
    TMUX_RUN_DIR: registryDir,
    XDG_STATE_HOME: join(home, '.local', 'state'),
    PATH: panePath(),
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    ZDOTDIR: home,
    SHELL: zshBin,
    TMUX_RUN_NOTIFY: 'off',
  };
  for (const [name, value] of Object.entries(opts.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }

  try {
    await startTmuxServer(tmuxBin, socket, env, sessionArgs(home), opts.launcher);
    const pid = Number((await runTmux(tmuxBin, socket, env, ['display-message', '-p', '#{pid}'])).trim());
    const server = new Server(tmuxBin, socket, home, registryDir, baseDir, env, pid, opts.launcher);
    liveServers.add(server);
    installExitHook();
    return server;
  } catch (err) {
    killServerSync(tmuxBin, socket, env);
    rmSync(baseDir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * After `await server.kill()`: everything still tied to the server, as readable lines
 * (expect it to equal []). Covers the server pid, processes whose argv or environment
 * mention its directory (socket, home, registryDir), and the directory itself. Offenders found
 * here are SIGKILLed after being listed, so one failing test does not poison the next.
 */
export function assertNoLeftovers(server: TmuxServer): string[] {
  if (!(server instanceof Server)) throw new Error('assertNoLeftovers needs a server from startServer()');
  const out: string[] = [];
  if (!server.killed) out.push('server.kill() was not called');
  out.push(...server.leftovers);
  for (const pid of server.serverPids()) {
    if (processAlive(pid)) out.push(`tmux server pid ${pid} is still running`);
  }
  const refs = processesReferencing(server.needles());
  for (const ref of refs) {
    out.push(ref.what);
    killHard(ref.pid);
  }
  if (existsSync(server.baseDir)) out.push(`directory ${server.baseDir} still exists`);
  return out;
}
