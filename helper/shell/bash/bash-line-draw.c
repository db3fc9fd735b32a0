// What bash's builtin draws with readline's own redisplay (helper/shell/bash/bash-line.h): a notice
// above the prompt, which it redraws whole, and ask mode's question below the line, with one key
// read and the line put back as it was.
#define _GNU_SOURCE
#include "bash-line.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

// The terminal's width as readline knows it, else as the terminal says, else 80.
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

// readline draws its prompt and line again from where the cursor is.
static void redraw(FILE *out) {
  fflush(out);
  rl_on_new_line();
  rl_forced_update_display();
  fflush(out);
}

// The serial of the notice above the prompt, -1 when the row above it is none.
static long last_serial = -1;

// A notice of the same serial replaces the one above the prompt; another goes above it.
int line_notice(const char *serial, const char *text) {
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

// Seconds on the monotonic clock.
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// Whether FILE still holds the line NEEDLE (the question stands) and PID lives. No FILE is the
// moment a helper that cannot swap it renames the next one in (helper/shell/signal/signal-files.ts):
// asked still.
static int still_asked(const char *file, const char *needle, pid_t pid) {
  char buf[8192];
  int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT && (kill(pid, 0) == 0 || errno == EPERM);
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

// The question below the line, one key (or the time, or a withdrawal) its answer, the line redrawn.
int line_ask(WORD_LIST *args) {
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
