// A plain run's spawn without forking the helper: vfork and exec (no page table of the helper's
// heap is copied) of a program in a session of its own, stdin from /dev/null (or a pipe the helper
// writes, for input pipe), stdout and stderr on two new pipes (or, for input terminal, all three on
// a new pseudo-terminal whose slave becomes the session's controlling terminal), every signal's disposition back to the default and the signal mask empty (as
// libuv does for Node's spawn: Node ignores SIGPIPE, and an ignored signal stays ignored across
// exec). Its end is waited for by a thread of its own
// (waitpid on that pid only, as libuv waits only for its own children) and reported to JavaScript.
//
// Built by scripts/build-native.mjs into generated/ and dist/generated/ (not committed); loaded
// by src/os/native-spawn.ts, which falls back to Node's spawn when it is absent.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

typedef struct {
  pid_t pid;
  int status;
  int waited; /* 0: waitpid failed (nothing is known of the end) */
  napi_threadsafe_function tsfn;
} exit_watch;

/* Throws an Error whose message names the call and the errno, with `code` the errno's name. */
static napi_value throw_errno(napi_env env, const char *what, int err) {
  const char *name = strerrorname_np(err);
  char message[160];
  snprintf(message, sizeof message, "%s %s (%s)", what, name ? name : "EUNKNOWN", strerror(err));
  napi_value msg, code, error;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &msg);
  napi_create_string_utf8(env, name ? name : "EUNKNOWN", NAPI_AUTO_LENGTH, &code);
  napi_create_error(env, code, msg, &error);
  napi_throw(env, error);
  return NULL;
}

/* On the JS thread: onExit(code, signal), code -1 when the process was signaled, both -1 when unknown. */
static void call_js(napi_env env, napi_value cb, void *context, void *data) {
  (void)context;
  exit_watch *w = data;
  if (env != NULL && cb != NULL) {
    int code = -1, sig = -1;
    if (w->waited && WIFEXITED(w->status)) {
      code = WEXITSTATUS(w->status);
    } else if (w->waited && WIFSIGNALED(w->status)) {
      sig = WTERMSIG(w->status);
    }
    napi_value argv[2], undefined;
    napi_create_int32(env, code, &argv[0]);
    napi_create_int32(env, sig, &argv[1]);
    napi_get_undefined(env, &undefined);
    napi_call_function(env, undefined, cb, 2, argv, NULL);
  }
  free(w);
}

