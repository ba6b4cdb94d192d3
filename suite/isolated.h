/* Running code that may crash on damaged input in a child process, so that only the child dies.
 *
 * Why: libhdf5 parses the metadata of the oldest HDF5 format without checksums, and one damaged
 * byte can make it crash (SIGSEGV inside the library) instead of returning an error. A results
 * file whose seal vouches for every byte is never parsed damaged (file_seal.h); a file without
 * a checked seal (left by a killed run, or written before seals) is read first in a child. If
 * the child dies, the caller refuses the file with an error that names it, instead of crashing.
 *
 * The child is a fork: it sees the caller's memory as it was, and nothing it does reaches the
 * caller except the small number it returns. */
#ifndef MB_ISOLATED_H
#define MB_ISOLATED_H

#include <stdbool.h>

#include "error.h"

/* The largest value an isolated function may return (exit codes carry it). */
#define MB_ISOLATED_MAX_CODE 63

/* Work to run isolated: returns a code in 0..MB_ISOLATED_MAX_CODE (anything else counts as an
 * abnormal end of the child). err is the child's own, empty at the start: a message fn leaves
 * there with a non-zero code reaches the caller (why the work failed, not just that it did). */
typedef int (*mb_isolated_fn)(void *ctx, mb_error *err);

typedef enum mb_isolated_end {
  MB_ISOLATED_RETURNED, /* fn returned its code */
  MB_ISOLATED_DIED,     /* the child died of a signal, or ended without fn returning */
  MB_ISOLATED_NOT_RUN   /* no child could be started (fork failed) */
} mb_isolated_end;

/* Runs fn(ctx, child's err) in a forked child whose stdout and stderr go to /dev/null (a
 * sanitizer's report or a library's messages about the damage are not the caller's output), and
 * waits for it. In the child, blocks malloc takes from its heap are filled with non-zero garbage
 * (glibc's M_PERTURB; not the small blocks its per-thread cache hands back), so that a library's
 * read of memory it never wrote crashes there more often than in the caller. RETURNED: *code is
 * fn's value, and when it is not 0 and fn left a message, err holds that message (err is left alone
 * otherwise). Otherwise err says what happened, e.g. "crashed with signal 11 (Segmentation fault)
 * in a child process", or "exit status 1" after a sanitizer caught the fault. Call it from a thread
 * that holds no lock that fn needs: the child has the calling thread only. The message comes back
 * through a pipe that the caller reads to its end: a process that fn starts and leaves running
 * would keep the caller waiting. */
mb_isolated_end mb_isolated_run(mb_isolated_fn fn, void *ctx, int *code, mb_error *err);

/* What mb_supervise returns in the child, which goes on with the work. */
#define MB_SUPERVISED_CHILD (-1)
/* What it returns in the parent when the child died of a fault. */
#define MB_SUPERVISED_CRASHED (-2)

/* Splits the process in two, for work that may crash on damaged input and whose output goes
 * where the process's does (a command of the CLI): the child gets MB_SUPERVISED_CHILD and does
 * the work; the parent waits for it and gets its exit status (0..255), or MB_SUPERVISED_CRASHED
 * with err saying how it died when a fault signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT)
 * ended it. Any other signal (SIGPIPE when a reader closed the pipe, SIGINT, SIGTERM) ends the
 * parent too, the same way. When no child can be started, the caller does the work itself:
 * MB_SUPERVISED_CHILD, err saying why. Flushes stdio first, so that nothing buffered is
 * written twice. */
int mb_supervise(mb_error *err);

#endif
