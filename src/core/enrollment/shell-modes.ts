// The shell's modes file in its channel (`BASE.mode`: `M ask|auto SANDBOX[ quiet]\n`): written by a
// signal-woken shell at each prompt, and by zsh's helper from the modes zsh reports; read by the
// helper and, for listings, by the broker (src/broker/registry.ts) without asking the helper.
// `quiet` (bash, fish): TMUX_RUN_NOTIFY turns the shell's notices off, so the helper does not wake
// the shell for them.
import { closeSync, constants, openSync, readFileSync } from 'node:fs';

/** The shell's approval mode as of its last prompt (`unknown` before its first). */
export type ApproveMode = 'ask' | 'auto' | 'unknown';
/** The values TMUX_RUN_SANDBOX takes; anything else refuses every run. */
export const SANDBOX_VALUES = ['off', 'workspace', 'workspace+net', 'read-only'] as const;
export type SandboxValue = (typeof SANDBOX_VALUES)[number];
/** A pane's TMUX_RUN_SANDBOX as listings show it: its value, `invalid` for anything else, `unknown` before its first prompt. */
export type SandboxShown = SandboxValue | 'invalid' | 'unknown';

/** Reads one of the shell's files, or undefined when it is not there. */
export function readShellFile(path: string): Buffer | undefined {
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** Parses BASE.mode (pure): the shell's approval mode and sandbox as of its last prompt. */
export function parseModes(data: Buffer | undefined): { mode: ApproveMode; sandbox: SandboxShown; quiet?: true } {
  const m = /^M (ask|auto) (off|workspace|workspace\+net|read-only|invalid)( quiet)?\n/.exec(
    data?.toString('utf8') ?? '',
  );
  if (!m) return { mode: 'unknown', sandbox: 'unknown' };
  return { mode: m[1] as ApproveMode, sandbox: m[2] as SandboxShown, ...(m[3] ? { quiet: true as const } : {}) };
}
