/* Helpers shared by the cmocka tests. */
#ifndef MB_TEST_SUPPORT_H
#define MB_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h must follow the headers above. */
#include <cmocka.h>

/* The external data directory (MALLOCBENCH_DATA, else the build-time default). */
const char *mb_test_data_dir(void);
/* Writes text to a fresh temporary file and returns its path (caller frees). */
char *mb_test_write_temp(const char *suffix, const char *text);
/* A fresh temporary directory (caller frees the path; removed by the OS's tmp cleaning). */
char *mb_test_temp_dir(void);

#endif
