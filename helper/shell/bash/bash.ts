// bash's module: the signal-woken channel (helper/shell/signal/signal.ts) with what the pane's bash could
// load. With its builtin (helper/shell/bash/bash-line.c, loaded by shell/tmux-run.bash) the WINCH trap
// knows readline's line exactly, draws notices and asks in ask mode; without it the helper reads
// the screen, no notice is drawn and ask mode refuses. The snippet says which in BASE.check,
// written before it starts the helper: `exact` (loaded already), `screen REASON`, or `load SO`:
// the helper checks the file (src/core/enrollment/bash-builtin.ts) and its first word tells the
// shell to load it (`R GENERATION ENROLLMENT load`), or the screen check and why.
import { CHANNEL } from '../../../src/core/enrollment/layout.js';
import type { ShellPlace } from '../shell.js';
import { SignalShell } from '../signal/signal.js';
import { readShellFile } from '../signal/signal-files.js';
import { builtinRefusal } from '../../../src/core/enrollment/bash-builtin.js';

/** The longest reason kept from BASE.check. */
const MAX_REASON = 300;

/** What BASE.check says (pure): exact, the builtin to check and load, or the screen check and why. */
export function parseCheck(data: Buffer | undefined): { exact: boolean; reason?: string; load?: string } {
  const text = data?.toString('utf8') ?? '';
  if (text === 'exact\n') return { exact: true };
  const load = /^load (\/[^\n]+)\n$/.exec(text);
  if (load) return { exact: false, load: load[1] };
  const m = /^screen (.+)\n$/.exec(text);
  const reason = m
    ? m[1]!.replace(/[\x00-\x1f\x7f]/g, ' ').slice(0, MAX_REASON)
    : 'the snippet did not say which check it could load';
  return { exact: false, reason };
}

/** The bash pane's shell, exact or not as its snippet found. */
export function bashShell(place: ShellPlace): SignalShell {
  const check = parseCheck(readShellFile(place.base + CHANNEL.check));
  let { exact, reason } = check;
  if (check.load !== undefined) {
    reason = builtinRefusal(check.load);
    exact = reason === undefined;
  }
  return new SignalShell('bash', place, {
    notices: exact,
    asks: exact,
    exact,
    checkReason: reason,
    ...(exact && check.load !== undefined ? { readyWord: 'load' } : {}),
  });
}
