// The registry directory and what lives in it: where it is, how it is checked (like tmux's), and
// the names of the files enrollment puts there. shell/tmux-run.zsh follows the same rules;
// test/unit/shell-snippet.test.ts proves it agrees.
import { lstatSync, mkdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { ErrorCode } from '../protocol/errors.js';

/** The registry directory's mode: its owner only. Any group or other bit makes it unsafe. */
export const REGISTRY_DIR_MODE = 0o700;

/** An enrollment's record (`ENROLLMENT.json`, 0600) and its helper's socket (`ENROLLMENT.sock`). */
export const RECORD_SUFFIX = '.json';
export const SOCKET_SUFFIX = '.sock';
/** The helper's run journal (`ENROLLMENT.runs`, 0600; src/core/enrollment/run-journal.ts). */
export const JOURNAL_SUFFIX = '.runs';
/** The pane's status as its helper last published it (`ENROLLMENT.status`, 0600; src/core/enrollment/pane-status.ts). */
export const STATUS_SUFFIX = '.status';

/**
 * How often a signal-woken shell is woken again while it has not answered: the helper's request
 * to bash or fish (helper/shell/signal/signal.ts), and a broker's wake of a dormant pane
 * (src/broker/wake.ts). A signal can be lost to the shell's handler: bash notes a WINCH that
 * arrives while its trap runs, but readline runs traps only when a read is interrupted, so that
 * one waits for the next key. Each request is answered once, so waking the shell again is harmless.
 */
export const REWAKE_MS = 150;

/** A record's file name: the enrollment generation (32 hex) and the record suffix. */
export const isRecordName = (name: string): boolean => /^[a-f0-9]{32}\.json$/.test(name);

export const recordPath = (dir: string, enrollmentGeneration: string): string =>
  join(dir, `${enrollmentGeneration}${RECORD_SUFFIX}`);

export const socketPath = (dir: string, enrollmentGeneration: string): string =>
  join(dir, `${enrollmentGeneration}${SOCKET_SUFFIX}`);

export const journalPath = (dir: string, enrollmentGeneration: string): string =>
  join(dir, `${enrollmentGeneration}${JOURNAL_SUFFIX}`);

export const statusPath = (dir: string, enrollmentGeneration: string): string =>
  join(dir, `${enrollmentGeneration}${STATUS_SUFFIX}`);

/** Where the status is written before it is renamed into place (left behind by a helper killed mid-write). */
export const statusTmpPath = (dir: string, enrollmentGeneration: string): string =>
  join(dir, `.${enrollmentGeneration}${STATUS_SUFFIX}.tmp`);

/**
 * The shell channel: the snippet picks a path `DIR/ch.PID.RANDOM` (the record's `channel`) and
 * makes beside it two FIFOs (the helper's requests, the shell's replies), the snapshot file the
 * shell writes for each run, and the helper's log. A signal-woken shell (bash, fish: see
 * helper/shell/signal/signal.ts) has no FIFOs: the helper's messages (`.msg`, written as `.new` and
 * renamed), the shell's answer (`.ans`) and the shell's modes (`.mode`) are plain 0600 files.
 * zsh's helper writes `.mode` too, from the modes the shell reports at each prompt, so a listing
 * reads every shell's modes from the same file.
 */
export const CHANNEL_PREFIX = 'ch.';
export const CHANNEL = {
  request: '.req',
  reply: '.rsp',
  snapshot: '.env',
  log: '.log',
  traps: '.trap',
  message: '.msg',
  messageTemp: '.new',
  /** The message file moved aside before the next is renamed in (bash, fish: helper/shell/signal/signal-files.ts). */
  messageOld: '.old',
  answer: '.ans',
  modes: '.mode',
  /** bash only: the line check the shell could load (shell/tmux-run.bash, helper/shell/bash/bash.ts). */
  check: '.check',
  /** bash and fish: a broker's request to a dormant pane's shell, U (start the helper again) or X (revoked): src/core/enrollment/dormant.ts. */
  wake: '.wake',
} as const;
/** Every suffix of any shell's channel (what a cleanup removes). */
export const CHANNEL_SUFFIXES: readonly string[] = Object.values(CHANNEL);
/** The suffixes zsh's channel uses (shell/tmux-run.zsh). */
export const ZSH_CHANNEL_SUFFIXES: readonly string[] = [
  CHANNEL.request,
  CHANNEL.reply,
  CHANNEL.snapshot,
  CHANNEL.log,
  CHANNEL.traps,
  // Written by zsh's helper (helper/shell/zsh/zsh.ts) from the shell's M lines, for listings.
  CHANNEL.modes,
];
/** The suffixes a signal-woken shell's channel uses (shell/tmux-run.bash, shell/tmux-run.fish). */
export const SIGNAL_CHANNEL_SUFFIXES: readonly string[] = [
  CHANNEL.message,
  CHANNEL.messageTemp,
  CHANNEL.messageOld,
  CHANNEL.answer,
  CHANNEL.modes,
  CHANNEL.snapshot,
  CHANNEL.log,
  CHANNEL.traps,
  CHANNEL.wake,
];
/** The suffixes bash's channel uses (shell/tmux-run.bash): the signal-woken ones and its check. */
export const BASH_CHANNEL_SUFFIXES: readonly string[] = [...SIGNAL_CHANNEL_SUFFIXES, CHANNEL.check];

/** Every file of the channel whose path prefix is `base`. */
export const channelFiles = (base: string): string[] => CHANNEL_SUFFIXES.map((s) => base + s);

/**
 * A registry directory that is missing (no pane was ever enrolled: nothing to list) or unsafe or
 * unusable (`unsafe`); the message says what is wrong and how to fix it.
 */
export class RegistryDirError extends Error {
  readonly code = 'unsafe_directory' satisfies ErrorCode;
  constructor(
    message: string,
    readonly reason: 'missing' | 'unsafe',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True when `path` is a directory (not a symlink) owned by `uid`. */
function ownDirectory(path: string, uid: number): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && st.uid === uid;
  } catch {
    return false;
  }
}

/**
 * Where the registry lives: TMUX_RUN_DIR, else $XDG_RUNTIME_DIR/tmux-run, else (XDG_RUNTIME_DIR
 * unset, as in the environment many MCP clients give their servers) /run/user/UID/tmux-run when
 * that runtime directory exists, else /tmp/tmux-run-UID. shell/tmux-run.zsh decides the same way.
 */
export function resolveRegistryDir(
  env: NodeJS.ProcessEnv = process.env,
  uid: number = process.getuid?.() ?? 0,
  isOwnDirectory: (path: string, uid: number) => boolean = ownDirectory,
): string {
  if (env.TMUX_RUN_DIR) return env.TMUX_RUN_DIR;
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'tmux-run');
  if (isOwnDirectory(`/run/user/${uid}`, uid)) return `/run/user/${uid}/tmux-run`;
  return `/tmp/tmux-run-${uid}`;
}

