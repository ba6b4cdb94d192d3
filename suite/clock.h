/* Wall-clock time, for budgets, deadlines and the wall times results report. Never the
 * simulated time of the cost model (cost.h). */
#ifndef MB_CLOCK_H
#define MB_CLOCK_H

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): only differences mean anything. */
double mb_wall_seconds(void);

#endif
