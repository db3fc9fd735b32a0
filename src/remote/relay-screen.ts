// The screen check of a far pane, read here (docs/remote.md): a far end whose shell has no exact
// check (fish; bash without its builtin) asks the relay, on the session's control link, for its
// pane's screen (`read_screen`, src/core/enrollment/remote-link.ts). The relay knows the pane and
// its tmux (LocalPane, from when `tmux-run ssh` started): it asks that tmux the screen check's
// read-only questions about that pane (src/core/os/screen-questions.ts, the ones a local helper
// asks; the allow-list of every tmux call) and answers with what tmux printed. Nothing of the
// request chooses a pane, a command or a server: the far end can read its own pane's screen and
// nothing else. At most a few reads are under way at once. As a local helper does
// (helper/shell/screen/pane-screen.ts), the relay holds a tmux client for the next read when the
// far end says one is coming (`hold_screen`: a request went out, or a run is over), its questions
// written, so that the client's start is off the read's way and the read is the end of its stdin
// (src/core/os/held-query.ts); at most one is held, let go unasked after SPARE_MS. The answer goes
// as soon as tmux printed all of it (screenAnswered), before the client has exited.
import { MAX_SCREEN_TEXT, type RelayMessage } from '../core/enrollment/remote-link.js';
import { screenArgs } from '../core/os/screen-questions.js';
import { askHeld, holdQuery, SCREEN_HOLD_RENEW_MS, SPARE_MS, type HeldQuery } from '../core/os/held-query.js';
import type { Transport } from '../core/protocol/transport.js';

/** Reads under way at once; a far end asking more is answered with an error. */
const MAX_READS = 4;

export class RelayScreen {
  private reads = 0;
  private closed = false;
  /** The client held for the next read, and when it was started. */
  private held: HeldQuery | undefined;
  private heldAt = 0;

  /** The screen check's questions about the session's pane. */
  private readonly questions: readonly string[];

  constructor(
    private readonly pane: { tmuxSocket: string; paneId: string },
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.questions = screenArgs(pane.paneId);
  }

  /**
   * The far end's `hold_screen`: a client held for the next read (kept when one waits, unless it
   * was started SCREEN_HOLD_RENEW_MS ago or more). Started in the next turn: a run's reply that
   * came in the same turn is passed on first.
   */
  hold(): void {
    setImmediate(() => {
      if (this.closed) return;
      if (this.held?.waiting && Date.now() - this.heldAt < SCREEN_HOLD_RENEW_MS) return;
      this.held?.drop();
      this.held = holdQuery(this.pane.tmuxSocket, this.questions, SPARE_MS);
      this.heldAt = Date.now();
    });
  }

  /** Answers the far end's `read_screen` `id` on `control`: what tmux printed of this pane, or why not. */
  async answer(control: Transport, id: number): Promise<void> {
    if (this.reads >= MAX_READS) {
      control.send({ type: 'screen', id, error: 'too many screen reads at once' } satisfies RelayMessage);
      return;
    }
    this.reads++;
    const held = this.held?.waiting ? this.held : undefined;
    this.held = undefined;
    let reply: RelayMessage;
    try {
      const out = await askHeld(held, this.pane.tmuxSocket, this.questions, this.log);
      reply =
        out.length <= MAX_SCREEN_TEXT
          ? { type: 'screen', id, out }
          : { type: 'screen', id, error: "the pane's screen is too large to send" };
    } catch (e) {
      reply = { type: 'screen', id, error: `tmux could not show the pane (${(e as Error).message})`.slice(0, 1024) };
    } finally {
      this.reads--;
    }
    if (!this.closed) control.send(reply);
  }

  /** The enrollment ended: no answer is sent any more, and the held client is let go. */
  close(): void {
    this.closed = true;
    this.held?.drop();
    this.held = undefined;
  }
}
