// The shells the harness starts: the prompt they draw and the completion marker they put in
// the pane title after every command, which is how Pane.run() knows a command finished.

/** The prompt every harness shell shows (zsh via the harness zshrc, bash via PS1). */
export const DEFAULT_PROMPT = '$ ';
/** The zshrc written when newPane gets none: a prompt and nothing else. */
export const DEFAULT_ZSHRC = "PROMPT='$ '\n";

// Written to $ZDOTDIR/.zshenv: interactive zsh reports "prompt number N after status S" in the
// pane title from precmd, so run() knows exactly when a command finished without reading or
// changing the command line. The title never shows on the screen.
export const ZSHENV = `# tmux-run test harness: completion marker in the pane title (invisible on screen)
if [[ -o interactive ]]; then
  typeset -g __harness_prompts=0 __harness_id
  __harness_id=$(</proc/sys/kernel/random/uuid) 2>/dev/null || __harness_id=$$-$RANDOM
  PROMPT='$ '
  __harness_precmd() {
    local s=$?
    (( ++__harness_prompts ))
    print -rn -- $'\\e]2;harness:'"\${__harness_id}:\${__harness_prompts}:\${s}"$'\\a'
  }
  typeset -ga precmd_functions
  precmd_functions=(__harness_precmd \${precmd_functions:#__harness_precmd})
fi
`;

// The same marker for bash panes, taken from the environment by bash itself.
export const BASH_PROMPT_COMMAND =
  '__harness_s=$?; __harness_prompts=$((__harness_prompts+1)); ' +
  ': "${__harness_id:=$(cat /proc/sys/kernel/random/uuid 2>/dev/null || echo $$-$RANDOM)}"; ' +
  'printf "\\033]2;harness:%s:%s:%s\\007" "$__harness_id" "$__harness_prompts" "$__harness_s"';

const MARKER = /^harness:([^:]+):(\d+):(\d+)$/;

export interface Marker {
  shell: string;
  count: number;
  status: number;
}

// "harness:ID:N:S" from the pane title: prompt N of the shell started as ID, after a command with status S.
export function parseMarker(title: string): Marker | undefined {
  const m = MARKER.exec(title);
  if (m === null || m[1] === undefined || m[2] === undefined || m[3] === undefined) return undefined;
  return { shell: m[1], count: Number(m[2]), status: Number(m[3]) };
}

// A later prompt than before: a higher count, or a new shell (after `exec zsh`, say).
export function isLater(now: Marker, before: Marker): boolean {
  return now.shell !== before.shell || now.count > before.count;
}
