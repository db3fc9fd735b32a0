// What a signal-woken shell (helper/shell/signal/signal.ts) can do beyond the common part: bash
// with or without its builtin (helper/shell/bash/bash.ts), fish (helper/shell/fish/fish.ts).
/** What a signal-woken shell can do beyond the common part. */
export interface SignalShellTraits {
  /** It draws notices (N lines); bash only with its builtin. */
  notices: boolean;
  /** It can ask the person in ask mode (else it answers B approval_unavailable itself). */
  asks: boolean;
  /** Its handler knows the line exactly (bash with its builtin): no screen check after a K. */
  exact?: boolean;
  /** A word after the first R line's two ids (bash: `load`, the builtin passed the helper's checks: load it). */
  readyWord?: string;
  /** Why the check is the screen's when the shell could have had an exact one (listings, doctor). */
  checkReason?: string;
  /**
   * Its answer may carry the prompt as rendered earlier at the same prompt (fish: once per prompt,
   * again after a repaint it made): a screen check that refuses is made once more with the prompt
   * rendered fresh (Q NONCE fresh), in what is left of the ask's bound.
   */
  cachesPrompt?: boolean;
  /**
   * Its handler changes nothing on the screen from the moment it writes the snapshot until it has
   * answered (fish: its reader takes no keys while a handler runs, and a handler that drew a notice
   * answers context:redrawing instead): the screen read begins when the snapshot appears, beside
   * the rest of the answer, and is the check's first read.
   */
  readsEarly?: boolean;
  /**
   * The signal that wakes it (SIGWINCH unless said). fish: SIGURG, which its handler takes beside
   * SIGWINCH (shell/tmux-run.fish): ignored by default as WINCH is, but no handler of fish's own
   * or the person's listens to it, so a wake makes fish neither repaint its prompt (fish's own
   * WINCH handler does, under tmux) nor run the person's WINCH handlers (docs/shells.md).
   */
  wakeSignal?: WakeSignal;
}

/** The signals a shell may be woken by: both ignored by default (a shell with no handler is never harmed). */
export type WakeSignal = 'SIGWINCH' | 'SIGURG';
