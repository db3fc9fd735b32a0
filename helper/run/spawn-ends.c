// What a plain run's child is given (helper/run/spawn.h): two new pipes for stdout and stderr
// (and one for stdin, for input pipe), or a new pseudo-terminal for all three (input terminal);
// every end close-on-exec and above stdio.
#define _GNU_SOURCE
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/* Moves a pipe's two ends above 0, 1 and 2 (should the helper's own stdio be closed), close-on-exec. */
static int above_stdio(int p[2]) {
  for (int i = 0; i < 2; i++) {
    if (p[i] > 2) continue;
    int moved = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return 0;
    close(p[i]);
    p[i] = moved;
  }
  return 1;
}

/*
 * A new pseudo-terminal of cols x rows: its master (close-on-exec, the helper's) and its slave
 * (close-on-exec: the child dups it to 0, 1 and 2), both above stdio. 0 with errno on failure.
 */
static int open_pty(int *master, int *slave, int cols, int rows) {
  char name[128];
  *master = *slave = -1;
  int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return 0;
  struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
  int sl = -1;
  if (grantpt(m) == 0 && unlockpt(m) == 0 && ptsname_r(m, name, sizeof name) == 0 &&
      (sl = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) >= 0 && ioctl(m, TIOCSWINSZ, &ws) == 0) {
    int p[2] = {m, sl};
    if (above_stdio(p)) {
      *master = p[0];
      *slave = p[1];
      return 1;
    }
    m = p[0];
    sl = p[1];
  }
  int saved = errno;
  close(m);
  if (sl >= 0) close(sl);
  errno = saved;
  return 0;
}

/* The pipes for `mode`, or the terminal; on failure nothing is left open. */
int make_ends(struct ends *e, int mode, int cols, int rows, const char **stage) {
  e->out[0] = e->out[1] = e->err[0] = e->err[1] = e->in[0] = e->in[1] = e->master = -1;
  if (mode == 2) {
    *stage = "openpty";
    if (!open_pty(&e->master, &e->in[0], cols, rows)) return errno ? errno : EIO;
    return 0;
  }
  *stage = "pipe";
  if (pipe2(e->out, O_CLOEXEC) != 0 || pipe2(e->err, O_CLOEXEC) != 0 || !above_stdio(e->out) ||
      !above_stdio(e->err) || (mode == 1 && (pipe2(e->in, O_CLOEXEC) != 0 || !above_stdio(e->in)))) {
    int failure = errno ? errno : EBADF;
    int *all[] = {&e->out[0], &e->out[1], &e->err[0], &e->err[1], &e->in[0], &e->in[1]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
      if (*all[i] >= 0) close(*all[i]);
    return failure;
  }
  return 0;
}
