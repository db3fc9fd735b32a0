// Why the shell's (or the person's) answer refuses a run: its code and a message a person understands.
import type { ErrorCode } from '../../src/core/protocol/errors.js';
import type { AskResult } from '../shell/shell.js';

/** How long the shell's line editor has to answer before the shell counts as busy. */
export const ASK_TIMEOUT_MS = 1000;

/** Why the shell's answer refuses the run; `byPerson` when the person at the pane decided. */
export function askRefusal(answer: Extract<AskResult, { ok: false }>): {
  code: ErrorCode;
  message: string;
  byPerson?: boolean;
} {
  if (answer.reason === 'editor_not_empty') {
    return {
      code: 'editor_not_empty',
      message: "the person has text in the shell's line editor, left untouched (retry later)",
    };
  }
  if (answer.reason.startsWith('context:') || answer.reason === 'pending_input') {
    return {
      code: 'editor_not_empty',
      message: `the shell's line editor is not at an empty prompt (${answer.reason})`,
    };
  }
  if (answer.reason.startsWith('screen:')) {
    return {
      code: 'editor_not_empty',
      message: `the screen check could not confirm an empty line at the shell's prompt (${answer.reason.slice(7)}); retry later`,
    };
  }
  if (answer.reason === 'busy') {
    return { code: 'shell_busy', message: 'the shell is running a command line (retry when its prompt is back)' };
  }
  if (answer.reason === 'approval_unavailable') {
    return {
      code: 'approval_unavailable',
      message:
        "the person asked to approve each run (TMUX_RUN_APPROVE=ask), and this pane's shell cannot ask them without disturbing their line, so no run starts there",
    };
  }
  if (answer.reason === 'closed') return { code: 'shell_exited', message: 'the enrolled shell has exited' };
  if (answer.reason === 'denied') {
    return { code: 'denied', message: 'the person at the pane refused the run (ask mode)', byPerson: true };
  }
  if (answer.reason === 'approval_timeout') {
    return {
      code: 'approval_timeout',
      message: `the person at the pane did not answer within ${answer.timeoutS ?? '?'} s (ask mode)`,
      byPerson: true,
    };
  }
  if (answer.reason === 'timeout') {
    return {
      code: 'shell_busy',
      message: `the shell's line editor did not answer within ${ASK_TIMEOUT_MS} ms (it is busy)`,
    };
  }
  return { code: 'internal_error', message: `the shell could not describe its state (${answer.reason})` };
}
