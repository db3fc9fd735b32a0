// zsh's channel: two FIFOs the shell's zle -F widget reads and answers, so the line editor itself
// says whether the line is idle and empty. The lines each side sends: docs/protocol-zsh.md.
import { constants, openSync } from 'node:fs';
import { writeWhole } from '../../../src/core/enrollment/record.js';
import { Socket } from 'node:net';
import { CHANNEL } from '../../../src/core/enrollment/layout.js';
import { LineShell } from '../line-shell.js';
import type { ApproveMode, SandboxShown, Shell } from '../shell.js';

/** Unanswered text from the shell kept at most (a line is a few dozen bytes; more is noise). */
const MAX_PENDING = 64 * 1024;
/** How long a helper going dormant waits for the shell's Z before it exits anyway. */
const DORMANT_ACK_MS = 2000;

export class ZshShell extends LineShell implements Shell {
  readonly name = 'zsh';
  readonly editorCheck = 'exact';
  private req: Socket | undefined;
  private rsp: Socket | undefined;
  private inbuf = '';
  /** The shell's mode as its last prompt reported it (informational: the shell decides each run). */
  mode: ApproveMode = 'unknown';
  /** TMUX_RUN_SANDBOX as of the shell's last prompt (informational: the shell reports it again at each run). */
  sandbox: SandboxShown = 'unknown';
  /** Called once when the shell's side is gone (EOF or error on the channel). */
  onclose?: () => void;

  /** Opens the FIFOs the shell created (it holds both ends open read-write). */
  open(): void {
    const w = openSync(this.base + CHANNEL.request, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    const r = openSync(this.base + CHANNEL.reply, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    this.req = new Socket({ fd: w, readable: false, writable: true });
    this.rsp = new Socket({ fd: r, readable: true, writable: false });
    this.req.on('error', () => this.finish());
    this.rsp.on('error', () => this.finish());
    this.rsp.on('end', () => this.finish());
    this.rsp.on('close', () => this.finish());
    this.rsp.setEncoding('latin1');
    this.rsp.on('data', (chunk: string) => this.onData(chunk));
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.req?.destroy();
    this.rsp?.destroy();
    this.endWaits();
    this.onclose?.();
  }

  private onData(chunk: string): void {
    this.inbuf += chunk;
    if (this.inbuf.length > MAX_PENDING) this.inbuf = this.inbuf.slice(-4096);
    let nl: number;
    while ((nl = this.inbuf.indexOf('\n')) >= 0) {
      const line = this.inbuf.slice(0, nl);
      this.inbuf = this.inbuf.slice(nl + 1);
      const m = /^M (ask|auto)(?: (off|workspace|workspace\+net|read-only|invalid))?$/.exec(line);
      if (m) {
        const [mode, sandbox] = [m[1] as 'ask' | 'auto', (m[2] as SandboxShown | undefined) ?? 'off'];
        if (mode !== this.mode || sandbox !== this.sandbox) publishModes(this.base, mode, sandbox);
        this.mode = mode;
        this.sandbox = sandbox;
        continue;
      }
      if (line === 'Z') {
        this.ackDormant?.();
        continue;
      }
      // A line for a nonce nobody waits for is a late answer: ignored, never acted on.
      this.deliver(line);
    }
  }

  protected write(line: string): void {
    if (!this.closed) this.req?.write(line.replace(/[\r\n]/g, ' ') + '\n', 'utf8');
  }

  /**
   * Tells the shell this helper is ready, with the pane's listed generation and the enrollment
   * generation (the shell removes the record itself when it finds the helper killed).
   */
  ready(generation: string, enrollment: string): void {
    this.write(`R ${generation} ${enrollment}`);
  }

  /**
   * Tells the shell enrollment failed (the snippet prints the reason); resolves once the line
   * has been handed to the FIFO (or after a short bound), so the process can exit right after.
   */
  fail(reason: string): Promise<void> {
    return this.writeLast(`E ${reason.replace(/[\r\n]/g, ' ')}`);
  }

  /**
   * Tells the shell this helper goes dormant: D; resolves once the shell answered Z (it keeps the
   * request FIFO open itself from then on, so its line editor never sees the FIFO hang up), or after
   * DORMANT_ACK_MS (a command holds the prompt: the shell reads the D at its next prompt).
   */
  dormant(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, DORMANT_ACK_MS);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.ackDormant = done;
      void this.writeLast('D');
    });
  }

  private ackDormant: (() => void) | undefined;

  /** Writes a last line; resolves once it is handed to the FIFO (or after a short bound), so the process can exit. */
  private writeLast(line: string): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, 500);
      if (this.closed || !this.req) {
        clearTimeout(timer);
        resolve();
        return;
      }
      this.req.write(`${line}\n`, 'utf8', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Draws a one-line notice in the pane (zle -M); the shell drops it when notices are off. */
  notify(text: string): void {
    this.write(`N ${text}`);
  }

  /** S TEXT: said once above the prompt, notices on or off. */
  tell(text: string): void {
    this.write(`S ${text}`);
  }

  /** Tells the shell its enrollment was revoked. */
  revoked(): void {
    this.write('X');
  }

  close(): void {
    this.finish();
  }
}

/**
 * Writes the modes the shell reported to BASE.mode, in the signal-woken shells' format
 * (helper/shell/signal/signal-files.ts parses it), whole (to BASE.new, then renamed): a listing reads every
 * shell's modes there without asking the helper. A failure only leaves the listing's `unknown`.
 */
function publishModes(base: string, mode: ApproveMode, sandbox: SandboxShown): void {
  try {
    writeWhole(base + CHANNEL.messageTemp, base + CHANNEL.modes, `M ${mode} ${sandbox}\n`, constants.O_TRUNC);
  } catch {
    /* the listing says unknown */
  }
}
