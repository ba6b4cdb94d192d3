#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

bool mb_path_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool mb_path_check_distinct(const char *out, const char *in, const char *in_role, mb_error *err) {
  if (!out || !in || !mb_path_same_file(out, in)) return true;
  return mb_fail(err, "%s: is also %s (%s); refusing to overwrite it", out, in_role, in);
}

const char *mb_file_kind(mode_t mode) {
  return S_ISREG(mode)    ? "a regular file"
         : S_ISDIR(mode)  ? "a directory"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISFIFO(mode) ? "a FIFO"
                          : "a socket or other special file";
}

bool mb_path_check_replaceable(const char *path, mb_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) return true; /* absent (or unreachable: the write will say why) */
  if (S_ISREG(st.st_mode)) return true;
  return mb_fail(err, "%s: exists and is not a regular file (%s); refusing to replace it", path,
                 mb_file_kind(st.st_mode));
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

/* Opens path for reading without waiting on a FIFO that has no writer (a plain open blocks until
 * one comes; a read then sees end of file at once), and refuses a directory with EISDIR, which a
 * plain fopen opens and a read then fails on as EIO. */
static FILE *open_for_reading(const char *path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  int flags = fcntl(fd, F_GETFL);
  if (fstat(fd, &st) != 0 || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return NULL;
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    errno = EISDIR;
    return NULL;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

bool mb_write_all(int fd, const void *buf, size_t len) {
  const char *at = buf;
  while (len > 0) {
    ssize_t w = write(fd, at, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    at += w;
    len -= (size_t)w;
  }
  return true;
}

char *mb_read_file(const char *path, size_t *len) {
  FILE *f = open_for_reading(path);
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
