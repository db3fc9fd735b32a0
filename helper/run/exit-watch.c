// A plain run's end, waited for by a thread of its own (waitpid on that pid only, as libuv waits
// only for its own children) and reported to JavaScript on its thread (helper/run/spawn.h).
#define _GNU_SOURCE
#include "spawn.h"
#include "small-thread.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>

typedef struct {
  pid_t pid;
  int status;
  int waited; /* 0: waitpid failed (nothing is known of the end) */
  napi_threadsafe_function tsfn;
} exit_watch;

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

/* On the watch's own thread: waits for the one pid, then hands its status to the JS thread. */
static void *wait_exit(void *arg) {
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

/* The thread (small-thread.h) and the threadsafe function it calls; nothing left behind when either fails. */
int watch_exit(napi_env env, napi_value on_exit, pid_t pid) {
  exit_watch *w = calloc(1, sizeof *w);
  napi_value name;
  napi_create_string_utf8(env, "tmux-run exit watch", NAPI_AUTO_LENGTH, &name);
  int ok = w != NULL &&
           napi_create_threadsafe_function(env, on_exit, NULL, name, 0, 1, NULL, NULL, NULL, call_js, &w->tsfn) ==
               napi_ok;
  if (ok) {
    w->pid = pid;
    ok = small_thread(wait_exit, w);
    if (!ok) napi_release_threadsafe_function(w->tsfn, napi_tsfn_abort);
  }
  if (!ok) free(w);
  return ok;
}
