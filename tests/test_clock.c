/* clock.h: the monotonic wall clock. */
#include <time.h>

#include "clock.h"
#include "support.h"

/* It never goes back, and a sleep of 20 ms shows as at least that (and not as hours). */
static void test_wall_seconds(void **state) {
  (void)state;
  double t0 = mb_wall_seconds(), prev = t0;
  for (int i = 0; i < 1000; i++) {
    double t = mb_wall_seconds();
    assert_true(t >= prev);
    prev = t;
  }
  struct timespec nap = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
  nanosleep(&nap, NULL);
  double dt = mb_wall_seconds() - t0;
  assert_true(dt >= 0.019);
  assert_true(dt < 3600);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_wall_seconds)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
