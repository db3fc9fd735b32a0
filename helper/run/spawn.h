// What the spawn addon's files share (built together into spawn.node by scripts/build-native.mjs):
// spawn.c answers JavaScript; spawn-child.c starts the child with vfork and exec, spawn-ends.c
// makes the pipes or the pseudo-terminal it is given, exit-watch.c waits for its end on a thread
// (small-thread.c) and reports it. Hidden: the names bind inside the addon, never to a symbol of
// Node's.
#ifndef TMUX_RUN_SPAWN_H
#define TMUX_RUN_SPAWN_H
#define NAPI_VERSION 8
#include <node_api.h>
#include <sys/types.h>

#define SPAWN_PART __attribute__((visibility("hidden")))

/* What the child is given, and where it says what failed (the memory is shared until its exec). */
struct start {
  char **argv, **envp;
  const char *cwd;
  /* in: stdin (-1: /dev/null); tty: 1 when `in` is a pty's slave, made the controlling terminal. */
  int in, out, err, tty;
  volatile int failure;
  const char *volatile stage;
};

/* The child in a session of its own, started from *s; its pid, or -1 with errno (spawn-child.c). */
SPAWN_PART pid_t start_child(struct start *s);

/* The pipes (or the terminal) a child is given; on failure the stage and errno, nothing left open. */
struct ends {
  int out[2], err[2], in[2], master;
};

/* mode 0: stdout and stderr pipes; 1: a stdin pipe too; 2: a pty of cols x rows. 0, or the errno (spawn-ends.c). */
SPAWN_PART int make_ends(struct ends *e, int mode, int cols, int rows, const char **stage);

/* A thread that waits for `pid`, then on_exit(code, signal) on the JS thread; 0 when none started (exit-watch.c). */
SPAWN_PART int watch_exit(napi_env env, napi_value on_exit, pid_t pid);

#endif
