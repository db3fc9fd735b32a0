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
// Built by scripts/build-native.mjs into generated/ and dist/generated/ (not committed), with
// -DTMUX_RUN_BUILD="..." the build's id (generated/build-id.cjs).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#ifndef TMUX_RUN_BUILD
#error "build with -DTMUX_RUN_BUILD=\"<build id>\" (scripts/build-native.mjs)"
#endif

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

static int symbols_present(void) {
  return &rl_line_buffer && &rl_end && &rl_point && &rl_readline_state && &rl_explicit_arg &&
         &rl_prompt && &rl_outstream && &rl_instream && &_rl_last_v_pos && &_rl_vis_botlin &&
         &_rl_screenwidth && get_current_prompt_level && rl_on_new_line && rl_forced_update_display &&
         rl_read_key && rl_stuff_char && &export_env && maybe_make_export_env;
}

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

static int screen_width(void) {
  struct winsize ws;
  if (_rl_screenwidth > 0) return _rl_screenwidth;
  if (ioctl(fileno(rl_outstream), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

// Cells a run of text takes: \001..\002 parts, escape sequences and control characters none.
static int cells(const char *s, size_t n) {
  mbstate_t st;
  memset(&st, 0, sizeof st);
  int w = 0;
  size_t i = 0;
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    if (c == 1) {
      while (i < n && s[i] != 2) i++;
      i++;
    } else if (c == 0x1b && i + 1 < n && s[i + 1] == '[') {
      for (i += 2; i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e); i++) {}
      i++;
    } else if (c == 0x1b && i + 1 < n && s[i + 1] == ']') {
      for (i += 2; i < n && s[i] != 7 && !(s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\'); i++) {}
      i += (i < n && s[i] == 0x1b) ? 2 : 1;
    } else if (c < 0x20 || c == 0x7f) {
      i++;
    } else {
      wchar_t wc;
      size_t len = mbrtowc(&wc, s + i, n - i, &st);
      if (len == (size_t)-1 || len == (size_t)-2 || len == 0) {
        memset(&st, 0, sizeof st);
        w++;
        i++;
        continue;
      }
      int cw = wcwidth(wc);
      w += cw > 0 ? cw : 0;
      i += len;
    }
  }
  return w;
}

// Rows the prompt takes above its last line (readline prints them raw on a forced redisplay).
static int prompt_rows_above(int width) {
  const char *p = rl_prompt, *last = p ? strrchr(p, '\n') : NULL;
  int rows = 0;
  if (!last) return 0;
  for (const char *line = p; line <= last;) {
    const char *nl = strchr(line, '\n');
    int w = cells(line, (size_t)(nl - line));
    rows += w > 0 ? (w + width - 1) / width : 1;
    line = nl + 1;
  }
  return rows;
}

// Writes TEXT cut to fit one row of WIDTH cells (control characters shown as ?).
static void put_row(FILE *out, const char *text, int width) {
  mbstate_t st;
  memset(&st, 0, sizeof st);
  int w = 0;
  size_t n = strlen(text), i = 0;
  while (i < n) {
    wchar_t wc;
    size_t len = mbrtowc(&wc, text + i, n - i, &st);
    if (len == (size_t)-1 || len == (size_t)-2 || len == 0 || wc < 0x20 || (wc >= 0x7f && wc < 0xa0)) {
      memset(&st, 0, sizeof st);
      if (w + 1 >= width) break;
      fputc('?', out);
      w++;
      i += (len == (size_t)-1 || len == (size_t)-2 || len == 0) ? 1 : len;
      continue;
    }
    int cw = wcwidth(wc);
    if (cw < 0) cw = 1;
    if (w + cw >= width) break;
    fwrite(text + i, 1, len, out);
    w += cw;
    i += len;
  }
}

// Moves to the first row of the prompt (UP rows more above it) and clears that row and the ones
// down to the cursor's and BELOW more, line by line: tmux's scroll-on-clear would push the whole
// screen into the scrollback if an erase from its top left corner cleared it all (ESC [ J).
static void clear_from_prompt(FILE *out, int up, int below) {
  int rows = prompt_rows_above(screen_width()) + (_rl_last_v_pos > 0 ? _rl_last_v_pos : 0) + up;
  fputc('\r', out);
  if (rows > 0) fprintf(out, "\x1b[%dA", rows);
  fputs("\x1b" "7", out);
  for (int i = 0; i <= rows + below; i++) fputs(i < rows + below ? "\x1b[2K\x1b[1B" : "\x1b[2K", out);
  fputs("\x1b" "8", out);
}

static void redraw(FILE *out) {
  fflush(out);
  rl_on_new_line();
  rl_forced_update_display();
  fflush(out);
}

static long last_serial = -1;

static int draw_notice(const char *serial, const char *text) {
  char *end;
  long n = strtol(serial, &end, 10);
  if (*serial == '\0' || *end != '\0') return USAGE;
  FILE *out = rl_outstream;
  int below = _rl_vis_botlin - _rl_last_v_pos;
  // One row more below: the prompt moves down by the notice's row.
  clear_from_prompt(out, n == last_serial ? 1 : 0, (below > 0 ? below : 0) + 1);
  put_row(out, text, screen_width());
  fputs("\r\n", out);
  redraw(out);
  last_serial = n;
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// Whether FILE still holds the line NEEDLE (the question stands) and PID lives.
static int still_asked(const char *file, const char *needle, pid_t pid) {
  char buf[8192];
  int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  size_t len = strlen(needle);
  for (char *line = buf; *line;) {
    char *nl = strchr(line, '\n');
    if (nl && (size_t)(nl - line) == len && strncmp(line, needle, len) == 0) return kill(pid, 0) == 0 || errno == EPERM;
    if (!nl) break;
    line = nl + 1;
  }
  return 0;
}

// A signal readline caught while the question is up: ^C (SIGINT, the terminal makes no key of
// it) answers no and is taken, so that readline does not also throw the line away; a hang-up or
// SIGTERM answers no and is left for readline to handle. Others (a resize) change nothing.
static int caught_answer(void) {
  if (!&_rl_caught_signal) return 0;
  int sig = _rl_caught_signal;
  if (sig == SIGINT) _rl_caught_signal = 0;
  return sig == SIGINT || sig == SIGHUP || sig == SIGTERM ? ANSWER_OTHER : 0;
}

// Waits for a key on readline's input, up to SECONDS; the question withdrawn ends the wait.
static int wait_key(double seconds, const char *file, const char *needle, pid_t pid) {
  int fd = fileno(rl_instream);
  double end = now_s() + seconds;
  for (;;) {
    double left = end - now_s();
    if (left <= 0) return ANSWER_TIMEOUT;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, left < 0.1 ? (int)(left * 1000) + 1 : 100);
    int caught = caught_answer();
    if (caught) return caught;
    if (r > 0) return -1;
    if (r < 0 && errno != EINTR) return ANSWER_OTHER;
    if (!still_asked(file, needle, pid)) return ANSWER_WITHDRAWN;
  }
}

static int ask(WORD_LIST *args) {
  char *end;
  double seconds = strtod(args->word->word, &end);
  if (*end != '\0' || seconds <= 0 || !args->next || !args->next->next || !args->next->next->next) return USAGE;
  const char *file = args->next->word->word, *needle = args->next->next->word->word;
  pid_t pid = (pid_t)strtol(args->next->next->next->word->word, NULL, 10);
  FILE *out = rl_outstream;
  int width = screen_width(), rows = 0;
  // Keys typed before the question are not answers: kept, and given back to readline after.
  char typed[256];
  size_t ntyped = 0;
  struct pollfd p = {.fd = fileno(rl_instream), .events = POLLIN};
  while (ntyped < sizeof typed && poll(&p, 1, 0) > 0 && read(p.fd, typed + ntyped, 1) == 1) ntyped++;
  // Below the line: down to the display's last row, then the question's rows.
  int below = _rl_vis_botlin - _rl_last_v_pos;
  if (below > 0) fprintf(out, "\x1b[%dB", below);
  for (WORD_LIST *l = args->next->next->next->next; l; l = l->next, rows++) {
    fputs("\r\n", out);
    put_row(out, l->word->word, width);
  }
  fflush(out);
  int answer = wait_key(seconds, file, needle, pid);
  if (answer < 0) {
    int key = rl_read_key();
    answer = key == 'y' ? ANSWER_YES : key == 'a' ? ANSWER_ALWAYS : ANSWER_OTHER;
    // An escape sequence (an arrow key) is one answer: the rest of it goes too.
    if (key == 0x1b) {
      char c;
      while (poll(&p, 1, 20) > 0 && read(p.fd, &c, 1) == 1) {}
    }
  }
  // Back up over the question and the display, clear, and let readline draw the line again.
  clear_from_prompt(out, rows + (below > 0 ? below : 0), 0);
  redraw(out);
  last_serial = -1; // the row above the prompt is not a notice any more
  for (size_t i = 0; i < ntyped; i++) rl_stuff_char((unsigned char)typed[i]);
  return answer;
}

// Writes all of LEN bytes; false on an error.
static int put_all(int fd, const char *p, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    p += n;
    len -= (size_t)n;
  }
  return 1;
}

// A file's bytes gathered in memory and written with one write(2): the helper watches the
// channel's directory, and each write would wake it (inotify) while the shell is still writing.
struct buf {
  char *p;
  size_t len, cap;
  int failed;
};

static void add(struct buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
}

// Writes B to FILE (FLAGS: O_EXCL or O_TRUNC), 0600 when made, and frees it. Status 0, or 1.
static int write_file(const char *file, int flags, struct buf *b) {
  int ok = !b->failed, fd = -1;
  if (ok) fd = open(file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
  if (fd < 0) {
    ok = 0;
  } else {
    ok = put_all(fd, b->p, b->len) && ok;
    ok = close(fd) == 0 && ok;
  }
  free(b->p);
  return ok ? 0 : 1;
}

// The snapshot: NONCE \0 PWD, then \0 NAME=VALUE for each exported variable (not the exported
// functions, BASH_FUNC_...), then \0 ENTRY for each argument after PWD. Status 0, or 1.
static int snapshot(WORD_LIST *args) {
  if (!args || !args->next || !args->next->next) return USAGE;
  struct buf b = {0};
  const char *nonce = args->next->word->word;
  add(&b, nonce, strlen(nonce) + 1);
  WORD_LIST *pwd = args->next->next;
  add(&b, pwd->word->word, strlen(pwd->word->word));
  maybe_make_export_env();
  for (char **e = export_env; e && *e; e++) {
    if (strncmp(*e, "BASH_FUNC_", 10) == 0) continue;
    add(&b, "", 1);
    add(&b, *e, strlen(*e));
  }
  for (WORD_LIST *l = pwd->next; l; l = l->next) {
    add(&b, "", 1);
    add(&b, l->word->word, strlen(l->word->word));
  }
  return write_file(args->word->word, O_EXCL, &b);
}

// The answer file, rewritten whole (0600 when made), in one write.
static int answer(WORD_LIST *args) {
  if (!args || !args->next) return USAGE;
  struct buf b = {0};
  const char *line = args->next->word->word;
  add(&b, line, strlen(line));
  add(&b, "\n", 1);
  if (strncmp(line, "K ", 2) == 0) add(&b, "\0\0", 2);
  return write_file(args->word->word, O_TRUNC, &b);
}

static int tmux_run_line(WORD_LIST *list) {
  if (!list) return USAGE;
  const char *cmd = list->word->word;
  WORD_LIST *rest = list->next;
  if (strcmp(cmd, "build") == 0) return rest && strcmp(rest->word->word, TMUX_RUN_BUILD) == 0 ? 0 : 1;
  if (strcmp(cmd, "state") == 0) return line_state();
  if (strcmp(cmd, "snapshot") == 0) return snapshot(rest);
  if (strcmp(cmd, "answer") == 0) return answer(rest);
  // Drawing needs readline at its prompt (a trap also runs between commands, and before readline
  // first started: nothing to redraw then, and its streams may not be set).
  if (!rl_outstream || !rl_instream || !(rl_readline_state & RL_STATE_TERMPREPPED)) return LINE_NOT_READING;
  if (strcmp(cmd, "notice") == 0) return rest && rest->next ? draw_notice(rest->word->word, rest->next->word->word) : USAGE;
  if (strcmp(cmd, "ask") == 0) return rest ? ask(rest) : USAGE;
  return USAGE;
}

int _tmux_run_line_builtin_load(char *name) {
  (void)name;
  return symbols_present();
}

static char *const doc[] = {"tmux-run's view of readline's line (see shell/tmux-run.bash).", NULL};

struct builtin _tmux_run_line_struct = {
    "_tmux_run_line", tmux_run_line, BUILTIN_ENABLED, doc, "_tmux_run_line build|state|snapshot|answer|notice|ask ...", 0,
};
