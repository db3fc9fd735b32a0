// The waiter of a pane's kept-alive walls (helper/sandbox/walls.ts), in C: pid 1 of the sandbox's
// namespaces for as long as the walls live, forking each run's reaper and child ahead of the run.
// The protocol, and what each process does, is said once, in helper/sandbox/waiter.ts (the perl
// waiter there, WALLS_WAITER, is the fallback when this is not built, and does the same). This one
// makes the same system calls without perl's costs (milliseconds per step here: BENCHMARKS.md).
//
//   walls-waiter SOCKET      (bwrap --as-pid-1; descriptor 3: a socket pair with the helper)
//
// Built by scripts/build-native.mjs into generated/ and dist/generated/ (not committed).
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HELPER_FD 3
/* The walls' terminal channel (helper/native/fd-channel.c): where a terminal run's master goes. */
#define CHAN 5
#define TOKEN_LEN 32
#define ACK "A"

#include "walls-terminal.h"

static struct sockaddr_un addr;
static socklen_t addr_len;

static int put(int fd, const char *p, size_t n) {
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
static void report(int fd, char what, int err) {
  char line[32];
  int n = snprintf(line, sizeof line, "%c %d\n", what, err);
  put(fd, line, (size_t)n);
}

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

/* Exactly n bytes of fd; 0 at its end or on an error. */
static int read_exactly(int fd, char *p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    p += r;
    n -= (size_t)r;
  }
  return 1;
}

/* Exactly n bytes of the helper's descriptor, or the waiter's end (the helper closed it). */
static void readn(char *p, size_t n) {
  if (!read_exactly(HELPER_FD, p, n)) _exit(0);
}

/* A connection to the helper's socket that names its run: TOKEN then `k\n`; -1 (errno set) when it failed. */
static int link_to(const char *token, size_t token_len, char kind) {
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

static void pause_ms(void) {
  struct timespec t = {0, 1000000};
  nanosleep(&t, NULL);
}

static void default_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &sa, NULL); /* 32 and 33 refuse: glibc's own */
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * The process that becomes the run's /bin/sh: its two streams connected, a session of its own, it
 * waits for its request on its stdout connection, says it took it (ACK, the first byte of that
 * stream), and execs. It dies with its reaper (a run never runs without one).
 */
static void shell_to_be(const char *token, pid_t reaper, int fail) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != reaper) _exit(125);
  int out = link_to(token, TOKEN_LEN, 'o');
  if (out < 0) _exit(125);
  int err = link_to(token, TOKEN_LEN, 'e');
  if (err < 0) _exit(125);
  setsid();
  char hex[9];
  if (!read_exactly(out, hex, 8)) _exit(0);
  hex[8] = 0;
  char *z;
  unsigned long n = strtoul(hex, &z, 16);
  if (*z != 0) _exit(125);
  char *req = malloc(n + 1);
  if (req == NULL || !read_exactly(out, req, n)) _exit(125);
  shutdown(out, SHUT_RD);
  if (!put(out, ACK, 1)) _exit(125);
  char *end = req + n, *f[4], *p = req;
  for (int k = 0; k < 4; k++) {
    char *nul = memchr(p, 0, (size_t)(end - p));
    if (nul == NULL) {
      report(fail, 'E', EINVAL);
      _exit(125);
    }
    f[k] = p;
    p = nul + 1;
  }
  size_t count = 0;
  for (char *q = p; q < end; q++) count += *q == 0;
  char **envp = malloc((count + 1) * sizeof *envp);
  if (envp == NULL) {
    report(fail, 'E', ENOMEM);
    _exit(125);
  }
  size_t e = 0;
  for (char *q = p; q < end;) {
    char *nul = memchr(q, 0, (size_t)(end - q));
    if (nul == NULL) break;
    char *eq = strchr(q, '=');
    if (eq != NULL && eq > q) envp[e++] = q;
    q = nul + 1;
  }
  envp[e] = NULL;
  /* f[0]: the input (empty: /dev/null, `p`: a pipe, `tCOLS,ROWS`: a terminal); umask, cwd, script. */
  int in = -1, tty = -1, failed = 0;
  if (f[0][0] == 'p' && f[0][1] == 0) {
    // A pipe run's stdin: a connection of its own to the helper (`TOKENi`), only read.
    if ((in = link_to(token, TOKEN_LEN, 'i')) < 0 || shutdown(in, SHUT_WR) != 0) failed = errno ? errno : EIO;
  } else if (f[0][0] == 't')
    failed = make_terminal(token, f[0], &tty);
  else if (f[0][0] != 0) failed = EINVAL;
  if (failed) {
    report(fail, f[0][0] == 't' ? 'T' : 'I', failed);
    _exit(125);
  }
  if (*f[1] != 0) umask((mode_t)strtol(f[1], NULL, 8));
  if (chdir(f[2]) < 0) {
    report(fail, 'C', errno);
    _exit(125);
  }
  int null = in >= 0 || tty >= 0 ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
  int fd0 = tty >= 0 ? tty : in >= 0 ? in : null;
  if (fd0 < 0 || dup2(fd0, 0) < 0 || dup2(tty >= 0 ? tty : out, 1) < 0 || dup2(tty >= 0 ? tty : err, 2) < 0) {
    report(fail, 'E', errno);
    _exit(125);
  }
  default_signals();
  char *argv[] = {"/bin/sh", "-c", f[3], NULL};
  execve("/bin/sh", argv, envp);
  report(fail, 'E', errno);
  _exit(127);
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

static void no_answer(int sig) {
  (void)sig;
  static const char m[] = "tmux-run: this pane's helper did not answer the sandbox\n";
  put(2, m, sizeof m - 1);
  _exit(125);
}

int main(int argc, char **argv) {
  if (argc < 2 || strlen(argv[1]) >= sizeof addr.sun_path) return 125;
  addr.sun_family = AF_UNIX;
  strcpy(addr.sun_path, argv[1]);
  addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(argv[1]) + 1);
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
