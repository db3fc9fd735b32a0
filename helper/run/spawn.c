// A plain run's spawn without forking the helper, as a Node-API addon: vfork and exec (no page
// table of the helper's heap is copied) of a program in a session of its own (spawn-child.c),
// stdin from /dev/null (or a pipe the helper writes, for input pipe), stdout and stderr on two new
// pipes (or, for input terminal, all three on a new pseudo-terminal whose slave becomes the
// session's controlling terminal; spawn-ends.c). Its end is waited for by a thread of its own and
// reported to JavaScript (exit-watch.c). This file reads the calls and answers them.
//
// Built with the files of helper/run/spawn.h by scripts/build-native.mjs into generated/ and
// dist/generated/ (not committed); loaded by src/core/os/native-spawn.ts, which falls back to Node's
// spawn when it is absent.
#define _GNU_SOURCE
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

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

/* One spawn() call's arguments, read and checked; argv and envp are the caller's to free. */
struct call {
  napi_value on_exit;
  char **argv, **envp, *cwd;
  int mode, cols, rows;
};

/* Reads spawn()'s arguments into *c; 0 once it has thrown (a TypeError, or ENOMEM). */
static int read_call(napi_env env, napi_callback_info info, struct call *c) {
  size_t argc = 7;
  napi_value args[7];
  c->mode = 0, c->cols = 80, c->rows = 24;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || (argc != 4 && argc != 7) ||
      (argc == 7 && (napi_get_value_int32(env, args[4], &c->mode) != napi_ok ||
                     napi_get_value_int32(env, args[5], &c->cols) != napi_ok ||
                     napi_get_value_int32(env, args[6], &c->rows) != napi_ok || c->mode < 0 || c->mode > 2 ||
                     c->cols < 1 || c->rows < 1 || c->cols > 65535 || c->rows > 65535))) {
    napi_throw_type_error(env, NULL, "spawn(argv, env, cwd, onExit[, mode, cols, rows])");
    return 0;
  }
  char *argv_data, *env_data;
  size_t argv_len, env_len, cwd_len;
  napi_valuetype cb_type;
  if (!buffer_arg(env, args[0], 0, &argv_data, &argv_len) || !buffer_arg(env, args[1], 1, &env_data, &env_len) ||
      !buffer_arg(env, args[2], 0, &c->cwd, &cwd_len) || napi_typeof(env, args[3], &cb_type) != napi_ok ||
      cb_type != napi_function) {
    napi_throw_type_error(env, NULL, "spawn: argv, env and cwd are NUL-terminated Buffers, onExit a function");
    return 0;
  }
  c->on_exit = args[3];
  c->argv = split(argv_data, argv_len);
  c->envp = split(env_data, env_len);
  if (c->argv == NULL || c->envp == NULL || c->argv[0] == NULL) {
    free(c->argv);
    free(c->envp);
    throw_errno(env, "spawn", ENOMEM);
    return 0;
  }
  return 1;
}

/*
 * The child started on its ends, which are closed here once it has them: the helper's three
 * descriptors in mine[] and its pid in *pid; or the errno and *stage of what failed, nothing left open.
 */
static int start_on_ends(const struct call *c, int mine[3], pid_t *pid, const char **stage) {
  struct ends e;
  int failure = make_ends(&e, c->mode, c->cols, c->rows, stage);
  int tty = c->mode == 2;
  int child_in = e.in[0], child_out = tty ? e.in[0] : e.out[1], child_err = tty ? e.in[0] : e.err[1];
  mine[0] = tty ? e.master : e.out[0], mine[1] = e.err[0], mine[2] = tty ? e.master : e.in[1];
  *pid = -1;
  if (!failure) {
    struct start s = {.argv = c->argv, .envp = c->envp, .cwd = c->cwd, .tty = tty};
    s.in = child_in, s.out = child_out, s.err = child_err;
    *pid = start_child(&s);
    if (*pid < 0) {
      failure = errno;
      *stage = "vfork";
    } else if (s.failure) {
      failure = s.failure;
      *stage = s.stage;
      while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR) {
      }
    }
  }
  if (e.in[0] >= 0) close(e.in[0]);
  if (e.out[1] >= 0) close(e.out[1]);
  if (e.err[1] >= 0) close(e.err[1]);
  if (failure) {
    if (e.master >= 0) close(e.master);
    if (e.out[0] >= 0) close(e.out[0]);
    if (e.err[0] >= 0) close(e.err[0]);
    if (e.in[1] >= 0) close(e.in[1]);
  }
  return failure;
}