static void *watch_exit(void *arg) {
  exit_watch *w = arg;
  int status = 0, r;
  do {
    r = waitpid(w->pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  w->status = status;
  w->waited = r == w->pid;
  napi_threadsafe_function tsfn = w->tsfn;
  if (napi_call_threadsafe_function(tsfn, w, napi_tsfn_blocking) != napi_ok) free(w);
  napi_release_threadsafe_function(tsfn, napi_tsfn_release);
  return NULL;
}

/* Splits a buffer of NUL-terminated strings into a NULL-terminated array (pointers into it). */
static char **split(char *data, size_t length) {
  size_t n = 0;
  for (size_t i = 0; i < length; i++) n += data[i] == '\0';
  char **out = calloc(n + 1, sizeof *out);
  if (out == NULL) return NULL;
  size_t k = 0, start = 0;
  for (size_t i = 0; i < length; i++) {
    if (data[i] == '\0') {
      out[k++] = data + start;
      start = i + 1;
    }
  }
  return out;
}

/* A Buffer of NUL-terminated strings (none at all when empty is allowed). */
static int buffer_arg(napi_env env, napi_value v, int empty_ok, char **data, size_t *length) {
  bool is;
  if (napi_is_buffer(env, v, &is) != napi_ok || !is) return 0;
  if (napi_get_buffer_info(env, v, (void **)data, length) != napi_ok) return 0;
  return *length > 0 ? (*data)[*length - 1] == '\0' : empty_ok;
}

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

/* What the child is given, and where it says what failed (the memory is shared until its exec). */
struct start {
  char **argv, **envp;
  const char *cwd;
  /* in: stdin (-1: /dev/null); tty: 1 when `in` is a pty's slave, made the controlling terminal. */
  int in, out, err, tty;
  volatile int failure;
  const char *volatile stage;
};

/* The kernel's signal set size, and a zeroed kernel sigaction: SIG_DFL, no flags, no mask, on every ABI. */
#define KSIGSET_BYTES (_NSIG / 8)
static const unsigned long kernel_sigaction_default[8];

/*
 * vfork: the child borrows the helper's memory and this thread's stack until its exec, so no page
 * table is copied. Every signal is blocked around it (the helper's handlers must not run in the
 * child); the child puts every disposition back to the default with the raw system call (glibc's
 * sigaction refuses its two internal signals, which posix_spawn would leave ignored across the
 * exec), then a session, stdin, the pipes, the cwd, an empty mask, and the exec. Only system calls
 * between vfork and exec; a failure is written to *s and the child exits 127.
 */
static pid_t start_child(struct start *s) {
  unsigned long all[KSIGSET_BYTES / sizeof(unsigned long)], old[KSIGSET_BYTES / sizeof(unsigned long)];
  memset(all, 0xff, sizeof all);
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, all, old, KSIGSET_BYTES);
  pid_t pid = vfork();
  if (pid == 0) {
    static const unsigned long none[KSIGSET_BYTES / sizeof(unsigned long)];
    for (int sig = 1; sig < _NSIG; sig++) {
      if (sig != SIGKILL && sig != SIGSTOP) syscall(SYS_rt_sigaction, sig, kernel_sigaction_default, NULL, KSIGSET_BYTES);
    }
    int fd;
    if (setsid() < 0) {
      s->stage = "setsid";
    } else if (s->tty && ioctl(s->in, TIOCSCTTY, 0) < 0) {
      s->stage = "TIOCSCTTY";
    } else if (s->in >= 0 ? dup2(s->in, 0) < 0
                          : (fd = open("/dev/null", O_RDONLY)) < 0 || (fd != 0 && (dup2(fd, 0) < 0 || close(fd) < 0))) {
      s->stage = s->in >= 0 ? "dup2" : "open /dev/null";
    } else if (dup2(s->out, 1) < 0 || dup2(s->err, 2) < 0) {
      s->stage = "dup2";
    } else if (chdir(s->cwd) < 0) {
      s->stage = "chdir";
    } else {
      syscall(SYS_rt_sigprocmask, SIG_SETMASK, none, NULL, KSIGSET_BYTES);
      execve(s->argv[0], s->argv, s->envp);
      s->stage = "spawn";
    }
    s->failure = errno;
    _exit(127);
  }
  int saved = errno;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, KSIGSET_BYTES);
  errno = saved;
  return pid;
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

/* The pipes (or the terminal) a child is given; on failure the stage and errno, nothing left open. */
struct ends {
  int out[2], err[2], in[2], master;
};

static int make_ends(struct ends *e, int mode, int cols, int rows, const char **stage) {
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

/*
 * spawn(argv, env, cwd, onExit[, mode, cols, rows]) -> [pid, stdoutFd, stderrFd, stdinFd]
 * argv, env and cwd: Buffers of NUL-terminated strings (argv[0] the program's absolute path; cwd
 * exactly one). mode 0 (the default): stdin /dev/null, stdinFd -1; 1: stdin a pipe whose write end
 * is stdinFd; 2: a pseudo-terminal of cols x rows, stdoutFd and stdinFd both its master, stderrFd
 * -1. The descriptors are close-on-exec; the caller owns them.
 */
static napi_value spawn_run(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value args[7];
  int mode = 0, cols = 80, rows = 24;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || (argc != 4 && argc != 7) ||
      (argc == 7 && (napi_get_value_int32(env, args[4], &mode) != napi_ok ||
                     napi_get_value_int32(env, args[5], &cols) != napi_ok ||
                     napi_get_value_int32(env, args[6], &rows) != napi_ok || mode < 0 || mode > 2 || cols < 1 ||
                     rows < 1 || cols > 65535 || rows > 65535))) {
    napi_throw_type_error(env, NULL, "spawn(argv, env, cwd, onExit[, mode, cols, rows])");
    return NULL;
  }
  char *argv_data, *env_data, *cwd;
  size_t argv_len, env_len, cwd_len;
  napi_valuetype cb_type;
  if (!buffer_arg(env, args[0], 0, &argv_data, &argv_len) || !buffer_arg(env, args[1], 1, &env_data, &env_len) ||
      !buffer_arg(env, args[2], 0, &cwd, &cwd_len) || napi_typeof(env, args[3], &cb_type) != napi_ok ||
      cb_type != napi_function) {
    napi_throw_type_error(env, NULL, "spawn: argv, env and cwd are NUL-terminated Buffers, onExit a function");
    return NULL;
  }
  char **argv = split(argv_data, argv_len);
  char **envp = split(env_data, env_len);
  if (argv == NULL || envp == NULL || argv[0] == NULL) {
    free(argv);
    free(envp);
    return throw_errno(env, "spawn", ENOMEM);
  }

  struct ends e;
  const char *stage;
  int failure = make_ends(&e, mode, cols, rows, &stage);
  /* The child's ends (closed here once it has them) and the helper's (returned). */
  int child_in = e.in[0], child_out = mode == 2 ? e.in[0] : e.out[1], child_err = mode == 2 ? e.in[0] : e.err[1];
  int mine[3] = {mode == 2 ? e.master : e.out[0], e.err[0], mode == 2 ? e.master : e.in[1]};
  pid_t pid = -1;
  if (!failure) {
    struct start s = {
        .argv = argv, .envp = envp, .cwd = cwd, .in = child_in, .out = child_out, .err = child_err, .tty = mode == 2};
    pid = start_child(&s);
    if (pid < 0) {
      failure = errno;
      stage = "vfork";
    } else if (s.failure) {
      failure = s.failure;
      stage = s.stage;
      while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
      }
    }
  }
  free(argv);
  free(envp);
  if (e.in[0] >= 0) close(e.in[0]);
  if (e.out[1] >= 0) close(e.out[1]);
  if (e.err[1] >= 0) close(e.err[1]);
  if (failure) {
    if (e.master >= 0) close(e.master);
    if (e.out[0] >= 0) close(e.out[0]);
    if (e.err[0] >= 0) close(e.err[0]);
    if (e.in[1] >= 0) close(e.in[1]);
    return throw_errno(env, stage, failure);
  }

  /* From here the process runs: its end must be waited for whatever else fails. */
  exit_watch *w = calloc(1, sizeof *w);
  napi_value name;
  napi_create_string_utf8(env, "tmux-run exit watch", NAPI_AUTO_LENGTH, &name);
  pthread_attr_t tattr;
  pthread_t thread;
  int ok = w != NULL &&
           napi_create_threadsafe_function(env, args[3], NULL, name, 0, 1, NULL, NULL, NULL, call_js, &w->tsfn) ==
               napi_ok;
  if (ok) {
    w->pid = pid;
    pthread_attr_init(&tattr);
    pthread_attr_setdetachstate(&tattr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&tattr, 64 * 1024);
    ok = pthread_create(&thread, &tattr, watch_exit, w) == 0;
    pthread_attr_destroy(&tattr);
    if (!ok) napi_release_threadsafe_function(w->tsfn, napi_tsfn_abort);
  }
  if (!ok) {
    /* Nothing would ever report this process's end: stop it now, and say so. */
    free(w);
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
    for (int i = 0; i < 3; i++)
      if (mine[i] >= 0 && (i != 2 || mine[2] != mine[0])) close(mine[i]);
    return throw_errno(env, "watch", EAGAIN);
  }

  napi_value result, v;
  napi_create_array_with_length(env, 4, &result);
  napi_create_int32(env, pid, &v);
  napi_set_element(env, result, 0, v);
  for (int i = 0; i < 3; i++) {
    napi_create_int32(env, mine[i], &v);
    napi_set_element(env, result, i + 1, v);
  }
  return result;
}

