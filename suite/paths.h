/* Where things are: the external data directory, the project's own datasets, results. */
#ifndef MB_PATHS_H
#define MB_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* The external data directory: `flag` (a --data argument) when not NULL, else the environment
 * variable MALLOCBENCH_DATA, else ../shared/data beside the source tree. */
const char *mb_data_dir(const char *flag);
/* The source tree's root (where datasets/, plots/, paper/ live): MALLOCBENCH_HOME when set,
 * else the directory the binary was configured from. */
const char *mb_source_dir(void);
/* The cache of generated and imported workloads, results/cache under mb_source_dir(), into out
 * (size n); returns out, or NULL when it does not fit. */
char *mb_cache_dir(char *out, size_t n);
/* Joins a and b with one '/' into out (size n); returns out, or NULL when it does not fit. */
char *mb_path_join(char *out, size_t n, const char *a, const char *b);
/* Creates a directory and its parents (like mkdir -p); 0 on success, -1 with errno set. */
int mb_mkdir_p(const char *path);
/* Whether a and b name the same existing file (device and inode), e.g. an output path that is
 * also an input: writing it would destroy the input. False when either does not exist. */
bool mb_path_same_file(const char *a, const char *b);
/* False, with "OUT: is also INPUT_ROLE (IN); refusing to overwrite it", when out and in are the
 * same existing file; true otherwise (also when either is NULL). */
bool mb_path_check_distinct(const char *out, const char *in, const char *in_role, mb_error *err);
/* What a file of this mode is, for messages: "a regular file", "a directory", "a FIFO", ... */
const char *mb_file_kind(mode_t mode);
/* Whether an output may be written to `path` by writing a temporary file and renaming it onto
 * `path`: true when nothing is there or it is a regular file (symbolic links followed); false,
 * with an error naming it, for a directory, device, FIFO or socket, which the rename would
 * silently replace (`-o /dev/null` would otherwise delete the device node). */
bool mb_path_check_replaceable(const char *path, mb_error *err);
/* Reads a whole file into a NUL-terminated malloc'd buffer; NULL (errno set) on failure: EISDIR
 * for a directory. A FIFO without a writer reads as empty at once instead of blocking. */
char *mb_read_file(const char *path, size_t *len);
/* Writes all len bytes of buf to fd, retrying short and interrupted writes; false (errno set,
 * EIO when the file takes no byte) when it cannot. */
bool mb_write_all(int fd, const void *buf, size_t len);

#endif
