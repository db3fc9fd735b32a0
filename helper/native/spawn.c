// A plain run's spawn without forking the helper: vfork and exec (no page table of the helper's
// heap is copied) of a program in a session of its own, stdin from /dev/null, stdout and stderr on
// two new pipes, every signal's disposition back to the default and the signal mask empty (as
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
#include <sys/wait.h>
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
  int out, err;
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
    } else if ((fd = open("/dev/null", O_RDONLY)) < 0 || (fd != 0 && (dup2(fd, 0) < 0 || close(fd) < 0))) {
      s->stage = "open /dev/null";
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
 * spawn(argv, env, cwd, onExit) -> [pid, stdoutFd, stderrFd]
 * argv, env and cwd: Buffers of NUL-terminated strings (argv[0] the program's absolute path; cwd
 * exactly one). The two descriptors are the pipes' read ends, close-on-exec; the caller owns them.
 */
static napi_value spawn_run(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value args[4];
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc != 4) {
    napi_throw_type_error(env, NULL, "spawn(argv, env, cwd, onExit)");
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

  int out[2] = {-1, -1}, err[2] = {-1, -1};
  int failure = 0;
  const char *stage = "pipe";
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || !above_stdio(out) || !above_stdio(err)) {
    failure = errno ? errno : EBADF;
  }
  pid_t pid = -1;
  if (!failure) {
    struct start s = {.argv = argv, .envp = envp, .cwd = cwd, .out = out[1], .err = err[1]};
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
  if (out[1] >= 0) close(out[1]);
  if (err[1] >= 0) close(err[1]);
  if (failure) {
    if (out[0] >= 0) close(out[0]);
    if (err[0] >= 0) close(err[0]);
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
    close(out[0]);
    close(err[0]);
    return throw_errno(env, "watch", EAGAIN);
  }

  napi_value result, v;
  napi_create_array_with_length(env, 3, &result);
  napi_create_int32(env, pid, &v);
  napi_set_element(env, result, 0, v);
  napi_create_int32(env, out[0], &v);
  napi_set_element(env, result, 1, v);
  napi_create_int32(env, err[0], &v);
  napi_set_element(env, result, 2, v);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "spawn", NAPI_AUTO_LENGTH, spawn_run, NULL, &fn);
  napi_set_named_property(env, exports, "spawn", fn);
  return exports;
}
