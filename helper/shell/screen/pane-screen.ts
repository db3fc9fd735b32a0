// The screen check of one signal-woken shell's pane, as its asks make it (helper/shell/signal/signal.ts):
// the tmux client held for the request out (src/core/os/held-query.ts: started when the request
// goes out, asked when the read is to begin), the read that may begin early, while the shell
// still answers (fish: `readsEarly`), and the last verdict, which the enrollment's prompt probe
// reads (helper/shell/screen/prompt-probe.ts). A pane whose tmux is elsewhere (a far end's:
// ShellPlace.screen) is read from there, and told when to hold a client there (`hold`: the
// relay holds it, src/remote/relay-screen.ts), at the same moments as a local one's. Once it has
// begun a read, the helper lets the process it woke run first (src/core/os/let-run.ts): the held
// tmux client (its stdin just ended), or the sshd of a far pane's link (`read_screen` just sent).
import { log } from '../../log/log.js';
import { askHeld, holdQuery, SPARE_MS, type HeldQuery } from '../../../src/core/os/held-query.js';
import { letRun } from '../../../src/core/os/let-run.js';
import {
  checkPane,
  checkWith,
  parseScreen,
  screenArgs,
  type RenderedPrompt,
  type Screen,
  type ScreenVerdict,
} from './screen.js';
import type { ShellPlace } from '../shell.js';

export class PaneScreen {
  /** The read begun for the request out, before its answer came. */
  private early: Promise<Screen | undefined> | undefined;
  /** The client held for the request out, not asked yet. */
  private held: HeldQuery | undefined;
  /** A client started after the last read's run, for the next request. */
  private spare: HeldQuery | undefined;
  /** A held client was asked since the spare was last started. */
  private asked = false;
  private readying: NodeJS.Immediate | undefined;
  /** The last check's verdict (undefined until one was made). */
  lastVerdict: ScreenVerdict | undefined;

  constructor(private readonly place: ShellPlace) {}

  /** A new request is out, or none: a read begun for the one before is not this one's, nor its held client. */
  forget(): void {
    this.early = undefined;
    this.held?.drop();
    this.held = undefined;
  }

  /** A request went out: holds a tmux client for its read (the spare, else one started now; none where none can be held). */
  prepare(): void {
    if (this.place.screen) return this.place.screen.hold?.();
    this.held?.drop();
    const spare = this.spare;
    this.spare = undefined;
    this.held = spare?.waiting ? spare : holdQuery(this.place.tmuxSocket, this.questions());
  }

  /** The screen check's questions about this pane. */
  private questions(): string[] {
    return screenArgs(this.place.paneId);
  }

  /** Lets every client go (the channel closed). */
  close(): void {
    this.forget();
    clearImmediate(this.readying);
    this.spare?.drop();
    this.spare = undefined;
  }

  /**
   * The run (or the probe) whose screen a held client read is over: the next client is started
   * in the next turn, after the run's reply, end entry and notice, for a request that comes
   * within SPARE_MS (an agent's runs come in bursts), so that its start-up is on no request's
   * way. A tmux client's exec and start cost about 1.5 ms of CPU: started at the read, as it was,
   * it shared the two cores with the shell's answer, the run and the helper (fish's runs 2 ms
   * slower, BENCHMARKS.md). Not while a request is out: that one holds its own client.
   */
  readyNext(): void {
    if (!this.asked || this.readying) return;
    this.readying = setImmediate(() => {
      this.readying = undefined;
      if (this.held || this.early || this.spare?.waiting) return;
      this.asked = false;
      if (this.place.screen) this.place.screen.hold?.();
      else this.spare = holdQuery(this.place.tmuxSocket, this.questions(), SPARE_MS);
    });
  }

  /** Begins the read now (once per request): the held client asked, else a client started now. */
  readEarly(): void {
    this.early ??= this.read().catch(() => undefined);
  }

  private async read(): Promise<Screen | undefined> {
    const far = this.place.screen;
    if (far) {
      const out = far.read();
      this.asked = true;
      letRun();
      return parseScreen(await out);
    }
    const held = this.held;
    this.held = undefined;
    const asked = (): void => {
      this.asked = true;
      if (held) letRun();
    };
    const out = askHeld(held, this.place.tmuxSocket, this.questions(), log, asked);
    return parseScreen(await out);
  }

  /** The screen against `prompt` (the answer's), the early read taken as the first. */
  async check(prompt: RenderedPrompt | undefined): Promise<ScreenVerdict> {
    // A held client not asked yet (no snapshot seen): asked now, as the first read.
    if (this.held) this.readEarly();
    const first = this.early;
    this.early = undefined;
    if (!prompt) return { ok: false, reason: 'the shell did not say what its prompt looks like', cause: 'line' };
    const far = this.place.screen;
    const { verdict } = far
      ? await checkWith(() => this.read(), prompt, first)
      : await checkPane(this.place.tmuxSocket, this.place.paneId, prompt, first);
    this.lastVerdict = verdict;
    return verdict;
  }
}
