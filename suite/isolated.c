#include "isolated.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paths.h"

/* A returning child exits with RETURNED + its code, so that an exit status the child's code did
 * not choose (1 from a sanitizer, 127 from the shell, ...) is not read as a returned value. */
#define RETURNED 64

/* glibc's malloc perturbation byte for the child: blocks are handed out filled with its
 * complement (0x5a), and filled with it (0xa5) when freed */
#define CHILD_MALLOC_PERTURB 0xa5

/* The signals that mean the code crashed, rather than that it was stopped from outside. */
static const int FAULTS[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define N_FAULTS (sizeof FAULTS / sizeof *FAULTS)

static bool is_fault(int sig) {
  for (size_t i = 0; i < N_FAULTS; i++)
    if (FAULTS[i] == sig) return true;
  return false;
}

static void describe_death(int status, mb_error *err) {
  if (WIFSIGNALED(status))
    mb_fail(err, "crashed with signal %d (%s) in a child process", WTERMSIG(status),
            strsignal(WTERMSIG(status)));
  else if (WIFEXITED(status))
    mb_fail(err, "ended abnormally (exit status %d) in a child process", WEXITSTATUS(status));
  else
    mb_fail(err, "ended abnormally (wait status %d) in a child process", status);
}

/* Waits for pid; false with err set when waiting fails. */
static bool wait_child(pid_t pid, int *status, mb_error *err) {
  while (waitpid(pid, status, 0) < 0)
    if (errno != EINTR) return mb_fail(err, "waiting for a child process: %s", strerror(errno));
  return true;
}

int mb_supervise(mb_error *err) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    mb_fail(err, "cannot start a child process: %s", strerror(errno));
    return MB_SUPERVISED_CHILD;
  }
  if (pid == 0) return MB_SUPERVISED_CHILD;
  int status = 0;
  if (!wait_child(pid, &status, err)) return MB_SUPERVISED_CRASHED;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !is_fault(WTERMSIG(status))) {
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
  }
  describe_death(status, err);
  return MB_SUPERVISED_CRASHED;
}

/* Reads fd until its end into buf (at most cap - 1 bytes, NUL-terminated; the rest is read and
 * dropped), so that a writer that ends is never blocked by a full pipe. */
static void read_all(int fd, char *buf, size_t cap) {
  size_t len = 0;
  char drop[256];
  for (;;) {
    bool room = len + 1 < cap;
    ssize_t n = room ? read(fd, buf + len, cap - 1 - len) : read(fd, drop, sizeof drop);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (room) len += (size_t)n;
  }
  buf[len] = '\0';
}

mb_isolated_end mb_isolated_run(mb_isolated_fn fn, void *ctx, int *code, mb_error *err) {
  /* the child's error message comes back through a pipe, which ends when the child does;
   * close-on-exec, so that a program another thread starts meanwhile does not keep it open */
  int message[2];
  if (pipe(message) != 0) {
    mb_fail(err, "cannot start a child process: pipe: %s", strerror(errno));
    return MB_ISOLATED_NOT_RUN;
  }
  fcntl(message[0], F_SETFD, FD_CLOEXEC);
  fcntl(message[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    mb_fail(err, "cannot start a child process: %s", strerror(errno));
    close(message[0]);
    close(message[1]);
    return MB_ISOLATED_NOT_RUN;
  }
  if (pid == 0) {
    close(message[0]);
    /* a fault ends the child: no handler of the caller's (a test framework's, which would go
     * on running the caller's code in the child) gets to recover from it */
    for (size_t i = 0; i < N_FAULTS; i++) signal(FAULTS[i], SIG_DFL);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, STDOUT_FILENO);
      dup2(devnull, STDERR_FILENO);
    }
    /* Blocks that malloc takes from its heap come to the child filled with garbage (0x5a), not
     * as the heap's history left them: a library that reads memory it never wrote (libhdf5
     * 1.10 does, in its error paths on some damaged attribute messages) meets there what makes
     * it crash, rather than bytes that happen to let it through in the child and crash the
     * caller. glibc's per-thread cache of small freed blocks (up to 1032 bytes) still hands
     * those out as they are: a filter, not a proof (the CLI runs such reads supervised). */
    mallopt(M_PERTURB, CHILD_MALLOC_PERTURB);
    mb_error child_err = {{0}};
    int c = fn(ctx, &child_err);
    /* a failed write leaves the caller without the message, nothing worse */
    if (c != 0) mb_write_all(message[1], child_err.message, strlen(child_err.message));
    /* _exit: no atexit handlers and no flush of stdio buffers the parent also holds */
    _exit(c >= 0 && c <= MB_ISOLATED_MAX_CODE ? RETURNED + c : 1);
  }
  close(message[1]);
  mb_error child_err = {{0}};
  read_all(message[0], child_err.message, sizeof child_err.message);
  close(message[0]);
  int status = 0;
  if (!wait_child(pid, &status, err)) return MB_ISOLATED_NOT_RUN;
  int s = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (s >= RETURNED && s <= RETURNED + MB_ISOLATED_MAX_CODE) {
    *code = s - RETURNED;
    if (*code != 0 && child_err.message[0] && err) *err = child_err;
    return MB_ISOLATED_RETURNED;
  }
  describe_death(status, err);
  return MB_ISOLATED_DIED;
}
