/* Helpers shared by the cmocka tests. */
#ifndef MB_TEST_SUPPORT_H
#define MB_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
/* cmocka.h must follow the headers above. */
#include <cmocka.h>

#include "hardware.h"
#include "workload.h"

/* A TPU-v4i-like profile (the bandwidths and peak of datasets/hardware/tpu-v4i.txt) with the
 * given fast-memory capacity and alignment: the solver tests' common hardware. */
mb_hardware mb_test_hardware(int64_t capacity, int64_t alignment);

/* A small agent config (agent.h) for fast tests: the defaults with a `latent`-wide latent, one
 * residual block, `actions` actions and a bins x bins occupancy picture. Declared by its tag:
 * agent.h is not included here, as the model zoo's tests have a type of the same name as the
 * networks' mb_tensor. */
struct mb_agent_config;
void mb_test_agent_config(struct mb_agent_config *c, int32_t latent, int32_t actions, int32_t bins);

/* Rows of a results file (results.h) written by hand, for the tests of its readers: every row
 * has this all-slow time, a 1 MiB capacity and three buffers. */
#define MB_TEST_T_SLOW 1000000
struct mb_results;
/* Appends one row of `solver` on workload@hardware: seed, status (valid when "ok"), times in ps
 * (-1: none; the speedups and gap derived from them as the driver does), wall time, budget flag
 * and note. Fails the test when the append fails. */
void mb_test_append_row(struct mb_results *r, int64_t task, const char *workload,
                        const char *hardware, const char *solver, int64_t seed, const char *status,
                        int64_t t_heuristic, int64_t t_solver, int64_t t_bound, double wall_s,
                        int8_t budget_hit, const char *note);
/* Appends the baseline row of a (workload, hardware) pair with its LP status. */
void mb_test_append_baseline(struct mb_results *r, const char *workload, const char *hardware,
                             int64_t t_heuristic, int64_t t_bound, const char *bound_status);

/* One buffer of a hand-made op-less workload (mb_test_workload). */
typedef struct mb_test_buffer {
  const char *name;
  int64_t size;
  int32_t start, end; /* live range, steps */
  mb_time_ps benefit; /* standalone benefit of keeping it fast */
  bool pinned;
} mb_test_buffer;
/* The op-less workload `name` of the n buffers, in order (ids 0..n-1), over schedule_length
 * steps with all-slow time t_slow; fails the test when the builder refuses it. */
mb_workload *mb_test_workload(const char *name, const mb_test_buffer *bufs, size_t n,
                              int32_t schedule_length, mb_time_ps t_slow);

/* The external data directory (MALLOCBENCH_DATA, else the build-time default). */
const char *mb_test_data_dir(void);
/* Temporary files and directories: made in TMPDIR (else /tmp; ctest sets it to the build tree's
 * test-tmp/) under fresh names beginning "mbtest". The caller owns the path a helper returns and
 * gives it to mb_test_temp_remove at the end of the test, which removes what the helper made and
 * frees the path. */

/* Writes text to a fresh temporary file and returns its path (fails the test when the file
 * cannot be made or written). */
char *mb_test_write_temp(const char *suffix, const char *text);
/* Writes n bytes to `path`, replacing it (fails the test on an I/O error). Read a file back
 * with paths.h's mb_read_file. */
void mb_test_write_bytes(const char *path, const void *bytes, size_t n);
/* Everything written so far to `f`, a temporary file opened for update (tmpfile()), malloc'd;
 * `f` stays open. Fails the test on a read error. */
char *mb_test_stream_text(FILE *f);
/* A fresh temporary directory, NULL when it cannot be made. */
char *mb_test_temp_dir(void);
/* `name` (one path component) inside a fresh temporary directory; nothing is made at `name`
 * itself. Fails the test when the directory cannot be made. */
char *mb_test_temp_path(const char *name);
/* Removes what one of the three helpers above made, and frees `path`, its result (NULL does
 * nothing). What that is follows from the path: TMPDIR/mbtest... itself (mb_test_write_temp's
 * file, mb_test_temp_dir's directory), or for TMPDIR/mbtestdirXXXXXX/NAME (mb_test_temp_path's
 * result, which need not exist) the directory made for it; either is removed with everything
 * the test put in it. Symbolic links in it are removed, never followed; a directory the test
 * made read-only is made writable first; what is already gone is not an error. Fails the test
 * when `path` is not named so in the current TMPDIR (removing nothing; TMPDIR must not change
 * in between) or when something cannot be removed. Call it after the last use of the path, when
 * nothing in it is open; a test that fails before it leaves its files (ctest empties its TMPDIR,
 * test-tmp/, before the tests run). */
void mb_test_temp_remove(char *path);
/* Damages an HDF5 file mallocbench wrote as another program could: removes its seal block (if
 * any) and puts a scalar text where the dataset `dataset` (an absolute path) was. Fails the test
 * when it cannot. */
void mb_test_h5_replace_with_text(const char *path, const char *dataset);

#endif
