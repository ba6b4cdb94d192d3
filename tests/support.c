#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *mb_test_data_dir(void) {
  const char *env = getenv("MALLOCBENCH_DATA");
  return env && *env ? env : MB_TEST_DATA_DIR;
}

char *mb_test_write_temp(const char *suffix, const char *text) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  size_t n = strlen(tmp) + strlen(suffix) + 32;
  char *path = malloc(n);
  snprintf(path, n, "%s/mbtestXXXXXX%s", tmp, suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  if (fd < 0) {
    free(path);
    return NULL;
  }
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  return path;
}

char *mb_test_temp_dir(void) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  size_t n = strlen(tmp) + 32;
  char *path = malloc(n);
  snprintf(path, n, "%s/mbtestdirXXXXXX", tmp);
  if (!mkdtemp(path)) {
    free(path);
    return NULL;
  }
  return path;
}
