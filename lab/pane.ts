// A pane of a harness server, driven the way a person drives one: typed into with send-keys
// (tests may; product code never does), read from the screen. run() knows a command finished
// from the completion marker the harness shells put in the pane title (see shells.ts).
import { processAlive } from './processes.js';
import type { TmuxServer } from './server.js';
import { parseMarker, isLater } from './shells.js';
import { tmuxArg } from './tmux-command.js';
import { DEFAULT_TIMEOUT_MS, errorText, waitUntil } from './waiting.js';

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

interface PaneState {
  cursorX: number;
  cursorY: number;
  title: string;
  visible: string[];
}

/** A pane of a harness server (made by TmuxServer.newPane). */
export class TmuxPane implements Pane {
  constructor(
    readonly id: string,
    readonly server: TmuxServer,
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

// Index of the last line (at or after from) echoing the command: exact, else by its start.
function findEcho(lines: string[], exact: string, prefix: string, from: number): number {
  for (let i = lines.length - 1; i >= from; i--) if (lines[i] === exact) return i;
  const head = prefix.trimEnd();
  for (let i = lines.length - 1; i >= from; i--) if (lines[i]?.startsWith(head)) return i;
  return -1;
}

// Screen text with each line's end and the trailing blank lines trimmed.
function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n+$/, '');
}
