/* bench_patch: Patch2D with a dense matrix per patch (sl_op_patch2d_dense) on traces x n x n float64 (traces over
 * the ranks, nwin x nwin patches overlapping by nwin / 4 over the last two axes, a dense (nwin^2) x (nwin^2)
 * matrix per patch: a 2-D transform that is not separable), forward plus adjoint, in GFLOP/s (2 nwin^4 flops per
 * patch and way), beside the GEMM of the same shape measured in the same run: every patch of a rank as the
 * columns of one (nwin^2 x nwin^2) x (nwin^2 x patches) product, CBLAS on the CPUs (one thread per call, as
 * starlops sets OpenBLAS unless OPENBLAS_NUM_THREADS is given) or cuBLAS with CUDA workers. The ratio says how far the per-patch kernel is from a
 * batched product's rate.
 * --windows: M = NULL, the patches themselves (the operator any per-patch operator composes with: taper and add,
 * or cut out), in GB/s (the model and the data read or written once per way) beside a copy of the same bytes in
 * the same run (one thread's memcpy per rank on the CPUs, a device-to-device copy on the GPU).
 *   mpirun -n P bench_patch [--traces t] [--sizes n1,n2,...] [--nwin w1,w2,...] [--reps R] [--windows]
 * Time: median of R after a warm-up, slowest rank. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starlops.h"
#ifdef SL_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif
#include "bench_util.h"

/* m x k times k x n, twice (forward and adjoint shapes are the same), median of reps; on the GPU with cuBLAS */
static double gemm_time(int gpu, int64_t m, int64_t k, int64_t n, int reps)
{
  double t[64], one = 1, zero = 0;
  size_t ba = sizeof(double) * (size_t)(m * k), bb = sizeof(double) * (size_t)(k * n), bc = sizeof(double) * (size_t)(m * n);
#ifdef SL_HAVE_CUDA
  if (gpu) return bench_time_cublas_dgemm(n, m, k, 2, reps); /* column-major: the transposed product */
#endif
  (void)gpu;
  double *a = calloc(1, ba), *b = calloc(1, bb), *c = calloc(1, bc);
  if (!a || !b || !c) return NAN;
  for (int r = -1; r < reps; r++) {
    double t0 = bench_now();
    for (int w = 0; w < 2; w++)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, one, a, (int)k, b, (int)n, zero, c, (int)n);
    if (r >= 0) t[r] = bench_now() - t0;
  }
  free(a);
  free(b);
  free(c);
  return bench_median(t, reps);
}

int main(int argc, char **argv)
{
  int64_t traces = 16, sizes[8] = {256}, wins[8] = {8, 16};
  int nsizes = 1, nwl = 2, reps = 5, windows = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--traces") && i + 1 < argc) traces = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) nsizes = bench_parse_list(argv[++i], sizes, 8);
    else if (!strcmp(argv[i], "--nwin") && i + 1 < argc) nwl = bench_parse_list(argv[++i], wins, 8);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--windows")) windows = 1;
    else {
      printf("usage: bench_patch [--traces t] [--sizes n1,...] [--nwin w1,...] [--reps R] [--windows]\n");
      return 2;
    }
  }
  if (reps < 1 || reps > 64) reps = 5;
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) return 1;
  int gpu = sl_ncuda_workers() > 0;
  if (sl_rank() == 0) {
    printf("# bench_patch: %d ranks, %d CPU + %d CUDA workers on rank 0, float64, %lld traces, forward + adjoint, median of %d\n",
           sl_size(), sl_ncpu_workers(), sl_ncuda_workers(), (long long)traces, reps);
    if (windows) {
      printf("# the patches themselves (M = NULL); ceiling: %s of the same bytes, GB/s\n",
             gpu ? "device-to-device copy" : "memcpy, one thread per rank,");
      printf("| n | nwin | patches | time (ms) | GB/s | ceiling GB/s | ratio |\n|---|---|---|---|---|---|---|\n");
    } else {
      printf("# ceiling: %s GEMM of the same shape (every patch of a rank as a column), GFLOP/s\n", gpu ? "cuBLAS" : "CBLAS");
      printf("| n | nwin | patches | time (ms) | GFLOP/s | ceiling GFLOP/s | ratio |\n|---|---|---|---|---|---|---|\n");
    }
  }
  for (int s = 0; s < nsizes; s++)
    for (int w = 0; w < nwl; w++) {
      int64_t n = sizes[s], nwin = wins[w], nover = nwin / 4, step = nwin - nover, nw = (n - nwin) / step + 1;
      int64_t q = nwin * nwin, dims[3] = {traces, n, n};
      double *M = malloc(sizeof *M * (size_t)(q * q));
      for (int64_t i = 0; i < q * q; i++) M[i] = cos(0.01 * (double)i);
      sl_array *d = NULL, *x = NULL, *y = NULL;
      sl_op *op = NULL;
      int axes[2] = {1, 2};
      if (sl_array_create(&d, 3, dims, SL_FLOAT64, NULL) ||
          sl_op_patch2d_dense(&op, d, axes, windows ? NULL : M, nwin, nwin, nwin, nover, nwin, nover, SL_TAPER_HANNING) ||
          sl_op_create_domain(op, &x) || sl_op_create_range(op, &y)) {
        fprintf(stderr, "bench_patch: %s\n", sl_last_error());
        return 1;
      }
      sl_array_fill_random(x, 3);
      double tt = bench_time_fwd_adj(op, x, y, reps);
      /* the rate (GB/s with M = NULL: the model and the data once per way; else GFLOP/s) and its ceiling: a copy of
       * the rank's same bytes, or the GEMM of the same shape */
      double rate, ceil;
      if (windows) {
        int64_t mine = sl_array_local_size(x) + sl_array_local_size(y);
        double tc = NAN;
#ifdef SL_HAVE_CUDA
        if (gpu) tc = bench_slowest(bench_time_d2d((size_t)mine * 8, 1, reps));
#endif
        if (!gpu) tc = bench_slowest(bench_time_memcpy((size_t)mine * 8, reps));
        ceil = 2.0 * 8.0 * (double)mine / tc * 1e-9 * sl_size();
        rate = 2.0 * 8.0 * (double)(sl_array_global_size(x) + sl_array_global_size(y)) / tt * 1e-9;
      } else {
        double flops = 2.0 * 2.0 * (double)(traces * nw * nw) * (double)(q * q);
        int64_t mine = sl_array_local_dims(d)[0] * nw * nw;
        double tg = bench_slowest(mine > 0 ? gemm_time(gpu, q, q, mine, reps) : 0);
        ceil = flops / tg * 1e-9;
        rate = flops / tt * 1e-9;
      }
      if (sl_rank() == 0)
        printf("| %lld | %lld | %lld | %.3f | %.1f | %.1f | %.2f |\n", (long long)n, (long long)nwin, (long long)(traces * nw * nw),
               tt * 1e3, rate, ceil, rate / ceil);
      sl_op_destroy(&op);
      sl_array_destroy(&d);
      sl_array_destroy(&x);
      sl_array_destroy(&y);
      free(M);
    }
  sl_finalize();
  return 0;
}
