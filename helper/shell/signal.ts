// The signal-woken channel: how the helper talks to a shell that has no descriptor handler in its
// line editor (bash, fish). The helper leaves a message in a file and sends the shell SIGWINCH
// (ignored by default, so a shell with no handler yet, or any more, is never harmed); the shell's
// handler reads the file and answers in another file. Nothing is a FIFO and the shell holds no
// descriptor of the channel between prompts (bash cannot set close-on-exec): each access is
// open, read or write, close.
//
// FILES (BASE is the record's `channel`, DIR/ch.SHELLPID.RANDOM; DIR is 0700, every file 0600;
// suffixes in src/enrollment/layout.ts, CHANNEL):
//   BASE.msg   helper -> shell. Written by the helper only, whole: to BASE.new, then renamed, so
//              the shell never reads half of it (swapped with the old one in one step; where it
//              cannot be, the old one moved aside to BASE.old first: for a moment no BASE.msg,
//              read as nothing new; signal-files.ts says why). Lines, each ended by \n, in order:
//                R GENERATION ENROLLMENT[ load]  ready (32 hex each; load: bash loads its builtin), or
//                E REASON                  enrollment failed (one line of text), or
//                X                         the enrollment was revoked, or
//                D                         the helper goes dormant (helper/dormancy.ts) and exits;
//              (exactly one of these four first; none before the helper's first word: no file)
//                Q NONCE[ fresh]           a request is out (32 hex, fresh for each request);
//                                          at most one; absent when none is out. `fresh`
//                                          (fish): render the prompt again, not as cached
//                P NONCE RUNID DIGEST BYTES LINES PREVIEW
//                                          ask mode only (shells that can ask): the run's details,
//                                          as zsh's P line (helper/shell/approval.ts)
//                N SEQ TEXT                shells that draw notices only (bash with its builtin,
//                                          fish): the latest notice, SEQ counting up from 1
//                S TEXT                    shells on the screen check: it cannot serve this prompt
//                                          (helper/shell/prompt-probe.ts); said once in the pane
//   BASE.ans   shell -> helper: the answer. Removed by the helper once read (answer-watch.ts) and
//              before each Q; written by the shell with open/truncate, write, close, so the helper
//              may see it half-written: an answer counts only when complete (below), else the
//              helper waits for the next change. One of:
//                K NONCE[ APPROVAL]\n PROMPT \0 RIGHTPROMPT \0
//                          idle at the primary prompt with the snapshot written (below); a shell
//                          whose check is exact (bash with its builtin) leaves PROMPT empty; PROMPT is
//                          the prompt as the shell renders it (bash: ${PS1@P}, with its \001..\002
//                          invisible parts and escape sequences left in: the helper strips them),
//                          RIGHTPROMPT the right prompt (fish; empty in bash). APPROVAL only after
//                          an A: y | a | always, as zsh's K. Complete with its second \0; more
//                          fields may follow, each ended by \0: text the line editor may draw
//                          before the prompt's last line (bash's show-mode-in-prompt strings),
//                          any one of which the screen check accepts there.
//                B NONCE REASON\n   not now: busy (a command line is running), context:continuation,
//                          context:binding, context:completion, editor_not_empty,
//                          approval_unavailable (ask mode in a shell that cannot ask),
//                          snapshot_failed. Complete with its \n.
//                A NONCE SECONDS\n  ask mode (shells that can ask): the person is being asked; the
//                          helper then adds the P line to BASE.msg and wakes the shell again, and
//                          waits SECONDS (plus a margin) for K NONCE APPROVAL or
//                D NONCE denied|approval_timeout\n.
//   BASE.env   shell -> helper: the snapshot, exactly as helper/shell/snapshot.ts parses it
//              (NONCE \0 PWD \0 NAME=VALUE \0 ... with :NAME=VALUE entries for the sandbox's
//              parameters when TMUX_RUN_SANDBOX is set and not off; a list joined with ':').
//              Removed by the helper before each Q and after it is read; created by the shell with
//              O_EXCL (bash: noclobber) at 0600, written, closed, BEFORE it writes K to BASE.ans.
//   BASE.mode  shell -> helper: `M ask|auto SANDBOX[ quiet]\n` (SANDBOX: off, workspace,
//              workspace+net, read-only, invalid; quiet: TMUX_RUN_NOTIFY turns notices off),
//              rewritten at a prompt when it changed; read by the helper when a listing asks
//              (informational: the shell decides at each run), and before a notice: a quiet
//              shell is not woken for one.
//   BASE.wake  broker -> a dormant pane's shell: `U\n` (start the helper again: TMUX_RUN_WAKE names
//              the enrollment in its environment, helper/wake.ts) or `X\n` (revoked), then SIGWINCH
//              (src/enrollment/dormant.ts); the shell empties it once read.
//   BASE.log   the helper's stdout and stderr (made by the shell when it starts the helper).
//   BASE.trap  scratch file of the shell's (bash: `trap -p` read back without a fork).
//
// ORDER OF EVENTS
//   Start: the shell makes BASE.log and starts `node dist/helper/main.js BASE SHELLPID SHELLNAME`
//     in the background (its own process group, stdin /dev/null, no other descriptor) and
//     returns. The helper writes BASE.msg with R (or E) and sends SIGWINCH. The shell's handler,
//     or its next prompt, reads it: R -> enrolled (the generation is kept); E -> not enrolled, the
//     reason said at the next prompt (the helper exits; the log kept).
//   A run: the helper removes BASE.ans and BASE.env, writes BASE.msg with `Q NONCE`, watches
//     DIR (inotify, fs.watch; a 20 ms poll when that fails), and sends SIGWINCH. The handler
//     acts only when BASE.msg holds a Q whose NONCE it has not answered yet (it keeps the last
//     one): a real resize, or anyone else's WINCH, finds nothing new and does nothing but what
//     the person's own WINCH handler does (which the shell's handler calls in any case). It
//     answers from the shell's own state: idle at the primary prompt (bash: set by
//     PROMPT_COMMAND, cleared by a zero-output expansion in PS0, continuation marked by PS2,
//     READLINE_LINE or COMP_LINE set inside a binding or completion); if idle it writes BASE.env,
//     then BASE.ans with K and the rendered prompt; else B. The helper then (K) reads and removes
//     BASE.env, asks tmux read-only for the cursor and the screen (helper/shell/screen.ts) and
//     starts the run only when the cursor stands right after the rendered prompt on an empty line;
//     else it refuses editor_not_empty.
//   Busy: the helper refuses shell_busy at once when /proc shows the terminal's foreground
//     group is not the shell's, or when no complete answer came within one second; it then
//     rewrites BASE.msg without the Q (withdrawn), so a handler that runs later finds nothing,
//     and an answer that still arrives for that nonce is ignored.
//   Revoked: the helper writes BASE.msg with X (no Q), sends SIGWINCH, and exits; the shell
//     undoes its enrollment in the handler or at its next prompt and says so at the next prompt.
//   Helper lost: the shell checks at each prompt that its helper (its own child) still lives;
//     when not, it says so before the prompt, undoes the enrollment and starts the orphan sweep.
//   Notices (shells that draw them): the helper rewrites BASE.msg with a new N line and sends
//     SIGWINCH; the handler draws a notice whose SEQ it has not drawn yet.
import { CHANNEL, REWAKE_MS } from '../../src/enrollment/layout.js';
import type { SandboxShown } from '../sandbox/policy.js';
import { AnswerWatch } from './answer-watch.js';
import { NoticeWait } from './notice-wait.js';
import { checkedAsk } from './checked-ask.js';
import { LineShell } from './line-shell.js';
import { startProbe } from './prompt-probe.js';
import { PaneScreen } from './pane-screen.js';
import type { RenderedPrompt, ScreenVerdict } from './screen.js';
import { parseAnswer, parseModes, readShellFile, removeAnswerFiles, wakeShell, writeMessages } from './signal-files.js';
import { DETAILS_REWAKES, wakeAgain } from './rewake.js';
import type { SignalShellTraits } from './signal-traits.js';
import type { ApproveMode, AskOptions, AskResult, EditorCheck, Shell, ShellName, ShellPlace } from './shell.js';