/*
 * echo(masterFd) -> true, false, or null: whether what is typed on a terminal shows, read through
 * its master (on Linux tcgetattr on a pty's master gives the slave's termios: the program is not
 * touched). False only for ECHO off with ICANON on: a password prompt (getpass, `stty -echo`); a
 * line editor (readline, a REPL) turns both off and draws what is typed itself.
 */
static napi_value term_echo(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg, result;
  int fd;
  struct termios t;
  if (napi_get_cb_info(env, info, &argc, &arg, NULL, NULL) != napi_ok || argc != 1 ||
      napi_get_value_int32(env, arg, &fd) != napi_ok) {
    napi_throw_type_error(env, NULL, "echo(fd)");
    return NULL;
  }
  if (tcgetattr(fd, &t) != 0) {
    napi_get_null(env, &result);
    return result;
  }
  napi_get_boolean(env, (t.c_lflag & ECHO) != 0 || (t.c_lflag & ICANON) == 0, &result);
  return result;
}

/* dup(fd) -> a second descriptor of the same open file (close-on-exec, above stdio), or -1. */
static napi_value dup_fd(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg, result;
  int fd;
  if (napi_get_cb_info(env, info, &argc, &arg, NULL, NULL) != napi_ok || argc != 1 ||
      napi_get_value_int32(env, arg, &fd) != napi_ok) {
    napi_throw_type_error(env, NULL, "dup(fd)");
    return NULL;
  }
  napi_create_int32(env, fcntl(fd, F_DUPFD_CLOEXEC, 3), &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "spawn", NAPI_AUTO_LENGTH, spawn_run, NULL, &fn);
  napi_set_named_property(env, exports, "spawn", fn);
  napi_create_function(env, "echo", NAPI_AUTO_LENGTH, term_echo, NULL, &fn);
  napi_set_named_property(env, exports, "echo", fn);
  napi_create_function(env, "dup", NAPI_AUTO_LENGTH, dup_fd, NULL, &fn);
  napi_set_named_property(env, exports, "dup", fn);
  return exports;
}
