/* The unit tests' own helpers (support.h): mb_test_temp_remove removes what mb_test_write_temp,
 * mb_test_temp_dir and mb_test_temp_path made, with everything inside, never follows a symbolic
 * link out of it, makes a read-only directory writable to empty it, and refuses a path that is
 * not one of theirs. Each test runs in a TMPDIR of its own, made inside the caller's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static bool exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

static void make_dir(const char *path) {
  if (mkdir(path, 0700) != 0) fail_msg("mkdir %s: %s", path, strerror(errno));
}

static void write_file(const char *path, const char *text) {
  mb_test_write_bytes(path, text, strlen(text));
}

/* A fresh TMPDIR inside the caller's for one test, so that what the helpers make is the only
 * thing in it; the previous value is kept in *saved (freed by leave_private_tmp). */
static char *enter_private_tmp(char **saved) {
  const char *outer = getenv("TMPDIR");
  *saved = outer ? strdup(outer) : NULL;
  char *root = mb_test_temp_dir();
  assert_non_null(root);
  assert_int_equal(setenv("TMPDIR", root, 1), 0);
  return root;
}

/* Back to the caller's TMPDIR; removes the private one, which must be empty by then. */
static void leave_private_tmp(char *root, char *saved) {
  if (saved)
    assert_int_equal(setenv("TMPDIR", saved, 1), 0);
  else
    assert_int_equal(unsetenv("TMPDIR"), 0);
  free(saved);
  if (rmdir(root) != 0) fail_msg("%s is not empty after the test: %s", root, strerror(errno));
  free(root);
}

/* mb_test_temp_remove(path), checking that what it has to remove existed and is gone: the
 * path itself, or for mb_test_temp_path's result (in_dir) the directory made for it. */
static void remove_and_check(char *path, bool in_dir) {
  char gone[512];
  snprintf(gone, sizeof gone, "%s", path);
  if (in_dir) *strrchr(gone, '/') = '\0';
  assert_true(exists(gone));
  mb_test_temp_remove(path);
  assert_false(exists(gone));
}

/* Each helper's result is removed, and only it. */
static void test_removes_what_each_helper_made(void **state) {
  (void)state;
  char *saved;
  char *root = enter_private_tmp(&saved);
  char *file = mb_test_write_temp(".txt", "text");
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  char *missing = mb_test_temp_path("never_made.h5"); /* its directory exists, it does not */
  char *made = mb_test_temp_path("made.h5");
  write_file(made, "data");
  char keep[512];
  snprintf(keep, sizeof keep, "%s/mbtest_keep", root); /* another test's file */
  write_file(keep, "keep");

  remove_and_check(missing, true);
  remove_and_check(made, true);
  remove_and_check(file, false);
  remove_and_check(dir, false);
  mb_test_temp_remove(NULL); /* does nothing */

  assert_true(exists(keep));
  assert_int_equal(unlink(keep), 0);
  leave_private_tmp(root, saved);
}

/* A directory with nested directories, a read-only one among them, and symbolic links to a
 * file and a directory outside: all of it goes, and what the links point to stays. (Run as
 * root, as CI does, permissions stop no removal: only other users' runs test the read-only
 * directory.) */
static void test_removes_trees_without_following_links(void **state) {
  (void)state;
  char *saved;
  char *root = enter_private_tmp(&saved);
  char *outside_dir = mb_test_temp_dir();
  assert_non_null(outside_dir);
  char outside_file[512];
  snprintf(outside_file, sizeof outside_file, "%s/precious", outside_dir);
  write_file(outside_file, "precious");

  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  char path[512];
  snprintf(path, sizeof path, "%s/a", dir);
  make_dir(path);
  snprintf(path, sizeof path, "%s/a/b", dir);
  make_dir(path);
  snprintf(path, sizeof path, "%s/a/b/deep.txt", dir);
  write_file(path, "deep");
  snprintf(path, sizeof path, "%s/a/locked", dir);
  make_dir(path);
  char inner[600];
  snprintf(inner, sizeof inner, "%s/inside", path);
  write_file(inner, "inside");
  assert_int_equal(chmod(path, 0500), 0); /* read-only: its entry cannot be unlinked as is */
  snprintf(path, sizeof path, "%s/link_to_file", dir);
  assert_int_equal(symlink(outside_file, path), 0);
  snprintf(path, sizeof path, "%s/a/link_to_dir", dir);
  assert_int_equal(symlink(outside_dir, path), 0);

  remove_and_check(dir, false);
  assert_true(exists(outside_file)); /* the links were removed, not followed */

  mb_test_temp_remove(outside_dir);
  leave_private_tmp(root, saved);
}

