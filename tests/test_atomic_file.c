/* Atomic file replacement (suite/atomic_file.h): a commit replaces the target whole (by stream,
 * by the temporary's name, in one call), an abort leaves it and no temporary behind; failures
 * (a missing or read-only directory, a write past the file-size limit, a target that is a
 * directory, commit_new onto an existing file) name the path and the failing call, and leave
 * the target and no temporary; the final file's permissions follow the umask (or the replaced
 * file's, with keep_mode); two writers of one target leave one whole file, also two processes
 * saving one CSV through mb_assignment_save_csv at once while a third reads it. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "assignment.h"
#include "atomic_file.h"
#include "paths.h"
#include "support.h"
#include "workload.h"

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  if (d) closedir(d);
  return n;
}

/* Fails the test unless `path` holds exactly `want`. */
static void assert_file_is(const char *path, const char *want) {
  size_t len = 0;
  char *got = mb_read_file(path, &len);
  if (!got) fail_msg("%s: cannot read: %s", path, strerror(errno));
  if (len != strlen(want) || memcmp(got, want, len))
    fail_msg("%s: holds '%.60s' (%zu bytes), expected '%.60s' (%zu bytes)", path, got, len, want,
             strlen(want));
  free(got);
}

static void assert_mode(const char *path, mode_t want) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  if ((st.st_mode & 07777) != want)
    fail_msg("%s: mode %04o, expected %04o", path, (unsigned)(st.st_mode & 07777), (unsigned)want);
}

static void assert_contains(const char *message, const char *part) {
  if (!strstr(message, part)) fail_msg("'%s' does not contain '%s'", message, part);
}

/* A text of n bytes of c, NUL-terminated (the caller frees). */
static char *repeat(char c, size_t n) {
  char *s = malloc(n + 1);
  assert_non_null(s);
  memset(s, c, n);
  s[n] = '\0';
  return s;
}

static void test_commit_replaces(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  char path[1024];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  mb_error err = {{0}};
  assert_true(mb_atomic_file_write(path, "old\n", 4, NULL, &err));
  assert_file_is(path, "old\n");

  mb_atomic_file *a = mb_atomic_file_open(path, NULL, &err);
  assert_non_null(a);
  assert_string_equal(mb_atomic_file_path(a), path);
  /* the temporary: PATH.tmp.XXXXXX, beside the target */
  const char *tmp = mb_atomic_file_temp_path(a);
  assert_int_equal(strncmp(tmp, path, strlen(path)), 0);
  assert_int_equal(strncmp(tmp + strlen(path), ".tmp.", 5), 0);
  assert_int_equal(strlen(tmp), strlen(path) + 11);
  fputs("new contents\n", mb_atomic_file_stream(a));
  assert_int_equal(count_entries(dir), 2);
  assert_file_is(path, "old\n"); /* untouched until the commit */
  assert_true(mb_atomic_file_commit(a, &err));
  assert_file_is(path, "new contents\n");
  assert_int_equal(count_entries(dir), 1);

  /* by the temporary's name, as libhdf5 writes */
  a = mb_atomic_file_open_named(path, NULL, &err);
  assert_non_null(a);
  assert_null(mb_atomic_file_stream(a));
  FILE *f = fopen(mb_atomic_file_temp_path(a), "w");
  assert_non_null(f);
  fputs("named\n", f);
  assert_int_equal(fclose(f), 0);
  assert_true(mb_atomic_file_commit(a, &err));
  assert_file_is(path, "named\n");

  /* an empty file, and a new one */
  assert_true(mb_atomic_file_write(path, "", 0, NULL, &err));
  assert_file_is(path, "");
  unlink(path);
  assert_true(mb_atomic_file_write(path, "fresh", 5, NULL, &err));
  assert_file_is(path, "fresh");
  assert_int_equal(count_entries(dir), 1);
  mb_test_temp_remove(dir);
}

