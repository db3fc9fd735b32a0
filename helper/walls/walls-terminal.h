// A sandboxed terminal run's own pseudo-terminal, made by its child in the walls (included by
// helper/walls/walls-shell.c, after walls-waiter.h, which defines CHAN and TOKEN_LEN): the
// protocol is said in helper/walls/waiter.ts.
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>

/* Sends the master of a run's terminal to the helper on the channel: `T TOKEN`, the master as SCM_RIGHTS. */
static int send_master(const char *token, int master) {
  char m[TOKEN_LEN + 1];
  m[0] = 'T';
  memcpy(m + 1, token, TOKEN_LEN);
  struct iovec io = {m, sizeof m};
  union {
    struct cmsghdr h;
    char b[CMSG_SPACE(sizeof(int))];
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr h = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
  struct cmsghdr *c = CMSG_FIRSTHDR(&h);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &master, sizeof(int));
  ssize_t n;
  do n = sendmsg(CHAN, &h, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == (ssize_t)sizeof m;
}

/*
 * A terminal run's own pseudo-terminal (`tCOLS,ROWS`), made in the walls' devpts (bwrap's --dev:
 * an instance of their own): its slave this process's controlling terminal (it leads a session
 * already), its master sent to the helper and closed here. 0, or the errno of what failed.
 */
static int make_terminal(const char *token, const char *spec, int *slave) {
  int cols, rows;
  char extra;
  if (sscanf(spec, "t%d,%d%c", &cols, &rows, &extra) != 2 || cols < 1 || rows < 1 || cols > 65535 || rows > 65535)
    return EINVAL;
  int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return errno;
  char name[128];
  struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
  int s = -1;
  if (grantpt(m) != 0 || unlockpt(m) != 0 || ptsname_r(m, name, sizeof name) != 0 || ioctl(m, TIOCSWINSZ, &ws) != 0 ||
      (s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 || ioctl(s, TIOCSCTTY, 0) != 0 || !send_master(token, m)) {
    int e = errno ? errno : EIO;
    close(m);
    if (s >= 0) close(s);
    return e;
  }
  close(m);
  *slave = s;
  return 0;
}

