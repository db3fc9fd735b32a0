// The screen check's look at a pane when it enrolls: once the shell's first prompt is up, the
// helper asks it as for a run (Q, the shell's answer, the screen read and compared; no run) and,
// when the check finds the prompt itself is what it cannot serve (helper/shell/screen/screen.ts, cause
// `prompt`), says so once in the pane, with the reason and what to change, and keeps the reason
// for the listings (`prompt_refused`: `tmux-run panes`, `doctor`, tmux_enrolled_panes). A refusal
// the moment causes (the person is typing, a command runs) says nothing about the prompt: the
// probe looks again later, a few times, then stops. Serves every shell on the screen check (fish 3,
// and bash where its exact builtin cannot load).
import type { ScreenVerdict } from './screen.js';
import type { AskResult } from '../shell.js';

/** When the probe looks (ms after the helper is ready, then after each look the moment hid the answer). */
export const PROBE_DELAYS_MS = [300, 1500, 5000, 15_000, 60_000];
/** How long one look waits for the shell's answer (as a run's ask does). */
export const PROBE_ASK_MS = 1000;

/** What the probe needs of the shell's module. */
export interface Probed {
  /** The ask a run makes, screen check included; undefined when another ask is out (the probe waits). */
  probeAsk(timeoutMs: number): Promise<{ result: AskResult; verdict?: ScreenVerdict } | undefined>;
  /** Says a line in the pane once (S), and keeps it for the listings. */
  promptUnservable(text: string, reason: string): void;
  isClosed(): boolean;
}

/** What to change, for each reason the check gives for a prompt it cannot serve (pure). */
export function promptAdvice(reason: string): string {
  if (/fixed place|clears|scrolls/.test(reason))
    return 'draw the prompt without moving the cursor to a fixed place or clearing the screen';
  if (/more rows|rows than/.test(reason)) return 'use a prompt of fewer rows (or a taller pane)';
  if (/right edge/.test(reason)) return 'end the prompt before the last column of the pane';
  if (/right prompt/.test(reason)) return 'keep the right prompt to one row';
  return 'a part that changes from one draw to the next (a clock with seconds, a counter, a random glyph) keeps the check from matching it: show that part with less detail, or leave it out';
}

/** The line said in the pane (pure). */
export function unservableText(reason: string): string {
  return `tmux-run: runs here will be refused editor_not_empty: the screen check cannot serve this prompt (${reason}); to fix it, ${promptAdvice(reason)}, then enroll again`;
}

/** Looks at the pane after enrolling, at PROBE_DELAYS_MS, until a look tells (or the delays run out). */
export function startProbe(shell: Probed, delays: readonly number[] = PROBE_DELAYS_MS): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let step = 0;
  let stopped = false;
  let suspect: string | undefined;
  const next = (): void => {
    if (stopped || shell.isClosed() || step >= delays.length) return;
    timer = setTimeout(() => void look(), delays[step++]);
    timer.unref();
  };
  const look = async (): Promise<void> => {
    const r = await shell.probeAsk(PROBE_ASK_MS);
    if (stopped || shell.isClosed()) return;
    const v = r?.verdict;
    if (r?.result.ok || !v || v.ok || v.cause !== 'prompt') {
      // Served, or the moment decided (busy, typing, another ask out): nothing is known of the prompt.
      if (r?.result.ok) return;
      suspect = undefined;
      return next();
    }
    // Twice in a row, so that a prompt caught while it redrew is not blamed.
    if (suspect === undefined) {
      suspect = v.reason;
      step = Math.max(step - 1, 0);
      return next();
    }
    shell.promptUnservable(unservableText(v.reason), v.reason);
  };
  next();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
