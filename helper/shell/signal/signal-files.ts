// The files of the signal-woken channel (the protocol: helper/shell/signal/signal.ts): the helper's
// messages written whole, the shell's files read without following links, and the answer and
// mode files parsed (pure).
import { closeSync, constants, openSync, renameSync, writeSync } from 'node:fs';
import { CHANNEL } from '../../../src/core/enrollment/layout.js';
import { removeQuietly } from '../../../src/core/enrollment/record.js';
import { exchangePaths } from '../../../src/core/os/native-spawn.js';
import type { RenderedPrompt } from '../screen/screen.js';
import type { WakeSignal } from './signal-traits.js';

/**
 * Writes BASE.msg whole: to BASE.new (0600, made anew), then swapped with BASE.msg in one step
 * (renameat2 RENAME_EXCHANGE, src/core/os/native-spawn.ts), the old one then at BASE.new and removed
 * off the request's way. On ext4 a rename over an existing file writes the new file's data out
 * first (auto_da_alloc): 0.4 ms of every request's wake here, against 0.012 for the swap. Where
 * it cannot swap (no addon, a filesystem that cannot), the old one is moved aside to BASE.old and
 * the new one renamed in (0.06 ms): for that moment there is no BASE.msg, which every reader takes
 * as nothing new (fish alone then prints a warning of its own, should its handler read just then).
 * The first message is renamed in.
 */
export function writeMessages(base: string, lines: readonly string[]): void {
  const tmp = base + CHANNEL.messageTemp;
  const msg = base + CHANNEL.message;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, lines.map((l) => l.replace(/[\r\n]/g, ' ') + '\n').join(''));
  } finally {
    closeSync(fd);
  }
  if (exchangePaths(tmp, msg)) {
    setImmediate(() => removeQuietly(tmp));
    return;
  }
  const old = base + CHANNEL.messageOld;
  let aside = false;
  try {
    renameSync(msg, old);
    aside = true;
  } catch {
    // none yet
  }
  renameSync(tmp, msg);
  if (aside) setImmediate(() => removeQuietly(old));
}

export { readShellFile } from '../../../src/core/enrollment/shell-modes.js';

/** One complete answer read from BASE.ans: its line, and for K the prompt it rendered. */
export type Answer = { line: string; prompt?: RenderedPrompt };

/**
 * Parses BASE.ans (pure): undefined while it is incomplete (the shell is still writing it) or
 * not an answer at all. K lines carry PROMPT \0 RIGHTPROMPT \0 after their newline.
 */
export function parseAnswer(data: Buffer): Answer | undefined {
  const text = data.toString('utf8');
  const nl = text.indexOf('\n');
  if (nl < 0) return undefined;
  const line = text.slice(0, nl);
  if (!/^[KBAD] [0-9a-f]{32}(?: [!-~]+)?$/.test(line)) return undefined;
  if (!line.startsWith('K ')) return { line };
  const fields = text.slice(nl + 1).split('\0');
  if (fields.length < 3) return undefined;
  const prefixes = fields.slice(2, -1);
  return { line, prompt: { prompt: fields[0]!, right: fields[1]!, ...(prefixes.length > 0 ? { prefixes } : {}) } };
}

export { parseModes } from '../../../src/core/enrollment/shell-modes.js';

/** Removes the shell's answer and snapshot files (before a new request: a late one is never taken for it). */
export function removeAnswerFiles(base: string): void {
  for (const suffix of [CHANNEL.answer, CHANNEL.snapshot]) removeQuietly(base + suffix);
}

/** Sends the shell `signal` (SIGWINCH, fish SIGURG), the channel's wake (nothing when it is gone: the helper's watch ends the enrollment). */
export function wakeShell(pid: number, signal: WakeSignal = 'SIGWINCH'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}
