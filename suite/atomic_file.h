/* Atomic replacement of a file: a temporary beside the target, written, fsynced and renamed
 * over it, so that a reader (or a crash) sees the old file or the new one, never a half-written
 * one, under the target's name.
 *
 * Why one module: every output mallocbench writes (CSVs, reports, workloads, the catalogue and
 * its cache, checkpoints, the run journal) needs this, and seven copies of it differed in what
 * they got wrong: a fixed "PATH.tmp" name, which two processes writing the same output share
 * (one renames the other's half-written file into place, or removes it), and no fsync, after
 * which a crash of the machine can leave an empty file under the target's name.
 *
 * The temporary is "PATH.tmp.XXXXXX", made by mkstemp (a name no other writer has), in the
 * target's directory (rename only replaces within one file system). Its permissions are set at
 * once to the final file's: those a plain fopen would give, 0666 & ~umask (mkstemp makes
 * 0600), or with `keep_mode` those of the file it replaces. The umask is read from
 * /proc/self/status, as umask(2) can only read it by changing it for every thread; without
 * /proc (not Linux), 022 is assumed. A target that exists and is not a regular file (a
 * directory, device, FIFO) is refused before anything is written (paths.h's
 * mb_path_check_replaceable). Commit writes out the stream, fsyncs and closes the temporary and
 * renames it over the target; with `sync_dir` it then fsyncs the directory, so that the new
 * name survives a crash of the machine too (best effort: some file systems refuse to fsync a
 * directory, and the rename has happened either way). Every failure removes the temporary and
 * leaves the target as it was; its message names the target, the failing call and the
 * temporary, with strerror ("out.csv: fsync out.csv.tmp.Xa81Qz: No space left on device").
 *
 * A handle belongs to one thread; different handles (and processes) may write the same target
 * at once: the last commit wins, whole. */
#ifndef MB_ATOMIC_FILE_H
#define MB_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

typedef struct mb_atomic_file mb_atomic_file;

typedef struct mb_atomic_options {
  bool keep_mode; /* the permissions of the file replaced, when there is one */
  bool sync_dir;  /* fsync the target's directory after the rename */
} mb_atomic_options;

/* Starts replacing `path`: the temporary is created and open for writing through
 * mb_atomic_file_stream. `opt` NULL: all options false. NULL after err. */
mb_atomic_file *mb_atomic_file_open(const char *path, const mb_atomic_options *opt, mb_error *err);
/* The same for a writer that needs a path rather than a FILE* (libhdf5): the temporary is
 * created (empty, with its final permissions) and its name is mb_atomic_file_temp_path; the
 * caller writes it by that name and closes what it opened before committing. No stream. */
mb_atomic_file *mb_atomic_file_open_named(const char *path, const mb_atomic_options *opt,
                                          mb_error *err);

/* The stream to write to (NULL for a handle from mb_atomic_file_open_named). Not to be closed:
 * commit and abort do that. */
FILE *mb_atomic_file_stream(mb_atomic_file *a);
/* The target, and the temporary being written. */
const char *mb_atomic_file_path(const mb_atomic_file *a);
const char *mb_atomic_file_temp_path(const mb_atomic_file *a);

/* Flushes the stream (a write error it recorded fails here), fsyncs and closes the temporary
 * and renames it over the target. Frees a in every case; on failure the temporary is removed
 * and the target untouched. */
bool mb_atomic_file_commit(mb_atomic_file *a, mb_error *err);
/* The same, but the temporary becomes the target only when nothing is there (link(2), then the
 * temporary is removed): of several writers creating one file, one wins. False with *existed
 * set (and err filled) when the target exists; *existed false on any other failure. */
bool mb_atomic_file_commit_new(mb_atomic_file *a, bool *existed, mb_error *err);
/* Closes and removes the temporary without touching the target; frees a. NULL is fine. */
void mb_atomic_file_abort(mb_atomic_file *a);

/* Replaces `path` by the `len` bytes of `data` in one call (open, write, commit). */
bool mb_atomic_file_write(const char *path, const void *data, size_t len,
                          const mb_atomic_options *opt, mb_error *err);

#endif
