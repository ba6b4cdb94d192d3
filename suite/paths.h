/* Where things are: the external data directory, the project's own datasets, results. */
#ifndef MB_PATHS_H
#define MB_PATHS_H

#include <stddef.h>

/* The external data directory: `flag` (a --data argument) when not NULL, else the environment
 * variable MALLOCBENCH_DATA, else ../shared/data beside the source tree. */
const char *mb_data_dir(const char *flag);
/* The source tree's root (where datasets/, plots/, paper/ live): MALLOCBENCH_HOME when set,
 * else the directory the binary was configured from. */
const char *mb_source_dir(void);
/* Joins a and b with one '/' into out (size n); returns out, or NULL when it does not fit. */
char *mb_path_join(char *out, size_t n, const char *a, const char *b);
/* Creates a directory and its parents (like mkdir -p); 0 on success, -1 with errno set. */
int mb_mkdir_p(const char *path);
/* Reads a whole file into a NUL-terminated malloc'd buffer; NULL (errno set) on failure. */
char *mb_read_file(const char *path, size_t *len);

#endif
