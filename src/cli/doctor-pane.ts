// doctor's `this-pane` line: run in a pane whose bash refused to enroll where the person may not
// have seen why (ble.sh, once attached, hides what .bashrc writes to stderr), doctor says it.
// The snippet exports TMUX_RUN_REFUSED="PANE SHELLPID REASON" (shell/tmux-run.bash,
// _tmux_run_ble_refuse); the line is shown only in that pane, under that shell.
import { procStat } from '../core/os/proc.js';

/** One of doctor's lines (its Check). */
type Line = { check: string; ok: boolean; detail: string; fix: string | null };

/** True when `pid` is this process's parent, or its parent's, and so on (a few levels up). */
function isAncestor(pid: number): boolean {
  let at = process.ppid;
  for (let i = 0; i < 16 && at > 1; i++) {
    if (at === pid) return true;
    const st = procStat(at);
    if (st === undefined) return false;
    at = st.ppid;
  }
  return false;
}

/** The pane's refusal, when doctor runs in the pane and under the shell that refused; else nothing. */
export function checkThisPane(env: NodeJS.ProcessEnv): Line | undefined {
  const m = /^(%[0-9]+) ([0-9]+) (.+)$/s.exec(env.TMUX_RUN_REFUSED ?? '');
  if (!m || m[1] !== env.TMUX_PANE || !isAncestor(Number(m[2]))) return undefined;
  return {
    check: 'this-pane',
    ok: false,
    detail: `pane ${m[1]} (bash pid ${m[2]}) is not enrolled: ${m[3]!.replace(/[\x00-\x1f\x7f]/g, ' ')}`,
    fix: 'as the reason says, then source the snippet again',
  };
}
