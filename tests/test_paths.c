/* paths.h: where things are, reading whole files, and the checks on files a command reads or
 * replaces. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalogue.h"
#include "paths.h"
#include "support.h"

static void test_join(void **state) {
  (void)state;
  char out[16];
  assert_string_equal(mb_path_join(out, sizeof out, "a", "b"), "a/b");
  assert_string_equal(mb_path_join(out, sizeof out, "a/", "b"), "a/b");
  assert_string_equal(mb_path_join(out, sizeof out, "", "b"), "b");
  assert_string_equal(mb_path_join(out, sizeof out, "a", "/abs"), "/abs"); /* absolute wins */
  assert_string_equal(mb_path_join(out, sizeof out, "0123456", "0123456"), "0123456/0123456");
  assert_null(mb_path_join(out, sizeof out, "0123456", "01234567")); /* 16 + NUL */
  assert_string_equal(mb_path_join(out, 1, "", ""), ""); /* nothing fits in the NUL's byte */
}

/* MALLOCBENCH_HOME relocates the source tree, the cache and the default catalogue with it (run,
 * show and list must read the same catalogue); MALLOCBENCH_DATA the data. */
static void test_environment(void **state) {
  (void)state;
  char *home = getenv("MALLOCBENCH_HOME") ? strdup(getenv("MALLOCBENCH_HOME")) : NULL;
  char *data = getenv("MALLOCBENCH_DATA") ? strdup(getenv("MALLOCBENCH_DATA")) : NULL;
  setenv("MALLOCBENCH_HOME", "/somewhere/else", 1);
  setenv("MALLOCBENCH_DATA", "/the/data", 1);
  char cache[64];
  assert_string_equal(mb_source_dir(), "/somewhere/else");
  assert_string_equal(mb_cache_dir(cache, sizeof cache), "/somewhere/else/results/cache");
  assert_null(mb_cache_dir(cache, 8));
  assert_string_equal(mb_catalogue_default_path(cache, sizeof cache),
                      "/somewhere/else/datasets/catalogue.txt");
  assert_null(mb_catalogue_default_path(cache, 8));
  assert_string_equal(mb_data_dir(NULL), "/the/data");
  assert_string_equal(mb_data_dir("/flag"), "/flag"); /* --data wins */
  unsetenv("MALLOCBENCH_HOME");
  unsetenv("MALLOCBENCH_DATA");
  assert_string_equal(mb_source_dir(), MB_SOURCE_DIR);
  assert_string_equal(mb_catalogue_default_path(cache, sizeof cache) ? cache : "",
                      strlen(MB_SOURCE_DIR "/datasets/catalogue.txt") < sizeof cache ? MB_SOURCE_DIR
                          "/datasets/catalogue.txt"
                                                                                     : "");
  assert_string_equal(mb_data_dir(""), MB_SOURCE_DIR "/../shared/data");
  if (home) setenv("MALLOCBENCH_HOME", home, 1);
  if (data) setenv("MALLOCBENCH_DATA", data, 1);
  free(home);
  free(data);
}

static void test_mkdir_p(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir(), path[4096];
  snprintf(path, sizeof path, "%s/a/b/c", dir);
  assert_int_equal(mb_mkdir_p(path), 0);
  assert_int_equal(mb_mkdir_p(path), 0); /* exists: fine */
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_true(S_ISDIR(st.st_mode));
  snprintf(path, sizeof path, "%s/a/file", dir);
  mb_test_write_bytes(path, "x", 1);
  snprintf(path, sizeof path, "%s/a/file/below", dir);
  assert_int_equal(mb_mkdir_p(path), -1); /* a file in the way */
  assert_int_equal(errno, ENOTDIR);
  /* a name of 4096 bytes does not fit its copy (4096 with the NUL): refused before any mkdir */
  char *long_name = malloc(4097);
  assert_non_null(long_name);
  memset(long_name, 'x', 4096);
  long_name[4096] = '\0';
  errno = 0;
  assert_int_equal(mb_mkdir_p(long_name), -1);
  assert_int_equal(errno, ENAMETOOLONG);
  free(long_name);
  assert_int_equal(mb_mkdir_p(""), -1);

  /* a relative name whose first folder is one letter and new: each folder made in turn (errno
   * 0 before: a made folder is success whatever errno held) */
  char cwd[4096];
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(dir), 0);
  errno = 0;
  int made = mb_mkdir_p("p/q");
  int made_errno = errno;
  bool is_dir = stat("p/q", &st) == 0 && S_ISDIR(st.st_mode);
  assert_int_equal(chdir(cwd), 0);
  if (made != 0) fail_msg("mb_mkdir_p(\"p/q\") in %s: %s", dir, strerror(made_errno));
  assert_true(is_dir);
  mb_test_temp_remove(dir);
}

