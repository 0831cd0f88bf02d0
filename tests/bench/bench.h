/* bench.h - what the benchmark programs share: a monotonic clock in seconds. */
#ifndef LLMP_BENCH_H
#define LLMP_BENCH_H

#include <time.h>

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
