// Test support: a real tmux server on a private socket with real interactive shells in its
// panes, driven the way a person would drive them (tests may type with send-keys; product
// code never does). Every server lives in its own temporary directory and leaves nothing
// behind; `assertNoLeftovers` checks that.
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, expect } from 'vitest';
import { basename, delimiter, dirname, join } from 'node:path';

/** Default for every wait in this module: generous, because CI machines are small and noisy. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** How often pollers look again. */
export const POLL_MS = 25;
/** The prompt every harness shell shows (zsh via the harness zshrc, bash via PS1). */
export const DEFAULT_PROMPT = '$ ';
/** The zshrc written when newPane gets none: a prompt and nothing else. */
export const DEFAULT_ZSHRC = "PROMPT='$ '\n";

const SESSION = 'harness';
const STANDARD_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

// Written to $ZDOTDIR/.zshenv: interactive zsh reports "prompt number N after status S" in the
// pane title from precmd, so run() knows exactly when a command finished without reading or
// changing the command line. The title never shows on the screen.
const ZSHENV = `# tmux-run test harness: completion marker in the pane title (invisible on screen)
if [[ -o interactive ]]; then
  typeset -g __harness_prompts=0 __harness_id
  __harness_id=$(</proc/sys/kernel/random/uuid) 2>/dev/null || __harness_id=$$-$RANDOM
  PROMPT='$ '
  __harness_precmd() {
    local s=$?
    (( ++__harness_prompts ))
    print -rn -- $'\\e]2;harness:'"\${__harness_id}:\${__harness_prompts}:\${s}"$'\\a'
  }
  typeset -ga precmd_functions
  precmd_functions=(__harness_precmd \${precmd_functions:#__harness_precmd})
fi
`;

// The same marker for bash panes, taken from the environment by bash itself.
const BASH_PROMPT_COMMAND =
  '__harness_s=$?; __harness_prompts=$((__harness_prompts+1)); ' +
  ': "${__harness_id:=$(cat /proc/sys/kernel/random/uuid 2>/dev/null || echo $$-$RANDOM)}"; ' +
  'printf "\\033]2;harness:%s:%s:%s\\007" "$__harness_id" "$__harness_prompts" "$__harness_s"';

const MARKER = /^harness:([^:]+):(\d+):(\d+)$/;

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
  /** Pid of the tmux server as started (see serverPid() after a restart). */
  pid: number;
  /** Run `tmux -S socket ...` and return its stdout; rejects with its stderr on failure. */
  tmux(args: string[]): Promise<string>;
  /** Ask the server for its current pid. */
  serverPid(): Promise<number>;
  /** Open a new window running `shell` (default zsh -i) and wait for its first prompt. */
  newPane(opts?: NewPaneOptions): Promise<Pane>;
  /** Kill the server, wait for it and all it started to exit, remove the temp dirs. */
  kill(opts?: { timeoutMs?: number }): Promise<void>;
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

export interface RunResult {
  /** The lines the command printed (each trimmed at its end), joined with \n. */
  output: string;
  /** The command's exit status, when the shell reports it (zsh and bash panes do). */
  status: number | undefined;
}

export interface Pane {
  /** The tmux pane id, like %3. */
  id: string;
  /** The server this pane lives in. */
  server: TmuxServer;
  /** The prompt this pane's shell draws. */
  prompt: string;
  /** The pane's process (#{pane_pid}), normally the shell. */
  shellPid(): Promise<number>;
  /** Type text literally (send-keys -l), then Enter if asked. */
  type(text: string, opts?: { enter?: boolean }): Promise<void>;
  /** Type a one-line command and Enter, wait for the next prompt, return what it printed. */
  run(cmd: string, opts?: { timeoutMs?: number }): Promise<string>;
  /** Like run(), also returning the exit status. */
  runWithStatus(cmd: string, opts?: { timeoutMs?: number }): Promise<RunResult>;
  /** History plus visible screen (capture-pane -p -J -S -), line ends and trailing blank lines trimmed. */
  capture(): Promise<string>;
  /** Poll capture() until pred holds; on timeout throw with the last screen. */
  waitFor(pred: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Wait until the cursor sits right after an empty prompt. */
  waitForPrompt(timeoutMs?: number): Promise<void>;
  /** kill-pane, then wait for the pane's process to exit. */
  kill(): Promise<void>;
}

// ---------------------------------------------------------------- processes via /proc

interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  startTime: string;
}

