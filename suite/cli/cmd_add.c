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

#include "atomic_file.h"
#include "catalogue.h"
#include "commands.h"
#include "error.h"
#include "option_values.h"
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
      "  --capacity C  fast-memory bytes (units B, KiB, MiB, GiB as given; KB, MB, GB\n"
      "                stored in bytes), 'profile', or 'auto'\n"
      "                (default: the capacity rule of datasets/CATALOGUE.md)\n"
      "  --split S     train or test (default test)\n"
      "  --tags T      comma-separated tags (default: real for hlo/csv, else generated)\n"
      "  --args A      generator arguments, comma-separated key=value (alphatensor:\n"
      "                n=N,dtype=bf16; hlo: fusion=on|off,pin_parameters=..,pin_outputs=..,\n"
      "                loop_bodies=..)\n"
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
    mb_diag(stderr, "note: %s is outside %s: stored as an absolute path", real,
            rbase ? rbase : base);
  free(real);
  free(rbase);
  return ok;
}

typedef enum { WRITE_OK, WRITE_EXISTS, WRITE_FAILED } write_status;

/* Writes text to a temporary file beside path and renames it over path, keeping the
 * catalogue's permissions (atomic_file.h: the file and its directory fsynced); or, when
 * `exclusive`, makes it path only if path does not exist (WRITE_EXISTS when it does: another
 * add created the catalogue first). */
