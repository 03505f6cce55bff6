/* Timing helpers shared by the benchmark programs. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/** Seconds on the monotonic clock. */
static inline double bench_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/** Median of t[0..n) (sorts t). */
static inline double bench_median(double *t, int n)
{
  qsort(t, (size_t)n, sizeof *t, bench_cmp);
  return t[n / 2];
}

#ifdef STARLOPS_H
/** The slowest rank's time (collective). */
static inline double bench_slowest(double t)
{
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, sl_comm());
  return t;
}

/** Median over reps (after a warm-up) of an operator's forward plus adjoint apply, slowest rank. */
static inline double bench_time_fwd_adj(sl_op *op, sl_array *x, sl_array *y, int reps)
{
  double t[64];
  for (int r = -1; r < reps; r++) {
    sl_wait();
    MPI_Barrier(sl_comm());
    double t0 = bench_now();
    sl_op_apply(op, SL_FORWARD, x, y);
    sl_op_apply(op, SL_ADJOINT, y, x);
    sl_wait();
    if (r >= 0) t[r] = bench_slowest(bench_now() - t0);
  }
  return bench_median(t, reps);
}
#endif

#endif