static void test_abort_leaves_target(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  char path[1024];
  snprintf(path, sizeof path, "%s/keep.txt", dir);
  mb_error err = {{0}};
  assert_true(mb_atomic_file_write(path, "old\n", 4, NULL, &err));
  mb_atomic_file *a = mb_atomic_file_open(path, NULL, &err);
  assert_non_null(a);
  char *big = repeat('x', 100000); /* more than stdio's buffer: part of it is in the file */
  fputs(big, mb_atomic_file_stream(a));
  free(big);
  assert_int_equal(count_entries(dir), 2);
  mb_atomic_file_abort(a);
  assert_file_is(path, "old\n");
  assert_int_equal(count_entries(dir), 1);

  a = mb_atomic_file_open_named(path, NULL, &err);
  assert_non_null(a);
  assert_int_equal(count_entries(dir), 2);
  mb_atomic_file_abort(a);
  assert_int_equal(count_entries(dir), 1);
  mb_atomic_file_abort(NULL);

  /* nothing there to keep: an abort creates nothing */
  unlink(path);
  a = mb_atomic_file_open(path, NULL, &err);
  assert_non_null(a);
  mb_atomic_file_abort(a);
  assert_int_equal(count_entries(dir), 0);
  mb_test_temp_remove(dir);
}

/* Commits `n` bytes with the file-size limit (RLIMIT_FSIZE) at 4096 bytes: the write fails
 * with EFBIG (SIGXFSZ ignored meanwhile). Returns whether the commit succeeded. */
static bool commit_past_size_limit(const char *path, size_t n, bool one_call, mb_error *err) {
  struct rlimit old, small;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  small = old;
  small.rlim_cur = 4096;
  void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
  char *big = repeat('y', n);
  bool ok;
  if (one_call) {
    ok = mb_atomic_file_write(path, big, n, NULL, err);
  } else {
    mb_atomic_file *a = mb_atomic_file_open(path, NULL, err);
    ok = a != NULL;
    if (a) {
      fputs(big, mb_atomic_file_stream(a));
      ok = mb_atomic_file_commit(a, err);
    }
  }
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, was);
  free(big);
  return ok;
}

static void test_failures_name_the_path(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  char path[1024], bad[1100], want[1200];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  mb_error err = {{0}};

  /* a directory that does not exist */
  snprintf(bad, sizeof bad, "%s/missing/out.txt", dir);
  assert_null(mb_atomic_file_open(bad, NULL, &err));
  snprintf(want, sizeof want, "%s: cannot create a temporary file beside it: mkstemp %s.tmp.", bad,
           bad);
  assert_contains(err.message, want);
  assert_contains(err.message, ": No such file or directory");
  assert_false(mb_atomic_file_write(bad, "x", 1, NULL, &err));
  assert_contains(err.message, bad);
  assert_null(mb_atomic_file_open_named(bad, NULL, &err));
  assert_contains(err.message, "mkstemp");

  /* a target that is a directory is never replaced */
  assert_null(mb_atomic_file_open(dir, NULL, &err));
  assert_contains(err.message, "exists and is not a regular file (a directory)");
  assert_null(mb_atomic_file_open("", NULL, &err));

  /* a read-only directory (root writes there anyway) */
  if (geteuid() == 0) {
    printf("read-only directory: skipped (running as root)\n");
  } else {
    char ro[1100];
    snprintf(ro, sizeof ro, "%s/ro", dir);
    assert_int_equal(mkdir(ro, 0755), 0);
    snprintf(bad, sizeof bad, "%s/out.txt", ro);
    assert_true(mb_atomic_file_write(bad, "old\n", 4, NULL, &err));
    assert_int_equal(chmod(ro, 0555), 0);
    assert_false(mb_atomic_file_write(bad, "new\n", 4, NULL, &err));
    assert_contains(err.message, bad);
    assert_contains(err.message, "mkstemp");
    assert_contains(err.message, "Permission denied");
    assert_int_equal(chmod(ro, 0755), 0);
    assert_file_is(bad, "old\n");
    assert_int_equal(count_entries(ro), 1);
    unlink(bad);
    rmdir(ro);
  }

  /* a write that fails (the file-size limit: EFBIG, as a full disk gives ENOSPC), through the
   * stream and in one call: the target and no temporary left */
  assert_true(mb_atomic_file_write(path, "old\n", 4, NULL, &err));
  for (int one_call = 0; one_call < 2; one_call++) {
    mb_error_clear(&err);
    assert_false(commit_past_size_limit(path, 100000, one_call, &err));
    snprintf(want, sizeof want, "%s: ", path);
    assert_int_equal(strncmp(err.message, want, strlen(want)), 0);
    assert_contains(err.message, ".tmp.");
    if (!strstr(err.message, "File too large") && !strstr(err.message, "disk full"))
      fail_msg("no reason in '%s'", err.message);
    assert_file_is(path, "old\n");
    assert_int_equal(count_entries(dir), 1);
  }

  /* commit_new: refused onto an existing file, which stays; made when there is none */
  mb_atomic_file *a = mb_atomic_file_open(path, NULL, &err);
  assert_non_null(a);
  fputs("new\n", mb_atomic_file_stream(a));
  bool existed = false;
  assert_false(mb_atomic_file_commit_new(a, &existed, &err));
  assert_true(existed);
  snprintf(want, sizeof want, "%s: link %s.tmp.", path, path);
  assert_contains(err.message, want);
  assert_contains(err.message, "File exists");
  assert_file_is(path, "old\n");
  assert_int_equal(count_entries(dir), 1);
  unlink(path);
  a = mb_atomic_file_open(path, NULL, &err);
  assert_non_null(a);
  fputs("new\n", mb_atomic_file_stream(a));
  assert_true(mb_atomic_file_commit_new(a, &existed, &err));
  assert_false(existed);
  assert_file_is(path, "new\n");
  assert_int_equal(count_entries(dir), 1);
  mb_test_temp_remove(dir);
}