/* A group of one test that calls mb_test_temp_remove on the path in MB_TEST_REMOVE_PATH, run in
 * a child by removal_refused. */
static void call_remove_from_env(void **state) {
  (void)state;
  const char *p = getenv("MB_TEST_REMOVE_PATH");
  assert_non_null(p);
  mb_test_temp_remove(strdup(p));
}

/* Runs mb_test_temp_remove(path) in a child whose output is discarded; true when it failed
 * the (child's) test. */
static bool removal_refused(const char *path) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(3);
    setenv("MB_TEST_REMOVE_PATH", path, 1);
    const struct CMUnitTest one[] = {cmocka_unit_test(call_remove_from_env)};
    _exit(cmocka_run_group_tests(one, NULL, NULL) == 1 ? 1 : 0);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_not_equal(WEXITSTATUS(status), 3);
  return WEXITSTATUS(status) == 1;
}

/* Paths that are not a helper's result are refused and left alone (each exists and is the
 * test's own, so a removal would show): a helper-named file outside the current TMPDIR (in the
 * caller's), a file directly in TMPDIR under another name, one deeper than a helper's NAME, and
 * helper-named files in sibling directories of TMPDIR, one whose name extends TMPDIR's and one
 * as long as it. A helper's own result, as a control, is not refused. */
static void test_refuses_other_paths(void **state) {
  (void)state;
  char *saved;
  char *root = enter_private_tmp(&saved);
  char outside[512], other[512], deep[512], sibling_dir[512], sibling[600], twin_dir[512],
      twin[600];
  snprintf(outside, sizeof outside, "%s/mbtest_outside_%d", saved ? saved : "/tmp", (int)getpid());
  write_file(outside, "x");
  snprintf(other, sizeof other, "%s/notmine", root);
  write_file(other, "x");
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  snprintf(deep, sizeof deep, "%s/sub", dir);
  make_dir(deep);
  snprintf(deep, sizeof deep, "%s/sub/file", dir);
  write_file(deep, "x");
  snprintf(sibling_dir, sizeof sibling_dir, "%sx", root);
  make_dir(sibling_dir);
  snprintf(sibling, sizeof sibling, "%s/mbtestABCDEF", sibling_dir);
  write_file(sibling, "x");
  snprintf(twin_dir, sizeof twin_dir, "%s", root); /* as long as TMPDIR, another name */
  twin_dir[strlen(twin_dir) - 1] = '_';            /* mkdtemp never writes '_' */
  make_dir(twin_dir);
  snprintf(twin, sizeof twin, "%s/mbtestABCDEF", twin_dir);
  write_file(twin, "x");

  const char *refused[] = {outside, other, deep, sibling, twin};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    if (!removal_refused(refused[i])) fail_msg("%s was not refused", refused[i]);
    if (!exists(refused[i])) fail_msg("%s was removed", refused[i]);
  }

  char *file = mb_test_write_temp(".txt", "text");
  assert_false(removal_refused(file)); /* the child removed it */
  assert_false(exists(file));
  free(file);

  mb_test_temp_remove(dir);
  assert_int_equal(unlink(other), 0);
  assert_int_equal(unlink(outside), 0);
  assert_int_equal(unlink(sibling), 0);
  assert_int_equal(rmdir(sibling_dir), 0);
  assert_int_equal(unlink(twin), 0);
  assert_int_equal(rmdir(twin_dir), 0);
  leave_private_tmp(root, saved);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_removes_what_each_helper_made),
      cmocka_unit_test(test_removes_trees_without_following_links),
      cmocka_unit_test(test_refuses_other_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
