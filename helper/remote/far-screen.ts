// The screen check at the far end of a `tmux-run ssh` session (docs/remote.md): the pane, and the
// tmux that shows it, are on the local side, so a far shell without an exact check (fish; bash
// without its builtin) has its pane's screen read by the session's relay. This is the far helper's
// ScreenSource (helper/shell/shell.ts): each read is a `read_screen` on the control link,
// answered by the relay's `screen` (src/remote/relay-screen.ts) with what the local tmux printed,
// which the check parses as a local read's output. The request names nothing: the relay reads
// the one pane of its session. `hold` tells the relay a read is coming (`hold_screen`: it starts
// its tmux client ahead), at most once between two reads, or again when the client it held may
// have been let go. Before the link is up, or once it is gone, a read fails (the check then
// refuses, as it does when tmux cannot answer).
import type { Transport } from '../../src/core/protocol/transport.js';
import type { FarMessage, RelayMessage } from '../../src/core/enrollment/remote-link.js';
import { TIMEOUT_MS } from '../../src/core/os/screen-read.js';
import { SCREEN_HOLD_RENEW_MS } from '../../src/core/os/held-query.js';
import type { ScreenSource } from '../shell/shell.js';

/** How long a read may take: the relay's tmux call's bound, and a second for the link. */
const READ_MS = TIMEOUT_MS + 1000;

interface Waiting {
  resolve: (out: string) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class FarScreen implements ScreenSource {
  private control: Transport | undefined;
  private next = 0;
  private readonly waiting = new Map<number, Waiting>();
  /** When the last `hold_screen` went out with no read since (undefined: none, or a read took it). */
  private heldAt: number | undefined;

  /** The control link is up (the relay welcomed this shell): reads go through it. */
  link(control: Transport): void {
    this.control = control;
  }

  /** The relay's `screen` answer; false for any other message. */
  answer(m: RelayMessage | undefined): boolean {
    if (m?.type !== 'screen') return false;
    const w = this.waiting.get(m.id);
    if (!w) return true; // given up on already
    this.waiting.delete(m.id);
    clearTimeout(w.timer);
    if (m.out !== undefined) w.resolve(m.out);
    else w.reject(new Error(m.error ?? 'the local side did not say why'));
    return true;
  }

  hold(): void {
    const now = Date.now();
    if (!this.control || (this.heldAt !== undefined && now - this.heldAt < SCREEN_HOLD_RENEW_MS)) return;
    this.heldAt = now;
    this.control.send({ type: 'hold_screen' } satisfies FarMessage);
  }

  async read(): Promise<string> {
    const control = this.control;
    if (!control) throw new Error('the link to the local side is not up');
    this.heldAt = undefined;
    const id = this.next++;
    return new Promise<string>((resolve, reject) => {
      // The request first: its answer comes in a later turn, when the rest is set.
      control.send({ type: 'read_screen', id } satisfies FarMessage);
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the local side did not show the pane within ${READ_MS / 1000} s`));
      }, READ_MS);
      this.waiting.set(id, { resolve, reject, timer });
    });
  }

  /** The link is gone: every read waiting fails, and no read goes out any more. */
  close(): void {
    this.control = undefined;
    this.heldAt = undefined;
    for (const [id, w] of this.waiting) {
      clearTimeout(w.timer);
      this.waiting.delete(id);
      w.reject(new Error('the link to the local side closed'));
    }
  }
}
