/* version.h: the version is the project's (CMakeLists.txt), the commit a full SHA-1 or
 * "unknown", and `mallocbench --version` prints exactly mb_print_version's line, whose format
 * is written out here by hand. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "support.h"
#include "version.h"

/* The VERSION of project(mallocbench VERSION x.y.z) in CMakeLists.txt (tests run in the source
 * directory). */
static void project_version(char *out, size_t cap) {
  size_t len = 0;
  char *text = mb_read_file("CMakeLists.txt", &len);
  if (!text) fail_msg("cannot read CMakeLists.txt from the source directory");
  const char *p = strstr(text, "project(mallocbench VERSION ");
  if (!p) fail_msg("CMakeLists.txt has no 'project(mallocbench VERSION '");
  p += strlen("project(mallocbench VERSION ");
  size_t n = strcspn(p, " )");
  assert_true(n > 0 && n < cap);
  memcpy(out, p, n);
  out[n] = '\0';
  free(text);
}

static void test_version_is_the_project_version(void **state) {
  (void)state;
  char want[64];
  project_version(want, sizeof want);
  assert_string_equal(mb_version(), want);
  /* three dot-separated numbers */
  int a, b, c, end = 0;
  assert_int_equal(sscanf(mb_version(), "%d.%d.%d%n", &a, &b, &c, &end), 3);
  assert_int_equal((size_t)end, strlen(mb_version()));
}

static void test_commit_is_a_sha_or_unknown(void **state) {
  (void)state;
  const char *c = mb_git_commit();
  if (!strcmp(c, "unknown")) {
    assert_false(mb_git_dirty()); /* no git: no status either */
    return;
  }
  assert_int_equal(strlen(c), 40);
  for (const char *p = c; *p; p++)
    if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p))
      fail_msg("commit '%s': not lowercase hex", c);
  const char *types[] = {"Debug", "Release", "RelWithDebInfo", "MinSizeRel"};
  bool known = false;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    known |= !strcmp(mb_build_type(), types[i]);
  if (!known) fail_msg("build type '%s'", mb_build_type());
  assert_true(strlen(mb_compiler()) > 0);
}

/* The CLI's --version line, read from the built binary, against the format written out. */
static void test_cli_prints_the_same_line(void **state) {
  (void)state;
  char want[512];
  snprintf(want, sizeof want, "mallocbench %s (commit %s%s, %s, %s)\n", mb_version(),
           mb_git_commit(), mb_git_dirty() ? ", dirty" : "", mb_build_type(), mb_compiler());
  FILE *f = tmpfile();
  assert_non_null(f);
  mb_print_version(f);
  long n = ftell(f);
  rewind(f);
  char got[512] = "";
  assert_true(n > 0 && (size_t)n < sizeof got);
  assert_int_equal(fread(got, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  assert_string_equal(got, want);

  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' --version", MB_TEST_BINARY);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  char line[512] = "";
  size_t k = fread(line, 1, sizeof line - 1, p);
  line[k] = '\0';
  assert_int_equal(pclose(p), 0);
  assert_string_equal(line, want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_version_is_the_project_version),
      cmocka_unit_test(test_commit_is_a_sha_or_unknown),
      cmocka_unit_test(test_cli_prints_the_same_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
