/* bench_vec: throughput of axpby, dot and norm2 through starlops (tasks on every worker) beside a ceiling
 * measured in the same run: on the host a plain single-pass C loop on the same data (axpby) and a read-only
 * loop over the same bytes with eight running sums (the reductions), or, when the rank has a CUDA
 * worker, a device-to-device cudaMemcpy of the same bytes (axpby) and a read-only kernel over the same bytes
 * (the reductions, bench_vec_ceiling.cu). Prints one table row per (op, size).
 *   mpirun -n P bench_vec [--sizes MiB,MiB,...] [--reps R] [--phases]
 * Sizes are per-rank block sizes of one float64 vector. --phases adds, for the reductions, where a call's
 * time goes: the submission, the tasks' completion (sl_wait) and the scalar's fetch after it (medians). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "starlops.h"
#include "bench_util.h"

enum { OP_AXPBY, OP_DOT, OP_NORM2, NOPS };
static const char *op_names[NOPS] = {"axpby", "dot", "norm2"};
static const int op_streams[NOPS] = {3, 2, 1}; /* vectors read or written per element */

static volatile double sink;

/* The host ceilings: one pass, same data, same rank. */
static void plain(int op, int64_t n, double *y, const double *x)
{
  double s = 0;
  switch (op) {
  case OP_AXPBY:
    for (int64_t i = 0; i < n; i++) y[i] = 2.0 * x[i] + 0.5 * y[i];
    break;
  default: { /* the reductions' ceiling: every operand byte read once, eight running sums (no add-latency bound) */
    double a[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int u = 0; u < 8; u++) a[u] += op == OP_DOT ? x[i + u] + y[i + u] : x[i + u];
    for (; i < n; i++) a[0] += op == OP_DOT ? x[i] + y[i] : x[i];
    for (int u = 0; u < 8; u++) s += a[u];
    break;
  }
  }
  sink = s;
}

static int starlops_op(int op, sl_array *y, sl_array *x, sl_scalar *s)
{
  int rc;
  double v;
  switch (op) {
  case OP_AXPBY:
    rc = sl_array_axpby(y, SL_REAL(2.0), x, SL_REAL(0.5));
    return rc ? rc : sl_wait();
  case OP_DOT:
    rc = sl_array_dot(x, y, s);
    return rc ? rc : sl_scalar_get(s, &v);
  default:
    rc = sl_array_norm(x, 2, s);
    return rc ? rc : sl_scalar_get(s, &v);
  }
}

/* The phases of a reduction: submission, completion of its tasks, the scalar's fetch (seconds, into ph). */
static int reduction_phases(int op, sl_array *y, sl_array *x, sl_scalar *s, double ph[3])
{
  double v, t0 = bench_now();
  int rc = op == OP_DOT ? sl_array_dot(x, y, s) : sl_array_norm(x, 2, s);
  double t1 = bench_now();
  if (rc == SL_SUCCESS) rc = sl_wait();
  double t2 = bench_now();
  if (rc == SL_SUCCESS) rc = sl_scalar_get(s, &v);
  double t3 = bench_now();
  ph[0] = t1 - t0;
  ph[1] = t2 - t1;
  ph[2] = t3 - t2;
  return rc;
}

#ifdef SL_HAVE_CUDA
/* The device buffers of the GPU ceilings, allocated once for the largest size (two buffers of twice a
 * vector's bytes): no allocation or free runs between a measurement and the next. */
static void *dev_a, *dev_b;

int bench_read_times(const void *x, size_t bytes, int reps, double *t);

static int ceiling_buffers(size_t bytes)
{
  if (cudaMalloc(&dev_a, bytes) != cudaSuccess || cudaMalloc(&dev_b, bytes) != cudaSuccess) return -1;
  return cudaMemset(dev_a, 0, bytes) == cudaSuccess && cudaMemset(dev_b, 0, bytes) == cudaSuccess &&
                 cudaDeviceSynchronize() == cudaSuccess
             ? 0
             : -1;
}

/* Ceiling of the reductions on the GPU: bytes a read-only kernel reads per second (bench_vec_ceiling.cu). */
static double read_ceiling(size_t bytes, int reps)
{
  double *t = malloc(sizeof *t * (size_t)reps);
  double bw = t && bench_read_times(dev_a, bytes, reps, t) == 0 ? (double)bytes / bench_median(t, reps) / 1e9 : NAN;
  free(t);
  return bw;
}
#endif

/* Ceiling on the GPU: bytes moved by a device-to-device copy (read + write) per second. */
static double d2d_ceiling(size_t bytes, int reps)
{
#ifdef SL_HAVE_CUDA
  double *t = malloc(sizeof *t * (size_t)reps);
  if (!t) return NAN;
  cudaMemcpy(dev_b, dev_a, bytes, cudaMemcpyDeviceToDevice);
  cudaDeviceSynchronize();
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    cudaMemcpy(dev_b, dev_a, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
    t[r] = bench_now() - t0;
  }
  double bw = 2.0 * (double)bytes / bench_median(t, reps) / 1e9;
  free(t);
  return bw;
#else
  (void)bytes;
  (void)reps;
  return NAN;
#endif
}

