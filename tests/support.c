#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

mb_hardware mb_test_hardware(int64_t capacity, int64_t alignment) {
  mb_hardware hw;
  memset(&hw, 0, sizeof hw);
  strcpy(hw.name, "test");
  hw.capacity = capacity;
  hw.alignment = alignment;
  hw.slow_bandwidth = 614e9;
  hw.fast_bandwidth = 2000e9;
  hw.peak_flops = 138e12;
  hw.op_overhead_s = 1e-6;
  return hw;
}

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

void mb_test_write_bytes(const char *path, const void *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
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

char *mb_test_temp_path(const char *name) {
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  assert_non_null(p);
  snprintf(p, n, "%s/%s", dir, name);
  free(dir);
  return p;
}

void mb_test_agent_config(struct mb_agent_config *c, int32_t latent, int32_t actions,
                          int32_t bins) {
  mb_agent_config_default(c);
  c->latent = latent;
  c->blocks = 1;
  c->game.n_actions = actions;
  c->game.addr_bins = bins;
  c->game.time_bins = bins;
  c->obs_dim = mb_game_observation_size(&c->game);
}
