// The waiter of a pane's kept-alive walls (helper/walls/walls.ts), in C: pid 1 of the sandbox's
// namespaces for as long as the walls live, forking each run's reaper and child ahead of the run.
// The protocol, and what each process does, is said once, in helper/walls/waiter.ts (the perl
// waiter there, WALLS_WAITER, is the fallback when this is not built, and does the same). This one
// makes the same system calls without perl's costs (milliseconds per step here: BENCHMARKS.md).
//
//   walls-waiter SOCKET      (bwrap --as-pid-1; descriptor 3: a socket pair with the helper)
//
// Built with the files of walls-waiter.h by scripts/build-native.mjs into generated/ and
// dist/generated/ (not committed).
#define _GNU_SOURCE
#include "walls-waiter.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Everything fd gives until its end, in a new buffer; -1 when reading failed. */
static ssize_t take(int fd, char **out) {
  size_t cap = 4096, len = 0;
  char *b = malloc(cap);
  if (b == NULL) return -1;
  for (;;) {
    if (len == cap) {
      char *nb = realloc(b, cap *= 2);
      if (nb == NULL) {
        free(b);
        return -1;
      }
      b = nb;
    }
    ssize_t r = read(fd, b + len, cap - len);
    if (r < 0) {
      if (errno == EINTR) continue;
      free(b);
      return -1;
    }
    if (r == 0) break;
    len += (size_t)r;
  }
  *out = b;
  return (ssize_t)len;
}

/* Exactly n bytes of the helper's descriptor, or the waiter's end (the helper closed it). */
static void readn(char *p, size_t n) {
  if (!read_exactly(HELPER_FD, p, n)) _exit(0);
}

/* A millisecond's pause, while a run's leftovers are being ended. */
static void pause_ms(void) {
  struct timespec t = {0, 1000000};
  nanosleep(&t, NULL);
}

/* The children of this process that /proc lists (its orphans included); at most max. */
static int kids(pid_t *out, int max) {
  DIR *d = opendir("/proc");
  if (d == NULL) return 0;
  pid_t self = getpid();
  int n = 0;
  struct dirent *de;
  while (n < max && (de = readdir(d)) != NULL) {
    char *z;
    long pid = strtol(de->d_name, &z, 10);
    if (*z != 0 || pid <= 0) continue;
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t r = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (r <= 0) continue;
    stat[r] = 0;
    char *paren = strrchr(stat, ')');
    long ppid;
    char state;
    if (paren != NULL && sscanf(paren + 1, " %c %ld", &state, &ppid) == 2 && ppid == self) out[n++] = (pid_t)pid;
  }
  closedir(d);
  return n;
}

/* A run's reaper, a subreaper: forks the run's child, says its pid, waits for it and ends what it left. */
static void reaper(const char *token) {
  signal(SIGCHLD, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) _exit(125);
  int f[2];
  if (pipe2(f, O_CLOEXEC) < 0) _exit(125);
  pid_t self = getpid();
  pid_t p = fork();
  if (p < 0) _exit(125);
  if (p == 0) {
    close(f[0]);
    shell_to_be(token, self, f[1]);
  }
  close(f[1]);
  close(CHAN); /* the child's until its exec; the reaper never sends on it */
  // Connected after the fork: the child holds no copy of the status link.
  int st = link_to(token, TOKEN_LEN, 's');
  if (st < 0) {
    kill(p, SIGKILL);
    _exit(125);
  }
  signal(SIGPIPE, SIG_IGN);
  char line[32];
  put(st, line, (size_t)snprintf(line, sizeof line, "S %d\n", (int)p));
  int w = 0;
  for (;;) {
    int s;
    pid_t k = waitpid(-1, &s, 0);
    if (k == p) {
      w = s;
      break;
    }
    if (k < 0 && errno != EINTR) break;
  }
  char *e;
  ssize_t en = take(f[0], &e);
  if (en >= 4 && en < 20 && (e[0] == 'C' || e[0] == 'E') && e[1] == ' ' && e[en - 1] == '\n') put(st, e, (size_t)en);
  // Whatever the run left is this reaper's child now: SIGKILLed until none is left.
  pid_t left[4096];
  for (;;) {
    pid_t r = waitpid(-1, NULL, WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    if (r > 0) continue;
    int k = kids(left, 4096);
    if (k == 0) {
      pause_ms();
      continue;
    }
    for (int i = 0; i < k; i++) kill(left[i], SIGKILL);
    int reaped = 0;
    while (waitpid(-1, NULL, WNOHANG) > 0) reaped++;
    if (reaped == 0) pause_ms();
  }
  put(st, line, (size_t)snprintf(line, sizeof line, "W %d\n", w));
  _exit(0);
}

/* SIGALRM before the helper's go (G): it never answered; say so on stderr and give up. */
static void no_answer(int sig) {
  (void)sig;
  static const char m[] = "tmux-run: this pane's helper did not answer the sandbox\n";
  put(2, m, sizeof m - 1);
  _exit(125);
}

int main(int argc, char **argv) {
  if (argc < 2 || !helper_socket(argv[1])) return 125;
  if (fcntl(HELPER_FD, F_SETFD, FD_CLOEXEC) < 0 || !put(HELPER_FD, "R", 1)) return 125;
  // The terminal channel, when the helper gave one: never a run's (close-on-exec), only its child's before the exec.
  struct stat cs;
  if (fstat(CHAN, &cs) == 0 && (!S_ISSOCK(cs.st_mode) || fcntl(CHAN, F_SETFD, FD_CLOEXEC) < 0)) return 125;
  signal(SIGALRM, no_answer);
  alarm(10);
  char g = 0;
  ssize_t r;
  do r = read(HELPER_FD, &g, 1);
  while (r < 0 && errno == EINTR);
  if (r != 1 || g != 'G') return 125;
  alarm(0);
  // As the namespace's init it takes no signal a run sends it (the kernel drops those left at the
  // default), SIGPIPE (a reaper a run killed) nor SIGCHLD (a killed reaper's orphans go to the kernel).
  signal(SIGALRM, SIG_DFL);
  signal(SIGCHLD, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  for (;;) {
    char m[TOKEN_LEN + 2];
    readn(m, sizeof m);
    if (m[0] != 'P' || m[TOKEN_LEN + 1] != '\n') return 125;
    for (int i = 1; i <= TOKEN_LEN; i++)
      if (!((m[i] >= '0' && m[i] <= '9') || (m[i] >= 'a' && m[i] <= 'f'))) return 125;
    m[TOKEN_LEN + 1] = 0;
    pid_t p = fork();
    if (p == 0) {
      close(HELPER_FD);
      reaper(m + 1);
    }
    if (p < 0) {
      m[0] = 'F';
      m[TOKEN_LEN + 1] = '\n';
      put(HELPER_FD, m, sizeof m);
    }
  }
}
