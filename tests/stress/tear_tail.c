/* tear_tail FILE: makes the torn tail a kill -9 can leave in a results file (1 in ~1,400 kills
 * in hdf5_kill_stress): the result table's last row reads as zeros, as when the table's extent
 * was written and the row's data was not, and the run is not complete (it was killed). Used by
 * verify_torn_tail.sh to test what users see: `verify` notes the skipped row, `run --resume`
 * writes it again.
 * Exit status: 0 done, 1 the file could not be torn (message on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tear_tail RESULTS.h5\n");
    return 1;
  }
  mb_error err = {{0}};
  mb_results *r = mb_results_open(argv[1], true, &err);
  mb_result_row *rows = NULL;
  int64_t n = 0;
  bool ok = r && mb_results_read_rows(r, &rows, &n, &err);
  if (ok && n == 0) {
    snprintf(err.message, sizeof err.message, "%s: no result rows to tear", argv[1]);
    ok = false;
  }
  mb_result_row zero;
  memset(&zero, 0, sizeof zero);
  ok = ok && mb_results_write_row(r, n - 1, &zero, &err) &&
       mb_results_set_attr_int(r, "complete", 0, &err);
  free(rows);
  ok = mb_results_close(r, ok ? &err : NULL) && ok;
  if (!ok) {
    fprintf(stderr, "tear_tail: %s\n", err.message);
    return 1;
  }
  return 0;
}
