// A detached thread on a small stack, for the addons' waits (exit-watch.c's waitpid,
// helper/walls/fd-channel.c's recvmsg): built into each addon that uses it
// (scripts/native-parts.mjs), hidden. It lives here, beside the spawn that needed it first; the
// walls' channel includes it from helper/run/ (the walls already build on the runner's terms).
#ifndef TMUX_RUN_SMALL_THREAD_H
#define TMUX_RUN_SMALL_THREAD_H

/* The stack of each such thread: it only waits in one system call and hands on what it got. */
#define SMALL_THREAD_STACK (64 * 1024)

/* Runs fn(arg) on a new detached thread of SMALL_THREAD_STACK bytes; 1 when it started, else 0. */
__attribute__((visibility("hidden"))) int small_thread(void *(*fn)(void *), void *arg);

#endif
