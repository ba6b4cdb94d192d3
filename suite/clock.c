/* Wall-clock time (see clock.h). */
#include "clock.h"

#include <time.h>

double mb_wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