static void test_read_file(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir(), path[4096];
  size_t len = 99;
  /* a regular file, with a NUL byte kept and a terminating NUL added */
  snprintf(path, sizeof path, "%s/text", dir);
  mb_test_write_bytes(path, "ab\0cd", 5);
  char *text = mb_read_file(path, &len);
  assert_non_null(text);
  assert_int_equal(len, 5);
  assert_memory_equal(text, "ab\0cd\0", 6);
  free(text);
  /* a file larger than the first buffer (64 KiB) */
  size_t big = 200000;
  char *bytes = malloc(big);
  assert_non_null(bytes);
  for (size_t i = 0; i < big; i++) bytes[i] = (char)('a' + i % 26);
  mb_test_write_bytes(path, bytes, big);
  text = mb_read_file(path, &len);
  assert_non_null(text);
  assert_int_equal(len, big);
  assert_memory_equal(text, bytes, big);
  free(text);
  free(bytes);
  /* missing, a directory, a FIFO without a writer (read at once as empty, no wait) */
  snprintf(path, sizeof path, "%s/missing", dir);
  assert_null(mb_read_file(path, &len));
  assert_int_equal(errno, ENOENT);
  assert_null(mb_read_file(dir, &len));
  assert_int_equal(errno, EISDIR);
  snprintf(path, sizeof path, "%s/fifo", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  text = mb_read_file(path, &len);
  assert_non_null(text);
  assert_int_equal(len, 0);
  free(text);
  mb_test_temp_remove(dir);
}

/* Every byte reaches the file, in order, and an empty write succeeds; a descriptor that takes no
 * writes is refused with errno set. */
static void test_write_all(void **state) {
  (void)state;
  enum { N = 300000 };
  char *bytes = malloc(N);
  assert_non_null(bytes);
  for (int i = 0; i < N; i++) bytes[i] = (char)(i * 7 + i / 256);
  char *path = mb_test_temp_path("write_all.bin");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  assert_true(mb_write_all(fd, bytes, N));
  assert_true(mb_write_all(fd, bytes, 0));
  close(fd);
  size_t len = 0;
  char *back = mb_read_file(path, &len);
  assert_non_null(back);
  assert_int_equal(len, N);
  assert_memory_equal(back, bytes, N);
  free(back);
  fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  errno = 0;
  assert_false(mb_write_all(fd, bytes, 10));
  assert_int_equal(errno, EBADF);
  close(fd);
  free(bytes);
  mb_test_temp_remove(path);
}

/* Same file: by device and inode, so a hard link, a symbolic link and another spelling of the
 * path are the same file, a copy is not. */
static void test_same_file(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir(), a[4096], b[4096], link_path[4096], hard[4096], other[4096];
  snprintf(a, sizeof a, "%s/a.h5", dir);
  snprintf(b, sizeof b, "%s/./a.h5", dir);
  snprintf(link_path, sizeof link_path, "%s/link.h5", dir);
  snprintf(hard, sizeof hard, "%s/hard.h5", dir);
  snprintf(other, sizeof other, "%s/other.h5", dir);
  mb_test_write_bytes(a, "x", 1);
  mb_test_write_bytes(other, "x", 1);
  assert_int_equal(symlink(a, link_path), 0);
  assert_int_equal(link(a, hard), 0);
  assert_true(mb_path_same_file(a, b));
  assert_true(mb_path_same_file(a, link_path));
  assert_true(mb_path_same_file(hard, a));
  assert_false(mb_path_same_file(a, other));
  assert_false(mb_path_same_file(a, "/no/such/file"));
  mb_error err;
  assert_true(mb_path_check_distinct(other, a, "the input workload", &err));
  assert_true(mb_path_check_distinct(NULL, a, "the input workload", &err));
  assert_true(mb_path_check_distinct(a, NULL, "the input workload", &err));
  assert_false(mb_path_check_distinct(link_path, a, "the input workload", &err));
  char want[8400];
  snprintf(want, sizeof want, "%s: is also the input workload (%s); refusing to overwrite it",
           link_path, a);
  assert_string_equal(err.message, want);
  mb_test_temp_remove(dir);
}

static void test_kinds(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir(), path[4096];
  mb_error err;
  assert_string_equal(mb_file_kind(S_IFREG | 0644), "a regular file");
  assert_string_equal(mb_file_kind(S_IFDIR | 0755), "a directory");
  assert_string_equal(mb_file_kind(S_IFIFO | 0600), "a FIFO");
  assert_string_equal(mb_file_kind(S_IFCHR | 0666), "a character device");
  snprintf(path, sizeof path, "%s/new", dir);
  assert_true(mb_path_check_replaceable(path, &err)); /* absent */
  mb_test_write_bytes(path, "x", 1);
  assert_true(mb_path_check_replaceable(path, &err));
  assert_false(mb_path_check_replaceable(dir, &err));
  assert_non_null(strstr(err.message, "exists and is not a regular file (a directory)"));
  assert_false(mb_path_check_replaceable("/dev/null", &err));
  assert_non_null(strstr(err.message, "(a character device)"));
  mb_test_temp_remove(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_join),      cmocka_unit_test(test_environment),
      cmocka_unit_test(test_mkdir_p),   cmocka_unit_test(test_read_file),
      cmocka_unit_test(test_same_file), cmocka_unit_test(test_kinds),
      cmocka_unit_test(test_write_all),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
