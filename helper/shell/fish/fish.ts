// fish's module: the signal-woken channel (helper/shell/signal/signal.ts) with what fish 3 can do.
// Its handler cannot see the line being edited, so every run waits on the screen check
// (helper/shell/screen/); it draws notices; it never asks in ask mode (the snippet answers
// B approval_unavailable); it renders its prompt once per prompt, so a refused check is made once
// more with the prompt rendered fresh; and it changes nothing on the screen while it answers, so
// the screen read begins beside its answer. It is woken by SIGURG, not SIGWINCH (../signal/signal-traits.ts,
// wakeSignal): a wake runs neither fish's own WINCH handler, which repaints the prompt, nor the
// person's.
import type { ShellPlace } from '../shell.js';
import { SignalShell } from '../signal/signal.js';

/** The fish pane's shell. */
export function fishShell(place: ShellPlace): SignalShell {
  return new SignalShell('fish', place, {
    notices: true,
    asks: false,
    cachesPrompt: true,
    readsEarly: true,
    wakeSignal: 'SIGURG',
  });
}
