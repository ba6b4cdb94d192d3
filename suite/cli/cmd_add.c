/* mallocbench add NAME SOURCE: validates a workload and appends it to the catalogue.
 *
 * The new line is checked by the catalogue parser itself (one definition of "well formed"),
 * the workload is materialised (imported or generated, so it validates), the capacity rule
 * fills in the capacity unless given, and the file is replaced atomically (temporary file in
 * the same directory, fsync, rename): an interrupted add leaves the old catalogue intact.
 *
 * Concurrent adds (a script adding many workloads in parallel) serialise on an advisory lock,
 * flock(LOCK_EX) on the catalogue file: under it the catalogue is re-read, the name checked
 * again and the file replaced, so two adds can neither both take one name nor lose each
 * other's entry. Because the file is replaced rather than written in place, a waiter may wake
 * holding the lock of a file that is no longer the catalogue; it then retries on the new one.
 * The slow part (materialising the workload) runs before the lock, so the lock is held for a
 * read, a parse and a write. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalogue.h"
#include "commands.h"
#include "paths.h"
#include "workload.h"

#define HEADER "name kind source args hardware capacity split tags"
#define FRESH_CATALOGUE \
  "# mallocbench catalogue: one workload per line; format in datasets/CATALOGUE.md\n" HEADER "\n"

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: mallocbench add NAME SOURCE [--kind K] [--hardware H] [--capacity C]\n"
      "                       [--split train|test] [--tags T1,T2] [--args A]\n"
      "                       [--catalogue FILE] [--data DIR] [--cache DIR]\n\n"
      "Validates a workload (loads it: imports or generates it) and appends an entry to the\n"
      "catalogue (format in datasets/CATALOGUE.md). The file is replaced atomically, under an\n"
      "advisory lock (flock) on it: concurrent adds are safe.\n"
      "  NAME          unique name: letters, digits and ._+- (starts with a letter or digit)\n"
      "  SOURCE        an XLA HLO text dump (.hlo), a buffer CSV (.csv), a model spec\n"
      "                (.spec), a native workload (.wl), an AlphaTensor factorization file\n"
      "                (--kind alphatensor) or builtin:standard / builtin:strassen_squared.\n"
      "                Paths under the data directory (hlo, csv, factorizations) or the source\n"
      "                tree (model, native) are stored relative to it, others absolute.\n"
      "  --kind K      hlo, csv, model, native, alphatensor (default: from the extension)\n"
      "  --hardware H  hardware profile (default tpu-v4i)\n"
      "  --capacity C  fast-memory bytes (unit B, KiB, MiB, GiB), 'profile', or 'auto'\n"
      "                (default: the capacity rule of datasets/CATALOGUE.md)\n"
      "  --split S     train or test (default test)\n"
      "  --tags T      comma-separated tags (default: real for hlo/csv, else generated)\n"
      "  --args A      generator arguments, comma-separated key=value (alphatensor:\n"
      "                n=N,dtype=bf16; hlo: fusion=on|off,pin_parameters=..,pin_outputs=..)\n"
      "  --catalogue F catalogue file (default datasets/catalogue.txt; created if absent)\n"
      "  --data DIR    external data directory; --cache DIR cache of generated workloads\n");
}

static const char *infer_kind(const char *source) {
  if (!strncmp(source, "builtin:", 8)) return "alphatensor";
  const char *dot = strrchr(source, '.');
  if (!dot) return NULL;
  if (!strcmp(dot, ".hlo")) return "hlo";
  if (!strcmp(dot, ".csv")) return "csv";
  if (!strcmp(dot, ".spec")) return "model";
  if (!strcmp(dot, ".wl")) return "native";
  return NULL;
}

/* Stores SOURCE relative to base when it lies under it, else as an absolute path. */
static bool normalise_source(const char *source, const char *base, char *out, size_t n) {
  char *real = realpath(source, NULL);
  if (!real) return false;
  char *rbase = realpath(base, NULL);
  const char *rel = real;
  size_t bl = rbase ? strlen(rbase) : 0;
  if (rbase && !strncmp(real, rbase, bl) && real[bl] == '/') rel = real + bl + 1;
  bool ok = (size_t)snprintf(out, n, "%s", rel) < n;
  if (ok && rel == real)
    fprintf(stderr, "note: %s is outside %s: stored as an absolute path\n", real, base);
  free(real);
  free(rbase);
  return ok;
}