/** A shell woken by SIGWINCH, talking through files (the protocol above). */
export class SignalShell extends LineShell implements Shell {
  readonly editorCheck: EditorCheck;
  readonly editorCheckReason: string | undefined;
  onclose?: () => void;
  onPromptRefused?: (reason: string) => void;
  private status: string | undefined;
  private request: string[] = [];
  private notice: string | undefined;
  private noticeSeq = 0;
  private readonly noticeWait = new NoticeWait(() => {
    if (!this.closed) this.flush(true);
  });
  private readonly watch = new AnswerWatch(
    this.base,
    () => this.check(),
    () => this.snapshotSeen(),
  );
  private rewake: NodeJS.Timeout | undefined;
  private lastAnswer = '';
  private prompt: RenderedPrompt | undefined;
  private said: string | undefined;
  private asks = 0;
  private probing: Promise<unknown> | undefined;
  private probe: { stop(): void } | undefined;
  private readonly screen: PaneScreen;
  /** The next request asks for the prompt rendered fresh. */
  private fresh = false;
  /** Why the screen check cannot serve this shell's prompt, once the probe found it cannot. */
  promptRefused: string | undefined;

  constructor(
    readonly name: ShellName,
    private readonly place: ShellPlace,
    private readonly traits: SignalShellTraits,
  ) {
    super(place.base);
    this.screen = new PaneScreen(place);
    this.editorCheck = traits.exact ? 'exact' : 'screen';
    this.editorCheckReason = traits.exact ? undefined : traits.checkReason;
  }

