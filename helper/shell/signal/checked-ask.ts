// One ask of a signal-woken shell as a run needs it (helper/shell/signal/signal.ts): the shell's answer,
// then, where its check is the screen's, the screen read and compared (helper/shell/screen/screen.ts),
// all within the ask's one bound. Two moments pass at once and are asked again rather than
// refused: readline drawing its prompt a moment before it reads keys (bash: context:not_reading),
// and the handler's own notice redrawing the line (fish: context:redrawing, and the screen's
// mark of a notice not repainted yet, cause `redraw`). And where the shell
// may answer with the prompt it rendered earlier at the same prompt (fish), a screen that does not
// match is compared once more with the prompt rendered fresh (unless the pane shows something else
// whatever the prompt: copy mode); when that second look cannot be made within the bound, the
// first refusal stands. Nothing here passes what the shell or the screen refused: each try is a
// whole answer and check of its own.
import type { ScreenVerdict } from '../screen/screen.js';
import type { AskResult } from '../shell.js';

/** Reasons for a moment that passes at once: asked again, AGAIN_MS later, while the bound lasts. */
export const PASSING_REASONS: ReadonlySet<string> = new Set(['context:not_reading', 'context:redrawing']);
export const AGAIN_MS = 10;
/** The pause before looking again at a screen the shell is redrawing (fish's notice: cause `redraw`). */
export const REDRAW_MS = 20;

export interface CheckedAskParts {
  /** One request and the shell's answer (`fresh`: the prompt rendered again, not as cached). */
  answer(timeoutMs: number, fresh: boolean): Promise<AskResult>;
  /** The screen check of the answer just given; absent where the shell's check is exact. */
  screen?: () => Promise<ScreenVerdict>;
  /** The shell may answer with a cached rendering of its prompt. */
  cachesPrompt?: boolean;
}

/** The shell's answer and, on yes, the screen check; within `timeoutMs` in all. */
export async function checkedAsk(timeoutMs: number, parts: CheckedAskParts): Promise<AskResult> {
  const end = performance.now() + timeoutMs;
  const left = (): number => end - performance.now();
  let refused: AskResult | undefined;
  let r = await parts.answer(timeoutMs, false);
  for (;;) {
    if (!r.ok) {
      // The fresh look could not be made in time: the screen's refusal stands.
      if (refused && r.reason === 'timeout') return refused;
      if (!PASSING_REASONS.has(r.reason) || left() < 2 * AGAIN_MS) return r;
      await new Promise((resolve) => setTimeout(resolve, AGAIN_MS));
      r = await parts.answer(left(), refused !== undefined);
      continue;
    }
    if (!parts.screen) return r;
    const verdict = await parts.screen();
    if (verdict.ok) return r;
    const no: AskResult = { ok: false, reason: `screen:${verdict.reason}` };
    if (verdict.cause === 'redraw' && left() > 2 * REDRAW_MS) {
      await new Promise((resolve) => setTimeout(resolve, REDRAW_MS));
      r = await parts.answer(left(), refused !== undefined);
      continue;
    }
    // Copy mode, a full-screen program: no rendering of the prompt changes that.
    if (!parts.cachesPrompt || refused || verdict.cause === 'pane' || left() <= 0) return no;
    refused = no;
    r = await parts.answer(left(), true);
  }
}
