// What bash's loadable builtin's files share (built together into bash-line.so by
// scripts/build-native.mjs): bash-line.c is the builtin and readline's line state,
// bash-line-draw.c draws notices and questions with readline's redisplay, bash-line-files.c
// writes the snapshot and the answer file. Hidden: a name binds inside the builtin, never to one
// of bash's own (bash exports its symbols).
#ifndef TMUX_RUN_BASH_LINE_H
#define TMUX_RUN_BASH_LINE_H
#include <stdio.h>

#define LINE_PART __attribute__((visibility("hidden")))

// bash's declarations (builtins.h, command.h of bash 4.4 to 5.3).
typedef struct word_desc {
  char *word;
  int flags;
} WORD_DESC;
typedef struct word_list {
  struct word_list *next;
  WORD_DESC *word;
} WORD_LIST;
typedef int sh_builtin_func_t(WORD_LIST *);
struct builtin {
  char *name;
  sh_builtin_func_t *function;
  int flags;
  char *const *long_doc;
  const char *short_doc;
  char *handle;
};
#define BUILTIN_ENABLED 0x01

// What bash exports of readline (nm -D /bin/bash); weak, so that a missing one is NULL.
extern char *rl_line_buffer __attribute__((weak));
extern int rl_end __attribute__((weak));
extern int rl_point __attribute__((weak));
extern unsigned long rl_readline_state __attribute__((weak));
extern int rl_explicit_arg __attribute__((weak));
extern char *rl_prompt __attribute__((weak));
extern FILE *rl_outstream __attribute__((weak));
extern FILE *rl_instream __attribute__((weak));
extern int _rl_last_v_pos __attribute__((weak));
extern int _rl_vis_botlin __attribute__((weak));
extern int _rl_screenwidth __attribute__((weak));
extern int get_current_prompt_level(void) __attribute__((weak));
extern int rl_on_new_line(void) __attribute__((weak));
extern int rl_forced_update_display(void) __attribute__((weak));
extern int rl_read_key(void) __attribute__((weak));
extern int rl_stuff_char(int) __attribute__((weak));
extern char **export_env __attribute__((weak));
// The signal readline's handler caught and has not handled yet (readline 8: it handles it when its
// key loop goes on). Optional: without it ^C during a question waits for the question's end.
extern int _rl_caught_signal __attribute__((weak));
extern void maybe_make_export_env(void) __attribute__((weak));

// readline's state bits (readline.h of readline 8).
#define RL_STATE_TERMPREPPED 0x0000004UL
#define RL_STATE_READCMD 0x0000008UL
// A key sequence, a search, an argument, a completion or a macro under way: the line is not idle.
// (Not DISPATCHING: readline leaves it set after an abort, ^G, until the next key; a command that
// reads more keys sets MOREINPUT.)
#define RL_STATE_UNDER_WAY                                                                        \
  (0x0000010UL /* METANEXT */ | 0x0000040UL /* MOREINPUT */ |                                    \
   0x0000080UL /* ISEARCH */ | 0x0000100UL /* NSEARCH */ | 0x0000200UL /* SEARCH */ |             \
   0x0000400UL /* NUMERICARG */ | 0x0000800UL /* MACROINPUT */ | 0x0004000UL /* COMPLETING */ |   \
   0x0010000UL /* UNDOING */ | 0x0020000UL /* INPUTPENDING */ | 0x0100000UL /* VIMOTION */ |      \
   0x0200000UL /* MULTIKEY */ | 0x0800000UL /* CHARSEARCH */ | 0x1000000UL /* REDISPLAYING */ |   \
   0x2000000UL /* DONE */ | 0x4000000UL /* TIMEOUT */ | 0x8000000UL /* EOF */)
#define RL_STATE_SEARCHING (0x0000080UL | 0x0000100UL | 0x0000200UL)

// The statuses of `state` (shell/tmux-run.bash names them).
enum {
  LINE_EMPTY = 0,
  LINE_TYPED = 10,       // text on the line
  LINE_SEARCH = 11,      // a history search
  LINE_PENDING = 12,     // a key sequence, an argument, a completion or a macro under way
  LINE_CONTINUATION = 13, // a continuation line (prompt level 2)
  LINE_NOT_READING = 14, // readline is not waiting for a command key (a command runs, read -e)
};
// The statuses of `ask`.
enum { ANSWER_YES = 0, ANSWER_ALWAYS = 20, ANSWER_OTHER = 21, ANSWER_TIMEOUT = 22, ANSWER_WITHDRAWN = 23 };
#define USAGE 2

/* `notice SERIAL TEXT` and `ask SECONDS FILE NEEDLE PID LINE...` (bash-line-draw.c). */
LINE_PART int line_notice(const char *serial, const char *text);
LINE_PART int line_ask(WORD_LIST *args);
/* `snapshot FILE NONCE PWD [ENTRY...]` and `answer FILE LINE` (bash-line-files.c). */
LINE_PART int line_snapshot(WORD_LIST *args);
LINE_PART int line_answer(WORD_LIST *args);

#endif
