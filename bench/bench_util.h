/* Timing helpers shared by the benchmark programs. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/** Parses "a,b,c" into v (at most max values); returns the count. */
static inline int bench_parse_list(const char *s, int64_t *v, int max)
{
  int n = 0;
  for (const char *p = s; *p && n < max; p++) {
    v[n++] = atoll(p);
    while (*p && *p != ',') p++;
    if (!*p) break;
  }
  return n;
}

/** Median time of one host memcpy of `bytes` on this thread (a one-core bandwidth ceiling), NAN if the buffers
 *  cannot be allocated. */
static inline double bench_time_memcpy(size_t bytes, int reps)
{
  char *a = malloc(bytes + 1), *b = malloc(bytes + 1);
  double t[64], med = NAN;
  if (a && b) {
    memset(a, 1, bytes + 1);
    memset(b, 0, bytes + 1);
    for (int r = -1; r < reps; r++) {
      double t0 = bench_now();
      memcpy(r % 2 ? a : b, r % 2 ? b : a, bytes);
      if (r >= 0) t[r] = bench_now() - t0;
    }
    med = bench_median(t, reps);
  }
  free(a);
  free(b);
  return med;
}

#if defined(SL_HAVE_CUDA) && defined(CUDART_VERSION)
/** Median time of `passes` device-to-device copies of `bytes` (the GPU's bandwidth ceiling), NAN if the
 *  buffers cannot be allocated. */
static inline double bench_time_d2d(size_t bytes, int passes, int reps)
{
  void *a = NULL, *b = NULL;
  if (cudaMalloc(&a, bytes) != cudaSuccess) return NAN;
  if (cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaFree(a);
    return NAN;
  }
  double t[64];
  for (int r = -1; r < reps; r++) {
    cudaDeviceSynchronize();
    double t0 = bench_now();
    for (int k = 0; k < passes; k++) cudaMemcpy(k % 2 ? a : b, k % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
    if (r >= 0) t[r] = bench_now() - t0;
  }
  cudaFree(a);
  cudaFree(b);
  return bench_median(t, reps);
}
#endif

#if defined(SL_HAVE_CUDA) && defined(CUBLAS_VER_MAJOR)
/** Median time of `calls` cuBLAS DGEMMs (column-major m x k times k x n, zero matrices) on device buffers, 0 when
 *  they cannot be allocated: a compute ceiling. */
static inline double bench_time_cublas_dgemm(int64_t m, int64_t n, int64_t k, int calls, int reps)
{
  double *a = NULL, *b = NULL, *c = NULL, t[64];
  size_t ba = sizeof(double) * (size_t)(m * k), bb = sizeof(double) * (size_t)(k * n), bc = sizeof(double) * (size_t)(m * n);
  cublasHandle_t h;
  if (cudaMalloc((void **)&a, ba) != cudaSuccess || cudaMalloc((void **)&b, bb) != cudaSuccess ||
      cudaMalloc((void **)&c, bc) != cudaSuccess || cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
    return 0;
  cudaMemset(a, 0, ba);
  cudaMemset(b, 0, bb);
  const double one = 1, zero = 0;
  for (int r = -1; r < reps; r++) {
    cudaDeviceSynchronize();
    double t0 = bench_now();
    for (int i = 0; i < calls; i++)
      cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, a, (int)m, b, (int)k, &zero, c, (int)m);
    cudaDeviceSynchronize();
    if (r >= 0) t[r] = bench_now() - t0;
  }
  cublasDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return bench_median(t, reps);
}
#endif

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
