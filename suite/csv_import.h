/* MiniMalloc buffer CSV importer: columns id,lower,upper,size (live on [lower, upper)), and
 * an optional benefit column (default benefit = size, in picoseconds). The workload has no ops:
 * schedule length = max upper, T_slow documented in datasets/README.md.
 *
 * The importer refuses whatever the native reader would refuse in the file `import csv` writes
 * (suite/workload_io.h: the schedule bound MB_WORKLOAD_MAX_SCHEDULE on upper, the total size
 * within int64, the most buffers a file holds), so an imported workload always loads; beyond
 * that, every number is below 2^62 and the sum of benefits at most 2^60 ps. Errors name the
 * file, line and column: "t.csv:2:upper: ...". */
#ifndef MB_CSV_IMPORT_H
#define MB_CSV_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "workload.h"

/* The workload is named after the file: path's last component without ".csv", any byte but
 * [A-Za-z0-9_.-] written '_', and "csv" when nothing is left ("dir/.csv"). */
mb_workload *mb_csv_import_text(const char *text, size_t len, const char *path, mb_error *err);
mb_workload *mb_csv_import_file(const char *path, mb_error *err);
/* Capacity from a file name like "A.1048576.csv": the number before ".csv"; 0 when absent. */
int64_t mb_csv_capacity_from_name(const char *path);

#endif