// Parse /proc/PID/stat; fields counted after the last ')' because comm may hold anything.
function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  const state = fields[0];
  const ppid = Number(fields[1]);
  const startTime = fields[19];
  if (state === undefined || startTime === undefined || !Number.isInteger(ppid)) return undefined;
  return { pid, state, ppid, startTime };
}

// Every pid currently listed in /proc.
function allPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** True while pid names a running (not zombie) process; zombies count as gone since PID 1 may never reap them. */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** Start time of pid in clock ticks since boot (field 22 of /proc/PID/stat), to tell a reused pid apart. */
export function processStartTime(pid: number): string | undefined {
  return readStat(pid)?.startTime;
}

/** Live (non-zombie) descendants of pid, found by walking ppid links in /proc; pid itself excluded. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  const alive = new Set<number>();
  for (const p of allPids()) {
    const stat = readStat(p);
    if (stat === undefined) continue;
    if (stat.state !== 'Z' && stat.state !== 'X') alive.add(p);
    const list = children.get(stat.ppid) ?? [];
    list.push(p);
    children.set(stat.ppid, list);
  }
  const out: number[] = [];
  const queue = [pid];
  const seen = new Set<number>([pid]);
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      queue.push(child);
      if (alive.has(child)) out.push(child);
    }
  }
  return out.sort((a, b) => a - b);
}

// This process and its ancestors: never counted as leftovers.
function selfAndAncestors(): Set<number> {
  const out = new Set<number>();
  for (let pid: number | undefined = process.pid; pid !== undefined && pid > 1 && !out.has(pid);) {
    out.add(pid);
    pid = readStat(pid)?.ppid;
  }
  return out;
}

// Read a NUL-separated /proc file as text, or '' when unreadable.
function readProcText(pid: number, name: 'cmdline' | 'environ'): string {
  try {
    return readFileSync(`/proc/${pid}/${name}`).toString('utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

interface Reference {
  pid: number;
  what: string;
}

// Live processes whose argv or environment mention one of the needles.
function processesReferencing(needles: string[]): Reference[] {
  const skip = selfAndAncestors();
  const out: Reference[] = [];
  for (const pid of allPids()) {
    if (skip.has(pid) || !processAlive(pid)) continue;
    const cmdline = readProcText(pid, 'cmdline');
    const environ = readProcText(pid, 'environ');
    const where = needles.some((n) => cmdline.includes(n))
      ? 'argv'
      : needles.some((n) => environ.includes(n))
        ? 'environment'
        : undefined;
    if (where === undefined) continue;
    out.push({ pid, what: `pid ${pid} (${cmdline.trim().slice(0, 120) || '?'}): ${where} mentions the test server` });
  }
  return out;
}

// ---------------------------------------------------------------- waiting

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll fn every POLL_MS until it yields something other than undefined/false (throws count as not yet); reject on timeout. */
export async function waitUntil<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number = DEFAULT_TIMEOUT_MS,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const cause = lastError === undefined ? '' : `; last error: ${errorText(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await sleep(POLL_MS);
  }
}

// A readable one-liner for anything thrown.
function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---------------------------------------------------------------- tmux plumbing

// First executable called name on the given PATH entries.
function findExecutable(name: string, dirs: string[]): string | undefined {
  for (const dir of dirs) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

// PATH for panes: the running node first, then the standard directories.
function panePath(): string {
  const dirs = [dirname(process.execPath), ...STANDARD_PATH];
  return [...new Set(dirs)].join(delimiter);
}

// tmux takes an argument ending in ';' as a command separator; escape that last ';'.
function tmuxArg(arg: string): string {
  return arg.endsWith(';') ? `${arg.slice(0, -1)}\\;` : arg;
}

// Run tmux with a clean environment; resolve stdout, reject with stderr.
function runTmux(tmuxBin: string, socket: string, env: Record<string, string>, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      tmuxBin,
      ['-S', socket, '-f', '/dev/null', ...args],
      { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          const detail = stderr.trim() || err.message;
          reject(new Error(`tmux ${args.join(' ')}: ${detail}`));
        } else {
          resolve(stdout);
        }
      },
    );
  });
}

// Screen text with each line's end and the trailing blank lines trimmed.
function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n+$/, '');
}

// A directory for temp files whose socket path stays well under the 108-byte limit.
function tempRoot(): string {
  let root = tmpdir();
  try {
    root = realpathSync(root);
  } catch {
    root = '/tmp';
  }
  return root.length > 60 ? '/tmp' : root;
}

/** Environment variable naming the per-run directory made by global-setup.ts. */
export const RUN_ROOT_VAR = 'TMUX_RUN_TEST_ROOT';

// Parent of every server's directory: the test run's root when global setup made one.
function runRoot(): string {
  const root = process.env[RUN_ROOT_VAR];
  return root !== undefined && root !== '' && existsSync(root) ? root : tempRoot();
}

/** Make the per-run root for server directories (0700) and return it. */
export function makeRunRoot(): string {
  const root = mkdtempSync(join(tempRoot(), 'tmux-run-tests-'));
  chmodSync(root, 0o700);
  return root;
}

/**
 * Safety net after a whole test run: kill every tmux server still listening under root and
 * every process still mentioning root, remove root, and say what was found (tests that kill
 * their servers leave nothing, so the answer is normally []).
 */
export async function sweepRunRoot(root: string): Promise<string[]> {
  const found: string[] = [];
  const tmuxBin = findExecutable('tmux', [...(process.env.PATH ?? '').split(delimiter), ...STANDARD_PATH]);
  let dirs: string[];
  try {
    dirs = readdirSync(root);
  } catch {
    return found;
  }
  for (const dir of dirs) {
    const socket = join(root, dir, 'sock');
    if (tmuxBin === undefined || !existsSync(socket)) continue;
    const r = spawnSync(tmuxBin, ['-S', socket, '-f', '/dev/null', 'kill-server'], {
      timeout: 5000,
      env: { PATH: panePath() },
    });
    if (r.status === 0) found.push(`tmux server on ${socket} was still running`);
  }
  await waitUntil(() => processesReferencing([root]).length === 0, 2000, 'leftovers to exit').catch(() => undefined);
  for (const ref of processesReferencing([root])) {
    found.push(ref.what);
    try {
      process.kill(ref.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  rmSync(root, { recursive: true, force: true });
  return found;
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

// ---------------------------------------------------------------- server

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
        if (processAlive(pid))
          stuck.set(pid, `pid ${pid} (${readProcText(pid, 'cmdline').trim() || '?'}): started by the server`);
      }
      for (const ref of processesReferencing(needles)) if (!stuck.has(ref.pid)) stuck.set(ref.pid, ref.what);
      for (const [pid, what] of stuck) {
        this.leftovers.push(`${what}; still running after kill()`);
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
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
    spawnSync(this.tmuxBin, ['-S', this.socket, '-f', '/dev/null', 'kill-server'], { env: this.env, timeout: 5000 });
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

/** Start a tmux server on a private socket with a clean environment; opts.env adds to or (undefined) removes from it. */
export async function startServer(opts: { env?: Record<string, string | undefined> } = {}): Promise<TmuxServer> {
  const tmuxBin = findExecutable('tmux', [...(process.env.PATH ?? '').split(delimiter), ...STANDARD_PATH]);
  const zshBin =
    findExecutable('zsh', STANDARD_PATH) ?? findExecutable('zsh', (process.env.PATH ?? '').split(delimiter));
  if (tmuxBin === undefined) throw new Error('tmux not found on PATH');
  if (zshBin === undefined) throw new Error('zsh not found');

  const baseDir = mkdtempSync(join(runRoot(), 'srv-'));
  chmodSync(baseDir, 0o700);
  const home = join(baseDir, 'home');
  const registryDir = join(baseDir, 'run');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(registryDir, { mode: 0o700 });
  chmodSync(home, 0o700);
  chmodSync(registryDir, 0o700);
  writeFileSync(join(home, '.zshenv'), ZSHENV, { mode: 0o600 });
  writeFileSync(join(home, '.zshrc'), DEFAULT_ZSHRC, { mode: 0o600 });
  const socket = join(baseDir, 'sock');

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
    // The placeholder window keeps the session (and so the server) alive while tests add and
    // kill panes. Options are set in the same client call, before any test pane exists.
    await runTmux(tmuxBin, socket, env, [
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
    ]);
    const pid = Number((await runTmux(tmuxBin, socket, env, ['display-message', '-p', '#{pid}'])).trim());
    const server = new Server(tmuxBin, socket, home, registryDir, baseDir, env, pid);
    liveServers.add(server);
    installExitHook();
    return server;
  } catch (err) {
    spawnSync(tmuxBin, ['-S', socket, '-f', '/dev/null', 'kill-server'], { env, timeout: 5000 });
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
    try {
      process.kill(ref.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  if (existsSync(server.baseDir)) out.push(`directory ${server.baseDir} still exists`);
  return out;
}

// ---------------------------------------------------------------- pane

interface PaneState {
  cursorX: number;
  cursorY: number;
  title: string;
  visible: string[];
}

class TmuxPane implements Pane {
  constructor(
    readonly id: string,
    readonly server: Server,
    readonly prompt: string,
  ) {}

  // #{pane_pid} of this pane.
  async shellPid(): Promise<number> {
    const pid = Number((await this.server.tmux(['display-message', '-p', '-t', this.id, '#{pane_pid}'])).trim());
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid for pane ${this.id}`);
    return pid;
  }

  // send-keys -l text, then Enter.
  async type(text: string, opts: { enter?: boolean } = {}): Promise<void> {
    if (text.length > 0) await this.server.tmux(['send-keys', '-t', this.id, '-l', '--', tmuxArg(text)]);
    if (opts.enter === true) await this.server.tmux(['send-keys', '-t', this.id, 'Enter']);
  }

  // Output of one typed command.
  async run(cmd: string, opts: { timeoutMs?: number } = {}): Promise<string> {
    return (await this.runWithStatus(cmd, opts)).output;
  }

  // Type cmd + Enter at an idle prompt; done when the shell's precmd marker moves on (or, for
  // shells without the marker, when a fresh prompt follows the echoed command), then cut the
  // command's output out of the screen between its echo line and that prompt.
  async runWithStatus(cmd: string, opts: { timeoutMs?: number } = {}): Promise<RunResult> {
    if (/[\n\r]/.test(cmd)) throw new Error('run() takes one line; use type() for multi-line input');
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    await this.waitForPrompt(timeoutMs);
    const before = parseMarker((await this.state()).title);
    const echo = (this.prompt + cmd).trimEnd();
    const promptLine = this.prompt.trimEnd();
    const startLines = (await this.capture()).split('\n').length;

    await this.type(cmd, { enter: true });

    let status: number | undefined;
    let lines: string[] = [];
    try {
      await waitUntil(
        async () => {
          const state = await this.state();
          if (!this.atPrompt(state)) return false;
          if (before !== undefined) {
            const now = parseMarker(state.title);
            if (now === undefined || !isLater(now, before)) return false;
            status = now.status;
            lines = (await this.capture()).split('\n');
            return true;
          }
          lines = (await this.capture()).split('\n');
          const at = findEcho(lines, echo, this.prompt + cmd.slice(0, 40), Math.max(0, startLines - 1));
          return at >= 0 && lines.slice(at + 1).some((l) => l === promptLine);
        },
        timeoutMs,
        `command ${JSON.stringify(cmd)} to finish in pane ${this.id}`,
      );
    } catch (err) {
      throw new Error(`${errorText(err)}; last screen:\n${await this.capture().catch(() => '?')}`, { cause: err });
    }

    let end = lines.length - 1;
    while (end >= 0 && lines[end] !== promptLine) end--;
    const start = findEcho(lines.slice(0, Math.max(0, end)), echo, this.prompt + cmd.slice(0, 40), 0);
    if (end < 0 || start < 0) {
      throw new Error(
        `cannot find the output of ${JSON.stringify(cmd)} in pane ${this.id}; screen:\n${lines.join('\n')}`,
      );
    }
    return { output: lines.slice(start + 1, end).join('\n'), status };
  }

  // Whole history and screen, joined wrapped lines, tidied.
  async capture(): Promise<string> {
    return tidy(await this.server.tmux(['capture-pane', '-p', '-J', '-S', '-', '-t', this.id]));
  }

  // Poll the screen until pred accepts it.
  async waitFor(pred: (screen: string) => boolean, timeoutMs: number = DEFAULT_TIMEOUT_MS): Promise<string> {
    let last = '';
    try {
      return await waitUntil(
        async () => {
          last = await this.capture();
          return pred(last) ? last : undefined;
        },
        timeoutMs,
        `the screen of pane ${this.id}`,
      );
    } catch (err) {
      throw new Error(`${errorText(err)}; last screen:\n${last}`, { cause: err });
    }
  }

  // Wait for the cursor to sit right after an empty prompt.
  async waitForPrompt(timeoutMs: number = DEFAULT_TIMEOUT_MS): Promise<void> {
    let last: PaneState | undefined;
    try {
      await waitUntil(
        async () => {
          last = await this.state();
          return this.atPrompt(last);
        },
        timeoutMs,
        `a prompt (${JSON.stringify(this.prompt)}) in pane ${this.id}`,
      );
    } catch (err) {
      const where = last === undefined ? '' : ` cursor at ${last.cursorX},${last.cursorY}`;
      throw new Error(`${errorText(err)};${where} last screen:\n${tidy(last?.visible.join('\n') ?? '')}`, {
        cause: err,
      });
    }
  }

  // kill-pane and wait for its process to exit.
  async kill(): Promise<void> {
    const pid = await this.shellPid().catch(() => undefined);
    await this.server.tmux(['kill-pane', '-t', this.id]).catch(() => undefined);
    if (pid !== undefined)
      await waitUntil(() => !processAlive(pid), DEFAULT_TIMEOUT_MS, `pane ${this.id} (pid ${pid}) to exit`);
  }

  // Cursor, title and visible screen in one tmux call.
  private async state(): Promise<PaneState> {
    const out = await this.server.tmux([
      'display-message',
      '-p',
      '-t',
      this.id,
      '#{cursor_x} #{cursor_y} #{pane_title}',
      ';',
      'capture-pane',
      '-p',
      '-t',
      this.id,
    ]);
    const newline = out.indexOf('\n');
    const head = newline < 0 ? out : out.slice(0, newline);
    const [x, y, ...title] = head.split(' ');
    return {
      cursorX: Number(x),
      cursorY: Number(y),
      title: title.join(' '),
      visible: (newline < 0 ? '' : out.slice(newline + 1)).split('\n'),
    };
  }

  // The cursor line holds exactly the prompt and the cursor is right after it.
  private atPrompt(state: PaneState): boolean {
    const line = state.visible[state.cursorY] ?? '';
    return line.trimEnd() === this.prompt.trimEnd() && state.cursorX === this.prompt.length;
  }
}

