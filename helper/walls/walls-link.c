// The walls' waiter's connections to the helper (helper/walls/walls-waiter.h): the helper's
// socket, each run's links to it, and whole writes and reads.
#define _GNU_SOURCE
#include "walls-waiter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static struct sockaddr_un addr;
static socklen_t addr_len;

/* Where link_to connects: the path the waiter was started with, checked against sun_path's size. */
int helper_socket(const char *path) {
  if (strlen(path) >= sizeof addr.sun_path) return 0;
  addr.sun_family = AF_UNIX;
  strcpy(addr.sun_path, path);
  addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
  return 1;
}

/* All of it, through short writes and interruptions. */
int put(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return 0;
    }
    p += w;
    n -= (size_t)w;
  }
  return 1;
}

/* `X errno\n` on fd (a failure the helper names). */
void report(int fd, char what, int err) {
  char line[32];
  int n = snprintf(line, sizeof line, "%c %d\n", what, err);
  put(fd, line, (size_t)n);
}

/* Exactly n bytes of fd; 0 at its end or on an error. */
int read_exactly(int fd, char *p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    p += r;
    n -= (size_t)r;
  }
  return 1;
}

/* A connection to the helper's socket that names its run: TOKEN then `k\n`; -1 (errno set) when it failed. */
int link_to(const char *token, size_t token_len, char kind) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  char head[TOKEN_LEN + 2];
  memcpy(head, token, token_len);
  head[token_len] = kind;
  head[token_len + 1] = '\n';
  if (connect(s, (struct sockaddr *)&addr, addr_len) < 0 || !put(s, head, token_len + 2)) {
    int e = errno;
    close(s);
    errno = e;
    return -1;
  }
  return s;
}