  get mode(): ApproveMode {
    return parseModes(readShellFile(this.base + CHANNEL.modes)).mode;
  }

  get sandbox(): SandboxShown {
    return parseModes(readShellFile(this.base + CHANNEL.modes)).sandbox;
  }

  /** Nothing to open: the shell made only the log; the helper writes BASE.msg when it has news. */
  open(): void {}

  ready(generation: string, enrollment: string): void {
    this.status = `R ${generation} ${enrollment}${this.traits.readyWord ? ` ${this.traits.readyWord}` : ''}`;
    this.flush(true);
    if (!this.traits.exact) this.probe ??= startProbe(this);
  }

  /** The probe's ask (helper/shell/prompt-probe.ts): only when no run's ask is out; a run's ask waits for it (short). */
  probeAsk(timeoutMs: number): Promise<{ result: AskResult; verdict?: ScreenVerdict } | undefined> {
    if (this.asks > 0 || this.probing || this.closed) return Promise.resolve(undefined);
    const look = (async () => {
      this.screen.lastVerdict = undefined;
      const result = await this.askChecked(timeoutMs, {});
      const verdict = this.screen.lastVerdict;
      this.screen.readyNext();
      return { result, ...(verdict ? { verdict } : {}) };
    })();
    this.probing = look.finally(() => (this.probing = undefined));
    return look;
  }

  promptUnservable(text: string, reason: string): void {
    this.promptRefused = reason;
    this.said = `S ${text}`;
    this.flush(true);
    this.onPromptRefused?.(reason);
  }

  isClosed(): boolean {
    return this.closed;
  }

  fail(reason: string): Promise<void> {
    this.status = `E ${reason}`;
    this.request = [];
    this.flush(true);
    return Promise.resolve();
  }

  notify(text: string): void {
    if (!this.traits.notices || this.closed) return;
    // Notices off in the shell (as of its last prompt): it would draw nothing, so it is not woken.
    if (parseModes(readShellFile(this.base + CHANNEL.modes)).quiet) return;
    this.noticeWait.add(text, () => (this.notice = `N ${++this.noticeSeq} ${text}`));
  }

  revoked(): void {
    this.status = 'X';
    this.request = [];
    this.flush(true);
  }

  /** S TEXT: the shell says it once (notices on or off), as the prompt probe's word. */
  tell(text: string): void {
    this.said = `S ${text}`;
    this.flush(true);
  }

  /** D first: the helper goes dormant; the shell then starts one again on a wake (BASE.wake). */
  dormant(): Promise<void> {
    this.status = 'D';
    this.request = [];
    this.notice = undefined;
    this.flush(true);
    return Promise.resolve();
  }