static void test_mode_follows_umask(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  char path[1024], named[1024];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  snprintf(named, sizeof named, "%s/named.h5", dir);
  mb_error err = {{0}};
  mode_t old = umask(027);
  static const struct {
    mode_t mask, want;
  } CASES[] = {{027, 0640}, {022, 0644}, {077, 0600}, {0, 0666}};
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    umask(CASES[i].mask);
    /* as a plain fopen would make it (mkstemp alone makes 0600), new or replacing a file */
    unlink(path);
    assert_true(mb_atomic_file_write(path, "x", 1, NULL, &err));
    assert_mode(path, CASES[i].want);
    assert_true(mb_atomic_file_write(path, "y", 1, NULL, &err));
    assert_mode(path, CASES[i].want);
    /* the temporary of a named writer has its final permissions from the start */
    mb_atomic_file *a = mb_atomic_file_open_named(named, NULL, &err);
    assert_non_null(a);
    assert_mode(mb_atomic_file_temp_path(a), CASES[i].want);
    assert_true(mb_atomic_file_commit(a, &err));
    assert_mode(named, CASES[i].want);
  }
  /* the largest umask there is: no permission at all */
  umask(0777);
  unlink(path);
  assert_true(mb_atomic_file_write(path, "x", 1, NULL, &err));
  assert_mode(path, 0);
  /* keep_mode: the replaced file's permissions; without it, a new file's */
  umask(022);
  assert_int_equal(chmod(path, 0600), 0);
  mb_atomic_options keep = {.keep_mode = true};
  assert_true(mb_atomic_file_write(path, "z", 1, &keep, &err));
  assert_mode(path, 0600);
  assert_int_equal(chmod(path, 0664), 0);
  assert_true(mb_atomic_file_write(path, "z", 1, &keep, &err));
  assert_mode(path, 0664);
  assert_true(mb_atomic_file_write(path, "z", 1, NULL, &err));
  assert_mode(path, 0644);
  unlink(path);
  assert_true(mb_atomic_file_write(path, "z", 1, &keep, &err)); /* nothing to keep */
  assert_mode(path, 0644);
  umask(old);
  mb_test_temp_remove(dir);
}

/* Two writers of one target open at once, writing in turns: each commit leaves one whole
 * version (with one shared "PATH.tmp", the second would have truncated the first's file). */
static void test_two_writers_one_whole_file(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  char path[1024];
  snprintf(path, sizeof path, "%s/shared.txt", dir);
  mb_error err = {{0}};
  char *va = repeat('a', 50000), *vb = repeat('b', 70000);
  for (int order = 0; order < 2; order++) {
    mb_atomic_file *a = mb_atomic_file_open(path, NULL, &err);
    mb_atomic_file *b = mb_atomic_file_open(path, NULL, &err);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_not_equal(mb_atomic_file_temp_path(a), mb_atomic_file_temp_path(b));
    for (int k = 0; k < 10; k++) {
      fwrite(va + k * 5000, 1, 5000, mb_atomic_file_stream(a));
      fwrite(vb + k * 7000, 1, 7000, mb_atomic_file_stream(b));
    }
    assert_true(mb_atomic_file_commit(order ? b : a, &err));
    assert_file_is(path, order ? vb : va);
    assert_true(mb_atomic_file_commit(order ? a : b, &err));
    assert_file_is(path, order ? va : vb);
    assert_int_equal(count_entries(dir), 1);
  }
  free(va);
  free(vb);
  mb_test_temp_remove(dir);
}

