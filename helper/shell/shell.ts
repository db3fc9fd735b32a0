// The one interface the helper's coordinators (helper/main.ts, helper/queue/dispatch.ts,
// helper/service.ts) talk to the enrolled shell through. It names no implementation: the switch
// that picks a shell's module by name is helper/shell-for.ts, above this folder, and the modules
// (helper/shell/zsh/, helper/shell/bash/, helper/shell/fish/) import this file, never the switch.
import type { RunDetails } from './approval.js';
import type { Snapshot } from './snapshot.js';

export type { Snapshot } from './snapshot.js';

import type { EditorCheck, ShellName } from '../../src/core/enrollment/record.js';
import type { ApproveMode, SandboxShown } from '../../src/core/enrollment/shell-modes.js';

export { SHELL_NAMES, type EditorCheck, type ShellName } from '../../src/core/enrollment/record.js';
export type { ApproveMode, SandboxShown } from '../../src/core/enrollment/shell-modes.js';

/**
 * How a run was let through: `auto` (the shell does not ask), `yes` (the person pressed y),
 * `always` (the person pressed a), `remembered` (a earlier, for this exact digest).
 */
export type Approval = 'auto' | 'yes' | 'always' | 'remembered';
/** `answeredAt` (ok): when the editor's answer arrived (src/core/protocol/trace.ts clock), before the snapshot was read. */
export type AskResult =
  | { ok: true; snapshot: Snapshot; approval: Approval; answeredAt?: number }
  | { ok: false; reason: string; timeoutS?: number };

export interface AskOptions {
  /** The run the person is asked about, when the shell asks. */
  run?: RunDetails;
  /** Called when the shell starts asking the person (the wait is then theirs, not the editor's). */
  onAwaiting?: () => void;
  /** Aborting withdraws the question (the shell removes it) and resolves `withdrawn`. */
  signal?: AbortSignal;
}

/** The enrolled shell, as the helper sees it. */
export interface Shell {
  readonly name: ShellName;
  readonly editorCheck: EditorCheck;
  /** Why the check is `screen` where an exact one was possible (bash without its builtin). */
  readonly editorCheckReason?: string | undefined;
  /** The shell's mode as its last prompt reported it (informational: the shell decides each run). */
  readonly mode: ApproveMode;
  /** TMUX_RUN_SANDBOX as of the shell's last prompt (informational). */
  readonly sandbox: SandboxShown;
  /** Called once when the shell's side of the channel is gone. */
  onclose?: () => void;
  /** Called once when the screen check finds it cannot serve the shell's prompt (helper/shell/screen/prompt-probe.ts). */
  onPromptRefused?: (reason: string) => void;
  /** Opens the channel the shell made; throws (with the errno's code) when it cannot. */
  open(): void;
  /** Tells the shell this helper is ready, with the pane's listed generation and the enrollment generation. */
  ready(generation: string, enrollment: string): void;
  /** Tells the shell enrollment failed; resolves once told (or after a short bound). */
  fail(reason: string): Promise<void>;
  /** A one-line notice for the pane; dropped by a shell that cannot draw one, or has them off. */
  notify(text: string): void;
  /** Tells the shell its enrollment was revoked. */
  revoked(): void;
  /** Says TEXT once in the pane, notices on or off (a setting the helper could not use: TMUX_RUN_IDLE). */
  tell(text: string): void;
  /** Tells the shell this helper goes dormant (helper/dormancy.ts); resolves once told (or after a short bound). */
  dormant(): Promise<void>;
  /** The run last asked about is over, its reply sent: what readies the next ask is done now, off that run's way. */
  afterRun?(): void;
  /** Asks whether the shell is idle with an empty line; on yes, with the snapshot it wrote. */
  ask(timeoutMs: number, opts?: AskOptions): Promise<AskResult>;
  close(): void;
}

/**
 * Where the screen check reads a pane whose tmux is not on this host: at the far end of a
 * `tmux-run ssh` session the pane is the local side's, and the session's relay reads it
 * (helper/remote/far-screen.ts, src/remote/relay-screen.ts). A local pane has none: its own tmux
 * is asked, with a client held for the read (helper/shell/screen/pane-screen.ts); a far pane's
 * relay holds one the same way when told (`hold`).
 */
export interface ScreenSource {
  /** What tmux printed for the screen check's questions about the pane (src/core/os/screen-questions.ts). */
  read(): Promise<string>;
  /** A read is coming (a request went out, or a run is over and the next may come): hold a tmux client for it. */
  hold?(): void;
}

/** What a shell's module needs to know about the pane (from the helper's arguments and environment). */
export interface ShellPlace {
  /** The channel's path prefix (the record's `channel`). */
  base: string;
  shellPid: number;
  tmuxSocket: string;
  paneId: string;
  /** Where the screen check reads the pane from when its tmux is elsewhere (a far end's pane); absent: the pane's tmux here. */
  screen?: ScreenSource;
}
