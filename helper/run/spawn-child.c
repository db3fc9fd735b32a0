// The child of a plain run, started without forking the helper (helper/run/spawn.h): vfork
// and exec, every signal's disposition back to the default and the mask empty (as libuv does for
// Node's spawn: Node ignores SIGPIPE, and an ignored signal stays ignored across exec).
#define _GNU_SOURCE
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

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
pid_t start_child(struct start *s) {
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
