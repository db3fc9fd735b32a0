// bash's loadable builtin `_tmux_run_line`: what readline's line holds, read inside the person's
// bash, and readline's own redisplay and key reading for notices and ask mode (FACTS.md, "Checked
// on 2026-12-03"). shell/tmux-run.bash loads it with `enable -f FILE _tmux_run_line` from the
// install's own dist/generated/ (its owner and mode checked first) and calls it from its WINCH
// trap, which bash runs while readline waits for a key.
//
//   _tmux_run_line build ID              status 0 when this file was built for build ID, else 1
//   _tmux_run_line state                 the line, as a status (LINE_* below): 0 idle and empty
//   _tmux_run_line notice SERIAL TEXT    draws TEXT above the prompt, which it redraws whole; a
//                                        notice of the same SERIAL (the snippet counts prompts)
//                                        replaces the one before it
//   _tmux_run_line snapshot FILE NONCE PWD [ENTRY...]
//                                        writes the snapshot (helper/shell/snapshot.ts) to a new
//                                        FILE (O_EXCL, 0600): NONCE, PWD, the exported variables
//                                        as bash would pass them to a command, then ENTRY...
//   _tmux_run_line answer FILE LINE      writes the answer file (0600): LINE and its newline, and
//                                        after a K line the two empty prompt fields of an exact check
//   _tmux_run_line ask SECONDS FILE NEEDLE PID LINE...
//                                        draws LINE... below the line, reads one key (ANSWER_*),
//                                        then puts the line back as it was; withdrawn when FILE
//                                        no longer holds the line NEEDLE or process PID is gone
//
// No bash headers: the few declarations below are bash's own (builtins.h, command.h), and every
// readline symbol is weak, checked by the load function: a bash that does not export one refuses
// to load this (`enable -f` fails) and the snippet falls back to the screen check.
// Built with the files of bash-line.h by scripts/build-native.mjs into generated/ and
// dist/generated/ (not committed), with -DTMUX_RUN_BUILD="..." the build's id
// (generated/build-id.cjs).
#define _GNU_SOURCE
#include "bash-line.h"

#include <string.h>

#ifndef TMUX_RUN_BUILD
#error "build with -DTMUX_RUN_BUILD=\"<build id>\" (scripts/build-native.mjs)"
#endif

// Every readline symbol the builtin's files use, present (weak ones are NULL when bash lacks them).
static int symbols_present(void) {
  return &rl_line_buffer && &rl_end && &rl_point && &rl_readline_state && &rl_explicit_arg &&
         &rl_prompt && &rl_outstream && &rl_instream && &_rl_last_v_pos && &_rl_vis_botlin &&
         &_rl_screenwidth && get_current_prompt_level && rl_on_new_line && rl_forced_update_display &&
         rl_read_key && rl_stuff_char && &export_env && maybe_make_export_env;
}

// The line as a status: LINE_EMPTY only when readline waits for a command key on an empty line.
static int line_state(void) {
  unsigned long s = rl_readline_state;
  if ((s & RL_STATE_TERMPREPPED) && (s & RL_STATE_SEARCHING)) return LINE_SEARCH;
  if (!(s & RL_STATE_TERMPREPPED) || !(s & RL_STATE_READCMD)) {
    // A pending prefix key clears READCMD while readline waits for the rest of it.
    return (s & RL_STATE_TERMPREPPED) && (s & RL_STATE_UNDER_WAY) ? LINE_PENDING : LINE_NOT_READING;
  }
  if ((s & RL_STATE_UNDER_WAY) || rl_explicit_arg) return LINE_PENDING;
  if (get_current_prompt_level() != 1) return LINE_CONTINUATION;
  if (rl_end != 0 || (rl_line_buffer && rl_line_buffer[0] != '\0')) return LINE_TYPED;
  return LINE_EMPTY;
}

// The builtin: its first word says which of the commands above.
static int tmux_run_line(WORD_LIST *list) {
  if (!list) return USAGE;
  const char *cmd = list->word->word;
  WORD_LIST *rest = list->next;
  if (strcmp(cmd, "build") == 0) return rest && strcmp(rest->word->word, TMUX_RUN_BUILD) == 0 ? 0 : 1;
  if (strcmp(cmd, "state") == 0) return line_state();
  if (strcmp(cmd, "snapshot") == 0) return line_snapshot(rest);
  if (strcmp(cmd, "answer") == 0) return line_answer(rest);
  // Drawing needs readline at its prompt (a trap also runs between commands, and before readline
  // first started: nothing to redraw then, and its streams may not be set).
  if (!rl_outstream || !rl_instream || !(rl_readline_state & RL_STATE_TERMPREPPED)) return LINE_NOT_READING;
  if (strcmp(cmd, "notice") == 0) return rest && rest->next ? line_notice(rest->word->word, rest->next->word->word) : USAGE;
  if (strcmp(cmd, "ask") == 0) return rest ? line_ask(rest) : USAGE;
  return USAGE;
}

// bash's check at `enable -f`: 0 refuses to load (a readline symbol is missing).
int _tmux_run_line_builtin_load(char *name) {
  (void)name;
  return symbols_present();
}

static char *const doc[] = {"tmux-run's view of readline's line (see shell/tmux-run.bash).", NULL};

struct builtin _tmux_run_line_struct = {
    "_tmux_run_line", tmux_run_line, BUILTIN_ENABLED, doc, "_tmux_run_line build|state|snapshot|answer|notice|ask ...", 0,
};
