// The screen check of one signal-woken shell's pane, as its asks make it (helper/shell/signal.ts):
// the read that may begin early, while the shell still answers (fish: `readsEarly`), and the last
// verdict, which the enrollment's prompt probe reads (helper/shell/prompt-probe.ts).
import { checkPane, readScreen, type RenderedPrompt, type Screen, type ScreenVerdict } from './screen.js';
import type { ShellPlace } from './shell.js';

export class PaneScreen {
  /** The read begun for the request out, before its answer came. */
  private early: Promise<Screen | undefined> | undefined;
  /** The last check's verdict (undefined until one was made). */
  lastVerdict: ScreenVerdict | undefined;

  constructor(private readonly place: ShellPlace) {}

  /** A new request is out: a read begun for the one before is not this one's. */
  forget(): void {
    this.early = undefined;
  }

  /** Begins the read now (once per request). */
  readEarly(): void {
    this.early ??= readScreen(this.place.tmuxSocket, this.place.paneId).catch(() => undefined);
  }

  /** The screen against `prompt` (the answer's), the early read taken as the first. */
  async check(prompt: RenderedPrompt | undefined): Promise<ScreenVerdict> {
    const first = this.early;
    this.early = undefined;
    if (!prompt) return { ok: false, reason: 'the shell did not say what its prompt looks like', cause: 'line' };
    const { verdict } = await checkPane(this.place.tmuxSocket, this.place.paneId, prompt, first);
    this.lastVerdict = verdict;
    return verdict;
  }
}
