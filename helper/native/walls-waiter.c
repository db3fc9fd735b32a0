// The waiter of a pane's kept-alive walls (helper/sandbox/walls.ts), in C: pid 1 of the sandbox's
// namespaces for as long as the walls live. It does what the perl waiter of helper/sandbox/waiter.ts
// (WALLS_WAITER, the fallback when this is not built) does, with the same protocol, in system calls
// that cost microseconds where each of perl's steps cost milliseconds (BENCHMARKS.md, issue 23).
//
//   walls-waiter SOCKET      (bwrap --as-pid-1; descriptor 3: a socket pair with the helper)
//
// On descriptor 3 it writes `R` and waits for the helper's `G` (the helper was alive after bwrap set
// its parent-death signal), then reads requests (8 hex digits of length, then TOKEN \0 UMASK \0 CWD
// \0 SCRIPT \0 NAME=VALUE \0 ...) until the helper closes its end, when it exits and the kernel ends
// the namespace. A request of no length (PREFORK) asks for the next run's two processes while
// nothing runs: its reaper, a subreaper, and its child, the process that becomes the run's /bin/sh,
// both waiting on a pipe. A request goes to the reaper kept (or one forked then). The reaper
// connects to SOCKET as `TOKENs` (the status link) and passes the request on (a child that died
// meanwhile is forked anew); the child connects as `TOKENo` and `TOKENe`, and execs /bin/sh -c
// SCRIPT in a session of its own with the exact cwd, umask and environment, the two connections as
// descriptors 1 and 2, stdin /dev/null, nothing else open, every signal's disposition the default
// and none blocked. The reaper writes `S PID`, waits for it, then SIGKILLs whatever the run left
// (every orphan of the run is its child, setsid, nohup and double forks included; /proc is read
// only when some child is left) until it has no child at all, and only then writes `W STATUS` (the
// raw wait status) and exits. A chdir, connect or exec that fails is `C errno` / `E errno` (the
// child tells the reaper on a close-on-exec pipe), nothing run. A request no reaper could take is
// answered `F TOKEN` on descriptor 3.
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

#define CTRL 3
#define TOKEN_MAX 64

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

/* Exactly n bytes of the helper's descriptor, or the waiter's end (the helper closed it). */
static void readn(char *p, size_t n) {
  while (n > 0) {
    ssize_t r = read(CTRL, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) _exit(0);
    p += r;
    n -= (size_t)r;
  }
}

/* A connection to the helper's socket that names its run: TOKEN then `k\n`; -1 (errno set) when it failed. */
static int link_to(const char *token, size_t token_len, char kind) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  char head[TOKEN_MAX + 2];
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

/* The process that becomes the run's /bin/sh: waits for its request on `in`, fails on `fail`. */
static void shell_to_be(int in, int fail) {
  char *req;
  ssize_t n = take(in, &req);
  if (n <= 0) _exit(0);
  close(in);
  char *end = req + n, *f[4], *p = req;
  for (int k = 0; k < 4; k++) {
    char *z = memchr(p, 0, (size_t)(end - p));
    if (z == NULL) {
      report(fail, 'E', EINVAL);
      _exit(125);
    }
    f[k] = p;
    p = z + 1;
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
    char *z = memchr(q, 0, (size_t)(end - q));
    if (z == NULL) break;
    char *eq = strchr(q, '=');
    if (eq != NULL && eq > q) envp[e++] = q;
    q = z + 1;
  }
  envp[e] = NULL;
  size_t token_len = strlen(f[0]);
  if (token_len > TOKEN_MAX) {
    report(fail, 'E', EINVAL);
    _exit(125);
  }
  int out = link_to(f[0], token_len, 'o');
  int err = out < 0 ? -1 : link_to(f[0], token_len, 'e');
  if (err < 0) {
    report(fail, 'E', errno);
    _exit(125);
  }
  setsid();
  if (*f[1] != 0) umask((mode_t)strtol(f[1], NULL, 8));
  if (chdir(f[2]) < 0) {
    report(fail, 'C', errno);
    _exit(125);
  }
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
    report(fail, 'E', errno);
    _exit(125);
  }
  default_signals();
  char *argv[] = {"/bin/sh", "-c", f[3], NULL};
  execve("/bin/sh", argv, envp);
  report(fail, 'E', errno);
  _exit(127);
}