/**
 * Checks that `dir` is a real directory (not a symlink), owned by this user, with no group or
 * other access; creates it 0700 when `create` and it is missing. Throws RegistryDirError otherwise.
 */
export function checkRegistryDir(dir: string, opts: { create?: boolean } = {}): string {
  if (!isAbsolute(dir)) {
    // Records name sockets by this path: a relative one would mean something else elsewhere.
    throw new RegistryDirError(`the directory ${dir} is not an absolute path; set TMUX_RUN_DIR to one`, 'unsafe');
  }
  let st;
  try {
    st = lstatSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && opts.create) {
      try {
        mkdirSync(dir, { mode: REGISTRY_DIR_MODE });
      } catch (e2) {
        throw new RegistryDirError(`cannot create the directory ${dir}: ${(e2 as Error).message}`, 'unsafe', {
          cause: e2,
        });
      }
      st = lstatSync(dir);
    } else if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new RegistryDirError(`the directory ${dir} does not exist (no pane has been enrolled yet)`, 'missing', {
        cause: e,
      });
    } else {
      throw new RegistryDirError(`cannot inspect ${dir}: ${(e as Error).message}`, 'unsafe', { cause: e });
    }
  }
  if (st.isSymbolicLink()) {
    throw new RegistryDirError(`${dir} is a symlink; refusing to use it (remove it or set TMUX_RUN_DIR)`, 'unsafe');
  }
  if (!st.isDirectory()) {
    throw new RegistryDirError(`${dir} is not a directory (remove it or set TMUX_RUN_DIR)`, 'unsafe');
  }
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new RegistryDirError(
      `${dir} belongs to uid ${st.uid}, not to you (uid ${uid}); remove it or set TMUX_RUN_DIR`,
      'unsafe',
    );
  }
  if ((st.mode & 0o777 & ~REGISTRY_DIR_MODE) !== 0) {
    throw new RegistryDirError(
      `${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)}); run: chmod 700 '${dir}'`,
      'unsafe',
    );
  }
  return dir;
}