interface Marker {
  shell: string;
  count: number;
  status: number;
}

// "harness:ID:N:S" from the pane title: prompt N of the shell started as ID, after a command with status S.
function parseMarker(title: string): Marker | undefined {
  const m = MARKER.exec(title);
  if (m === null || m[1] === undefined || m[2] === undefined || m[3] === undefined) return undefined;
  return { shell: m[1], count: Number(m[2]), status: Number(m[3]) };
}

// A later prompt than before: a higher count, or a new shell (after `exec zsh`, say).
function isLater(now: Marker, before: Marker): boolean {
  return now.shell !== before.shell || now.count > before.count;
}

// Index of the last line (at or after from) echoing the command: exact, else by its start.
function findEcho(lines: string[], exact: string, prefix: string, from: number): number {
  for (let i = lines.length - 1; i >= from; i--) if (lines[i] === exact) return i;
  const head = prefix.trimEnd();
  for (let i = lines.length - 1; i >= from; i--) if (lines[i]?.startsWith(head)) return i;
  return -1;
}

/** A random token for markers and names in tests. */
export function uniqueToken(): string {
  return randomBytes(6).toString('hex');
}

/**
 * Starts one server for the test file (beforeAll) and hands it to `set`; after the file (afterAll)
 * kills it and checks that nothing it started is left.
 */
export function useServer(
  set: (server: TmuxServer) => void,
  opts?: { env?: Record<string, string | undefined> },
): void {
  let server: TmuxServer | undefined;
  beforeAll(async () => {
    server = await startServer(opts);
    set(server);
  });
  afterAll(async () => {
    if (!server) return;
    await server.kill();
    expect(assertNoLeftovers(server)).toEqual([]);
  });
}