int main(int argc, char **argv)
{
  double sizes[16] = {8, 32, 128};
  int nsizes = 3, reps = 10, phases = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *p = strtok(argv[++i], ","); p && nsizes < 16; p = strtok(NULL, ",")) sizes[nsizes++] = atof(p);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--phases")) {
      phases = 1;
    } else {
      printf("usage: bench_vec [--sizes MiB,MiB,...] [--reps R] [--phases]\n");
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "bench_vec: %s\n", sl_last_error());
    return 1;
  }
  int gpu = sl_ncuda_workers() > 0;
  if (sl_rank() == 0) {
    printf("# bench_vec: %d ranks, %d CPU + %d CUDA workers per rank, float64, median of %d; ceiling = %s\n",
           sl_size(), sl_ncpu_workers(), sl_ncuda_workers(), reps,
           gpu ? "axpby: device-to-device copy (read+write bytes/s); dot, norm2: a read-only kernel over the same bytes"
               : "axpby: plain C loop on the same data; dot, norm2: a read-only loop over the same bytes");
    printf("| op | MiB/rank | chunks | time (ms) | GB/s | ceiling GB/s | ratio |\n|---|---|---|---|---|---|---|\n");
  }
  double *t = malloc(sizeof *t * (size_t)reps);
  int status = 0;
#ifdef SL_HAVE_CUDA
  if (gpu) {
    double most = 0;
    for (int k = 0; k < nsizes; k++) most = sizes[k] > most ? sizes[k] : most;
    if (ceiling_buffers((size_t)(2.0 * most * 1048576.0)) != 0) {
      fprintf(stderr, "bench_vec: cannot allocate the ceilings' device buffers (2 x %.0f MiB)\n", 2.0 * most);
      status = 1;
      nsizes = 0;
    }
  }
#endif
  for (int k = 0; k < nsizes; k++) {
    int64_t n = (int64_t)(sizes[k] * 1048576.0 / 8.0) * sl_size();
    sl_array *x = NULL, *y = NULL;
    sl_scalar *s = NULL;
    if (sl_array_create(&x, 1, &n, SL_FLOAT64, NULL) || sl_array_create_like(&y, x) ||
        sl_scalar_create(&s, SL_FLOAT64)) {
      fprintf(stderr, "bench_vec: %s\n", sl_last_error());
      status = 1;
      break;
    }
    sl_array_fill(x, SL_REAL(1.0));
    sl_array_fill(y, SL_REAL(0.5));
    int64_t nl = sl_array_local_size(x);
    for (int op = 0; op < NOPS; op++) {
      double bytes = (double)op_streams[op] * 8.0 * (double)nl;
      for (int r = 0; r < reps + 2; r++) { /* two warm-ups: data placement and performance models */
        MPI_Barrier(sl_comm());
        double t0 = bench_now();
        if (starlops_op(op, y, x, s) != SL_SUCCESS) status = 1;
        double dt = bench_now() - t0, worst;
        MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, sl_comm());
        if (r >= 2) t[r - 2] = worst;
      }
      double ts = bench_median(t, reps), ceiling;
      if (gpu) {
#ifdef SL_HAVE_CUDA
        ceiling = op == OP_AXPBY ? d2d_ceiling((size_t)(bytes / 2), reps) : read_ceiling((size_t)bytes, reps);
#else
        ceiling = d2d_ceiling((size_t)(bytes / 2), reps);
#endif
      } else {
        void *xp, *yp;
        sl_array_acquire(x, SL_READ, &xp);
        sl_array_acquire(y, SL_READ_WRITE, &yp);
        for (int r = 0; r < reps + 1; r++) {
          double t0 = bench_now();
          plain(op, nl, yp, xp);
          if (r >= 1) t[r - 1] = bench_now() - t0;
        }
        sl_array_release(x);
        sl_array_release(y);
        ceiling = bytes / bench_median(t, reps) / 1e9;
      }
      double bw = bytes / ts / 1e9;
      if (sl_rank() == 0)
        printf("| %s | %.0f | %d | %.3f | %.2f | %.2f | %.2f |\n", op_names[op], sizes[k], sl_array_nchunks(x),
               ts * 1e3, bw, ceiling, bw / ceiling);
      if (phases && op != OP_AXPBY) {
        double ph[3][64], med[3];
        int np = reps < 64 ? reps : 64;
        for (int r = 0; r < np; r++) {
          double one[3];
          MPI_Barrier(sl_comm());
          if (reduction_phases(op, y, x, s, one) != SL_SUCCESS) status = 1;
          for (int q = 0; q < 3; q++) ph[q][r] = one[q];
        }
        for (int q = 0; q < 3; q++) med[q] = bench_median(ph[q], np);
        if (sl_rank() == 0)
          printf("|   phases of %s (ms): submit %.3f, tasks done %.3f, scalar fetch %.3f; the ceiling's time for these "
                 "bytes %.3f | | | | | | |\n",
                 op_names[op], med[0] * 1e3, med[1] * 1e3, med[2] * 1e3, bytes / ceiling / 1e6);
      }
    }
    sl_scalar_destroy(&s);
    sl_array_destroy(&x);
    sl_array_destroy(&y);
  }
  free(t);
#ifdef SL_HAVE_CUDA
  cudaFree(dev_a);
  cudaFree(dev_b);
#endif
  fflush(stdout);
  int fin = sl_finalize();
  return status || fin;
}