  protected write(line: string): void {
    if (this.closed) return;
    const kind = line.slice(0, 2);
    if (kind === 'Q ') {
      // A notice that waits goes with the request (the shell draws it first).
      this.noticeWait.stop();
      this.lastAnswer = '';
      this.prompt = undefined;
      removeAnswerFiles(this.base);
      this.screen.forget();
      this.request = [this.fresh ? `${line} fresh` : line];
      this.watch.start();
      this.flush(true);
      if (!this.traits.exact) this.screen.prepare(); // after the wake: tmux starts while the shell answers
      clearInterval(this.rewake);
      this.rewake = setInterval(() => this.wake(), REWAKE_MS);
      this.check();
    } else if (kind === 'P ') {
      this.request.push(line);
      this.flush(true);
      // Sent just after the shell's A, often while the trap that wrote it runs (REWAKE_MS).
      clearInterval(this.rewake);
      this.rewake = wakeAgain(() => this.wake(), DETAILS_REWAKES);
    } else if (kind === 'W ') {
      // Withdrawn: a handler that runs later finds no request; an answer still coming is ignored.
      this.request = [];
      this.flush(false);
    }
  }

  /** The spare tmux client for the next screen check (pane-screen.ts). */
  afterRun(): void {
    this.screen.readyNext();
  }

  override async ask(timeoutMs: number, opts: AskOptions = {}): Promise<AskResult> {
    while (this.probing) await this.probing;
    this.asks++;
    try {
      return await this.askChecked(timeoutMs, opts);
    } finally {
      this.asks--;
    }
  }

  /** The shell's answer, then on K the screen check (helper/shell/checked-ask.ts). */
  private askChecked(timeoutMs: number, opts: AskOptions): Promise<AskResult> {
    return checkedAsk(timeoutMs, {
      answer: (ms, fresh) => this.answerOnce(ms, opts, fresh),
      ...(this.traits.exact ? {} : { screen: () => this.screen.check(this.prompt) }),
      cachesPrompt: this.traits.cachesPrompt === true,
    });
  }

  /** One request and the shell's answer. */
  private async answerOnce(timeoutMs: number, opts: AskOptions, fresh: boolean): Promise<AskResult> {
    this.fresh = fresh;
    let result: AskResult | undefined;
    try {
      result = await super.ask(timeoutMs, opts);
      return result;
    } finally {
      // No K: no screen check follows, and the client held for it is let go.
      if (!result?.ok) this.screen.forget();
      this.fresh = false;
      this.stopWatch();
      // Not rewritten now: a request the shell answered is never answered again (it keeps the
      // nonce), and one it did not answer was withdrawn (W) when its wait ended. The next message
      // leaves it out.
      this.request = [];
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.noticeWait.stop();
    this.probe?.stop();
    this.screen.close();
    this.stopWatch();
    this.endWaits();
  }

  /** Rewrites BASE.msg from what is to be said; `wake` sends the shell SIGWINCH after. */
  private flush(wake: boolean): void {
    const lines = [this.status, ...this.request, this.notice, this.said].filter((l): l is string => l !== undefined);
    try {
      if (this.status !== undefined) writeMessages(this.base, lines);
    } catch {
      // The shell or its channel is gone: the helper's watch ends the enrollment.
    }
    if (wake) this.wake();
  }

  private wake(): void {
    wakeShell(this.place.shellPid);
  }

  /** Reads BASE.ans; hands a complete answer not handed on yet to the waiting request. */
  private check(): void {
    const data = readShellFile(this.base + CHANNEL.answer);
    if (!data) return;
    const answer = parseAnswer(data);
    if (!answer) return;
    const key = data.toString('latin1');
    if (key === this.lastAnswer) return;
    this.lastAnswer = key;
    clearInterval(this.rewake);
    if (answer.prompt) this.prompt = answer.prompt;
    this.deliver(answer.line);
  }

  /** The shell's handler wrote the snapshot for the request out: the screen read may begin (readsEarly). */
  private snapshotSeen(): void {
    if (this.traits.readsEarly && this.request.length > 0 && !this.closed) this.screen.readEarly();
  }

  private stopWatch(): void {
    clearInterval(this.rewake);
    this.rewake = undefined;
    this.watch.stop();
  }
}