/* A workload of n buffers and its CSV with every buffer in slow memory (`fast` false) or at
 * offset 64 * i. */
static char *csv_of(const mb_workload *w, bool fast, mb_assignment **out) {
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  assert_non_null(a);
  for (int32_t i = 0; fast && i < w->n_buffers; i++) a->offset[i] = 64 * (int64_t)i;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  assert_true(mb_assignment_write_csv(a, w, f));
  assert_int_equal(fclose(f), 0);
  *out = a;
  return text;
}

/* Two processes save one CSV (mb_assignment_save_csv) 150 times each at once while this one
 * reads it: every save succeeds and every read is one whole version. With the fixed
 * "PATH.tmp" of before, the saves failed ("cannot rename into place") and reads saw files cut
 * short. */
static void test_concurrent_saves(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  char path[1024];
  snprintf(path, sizeof path, "%s/assignment.csv", dir);
  mb_workload_builder *bld = mb_builder_new("many", "test_atomic_file");
  int32_t op = mb_builder_add_op(bld, "op", "dot", 1e6);
  for (int32_t i = 0; i < 3000; i++) {
    char name[32];
    snprintf(name, sizeof name, "buffer_%d", i);
    int32_t b = mb_builder_add_buffer(bld, name, 64, -1, -1, false);
    assert_true(mb_builder_add_use(bld, b, op, 64, 0));
  }
  mb_error err = {{0}};
  mb_workload *w = mb_builder_finish(bld, &err);
  if (!w) fail_msg("%s", err.message);
  mb_assignment *as[2];
  char *texts[2] = {csv_of(w, false, &as[0]), csv_of(w, true, &as[1])};
  fflush(stdout);
  pid_t pids[2];
  for (int c = 0; c < 2; c++) {
    pids[c] = fork();
    assert_true(pids[c] >= 0);
    if (pids[c] == 0) {
      for (int k = 0; k < 150; k++) {
        mb_error e = {{0}};
        if (!mb_assignment_save_csv(as[c], w, path, &e)) {
          fprintf(stderr, "writer %d, save %d: %s\n", c, k, e.message);
          _exit(1);
        }
      }
      _exit(0);
    }
  }
  int reads = 0, whole = 0, running = 2, status[2] = {-1, -1};
  while (running > 0) {
    size_t len = 0;
    char *got = mb_read_file(path, &len);
    if (got) {
      reads++;
      for (int c = 0; c < 2; c++) whole += len == strlen(texts[c]) && !memcmp(got, texts[c], len);
      free(got);
    }
    for (int c = 0; c < 2; c++) {
      if (status[c] >= 0) continue;
      pid_t r = waitpid(pids[c], &status[c], WNOHANG);
      if (r < 0 && errno != EINTR) fail_msg("waitpid: %s", strerror(errno));
      if (r <= 0) status[c] = -1;
    }
    running = (status[0] < 0) + (status[1] < 0);
  }
  for (int c = 0; c < 2; c++)
    if (!WIFEXITED(status[c]) || WEXITSTATUS(status[c]) != 0) fail_msg("writer %d failed", c);
  printf("concurrent saves: %d of %d reads whole\n", whole, reads);
  assert_int_equal(whole, reads);
  size_t len = 0;
  char *final = mb_read_file(path, &len);
  assert_non_null(final);
  assert_true((len == strlen(texts[0]) && !memcmp(final, texts[0], len)) ||
              (len == strlen(texts[1]) && !memcmp(final, texts[1], len)));
  free(final);
  assert_int_equal(count_entries(dir), 1);
  for (int c = 0; c < 2; c++) {
    free(texts[c]);
    mb_assignment_free(as[c]);
  }
  mb_workload_free(w);
  mb_test_temp_remove(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_commit_replaces),
      cmocka_unit_test(test_abort_leaves_target),
      cmocka_unit_test(test_failures_name_the_path),
      cmocka_unit_test(test_mode_follows_umask),
      cmocka_unit_test(test_two_writers_one_whole_file),
      cmocka_unit_test(test_concurrent_saves),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
