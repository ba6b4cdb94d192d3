#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "file_seal.h"
#include "results.h"

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

mb_workload *mb_test_workload(const char *name, const mb_test_buffer *bufs, size_t n,
                              int32_t schedule_length, mb_time_ps t_slow) {
  mb_workload_builder *b = mb_builder_new(name, "tests/support.c");
  for (size_t i = 0; i < n; i++) {
    int32_t id = mb_builder_add_buffer(b, bufs[i].name, bufs[i].size, bufs[i].start, bufs[i].end,
                                       bufs[i].pinned);
    mb_builder_set_benefit(b, id, bufs[i].benefit);
  }
  mb_builder_set_schedule(b, schedule_length, t_slow);
  mb_error err = {{0}};
  mb_workload *w = mb_builder_finish(b, &err);
  if (!w) fail_msg("workload %s: %s", name, err.message);
  return w;
}

const char *mb_test_data_dir(void) {
  const char *env = getenv("MALLOCBENCH_DATA");
  return env && *env ? env : MB_TEST_DATA_DIR;
}

/* Where the helpers make their files and directories: TMPDIR, else /tmp. */
static const char *temp_root(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

char *mb_test_write_temp(const char *suffix, const char *text) {
  const char *tmp = temp_root();
  size_t n = strlen(tmp) + strlen(suffix) + 32;
  char *path = malloc(n);
  snprintf(path, n, "%s/mbtestXXXXXX%s", tmp, suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  if (fd < 0) fail_msg("mkstemps %s: %s", path, strerror(errno));
  FILE *f = fdopen(fd, "w");
  if (!f) fail_msg("fdopen %s: %s", path, strerror(errno));
  if (fputs(text, f) < 0 || fclose(f) != 0) fail_msg("writing %s: %s", path, strerror(errno));
  return path;
}

void mb_test_write_bytes(const char *path, const void *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

char *mb_test_stream_text(FILE *f) {
  long n = ftell(f);
  assert_true(n >= 0);
  char *text = calloc((size_t)n + 1, 1);
  assert_non_null(text);
  rewind(f);
  assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
  return text;
}

char *mb_test_temp_dir(void) {
  const char *tmp = temp_root();
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

/* Removes `name` in the directory `parent` (a descriptor), a directory with everything in it.
 * Symbolic links are removed, never followed (fstatat's AT_SYMLINK_NOFOLLOW, openat's
 * O_NOFOLLOW); a directory a test made unreadable or read-only is given back its owner's rights
 * first. Returns 0, else -1 with errno of the first failure (what it could remove is removed). */
static int remove_tree_at(int parent, const char *name) {
  struct stat st;
  if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) return unlinkat(parent, name, 0) == 0 || errno == ENOENT ? 0 : -1;
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = openat(parent, name, flags);
  if (fd < 0 && errno == EACCES && fchmodat(parent, name, 0700, 0) == 0)
    fd = openat(parent, name, flags);
  if (fd < 0) return -1;
  if ((st.st_mode & 0700) != 0700) (void)fchmod(fd, 0700); /* to remove its entries */
  DIR *d = fdopendir(fd);
  if (!d) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  int first = 0; /* errno of the first failure */
  /* passes until one finds nothing: readdir need not return an entry after others are removed */
  for (bool removed = true; removed && !first;) {
    removed = false;
    rewinddir(d);
    for (struct dirent *e; (e = readdir(d));) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      if (remove_tree_at(dirfd(d), e->d_name) != 0) {
        if (!first) first = errno;
      } else {
        removed = true;
      }
    }
  }
  closedir(d);
  if (unlinkat(parent, name, AT_REMOVEDIR) != 0 && !first) first = errno;
  errno = first;
  return first ? -1 : 0;
}

void mb_test_temp_remove(char *path) {
  if (!path) return;
  /* the entry the helpers made: `path` itself when it is directly in the temporary root
   * (mb_test_write_temp, mb_test_temp_dir), else the directory holding it (mb_test_temp_path) */
  const char *root = temp_root();
  size_t n = strlen(root);
  if (strncmp(path, root, n) != 0 || path[n] != '/')
    fail_msg("mb_test_temp_remove: %s is not in the temporary directory %s", path, root);
  const char *rest = path + n;
  while (*rest == '/') rest++;
  const char *slash = strchr(rest, '/');
  size_t len = slash ? (size_t)(slash - rest) : strlen(rest);
  /* mb_test_temp_dir's mbtestdirXXXXXX, or a "NAME" in it; mb_test_write_temp's mbtestXXXXXX */
  bool made_here = slash ? !strncmp(rest, "mbtestdir", 9) && slash[1] && !strchr(slash + 1, '/')
                         : !strncmp(rest, "mbtest", 6);
  if (!made_here || len >= 256)
    fail_msg("mb_test_temp_remove: %s is not a path the test helpers make", path);
  char entry[256];
  memcpy(entry, rest, len);
  entry[len] = '\0';
  int dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) fail_msg("mb_test_temp_remove: %s: %s", root, strerror(errno));
  int rc = remove_tree_at(dir, entry);
  int e = errno;
  close(dir);
  if (rc != 0) fail_msg("mb_test_temp_remove: cannot remove %s/%s: %s", root, entry, strerror(e));
  free(path);
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

void mb_test_append_row(mb_results *r, int64_t task, const char *workload, const char *hardware,
                        const char *solver, int64_t seed, const char *status, int64_t t_heuristic,
                        int64_t t_solver, int64_t t_bound, double wall_s, int8_t budget_hit,
                        const char *note) {
  mb_result_row row;
  memset(&row, 0, sizeof row);
  row.task = task;
  snprintf(row.workload, sizeof row.workload, "%s", workload);
  snprintf(row.hardware, sizeof row.hardware, "%s", hardware);
  snprintf(row.solver, sizeof row.solver, "%s", solver);
  row.seed = seed;
  snprintf(row.status, sizeof row.status, "%s", status);
  row.valid = !strcmp(status, "ok");
  row.capacity = 1 << 20;
  row.n_buffers = 3;
  row.t_slow_ps = MB_TEST_T_SLOW;
  row.t_heuristic_ps = t_heuristic;
  row.t_solver_ps = t_solver;
  row.t_bound_ps = t_bound;
  row.wall_s = wall_s;
  row.budget_hit = budget_hit;
  snprintf(row.note, sizeof row.note, "%s", note);
  mb_result_row_derive(&row);
  mb_error err = {{0}};
  if (!mb_results_append(r, &row, NULL, NULL, NULL, 0, NAN, &err)) fail_msg("%s", err.message);
}

void mb_test_append_baseline(mb_results *r, const char *workload, const char *hardware,
                             int64_t t_heuristic, int64_t t_bound, const char *bound_status) {
  mb_baseline_row b;
  memset(&b, 0, sizeof b);
  snprintf(b.workload, sizeof b.workload, "%s", workload);
  snprintf(b.hardware, sizeof b.hardware, "%s", hardware);
  b.t_slow_ps = MB_TEST_T_SLOW;
  b.t_heuristic_ps = t_heuristic;
  b.t_bound_ps = t_bound;
  snprintf(b.bound_status, sizeof b.bound_status, "%s", bound_status);
  mb_error err = {{0}};
  if (!mb_results_append_baseline(r, &b, NULL, &err)) fail_msg("%s", err.message);
}

void mb_test_h5_replace_with_text(const char *path, const char *dataset) {
  mb_error err;
  if (!mb_seal_remove(path, &err)) fail_msg("%s", err.message);
  hid_t h = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(h >= 0 && H5Ldelete(h, dataset, H5P_DEFAULT) >= 0);
  hid_t text = H5Tcopy(H5T_C_S1), scalar = H5Screate(H5S_SCALAR);
  assert_true(H5Tset_size(text, 4) >= 0);
  hid_t d = H5Dcreate2(h, dataset, text, scalar, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(d >= 0 && H5Dwrite(d, text, H5S_ALL, H5S_ALL, H5P_DEFAULT, "text") >= 0);
  H5Dclose(d);
  H5Sclose(scalar);
  H5Tclose(text);
  H5Fclose(h);
}
