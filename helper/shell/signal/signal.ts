// The signal-woken channel: how the helper talks to a shell that has no descriptor handler in its
// line editor (bash, fish). The helper leaves a message in a file and sends the shell a wake signal
// ignored by default (bash SIGWINCH, fish SIGURG: signal-traits.ts, wakeSignal); the shell's
// handler reads it and answers in another file, holding no descriptor between prompts.
// The files, their lines and the order of events: docs/protocol-signal.md.
import { CHANNEL, REWAKE_MS } from '../../../src/core/enrollment/layout.js';
import { AnswerWatch } from './answer-watch.js';
import { NoticeWait } from './notice-wait.js';
import { checkedAsk } from './checked-ask.js';
import { LineShell } from '../line-shell.js';
import { startProbe } from '../screen/prompt-probe.js';
import { PaneScreen } from '../screen/pane-screen.js';
import type { RenderedPrompt, ScreenVerdict } from '../screen/screen.js';
import { parseAnswer, parseModes, readShellFile, removeAnswerFiles, wakeShell, writeMessages } from './signal-files.js';
import { DETAILS_REWAKES, wakeAgain } from './rewake.js';
import type { SignalShellTraits } from './signal-traits.js';
import type {
  ApproveMode,
  SandboxShown,
  AskOptions,
  AskResult,
  EditorCheck,
  Shell,
  ShellName,
  ShellPlace,
} from '../shell.js';

/** A shell woken by a signal (SIGWINCH; fish SIGURG), talking through files (the protocol above). */
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

  /** The probe's ask (helper/shell/screen/prompt-probe.ts): only when no run's ask is out; a run's ask waits for it (short). */
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

  /** The shell's answer, then on K the screen check (helper/shell/signal/checked-ask.ts). */
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

  /** Rewrites BASE.msg from what is to be said; `wake` sends the shell its wake signal after. */
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
    wakeShell(this.place.shellPid, this.traits.wakeSignal);
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