/* Makes a rename or link in path's directory durable (the file's bytes are fsynced before).
 * Best effort: some file systems refuse fsync on a directory, and every reader already sees
 * the new catalogue. */
static void sync_parent_dir(const char *path) {
  char dir[4200];
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) : 0;
  if (n >= sizeof dir) return;
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (n == 0)
    snprintf(dir, sizeof dir, "/");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)n, path);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

typedef enum { WRITE_OK, WRITE_EXISTS, WRITE_FAILED } write_status;

/* Writes text to a temporary file beside path and fsyncs it, then renames it over path; or,
 * when `exclusive`, links it to path only if path does not exist (WRITE_EXISTS when it does:
 * another add created the catalogue first). */
static write_status write_file(const char *path, const char *text, size_t len, bool exclusive,
                               mb_error *err) {
  char tmp[4200];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp) {
    mb_fail(err, "%s: path too long", path);
    return WRITE_FAILED;
  }
  int fd = mkstemp(tmp);
  if (fd < 0) {
    mb_fail(err, "%s: cannot create a temporary file: %s", tmp, strerror(errno));
    return WRITE_FAILED;
  }
  struct stat st;
  if (!exclusive && stat(path, &st) == 0)
    fchmod(fd, st.st_mode & 07777);
  else
    fchmod(fd, 0644);
  size_t done = 0;
  while (done < len) {
    ssize_t w = write(fd, text + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += (size_t)w;
  }
  bool ok = done == len && fsync(fd) == 0;
  int saved = errno;
  ok &= close(fd) == 0;
  if (ok && (exclusive ? link(tmp, path) : rename(tmp, path)) != 0) {
    saved = errno;
    ok = false;
  }
  if (exclusive || !ok) unlink(tmp); /* after link, path holds the file */
  if (!ok && exclusive && saved == EEXIST) return WRITE_EXISTS;
  if (!ok) {
    mb_fail(err, "%s: cannot write: %s (the catalogue is unchanged)", path, strerror(saved));
    return WRITE_FAILED;
  }
  sync_parent_dir(path);
  return WRITE_OK;
}

/* Reads all of fd into a NUL-terminated malloc'd buffer; NULL (errno set) on failure. */
static char *read_fd(int fd, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) break;
      buf = bigger;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    if (r == 0) {
      buf[n] = '\0';
      *len = n;
      return buf;
    }
    n += (size_t)r;
  }
  int saved = buf ? errno : ENOMEM;
  free(buf);
  errno = saved;
  return NULL;
}

typedef enum { LOCK_HELD, LOCK_ABSENT, LOCK_STALE, LOCK_FAILED } lock_status;

/* Opens the catalogue and takes its exclusive advisory lock, waiting for other adds; *fd then
 * holds it (closing fd releases it). LOCK_ABSENT: there is no catalogue. LOCK_STALE: another
 * add replaced the file while we waited, so the lock guards nothing; try again. LOCK_FAILED:
 * after a message naming the file. */