static write_status write_file(const char *path, const char *text, size_t len, bool exclusive,
                               mb_error *err) {
  mb_atomic_options opt = {.keep_mode = true, .sync_dir = true};
  mb_atomic_file *out = mb_atomic_file_open(path, &opt, err);
  bool ok = out != NULL, existed = false;
  if (ok) {
    fwrite(text, 1, len, mb_atomic_file_stream(out)); /* a short write fails the commit */
    ok =
        exclusive ? mb_atomic_file_commit_new(out, &existed, err) : mb_atomic_file_commit(out, err);
  }
  if (existed) return WRITE_EXISTS;
  if (!ok) {
    mb_fail(err, "%s (the catalogue is unchanged)", err->message);
    return WRITE_FAILED;
  }
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
    mb_diag(stderr, "mallocbench add: %s: cannot open: %s (nothing was written)", path,
            strerror(errno));
    return LOCK_FAILED;
  }
  int r;
  while ((r = flock(*fd, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (r != 0) {
    mb_diag(stderr,
            "mallocbench add: %s: cannot take the catalogue's lock (flock LOCK_EX): %s "
            "(nothing was written)",
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
    mb_diag(stderr, "mallocbench add: %s: cannot stat: %s (nothing was written)", path,
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
    mb_diag(stderr, "mallocbench add: %s", err.message);
    fprintf(stderr, "mallocbench add: fix the catalogue first; nothing was written\n");
    return NULL;
  }
  for (int32_t i = 0; i < cat->n_entries; i++)
    if (!strcmp(cat->entries[i].name, name)) {
      mb_diag(stderr, "mallocbench add: %s:%d: a workload named '%s' already exists", path,
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
  if (ls == LOCK_FAILED) return 2; /* an I/O error, as bad input: exit 2 */
  if (ls == LOCK_STALE) return COMMIT_RETRY;
  size_t old_len = 0;
  char *old = ls == LOCK_HELD ? read_fd(fd, &old_len) : strdup(FRESH_CATALOGUE);
  if (old && ls == LOCK_ABSENT) old_len = strlen(old);
  int rc = 2;
  char *text = NULL;
  mb_catalogue *cat = NULL;
  if (!old) {
    mb_diag(stderr, "mallocbench add: %s: cannot read: %s", cat_path, strerror(errno));
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
    mb_diag(stderr, "mallocbench add: %s", err.message);
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
    mb_diag(stderr, "mallocbench add: %s", err.message);
    rc = 2; /* an I/O error: exit 2, as the other commands */
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
  mb_diag(stderr,
          "mallocbench add: %s: replaced %d times while waiting for its lock; giving up "
          "(nothing was written)",
          cat_path, COMMIT_MAX_ATTEMPTS);
  return 1;
}

/* The command line of one add. */
typedef struct add_command {
  const char *name, *source, *kind, *hardware, *capacity, *split, *tags, *args;
  const char *cat_path, *data, *cache;
  char default_cat[4096], default_cache[4096];
  char capacity_bytes[32]; /* --capacity in the catalogue's notation */
} add_command;

/* Reads the options into A (defaults first: the kind from the extension, the tags from the
 * kind, the catalogue and cache in the source tree). Returns 0, or 2 after an error line. */
static int parse_options(int argc, char **argv, add_command *A) {
  memset(A, 0, sizeof *A);
  A->hardware = "tpu-v4i";
  A->capacity = "auto";
  A->split = "test";
  A->args = "-";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    /* --flag VALUE or --flag=VALUE (commands.h) */
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    const char *f = o.flag;
    const char **slot = !strcmp(f, "--kind")        ? &A->kind
                        : !strcmp(f, "--hardware")  ? &A->hardware
                        : !strcmp(f, "--capacity")  ? &A->capacity
                        : !strcmp(f, "--split")     ? &A->split
                        : !strcmp(f, "--tags")      ? &A->tags
                        : !strcmp(f, "--args")      ? &A->args
                        : !strcmp(f, "--catalogue") ? &A->cat_path
                        : !strcmp(f, "--data")      ? &A->data
                        : !strcmp(f, "--cache")     ? &A->cache
                                                    : NULL;
    bool is_path = slot == &A->cat_path || slot == &A->data || slot == &A->cache;
    if (slot) {
      if (!(is_path ? mb_option_path : mb_option_text)("add", f, o.value, slot)) return 2;
      i = o.last;
    } else if (a[0] == '-' && a[1]) {
      return mb_unknown_option("add", a);
    } else if (!A->name) {
      A->name = a;
    } else if (!A->source) {
      A->source = a;
    } else {
      mb_diag(stderr, "mallocbench add: unexpected argument '%s'", a);
      return 2;
    }
  }
  if (!A->name || !A->source) {
    usage(stderr);
    return 2;
  }
  /* --capacity takes every unit the other commands do ("2MB"); the catalogue stores bytes */
  if (strcmp(A->capacity, "auto") && strcmp(A->capacity, "profile")) {
    int64_t bytes = 0;
    if (!mb_parse_bytes(A->capacity, 1, INT64_MAX, &bytes)) {
      mb_diag(stderr,
              "mallocbench add: --capacity '%s': expected a byte count > 0 (units B, KiB, MiB, "
              "GiB, KB, MB, GB), 'profile' or 'auto'",
              A->capacity);
      return 2;
    }
    size_t digits = strspn(A->capacity, "0123456789");
    const char *unit = A->capacity + digits;
    bool catalogue_unit = digits > 0 && (!*unit || !strcmp(unit, "B") || !strcmp(unit, "KiB") ||
                                         !strcmp(unit, "MiB") || !strcmp(unit, "GiB"));
    if (!catalogue_unit) { /* "2MB", "1.5 MiB": the catalogue has no such notation */
      snprintf(A->capacity_bytes, sizeof A->capacity_bytes, "%lld", (long long)bytes);
      A->capacity = A->capacity_bytes;
    }
  }
  if (!A->kind) A->kind = infer_kind(A->source);
  if (!A->kind) {
    mb_diag(stderr,
            "mallocbench add: cannot infer the kind of '%s' from its extension; give "
            "--kind (hlo, csv, model, native, alphatensor)",
            A->source);
    return 2;
  }
  if (!A->tags)
    A->tags = (!strcmp(A->kind, "hlo") || !strcmp(A->kind, "csv")) ? "real" : "generated";
  if (!A->cat_path) A->cat_path = mb_catalogue_default_path(A->default_cat, sizeof A->default_cat);
  if (!A->cache) A->cache = mb_cache_dir(A->default_cache, sizeof A->default_cache);
  if (!A->cat_path || !A->cache) {
    fprintf(stderr, "mallocbench add: source directory path too long\n");
    return 2;
  }
  return 0;
}

/* The source as the catalogue stores it, into stored[n]: relative to the data directory
 * (external data) or the source tree, else absolute. False after an error line. */
static bool stored_source(const add_command *A, const char *data_dir, char *stored, size_t n) {
  if (!strncmp(A->source, "builtin:", 8)) {
    snprintf(stored, n, "%s", A->source);
    return true;
  }
  bool external =
      !strcmp(A->kind, "hlo") || !strcmp(A->kind, "csv") || !strcmp(A->kind, "alphatensor");
  if (!normalise_source(A->source, external ? data_dir : mb_source_dir(), stored, n)) {
    mb_diag(stderr, "mallocbench add: source '%s': %s", A->source,
            errno ? strerror(errno) : "path too long");
    return false;
  }
  if (strpbrk(stored, " \t\r\n#")) {
    mb_diag(stderr,
            "mallocbench add: source '%s': the catalogue's columns are whitespace-"
            "separated, so paths may not contain blanks or '#'",
            stored);
    return false;
  }
  return true;
}

/* prefix, the catalogue line of A's entry with the given source and capacity, and suffix, into
 * out[n] (n may be 0); returns the text's length, as snprintf does. */
static int print_entry(char *out, size_t n, const add_command *A, const char *prefix,
                       const char *stored, const char *capacity, const char *suffix) {
  return snprintf(out, n, "%s%s %s %s %s %s %s %s %s%s", prefix, A->name, A->kind, stored, A->args,
                  A->hardware, capacity, A->split, A->tags, suffix);
}

/* print_entry's text, however long, malloc'd; NULL after a message when memory runs out. */
static char *entry_text(const add_command *A, const char *prefix, const char *stored,
                        const char *capacity, const char *suffix) {
  int len = print_entry(NULL, 0, A, prefix, stored, capacity, suffix);
  char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (text)
    print_entry(text, (size_t)len + 1, A, prefix, stored, capacity, suffix);
  else
    fprintf(stderr, "mallocbench add: out of memory\n");
  return text;
}

/* Checks the new entry with the catalogue's own parser (its capacity not known yet) and
 * returns it in *entry. False after an error line naming the option at fault. */
static bool check_entry(const add_command *A, const char *stored, mb_catalogue_entry *entry) {
  if (strpbrk(A->name, " \t\n#") || strpbrk(A->args, " \t\n#") || strpbrk(A->tags, " \t\n#") ||
      strpbrk(A->hardware, " \t\n#") || strpbrk(A->capacity, " \t\n#")) {
    fprintf(stderr,
            "mallocbench add: arguments may not contain blanks or '#' (the catalogue is "
            "whitespace-separated)\n");
    return false;
  }
  /* the whole entry, however long: the parser names the field over its limit */
  char *probe = entry_text(A, HEADER "\n", stored,
                           strcmp(A->capacity, "auto") ? A->capacity : "profile", "\n");
  if (!probe) return false;
  mb_error err;
  mb_catalogue *one = mb_catalogue_parse(probe, strlen(probe), "new entry", &err);
  free(probe);
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
    mb_diag(stderr, "mallocbench add: %s%s%s", opt, *opt ? ": " : "", f ? f : err.message);
    return false;
  }
  *entry = one->entries[0];
  mb_catalogue_free(one);
  return true;
}

/* The existing catalogue (if any) must be intact and the name free before the workload is
 * materialised; both are checked again under the lock when the entry is written. False
 * after an error line. */
static bool check_existing_catalogue(const add_command *A) {
  size_t old_len = 0;
  char *old = mb_read_file(A->cat_path, &old_len);
  if (!old && errno != ENOENT) {
    mb_diag(stderr, "mallocbench add: %s: cannot read: %s", A->cat_path, strerror(errno));
    return false;
  }
  if (!old) return true;
  mb_catalogue *cat = check_catalogue(old, old_len, A->cat_path, A->name);
  free(old);
  if (!cat) return false;
  mb_catalogue_free(cat);
  return true;
}

/* Prints what was added: where, and the workload's size against its fast memory. */
static void print_added(const add_command *A, const mb_workload *w, const commit_result *res,
                        int64_t capacity) {
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  int64_t placeable = mb_catalogue_placeable_peak(w);
  char ratio[64] = "no non-pinned bytes to place"; /* a ratio to 0 B means nothing */
  if (placeable > 0)
    snprintf(ratio, sizeof ratio, "%.3f of the non-pinned peak",
             (double)capacity / (double)placeable);
  printf(
      "added '%s' to %s%s (line %d): %d ops, %d buffers, peak live %lld B (non-pinned %lld B), "
      "capacity %lld B (%s)\n",
      A->name, A->cat_path, res->created ? " (new file)" : "", res->line_no, st.n_ops, st.n_buffers,
      (long long)st.peak_live_bytes, (long long)placeable, (long long)capacity, ratio);
}

int mb_cmd_add(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  add_command command;
  add_command *A = &command;
  if (parse_options(argc, argv, A) != 0) return 2;
  const char *data_dir = mb_data_dir(A->data);
  char stored[512];
  mb_catalogue_entry entry;
  if (!stored_source(A, data_dir, stored, sizeof stored) || !check_entry(A, stored, &entry) ||
      !check_existing_catalogue(A))
    return 2;
  mb_error err;
  mb_hardware hw;
  if (!mb_catalogue_hardware(&entry, &hw, &err)) {
    mb_diag(stderr, "mallocbench add: %s", err.message);
    return 2;
  }
  bool missing = false;
  mb_workload *w = mb_catalogue_load_workload(&entry, data_dir, A->cache, &missing, &err);
  if (!w) {
    mb_diag(stderr, "mallocbench add: %s", err.message);
    return 2;
  }
  int rc = 2;
  char auto_capacity[32];
  const char *capacity = A->capacity;
  if (!strcmp(capacity, "auto")) {
    snprintf(auto_capacity, sizeof auto_capacity, "%lld",
             (long long)mb_catalogue_auto_capacity(w, &hw));
    capacity = auto_capacity;
  }
  commit_result res;
  char *line = entry_text(A, "", stored, capacity, "");
  if (line) {
    rc = commit_entry(A->cat_path, A->name, line, &res);
    if (rc == 0) print_added(A, w, &res, res.capacity != 0 ? res.capacity : hw.capacity);
  }
  free(line);
  mb_workload_free(w);
  return rc;
}
