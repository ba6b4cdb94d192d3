/* Helpers shared by the cmocka tests. */
#ifndef MB_TEST_SUPPORT_H
#define MB_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h must follow the headers above. */
#include <cmocka.h>

#include "hardware.h"

/* A TPU-v4i-like profile (the bandwidths and peak of datasets/hardware/tpu-v4i.txt) with the
 * given fast-memory capacity and alignment: the solver tests' common hardware. */
mb_hardware mb_test_hardware(int64_t capacity, int64_t alignment);

/* A small agent config (agent.h) for fast tests: the defaults with a `latent`-wide latent, one
 * residual block, `actions` actions and a bins x bins occupancy picture. Declared by its tag:
 * agent.h is not included here, as the model zoo's tests have a type of the same name as the
 * networks' mb_tensor. */
struct mb_agent_config;
void mb_test_agent_config(struct mb_agent_config *c, int32_t latent, int32_t actions, int32_t bins);

/* The external data directory (MALLOCBENCH_DATA, else the build-time default). */
const char *mb_test_data_dir(void);
/* Writes text to a fresh temporary file and returns its path (caller frees). */
char *mb_test_write_temp(const char *suffix, const char *text);
/* Writes n bytes to `path`, replacing it (fails the test on an I/O error). Read a file back
 * with paths.h's mb_read_file. */
void mb_test_write_bytes(const char *path, const void *bytes, size_t n);
/* A fresh temporary directory (caller frees the path; removed by the OS's tmp cleaning). */
char *mb_test_temp_dir(void);
/* `name` inside a fresh temporary directory (caller frees the path; fails the test when the
 * directory cannot be made). */
char *mb_test_temp_path(const char *name);

#endif