static lock_status lock_catalogue(const char *path, int *fd) {
  /* Read-write where permitted: over NFS flock is emulated with fcntl locks, and those need a
   * writable descriptor for an exclusive lock. A read-only file in a writable directory can
   * still be replaced, as before, so fall back to reading. */
  *fd = open(path, O_RDWR | O_CLOEXEC);
  if (*fd < 0 && (errno == EACCES || errno == EROFS)) *fd = open(path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0 && errno == ENOENT) return LOCK_ABSENT;
  if (*fd < 0) {
    fprintf(stderr, "mallocbench add: %s: cannot open: %s (nothing was written)\n", path,
            strerror(errno));
    return LOCK_FAILED;
  }
  int r;
  while ((r = flock(*fd, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (r != 0) {
    fprintf(stderr,
            "mallocbench add: %s: cannot take the catalogue's lock (flock LOCK_EX): %s "
            "(nothing was written)\n",
            path, strerror(errno));
    close(*fd);
    *fd = -1;
    return LOCK_FAILED;
  }
  /* Still the catalogue? Another add may have renamed a new file over it (or removed it)
   * while we waited. */
  struct stat held, now;
  bool gone = false;
  if (fstat(*fd, &held) != 0 || ((gone = stat(path, &now) != 0) && errno != ENOENT)) {
    fprintf(stderr, "mallocbench add: %s: cannot stat: %s (nothing was written)\n", path,
            strerror(errno));
    close(*fd);
    *fd = -1;
    return LOCK_FAILED;
  }
  if (!gone && held.st_dev == now.st_dev && held.st_ino == now.st_ino) return LOCK_HELD;
  close(*fd);
  *fd = -1;
  return LOCK_STALE;
}

/* Parses catalogue text and checks that `name` is free in it; NULL after a message if not. */
static mb_catalogue *check_catalogue(const char *text, size_t len, const char *path,
                                     const char *name) {
  mb_error err;
  mb_catalogue *cat = mb_catalogue_parse(text, len, path, &err);
  if (!cat) {
    fprintf(stderr, "mallocbench add: %s\n", err.message);
    fprintf(stderr, "mallocbench add: fix the catalogue first; nothing was written\n");
    return NULL;
  }
  for (int32_t i = 0; i < cat->n_entries; i++)
    if (!strcmp(cat->entries[i].name, name)) {
      fprintf(stderr, "mallocbench add: %s:%d: a workload named '%s' already exists\n", path,
              cat->entries[i].line, name);
      mb_catalogue_free(cat);
      return NULL;
    }
  return cat;
}

/* What the commit wrote, for the summary line. */
typedef struct {
  bool created;     /* there was no catalogue: this add created it */
  int32_t line_no;  /* the new entry's line */
  int64_t capacity; /* its capacity as parsed (0: the profile's) */
} commit_result;

enum { COMMIT_RETRY = -1, COMMIT_MAX_ATTEMPTS = 1000 };

/* One attempt to append `line` (the entry `name`): under the lock, re-reads the catalogue,
 * checks it and the name, and replaces the file. Returns the exit status, or COMMIT_RETRY. */
static int commit_once(const char *cat_path, const char *name, const char *line,
                       commit_result *res) {
  int fd = -1;
  lock_status ls = lock_catalogue(cat_path, &fd);
  if (ls == LOCK_FAILED) return 1;
  if (ls == LOCK_STALE) return COMMIT_RETRY;
  size_t old_len = 0;
  char *old = ls == LOCK_HELD ? read_fd(fd, &old_len) : strdup(FRESH_CATALOGUE);
  if (old && ls == LOCK_ABSENT) old_len = strlen(old);
  int rc = 2;
  char *text = NULL;
  mb_catalogue *cat = NULL;
  if (!old) {
    fprintf(stderr, "mallocbench add: %s: cannot read: %s\n", cat_path, strerror(errno));
    goto done;
  }
  cat = check_catalogue(old, old_len, cat_path, name);
  if (!cat) goto done;
  size_t len = strlen(line);
  text = malloc(old_len + len + 3);
  if (!text) {
    fprintf(stderr, "mallocbench add: out of memory\n");
    goto done;
  }
  memcpy(text, old, old_len);
  size_t pos = old_len;
  if (pos > 0 && text[pos - 1] != '\n') text[pos++] = '\n';
  memcpy(text + pos, line, len);
  pos += len;
  text[pos++] = '\n';
  text[pos] = '\0';
  mb_error err;
  mb_catalogue *check = mb_catalogue_parse(text, pos, cat_path, &err);
  if (!check) {
    fprintf(stderr, "mallocbench add: %s\n", err.message);
    goto done;
  }
  res->created = ls == LOCK_ABSENT;
  res->line_no = check->entries[check->n_entries - 1].line;
  res->capacity = check->entries[check->n_entries - 1].capacity;
  mb_catalogue_free(check);
  write_status ws = write_file(cat_path, text, pos, ls == LOCK_ABSENT, &err);
  if (ws == WRITE_EXISTS) {
    rc = COMMIT_RETRY; /* another add created the catalogue meanwhile: append to that one */
  } else if (ws == WRITE_FAILED) {
    fprintf(stderr, "mallocbench add: %s\n", err.message);
    rc = 1;
  } else {
    rc = 0;
  }
done:
  /* Unlock only now, after the rename: the next add then finds the new catalogue. */
  if (fd >= 0) close(fd);
  mb_catalogue_free(cat);
  free(old);
  free(text);
  return rc;
}

/* Appends the entry so that concurrent adds serialise (see the top of the file). */
static int commit_entry(const char *cat_path, const char *name, const char *line,
                        commit_result *res) {
  for (int attempt = 0; attempt < COMMIT_MAX_ATTEMPTS; attempt++) {
    int rc = commit_once(cat_path, name, line, res);
    if (rc != COMMIT_RETRY) return rc;
  }
  fprintf(stderr,
          "mallocbench add: %s: replaced %d times while waiting for its lock; giving up "
          "(nothing was written)\n",
          cat_path, COMMIT_MAX_ATTEMPTS);
  return 1;
}

int mb_cmd_add(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  const char *name = NULL, *source = NULL, *kind = NULL, *hardware = "tpu-v4i", *capacity = "auto",
             *split = "test", *tags = NULL, *args = "-", *cat_path = NULL, *data = NULL,
             *cache = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char **slot = !strcmp(a, "--kind")        ? &kind
                        : !strcmp(a, "--hardware")  ? &hardware
                        : !strcmp(a, "--capacity")  ? &capacity
                        : !strcmp(a, "--split")     ? &split
                        : !strcmp(a, "--tags")      ? &tags
                        : !strcmp(a, "--args")      ? &args
                        : !strcmp(a, "--catalogue") ? &cat_path
                        : !strcmp(a, "--data")      ? &data
                        : !strcmp(a, "--cache")     ? &cache
                                                    : NULL;
    if (slot) {
      if (++i >= argc) {
        fprintf(stderr, "mallocbench add: %s needs a value\n", a);
        return 2;
      }
      *slot = argv[i];
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "mallocbench add: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    } else if (!name) {
      name = a;
    } else if (!source) {
      source = a;
    } else {
      fprintf(stderr, "mallocbench add: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  if (!name || !source) {
    usage(stderr);
    return 2;
  }
  if (!kind) kind = infer_kind(source);
  if (!kind) {
    fprintf(stderr,
            "mallocbench add: cannot infer the kind of '%s' from its extension; give "
            "--kind (hlo, csv, model, native, alphatensor)\n",
            source);
    return 2;
  }
  if (!tags) tags = (!strcmp(kind, "hlo") || !strcmp(kind, "csv")) ? "real" : "generated";
  char def_cat[4096], def_cache[4096];
  if (!cat_path)
    cat_path = mb_path_join(def_cat, sizeof def_cat, mb_source_dir(), "datasets/catalogue.txt");
  if (!cache) cache = mb_path_join(def_cache, sizeof def_cache, mb_source_dir(), "results/cache");
  if (!cat_path || !cache) {
    fprintf(stderr, "mallocbench add: source directory path too long\n");
    return 2;
  }
  const char *data_dir = mb_data_dir(data);

  /* The source as the catalogue stores it. */
  char stored[512];
  if (!strncmp(source, "builtin:", 8)) {
    snprintf(stored, sizeof stored, "%s", source);
  } else {
    bool external = !strcmp(kind, "hlo") || !strcmp(kind, "csv") || !strcmp(kind, "alphatensor");
    if (!normalise_source(source, external ? data_dir : mb_source_dir(), stored, sizeof stored)) {
      fprintf(stderr, "mallocbench add: source '%s': %s\n", source,
              errno ? strerror(errno) : "path too long");
      return 2;
    }
    if (strpbrk(stored, " \t\r\n#")) {
      fprintf(stderr,
              "mallocbench add: source '%s': the catalogue's columns are whitespace-"
              "separated, so paths may not contain blanks or '#'\n",
              stored);
      return 2;
    }
  }

  /* Check the entry with the catalogue's own parser (capacity not known yet). */
  mb_error err;
  char line[2048];
  int len = snprintf(line, sizeof line, "%s %s %s %s %s %s %s %s", name, kind, stored, args,
                     hardware, strcmp(capacity, "auto") ? capacity : "profile", split, tags);
  if (len >= (int)sizeof line || strpbrk(name, " \t\n#") || strpbrk(args, " \t\n#") ||
      strpbrk(tags, " \t\n#") || strpbrk(hardware, " \t\n#") || strpbrk(capacity, " \t\n#")) {
    fprintf(stderr,
            "mallocbench add: arguments may not contain blanks or '#' (the catalogue is "
            "whitespace-separated)\n");
    return 2;
  }
  char probe[2200];
  snprintf(probe, sizeof probe, HEADER "\n%s\n", line);
  mb_catalogue *one = mb_catalogue_parse(probe, strlen(probe), "new entry", &err);
  if (!one) {
    /* The position in the synthetic line means nothing to the user: name the option. */
    const char *f = strstr(err.message, "field '");
    static const char *const OPTION[][2] = {{"name", "NAME"},           {"kind", "--kind"},
                                            {"source", "SOURCE"},       {"args", "--args"},
                                            {"hardware", "--hardware"}, {"capacity", "--capacity"},
                                            {"split", "--split"},       {"tags", "--tags"}};
    const char *opt = "";
    for (int i = 0; f && i < 8; i++)
      if (!strncmp(f + 7, OPTION[i][0], strlen(OPTION[i][0])) &&
          f[7 + strlen(OPTION[i][0])] == '\'')
        opt = OPTION[i][1];
    fprintf(stderr, "mallocbench add: %s%s%s\n", opt, *opt ? ": " : "", f ? f : err.message);
    return 2;
  }
  mb_catalogue_entry entry = one->entries[0];
  mb_catalogue_free(one);

  /* The existing catalogue must be intact and the name free before the workload is
   * materialised; both are checked again under the lock when the entry is written. */
  size_t old_len = 0;
  char *old = mb_read_file(cat_path, &old_len);
  if (!old && errno != ENOENT) {
    fprintf(stderr, "mallocbench add: %s: cannot read: %s\n", cat_path, strerror(errno));
    return 2;
  }
  if (old) {
    mb_catalogue *cat = check_catalogue(old, old_len, cat_path, name);
    free(old);
    if (!cat) return 2;
    mb_catalogue_free(cat);
  }
  int rc = 2;
  mb_workload *w = NULL;
  mb_hardware hw;
  if (!mb_catalogue_hardware(&entry, &hw, &err)) {
    fprintf(stderr, "mallocbench add: %s\n", err.message);
    goto done;
  }
  bool missing = false;
  w = mb_catalogue_load_workload(&entry, data_dir, cache, &missing, &err);
  if (!w) {
    fprintf(stderr, "mallocbench add: %s\n", err.message);
    goto done;
  }
  char cap_text[32];
  if (!strcmp(capacity, "auto")) {
    snprintf(cap_text, sizeof cap_text, "%lld", (long long)mb_catalogue_auto_capacity(w, &hw));
    capacity = cap_text;
  }
  len = snprintf(line, sizeof line, "%s %s %s %s %s %s %s %s", name, kind, stored, args, hardware,
                 capacity, split, tags);
  if (len >= (int)sizeof line) {
    fprintf(stderr, "mallocbench add: the entry is longer than %zu bytes\n", sizeof line - 1);
    goto done;
  }
  commit_result res;
  rc = commit_entry(cat_path, name, line, &res);
  if (rc != 0) goto done;
  int64_t final_cap = res.capacity != 0 ? res.capacity : hw.capacity; /* 0: 'profile' */
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  int64_t placeable = mb_catalogue_placeable_peak(w);
  printf(
      "added '%s' to %s%s (line %d): %d ops, %d buffers, peak live %lld B (non-pinned %lld B), "
      "capacity %lld B (%.3f of the non-pinned peak)\n",
      name, cat_path, res.created ? " (new file)" : "", res.line_no, st.n_ops, st.n_buffers,
      (long long)st.peak_live_bytes, (long long)placeable, (long long)final_cap,
      placeable > 0 ? (double)final_cap / (double)placeable : 0.0);
  rc = 0;
done:
  mb_workload_free(w);
  return rc;
}
