// The sandbox's terms (types and values only): the plan of a run's walls and the facts gathered
// at dispatch, which the policy (the plan), bwrap-args.ts (the arguments) and writable.ts (the
// writable trees) share. What TMUX_RUN_SANDBOX takes is the shell's side
// (src/core/enrollment/shell-modes.ts), passed on from here.
import type { SandboxValue } from '../../src/core/enrollment/shell-modes.js';

export { SANDBOX_VALUES, type SandboxShown, type SandboxValue } from '../../src/core/enrollment/shell-modes.js';

/** The shell parameters the snapshot carries for the sandbox (`:NAME=value` entries), by name. */
export type ShellParams = Readonly<Record<string, string | undefined>>;

/** What the helper itself knows: its registry directory, the tmux socket of its record, the audit trail. */
export interface OwnFacts {
  registryDir: string;
  tmuxSocket: string;
  /** A far helper's forward directory (docs/remote.md): its sockets lead to the local relay. */
  forwardDir?: string;
  auditPath: string;
  /** The user's home directory as the password database has it. */
  userHome: string;
  uid: number;
}

export interface SandboxPlan {
  value: Exclude<SandboxValue, 'off'>;
  net: boolean;
  cwd: string;
  /** Writable trees: the cwd's and TMUX_RUN_SANDBOX_WRITE's, as given (none for read-only). */
  writable: { path: string; from: 'cwd' | 'write' }[];
  hidden: string[];
  readOnly: string[];
  /** Home directories and $ZDOTDIR: no writable tree may be or hold one. */
  homes: string[];
  /** Git directories named outside the tree ($GIT_DIR), protected like the ones found. */
  gitDirs: string[];
}

export type Refusal = { ok: false; message: string };

/** A path as found at dispatch: its real path (symlinks resolved; for a missing one, its parent's) and kind. */
export interface PathFact {
  real: string;
  kind: 'dir' | 'file' | 'missing';
}
/** An entry of a git directory as lstat sees it (a symlink is not followed). */
export type EntryKind = 'dir' | 'file' | 'link' | 'missing';
/** A git directory found at dispatch (real path). */
export interface GitRepo {
  dir: string;
}
export interface SandboxFacts {
  paths: ReadonlyMap<string, PathFact>;
  repos: readonly GitRepo[];
  /** `.git` files (gitlinks: worktrees, submodules) and `.git` symlinks found, by real path of the entry. */
  gitLinks: readonly { path: string; symlink: boolean }[];
  /** Set when the search for repositories gave up (how many directories it read). */
  searchGaveUp?: number;
}
