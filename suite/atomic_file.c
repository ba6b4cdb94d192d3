#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"

#define TEMP_SUFFIX ".tmp.XXXXXX"

struct mb_atomic_file {
  char *path; /* the target */
  char *tmp;  /* the temporary beside it */
  FILE *f;    /* the stream over fd (mb_atomic_file_open), else NULL */
  int fd;     /* the temporary, open for writing */
  bool sync_dir;
};

/* The process's umask without changing it: the "Umask:" line of /proc/self/status (Linux
 * >= 4.7); 022, the usual one, where there is none. */
static mode_t current_umask(void) {
  mode_t mask = 022;
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return mask;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Umask:", 6)) continue;
    char *end = NULL;
    long v = strtol(line + 6, &end, 8);
    if (end != line + 6 && v >= 0 && v <= 0777) mask = (mode_t)v;
    break;
  }
  fclose(f);
  return mask;
}

static void release(mb_atomic_file *a) {
  free(a->path);
  free(a->tmp);
  free(a);
}

/* Closes the temporary (if open), removes it and frees a. */
static void discard(mb_atomic_file *a) {
  if (a->f)
    fclose(a->f);
  else if (a->fd >= 0)
    close(a->fd);
  unlink(a->tmp);
  release(a);
}

static mb_atomic_file *open_temp(const char *path, const mb_atomic_options *opt, bool stream,
                                 mb_error *err) {
  if (!path || !*path) return mb_fail(err, "cannot write a file of an empty name"), NULL;
  if (!mb_path_check_replaceable(path, err)) return NULL;
  mb_atomic_file *a = calloc(1, sizeof *a);
  size_t n = strlen(path);
  if (a) a->path = strdup(path);
  if (a) a->tmp = malloc(n + sizeof TEMP_SUFFIX);
  if (!a || !a->path || !a->tmp) {
    if (a) release(a);
    return mb_fail(err, "%s: out of memory", path), NULL;
  }
  memcpy(a->tmp, path, n);
  memcpy(a->tmp + n, TEMP_SUFFIX, sizeof TEMP_SUFFIX);
  a->sync_dir = opt && opt->sync_dir;
  /* the final permissions, decided before the temporary exists */
  struct stat st;
  mode_t mode = 0666 & ~current_umask();
  if (opt && opt->keep_mode && stat(path, &st) == 0 && S_ISREG(st.st_mode))
    mode = st.st_mode & 07777;
  a->fd = mkstemp(a->tmp);
  if (a->fd < 0) {
    mb_fail(err, "%s: cannot create a temporary file beside it: mkstemp %s" TEMP_SUFFIX ": %s",
            path, path, strerror(errno));
    release(a);
    return NULL;
  }
  (void)fcntl(a->fd, F_SETFD, FD_CLOEXEC); /* not inherited by a solver's or gnuplot's child */
  if (fchmod(a->fd, mode) != 0) {
    mb_fail(err, "%s: fchmod %s to %04o: %s", path, a->tmp, (unsigned)mode, strerror(errno));
    discard(a);
    return NULL;
  }
  if (stream && !(a->f = fdopen(a->fd, "w"))) {
    mb_fail(err, "%s: fdopen %s: %s", path, a->tmp, strerror(errno));
    discard(a);
    return NULL;
  }
  return a;
}

mb_atomic_file *mb_atomic_file_open(const char *path, const mb_atomic_options *opt, mb_error *err) {
  return open_temp(path, opt, true, err);
}

mb_atomic_file *mb_atomic_file_open_named(const char *path, const mb_atomic_options *opt,
                                          mb_error *err) {
  return open_temp(path, opt, false, err);
}

FILE *mb_atomic_file_stream(mb_atomic_file *a) { return a->f; }

const char *mb_atomic_file_path(const mb_atomic_file *a) { return a->path; }

const char *mb_atomic_file_temp_path(const mb_atomic_file *a) { return a->tmp; }

void mb_atomic_file_abort(mb_atomic_file *a) {
  if (a) discard(a);
}

/* Makes the rename durable: fsyncs the target's directory. Best effort (see the header). */
static void sync_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = slash == path ? strdup("/")
              : slash       ? strndup(path, (size_t)(slash - path))
                            : strdup(".");
  int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
  free(dir);
}

/* Writes out, fsyncs and closes the temporary; false after err (the temporary still there). */
static bool finish_temp(mb_atomic_file *a, mb_error *err) {
  bool ok = true;
  if (a->f) {
    if (fflush(a->f) != 0)
      ok = mb_fail(err, "%s: fflush %s: %s", a->path, a->tmp, strerror(errno));
    else if (ferror(a->f))
      ok = mb_fail(err, "%s: write %s: failed (disk full?)", a->path, a->tmp);
  }
  if (ok && fsync(a->fd) != 0)
    ok = mb_fail(err, "%s: fsync %s: %s", a->path, a->tmp, strerror(errno));
  int closed = a->f ? fclose(a->f) : close(a->fd);
  int e = errno;
  a->f = NULL;
  a->fd = -1;
  if (ok && closed != 0) ok = mb_fail(err, "%s: close %s: %s", a->path, a->tmp, strerror(e));
  return ok;
}

bool mb_atomic_file_commit(mb_atomic_file *a, mb_error *err) {
  bool ok = finish_temp(a, err);
  if (ok && rename(a->tmp, a->path) != 0)
    ok = mb_fail(err, "%s: rename %s over it: %s", a->path, a->tmp, strerror(errno));
  if (!ok) {
    discard(a);
    return false;
  }
  if (a->sync_dir) sync_dir(a->path);
  release(a);
  return true;
}

bool mb_atomic_file_commit_new(mb_atomic_file *a, bool *existed, mb_error *err) {
  *existed = false;
  bool ok = finish_temp(a, err);
  if (ok && link(a->tmp, a->path) != 0) {
    *existed = errno == EEXIST;
    ok = mb_fail(err, "%s: link %s to it: %s", a->path, a->tmp, strerror(errno));
  }
  unlink(a->tmp); /* after link, the target holds the file */
  if (ok && a->sync_dir) sync_dir(a->path);
  release(a);
  return ok;
}

bool mb_atomic_file_write(const char *path, const void *data, size_t len,
                          const mb_atomic_options *opt, mb_error *err) {
  mb_atomic_file *a = mb_atomic_file_open(path, opt, err);
  if (!a) return false;
  if (len > 0 && fwrite(data, 1, len, a->f) != len) {
    mb_fail(err, "%s: write %s: %s", path, a->tmp, strerror(errno));
    discard(a);
    return false;
  }
  return mb_atomic_file_commit(a, err);
}