/*
 * spawn(argv, env, cwd, onExit[, mode, cols, rows]) -> [pid, stdoutFd, stderrFd, stdinFd]
 * argv, env and cwd: Buffers of NUL-terminated strings (argv[0] the program's absolute path; cwd
 * exactly one). mode 0 (the default): stdin /dev/null, stdinFd -1; 1: stdin a pipe whose write end
 * is stdinFd; 2: a pseudo-terminal of cols x rows, stdoutFd and stdinFd both its master, stderrFd
 * -1. The descriptors are close-on-exec; the caller owns them.
 */
static napi_value spawn_run(napi_env env, napi_callback_info info) {
  struct call c;
  if (!read_call(env, info, &c)) return NULL;
  int mine[3];
  pid_t pid;
  const char *stage;
  int failure = start_on_ends(&c, mine, &pid, &stage);
  free(c.argv);
  free(c.envp);
  if (failure) return throw_errno(env, stage, failure);

  /* From here the process runs: its end must be waited for whatever else fails. */
  if (!watch_exit(env, c.on_exit, pid)) {
    /* Nothing would ever report this process's end: stop it now, and say so. */
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

/* The one argument of echo(fd) and dup(fd), a descriptor; 0 once it has thrown a TypeError saying `usage`. */
static int fd_arg(napi_env env, napi_callback_info info, const char *usage, int *fd) {
  size_t argc = 1;
  napi_value arg;
  if (napi_get_cb_info(env, info, &argc, &arg, NULL, NULL) != napi_ok || argc != 1 ||
      napi_get_value_int32(env, arg, fd) != napi_ok) {
    napi_throw_type_error(env, NULL, usage);
    return 0;
  }
  return 1;
}

/*
 * echo(masterFd) -> true, false, or null: whether what is typed on a terminal shows, read through
 * its master (on Linux tcgetattr on a pty's master gives the slave's termios: the program is not
 * touched). False only for ECHO off with ICANON on: a password prompt (getpass, `stty -echo`); a
 * line editor (readline, a REPL) turns both off and draws what is typed itself.
 */
static napi_value term_echo(napi_env env, napi_callback_info info) {
  napi_value result;
  int fd;
  struct termios t;
  if (!fd_arg(env, info, "echo(fd)", &fd)) return NULL;
  if (tcgetattr(fd, &t) != 0) {
    napi_get_null(env, &result);
    return result;
  }
  napi_get_boolean(env, (t.c_lflag & ECHO) != 0 || (t.c_lflag & ICANON) == 0, &result);
  return result;
}

/* dup(fd) -> a second descriptor of the same open file (close-on-exec, above stdio), or -1. */
static napi_value dup_fd(napi_env env, napi_callback_info info) {
  napi_value result;
  int fd;
  if (!fd_arg(env, info, "dup(fd)", &fd)) return NULL;
  napi_create_int32(env, fcntl(fd, F_DUPFD_CLOEXEC, 3), &result);
  return result;
}

/* exchange(a, b): swaps two paths at once (renameat2 RENAME_EXCHANGE; both Buffers, each ended by
 * a NUL) -> 0, or the errno (ENOSYS, EINVAL where the filesystem cannot). */
static napi_value exchange_paths(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value args[2], result;
  char *a, *b;
  size_t la, lb;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc < 2 ||
      !buffer_arg(env, args[0], 0, &a, &la) || !buffer_arg(env, args[1], 0, &b, &lb)) {
    napi_throw_type_error(env, NULL, "exchange(a, b): two NUL-ended path Buffers");
    return NULL;
  }
  int r = (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */);
  napi_create_int32(env, r == 0 ? 0 : errno, &result);
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
  napi_create_function(env, "exchange", NAPI_AUTO_LENGTH, exchange_paths, NULL, &fn);
  napi_set_named_property(env, exports, "exchange", fn);
  return exports;
}
