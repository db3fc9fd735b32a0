// The walls' terminal channel (helper/walls/channel.ts): how a terminal run's pseudo-terminal,
// made inside the walls, reaches the helper. The helper keeps one end of a SOCK_SEQPACKET socket
// pair and hands the other to each pane's walls (bwrap's descriptor 5, the C waiter's); a run's
// child that made its terminal sends one message on it, `T` and its spare's 32-hex-digit token,
// with the terminal's master as SCM_RIGHTS, and closes its own copy before its exec (the run never
// holds the channel). A thread of its own receives (Node's streams would drop the descriptor) and
// hands (token, fd) to JavaScript; a message that is not exactly that, or whose descriptor is not
// a pseudo-terminal's master (TIOCGPTN), is dropped and its descriptors closed.
//
//   open(onMaster) -> wallsFd     onMaster(token, fd): on the JS thread, the fd the helper's own
//
// Built with small-thread.c by scripts/build-native.mjs into generated/ and dist/generated/ (not
// committed).
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include "../run/small-thread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define TOKEN_LEN 32
#define MAX_FDS 4

typedef struct {
  char token[TOKEN_LEN];
  int fd;
} arrival;

typedef struct {
  int fd;
  napi_threadsafe_function tsfn;
} channel;

static void call_js(napi_env env, napi_value cb, void *context, void *data) {
  (void)context;
  arrival *a = data;
  if (env == NULL || cb == NULL) {
    close(a->fd);
    free(a);
    return;
  }
  napi_value argv[2], undefined;
  napi_create_string_latin1(env, a->token, TOKEN_LEN, &argv[0]);
  napi_create_int32(env, a->fd, &argv[1]);
  napi_get_undefined(env, &undefined);
  free(a);
  napi_call_function(env, undefined, cb, 2, argv, NULL);
}

static int well_formed(const char *m, ssize_t n) {
  if (n != TOKEN_LEN + 1 || m[0] != 'T') return 0;
  for (int i = 1; i <= TOKEN_LEN; i++)
    if (!((m[i] >= '0' && m[i] <= '9') || (m[i] >= 'a' && m[i] <= 'f'))) return 0;
  return 1;
}

/* Receives until the channel's end (never, while the helper keeps the other end: its life). */
static void *receive(void *arg) {
  channel *c = arg;
  for (;;) {
    char m[64];
    struct iovec io = {m, sizeof m};
    union {
      struct cmsghdr h;
      char b[CMSG_SPACE(MAX_FDS * sizeof(int))];
    } u;
    struct msghdr h = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
    ssize_t n = recvmsg(c->fd, &h, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    int fds[MAX_FDS], count = 0;
    for (struct cmsghdr *x = CMSG_FIRSTHDR(&h); x != NULL; x = CMSG_NXTHDR(&h, x)) {
      if (x->cmsg_level != SOL_SOCKET || x->cmsg_type != SCM_RIGHTS) continue;
      size_t k = (x->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < k && count < MAX_FDS; i++) memcpy(&fds[count++], CMSG_DATA(x) + i * sizeof(int), sizeof(int));
    }
    unsigned int pty;
    int ok = n > 0 && count == 1 && !(h.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) && well_formed(m, n) &&
             ioctl(fds[0], TIOCGPTN, &pty) == 0;
    arrival *a = ok ? malloc(sizeof *a) : NULL;
    if (a != NULL) {
      memcpy(a->token, m + 1, TOKEN_LEN);
      a->fd = fds[0];
      if (napi_call_threadsafe_function(c->tsfn, a, napi_tsfn_blocking) != napi_ok) {
        close(a->fd);
        free(a);
      }
    } else
      for (int i = 0; i < count; i++) close(fds[i]);
    if (n <= 0) break;
  }
  close(c->fd);
  napi_release_threadsafe_function(c->tsfn, napi_tsfn_release);
  free(c);
  return NULL;
}

static napi_value open_channel(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value cb;
  napi_valuetype t;
  if (napi_get_cb_info(env, info, &argc, &cb, NULL, NULL) != napi_ok || argc != 1 ||
      napi_typeof(env, cb, &t) != napi_ok || t != napi_function) {
    napi_throw_type_error(env, NULL, "open(onMaster)");
    return NULL;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    napi_throw_error(env, NULL, "socketpair failed");
    return NULL;
  }
  /* Nothing is sent to the walls on this channel: the helper's end only receives. */
  shutdown(sv[0], SHUT_WR);
  channel *c = calloc(1, sizeof *c);
  napi_value name;
  napi_create_string_utf8(env, "tmux-run walls channel", NAPI_AUTO_LENGTH, &name);
  int ok = c != NULL &&
           napi_create_threadsafe_function(env, cb, NULL, name, 0, 1, NULL, NULL, NULL, call_js, &c->tsfn) == napi_ok;
  if (ok) {
    c->fd = sv[0];
    /* The helper may exit while the channel is open: it does not keep the event loop alive. */
    napi_unref_threadsafe_function(env, c->tsfn);
    ok = small_thread(receive, c);
    if (!ok) napi_release_threadsafe_function(c->tsfn, napi_tsfn_abort);
  }
  if (!ok) {
    free(c);
    close(sv[0]);
    close(sv[1]);
    napi_throw_error(env, NULL, "the channel's thread could not be started");
    return NULL;
  }
  napi_value result;
  napi_create_int32(env, sv[1], &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "open", NAPI_AUTO_LENGTH, open_channel, NULL, &fn);
  napi_set_named_property(env, exports, "open", fn);
  return exports;
}
