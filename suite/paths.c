#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *mb_data_dir(const char *flag) {
  if (flag && *flag) return flag;
  const char *env = getenv("MALLOCBENCH_DATA");
  if (env && *env) return env;
  return MB_SOURCE_DIR "/../shared/data";
}

const char *mb_source_dir(void) {
  const char *env = getenv("MALLOCBENCH_HOME");
  if (env && *env) return env;
  return MB_SOURCE_DIR;
}

char *mb_cache_dir(char *out, size_t n) {
  return mb_path_join(out, n, mb_source_dir(), "results/cache");
}

bool mb_path_check_replaceable(const char *path, mb_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) return true; /* absent (or unreachable: the write will say why) */
  if (S_ISREG(st.st_mode)) return true;
  return mb_fail(err, "%s: exists and is not a regular file (%s); refusing to replace it", path,
                 S_ISDIR(st.st_mode)    ? "a directory"
                 : S_ISCHR(st.st_mode)  ? "a character device"
                 : S_ISBLK(st.st_mode)  ? "a block device"
                 : S_ISFIFO(st.st_mode) ? "a FIFO"
                                        : "a socket or other special file");
}

char *mb_path_join(char *out, size_t n, const char *a, const char *b) {
  if (b[0] == '/') a = "";
  size_t la = strlen(a);
  int need_sep = la > 0 && a[la - 1] != '/';
  int w = snprintf(out, n, "%s%s%s", a, need_sep ? "/" : "", b);
  if (w < 0 || (size_t)w >= n) return NULL;
  return out;
}

int mb_mkdir_p(const char *path) {
  char buf[4096];
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, len + 1);
  for (char *p = buf + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
      *p = '/';
    }
  }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
  return 0;
}

char *mb_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *data = malloc(cap);
  if (!data) {
    fclose(f);
    return NULL;
  }
  for (;;) {
    if (n + 1 >= cap) {
      char *p = realloc(data, cap * 2);
      if (!p) {
        free(data);
        fclose(f);
        errno = ENOMEM;
        return NULL;
      }
      data = p;
      cap *= 2;
    }
    size_t r = fread(data + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(data);
    errno = EIO;
    return NULL;
  }
  data[n] = '\0';
  if (len) *len = n;
  return data;
}
