// The answer to a ping: who this helper is and where its pane stands (tmux_enrolled_panes, panes).
import { readlinkSync } from 'node:fs';
import type { Reply } from '../src/core/protocol/messages.js';
import type { EnrollmentRecord } from '../src/core/enrollment/record.js';
import type { Shell } from './shell/shell.js';

/** The pong for this helper: its pid, its shell's state and cwd, the queue, the shell's modes. */
export function pongOf(
  record: EnrollmentRecord,
  // promptRefused: the screen check's shells (helper/shell/screen/prompt-probe.ts), once found.
  shell: Pick<Shell, 'mode'> & Partial<Pick<Shell, 'sandbox'>> & { readonly promptRefused?: string },
  state: Extract<Reply, { type: 'pong' }>['state'],
  queued: number,
): Reply {
  let cwd: string | null;
  try {
    cwd = readlinkSync(`/proc/${record.shell_pid}/cwd`);
  } catch {
    cwd = null;
  }
  return {
    type: 'pong',
    pid: process.pid,
    shell_pid: record.shell_pid,
    state,
    cwd,
    queued,
    generation: record.generation,
    mode: shell.mode,
    sandbox: shell.sandbox ?? 'unknown',
    ...(shell.promptRefused ? { prompt_refused: shell.promptRefused } : {}),
  };
}