/* Forks the run's child; `in` (the reaper's own request pipe) is closed in it. */
static pid_t to_be(int in, int *go, int *failed) {
  int g[2], f[2];
  if (pipe2(g, O_CLOEXEC) < 0) _exit(125);
  if (pipe2(f, O_CLOEXEC) < 0) _exit(125);
  pid_t p = fork();
  if (p < 0) _exit(125);
  if (p == 0) {
    if (in >= 0) close(in);
    close(g[1]);
    close(f[0]);
    shell_to_be(g[0], f[1]);
  }
  close(g[0]);
  close(f[1]);
  *go = g[1];
  *failed = f[0];
  return p;
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

static void reaper(int in) {
  signal(SIGCHLD, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) _exit(125);
  int go, failed;
  pid_t p = to_be(in, &go, &failed);
  char *req;
  ssize_t n = take(in, &req);
  if (n <= 0) _exit(0);
  close(in);
  if (waitpid(p, NULL, WNOHANG) == p) {
    close(go);
    close(failed);
    p = to_be(-1, &go, &failed);
  }
  char *z = memchr(req, 0, (size_t)n);
  size_t token_len = z == NULL ? (size_t)n : (size_t)(z - req);
  if (token_len > TOKEN_MAX) _exit(125);
  int st = link_to(req, token_len, 's');
  if (st < 0) _exit(125);
  signal(SIGPIPE, SIG_IGN);
  if (!put(go, req, (size_t)n)) report(st, 'E', errno);
  close(go);
  free(req);
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
  ssize_t en = take(failed, &e);
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

/* A kept reaper: the write end of its request pipe, -1 when it could not be forked. */
static int spare(void) {
  int r[2];
  if (pipe2(r, O_CLOEXEC) < 0) return -1;
  pid_t p = fork();
  if (p < 0) {
    close(r[0]);
    close(r[1]);
    return -1;
  }
  if (p == 0) {
    close(CTRL);
    close(r[1]);
    reaper(r[0]);
  }
  close(r[0]);
  return r[1];
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
  if (fcntl(CTRL, F_SETFD, FD_CLOEXEC) < 0 || !put(CTRL, "R", 1)) return 125;
  signal(SIGALRM, no_answer);
  alarm(10);
  char g = 0;
  ssize_t r;
  do r = read(CTRL, &g, 1);
  while (r < 0 && errno == EINTR);
  if (r != 1 || g != 'G') return 125;
  alarm(0);
  // As the namespace's init it takes no signal a run sends it (the kernel drops those left at the
  // default), SIGPIPE (a reaper a run killed) nor SIGCHLD (a killed reaper's orphans go to the kernel).
  signal(SIGALRM, SIG_DFL);
  signal(SIGCHLD, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  int next = -1;
  for (;;) {
    char hex[9];
    readn(hex, 8);
    hex[8] = 0;
    char *z;
    unsigned long n = strtoul(hex, &z, 16);
    if (*z != 0) return 125;
    if (n == 0) {
      if (next < 0) next = spare();
      continue;
    }
    char *req = malloc(n);
    if (req == NULL) return 125;
    readn(req, n);
    int s = next >= 0 ? next : spare();
    next = -1;
    if (s < 0 || !put(s, req, n)) {
      if (s >= 0) close(s);
      s = spare();
      if (s < 0 || !put(s, req, n)) {
        char *t = memchr(req, 0, n);
        size_t tl = t == NULL ? n : (size_t)(t - req);
        char line[TOKEN_MAX + 3];
        if (tl <= TOKEN_MAX) {
          line[0] = 'F';
          memcpy(line + 1, req, tl);
          line[tl + 1] = '\n';
          put(CTRL, line, tl + 2);
        }
      }
    }
    if (s >= 0) close(s);
    free(req);
  }
}
