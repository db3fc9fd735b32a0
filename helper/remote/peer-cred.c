// Who is at the other end of a connected Unix socket: the kernel's SO_PEERCRED (pid, uid, gid),
// which Node does not offer. Panes on other hosts (docs/remote.md) prove with it which process is
// at each end of the forwarded socket: on the local side the relay of `tmux-run ssh` accepts only
// its own ssh client; on the far end the helper keeps only the socket whose listener is its login
// shell's sshd. Where it is not built (no compiler), src/core/os/peer-cred.ts asks perl instead.
//
//   peer(fd) -> [pid, uid, gid]   throws on an error (not a socket, not connected)
//
// Built by scripts/build-native.mjs into generated/ and dist/generated/ (not committed).
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

static napi_value peer(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "peer(fd): fd must be a descriptor");
    return NULL;
  }
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
    napi_throw_error(env, "EPEERCRED", strerror(errno));
    return NULL;
  }
  napi_value out, v;
  napi_create_array_with_length(env, 3, &out);
  napi_create_int32(env, cred.pid, &v);
  napi_set_element(env, out, 0, v);
  napi_create_uint32(env, cred.uid, &v);
  napi_set_element(env, out, 1, v);
  napi_create_uint32(env, cred.gid, &v);
  napi_set_element(env, out, 2, v);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "peer", NAPI_AUTO_LENGTH, peer, NULL, &fn);
  napi_set_named_property(env, exports, "peer", fn);
  return exports;
}
