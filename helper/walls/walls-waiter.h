// What the walls' waiter's files share (built together into walls-waiter by
// scripts/build-native.mjs): walls-waiter.c is pid 1 and each run's reaper, walls-shell.c the
// process that becomes a run's /bin/sh, walls-link.c the connections to the helper's socket.
#ifndef TMUX_RUN_WALLS_WAITER_H
#define TMUX_RUN_WALLS_WAITER_H
#include <stddef.h>
#include <sys/types.h>

#define HELPER_FD 3
/* The walls' terminal channel (helper/walls/fd-channel.c): where a terminal run's master goes. */
#define CHAN 5
#define TOKEN_LEN 32
#define ACK "A"

/* The helper's socket, named by the waiter's argument; 0 when the path is too long (walls-link.c). */
int helper_socket(const char *path);
/* A connection to the helper's socket that names its run: TOKEN then `k\n`; -1 (errno set) when it failed. */
int link_to(const char *token, size_t token_len, char kind);
/* All n bytes of p written to fd; 0 on an error. */
int put(int fd, const char *p, size_t n);
/* `X errno\n` on fd (a failure the helper names). */
void report(int fd, char what, int err);
/* Exactly n bytes of fd; 0 at its end or on an error. */
int read_exactly(int fd, char *p, size_t n);

/* The run's child, forked by its reaper: becomes the run's /bin/sh, or exits (walls-shell.c). */
void shell_to_be(const char *token, pid_t reaper, int fail);

#endif
