// bash's module: the signal-woken channel (helper/shell/signal/signal.ts) with what the pane's bash could
// load. With its builtin (helper/shell/bash/bash-line.c, loaded by shell/tmux-run.bash) the WINCH trap
// knows readline's line exactly, draws notices and asks in ask mode; without it the helper reads
// the screen, no notice is drawn and ask mode refuses. The snippet says which in BASE.check,
// written before it starts the helper: `exact`, or `screen REASON`.
import { CHANNEL } from '../../../src/core/enrollment/layout.js';
import type { ShellPlace } from '../shell.js';
import { SignalShell } from '../signal/signal.js';
import { readShellFile } from '../signal/signal-files.js';

/** The longest reason kept from BASE.check. */
const MAX_REASON = 300;

/** What BASE.check says (pure): exact, or the screen check and why. */
export function parseCheck(data: Buffer | undefined): { exact: boolean; reason?: string } {
  const text = data?.toString('utf8') ?? '';
  if (text === 'exact\n') return { exact: true };
  const m = /^screen (.+)\n$/.exec(text);
  const reason = m
    ? m[1]!.replace(/[\x00-\x1f\x7f]/g, ' ').slice(0, MAX_REASON)
    : 'the snippet did not say which check it could load';
  return { exact: false, reason };
}

/** The bash pane's shell, exact or not as its snippet found. */
export function bashShell(place: ShellPlace): SignalShell {
  const { exact, reason } = parseCheck(readShellFile(place.base + CHANNEL.check));
  return new SignalShell('bash', place, { notices: exact, asks: exact, exact, checkReason: reason });
}
