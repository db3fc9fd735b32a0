// The process that becomes a sandboxed run's /bin/sh (helper/walls/walls-waiter.h): its request
// read from its stdout connection, its input (none, a pipe or its own terminal), its directory
// and descriptors, every signal back to the default, and the exec. The protocol is said in
// helper/walls/waiter.ts.
#define _GNU_SOURCE
#include "walls-waiter.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "walls-terminal.h"

/* Every disposition back to the default and the mask empty, as the run's /bin/sh is to start. */
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

/* Its request: 8 hex digits of length, then the bytes; exits 0 when none came (the stream ended), 125 when bad. */
static char *read_request(int out, size_t *len) {
  char hex[9];
  if (!read_exactly(out, hex, 8)) _exit(0);
  hex[8] = 0;
  char *z;
  unsigned long n = strtoul(hex, &z, 16);
  if (*z != 0) _exit(125);
  char *req = malloc(n + 1);
  if (req == NULL || !read_exactly(out, req, n)) _exit(125);
  *len = n;
  return req;
}

/* The request's four NUL-ended fields into f[], and where the environment starts; exits 125 when one is missing. */
static char *request_fields(char *req, char *end, char *f[4], int fail) {
  char *p = req;
  for (int k = 0; k < 4; k++) {
    char *nul = memchr(p, 0, (size_t)(end - p));
    if (nul == NULL) {
      report(fail, 'E', EINVAL);
      _exit(125);
    }
    f[k] = p;
    p = nul + 1;
  }
  return p;
}

/* The environment from p to end: its NUL-ended NAME=value entries, NULL-terminated; exits 125 without memory. */
static char **request_env(char *p, char *end, int fail) {
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
  return envp;
}

/* The input (empty: /dev/null, `p`: a pipe, `tCOLS,ROWS`: a terminal) into *in or *tty; exits 125 on failure. */
static void open_input(const char *token, const char *what, int *in, int *tty, int fail) {
  int failed = 0;
  if (what[0] == 'p' && what[1] == 0) {
    // A pipe run's stdin: a connection of its own to the helper (`TOKENi`), only read.
    if ((*in = link_to(token, TOKEN_LEN, 'i')) < 0 || shutdown(*in, SHUT_WR) != 0) failed = errno ? errno : EIO;
  } else if (what[0] == 't')
    failed = make_terminal(token, what, tty);
  else if (what[0] != 0) failed = EINVAL;
  if (failed) {
    report(fail, what[0] == 't' ? 'T' : 'I', failed);
    _exit(125);
  }
}

/* Descriptors 0, 1, 2: the terminal, or stdin (the pipe, else /dev/null) and the two streams; exits 125 on failure. */
static void connect_stdio(int in, int tty, int out, int err, int fail) {
  int null = in >= 0 || tty >= 0 ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
  int fd0 = tty >= 0 ? tty : in >= 0 ? in : null;
  if (fd0 < 0 || dup2(fd0, 0) < 0 || dup2(tty >= 0 ? tty : out, 1) < 0 || dup2(tty >= 0 ? tty : err, 2) < 0) {
    report(fail, 'E', errno);
    _exit(125);
  }
}

/*
 * The process that becomes the run's /bin/sh: its two streams connected, a session of its own, it
 * waits for its request on its stdout connection, says it took it (ACK, the first byte of that
 * stream), and execs. It dies with its reaper (a run never runs without one).
 */
void shell_to_be(const char *token, pid_t reaper, int fail) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != reaper) _exit(125);
  int out = link_to(token, TOKEN_LEN, 'o');
  if (out < 0) _exit(125);
  int err = link_to(token, TOKEN_LEN, 'e');
  if (err < 0) _exit(125);
  setsid();
  size_t n;
  char *req = read_request(out, &n);
  shutdown(out, SHUT_RD);
  if (!put(out, ACK, 1)) _exit(125);
  /* f[0]: the input; f[1] the umask, f[2] the cwd, f[3] the script; the environment after them. */
  char *f[4], *end = req + n;
  char **envp = request_env(request_fields(req, end, f, fail), end, fail);
  int in = -1, tty = -1;
  open_input(token, f[0], &in, &tty, fail);
  if (*f[1] != 0) umask((mode_t)strtol(f[1], NULL, 8));
  if (chdir(f[2]) < 0) {
    report(fail, 'C', errno);
    _exit(125);
  }
  connect_stdio(in, tty, out, err, fail);
  default_signals();
  char *argv[] = {"/bin/sh", "-c", f[3], NULL};
  execve("/bin/sh", argv, envp);
  report(fail, 'E', errno);
  _exit(127);
}
