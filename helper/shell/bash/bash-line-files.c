// The files bash's builtin writes for the helper (helper/shell/bash/bash-line.h): the snapshot
// (helper/shell/snapshot.ts) and the answer file, each gathered in memory and written at once.
#define _GNU_SOURCE
#include "bash-line.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Writes all of LEN bytes; false on an error.
static int put_all(int fd, const char *p, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    p += n;
    len -= (size_t)n;
  }
  return 1;
}

// A file's bytes gathered in memory and written with one write(2): the helper watches the
// channel's directory, and each write would wake it (inotify) while the shell is still writing.
struct buf {
  char *p;
  size_t len, cap;
  int failed;
};

// Appends N bytes of S; once memory ran out, nothing more (the write then fails).
static void add(struct buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
}

// Writes B to FILE (FLAGS: O_EXCL or O_TRUNC), 0600 when made, and frees it. Status 0, or 1.
static int write_file(const char *file, int flags, struct buf *b) {
  int ok = !b->failed, fd = -1;
  if (ok) fd = open(file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
  if (fd < 0) {
    ok = 0;
  } else {
    ok = put_all(fd, b->p, b->len) && ok;
    ok = close(fd) == 0 && ok;
  }
  free(b->p);
  return ok ? 0 : 1;
}

// The snapshot: NONCE \0 PWD, then \0 NAME=VALUE for each exported variable (not the exported
// functions, BASH_FUNC_...), then \0 ENTRY for each argument after PWD. Status 0, or 1.
int line_snapshot(WORD_LIST *args) {
  if (!args || !args->next || !args->next->next) return USAGE;
  struct buf b = {0};
  const char *nonce = args->next->word->word;
  add(&b, nonce, strlen(nonce) + 1);
  WORD_LIST *pwd = args->next->next;
  add(&b, pwd->word->word, strlen(pwd->word->word));
  maybe_make_export_env();
  for (char **e = export_env; e && *e; e++) {
    if (strncmp(*e, "BASH_FUNC_", 10) == 0) continue;
    add(&b, "", 1);
    add(&b, *e, strlen(*e));
  }
  for (WORD_LIST *l = pwd->next; l; l = l->next) {
    add(&b, "", 1);
    add(&b, l->word->word, strlen(l->word->word));
  }
  return write_file(args->word->word, O_EXCL, &b);
}

// The answer file, rewritten whole (0600 when made), in one write.
int line_answer(WORD_LIST *args) {
  if (!args || !args->next) return USAGE;
  struct buf b = {0};
  const char *line = args->next->word->word;
  add(&b, line, strlen(line));
  add(&b, "\n", 1);
  if (strncmp(line, "K ", 2) == 0) add(&b, "\0\0", 2);
  return write_file(args->word->word, O_TRUNC, &b);
}
