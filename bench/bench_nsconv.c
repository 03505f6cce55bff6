/* bench_nsconv: NonStationaryConvolve1D (n x n float64, or complex128 with --complex, rows over the ranks, the convolution along the rows'
 * axis 1, 5 filters of L taps) forward plus adjoint, in GFLOP/s (2 L flops per output) and GB/s (read x, write
 * y, both directions), beside a ceiling measured in the same run: on the CPUs a plain single-pass C loop doing
 * the same convolution on the same local block (one thread: compare with STARPU_NCPU=1); with CUDA workers a
 * device-to-device copy of the same bytes (cudaMemcpy), the bandwidth ceiling of the GPU kernel. --axis 0
 * convolves along axis 0 instead (the array split along axis 1; the CPU ceiling is then the row loop on as many
 * elements). Complex128 counts 8 L flops per output and has no CPU ceiling (the plain loop is real).
 *   mpirun -n P bench_nsconv [--sizes n1,n2,...] [--taps L1,L2,...] [--reps R] [--axis 0|1] [--complex]
 * Time: median of R after a warm-up, slowest rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starlops.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "bench_util.h"

/* the plain loop: m rows of n, each row convolved with one filter table H (n x L), forward then adjoint */
static double time_loop(int64_t m, int64_t n, int64_t L, const double *H, int reps)
{
  double *x = malloc(sizeof *x * (size_t)(m * n)), *y = malloc(sizeof *y * (size_t)(m * n)), t[64];
  for (int64_t i = 0; i < m * n; i++) x[i] = (double)(i % 13) - 6;
  int64_t c = L / 2;
  for (int r = -1; r < reps; r++) {
    double t0 = bench_now();
    for (int64_t i = 0; i < m; i++) {
      const double *xr = x + i * n;
      double *yr = y + i * n;
      for (int64_t k = 0; k < n; k++) {
        double s = 0;
        for (int64_t j = k - c < 0 ? 0 : k - c; j <= k + c && j < n; j++) s += H[j * L + (k - j) + c] * xr[j];
        yr[k] = s;
      }
      for (int64_t k = 0; k < n; k++) {
        double s = 0;
        for (int64_t j = k - c < 0 ? 0 : k - c; j <= k + c && j < n; j++) s += H[k * L + (j - k) + c] * yr[j];
        yr[k] = s; /* (in place: the same work and traffic as the adjoint) */
      }
    }
    if (r >= 0) t[r] = bench_now() - t0;
  }
  free(x);
  free(y);
  return bench_median(t, reps);
}

int main(int argc, char **argv)
{
  int cplx = 0;
  int64_t sizes[16] = {2048, 4096}, taps[8] = {11, 31};
  int nsizes = 2, ntaps = 2, reps = 5, axis = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) nsizes = bench_parse_list(argv[++i], sizes, 16);
    else if (!strcmp(argv[i], "--taps") && i + 1 < argc) ntaps = bench_parse_list(argv[++i], taps, 8);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--axis") && i + 1 < argc) axis = atoi(argv[++i]) == 0 ? 0 : 1;
    else if (!strcmp(argv[i], "--complex")) cplx = 1;
    else {
      printf("usage: bench_nsconv [--sizes n1,n2,...] [--taps L1,L2,...] [--reps R] [--axis 0|1] [--complex]\n");
      return 2;
    }
  }
  if (reps < 1 || reps > 64) reps = 5;
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) return 1;
  int gpu = sl_ncuda_workers() > 0;
  if (sl_rank() == 0) {
    printf("# bench_nsconv: %d ranks, %d CPU + %d CUDA workers on rank 0, %s, forward + adjoint, median of %d, "
           "convolution along axis %d (the array split along axis %d)\n", sl_size(), sl_ncpu_workers(), sl_ncuda_workers(),
           cplx ? "complex128" : "float64", reps, axis, 1 - axis);
    printf("# ceiling: %s\n", gpu    ? "device-to-device copy of the same bytes (GB/s)"
                               : cplx ? "none (the plain loop is real)"
                                      : "plain single-pass C loop on the local block, one thread (GFLOP/s)");
    printf("| n | taps | time (ms) | GFLOP/s | GB/s | ceiling | ratio |\n|---|---|---|---|---|---|---|\n");
  }
  for (int s = 0; s < nsizes; s++)
    for (int t = 0; t < ntaps; t++) {
      int64_t n = sizes[s], L = taps[t] | 1, nf = 5, dims[2] = {n, n}, ih[5];
      for (int f = 0; f < nf; f++) ih[f] = f * ((n - 1) / (nf - 1));
      const int parts = cplx ? 2 : 1; /* doubles per value */
      double *hs = malloc(sizeof *hs * (size_t)(nf * L * parts));
      for (int64_t i = 0; i < nf * L * parts; i++) hs[i] = cos(0.3 * (double)i);
      sl_array *x = NULL, *y = NULL;
      sl_op *op = NULL;
      sl_dist dist = {.partition = SL_SCATTER, .axis = 1 - axis};
      if (sl_array_create(&x, 2, dims, cplx ? SL_COMPLEX128 : SL_FLOAT64, &dist) || sl_array_create_like(&y, x) ||
          sl_op_nonstationary_convolve1d(&op, x, hs, nf, L, ih, axis)) {
        fprintf(stderr, "bench_nsconv: %s\n", sl_last_error());
        return 1;
      }
      sl_array_fill_random(x, 3);
      double tt = bench_time_fwd_adj(op, x, y, reps), flops = 2.0 * (cplx ? 8.0 : 2.0) * (double)L * (double)(n * n),
             bytes = 2.0 * 2.0 * 8.0 * parts * (double)(n * n);
      double gf = flops / tt * 1e-9, gb = bytes / tt * 1e-9, ceil = NAN;
#ifdef SL_HAVE_CUDA
      if (gpu)
        ceil = 2.0 * 2.0 * 8.0 * parts * (double)(sl_array_local_size(x)) / bench_time_d2d((size_t)sl_array_local_size(x) * 8 * parts, 2, reps) * 1e-9 * sl_size();
#endif
      if (!gpu && !cplx) { /* the plain loop's rate on this rank's block, times the ranks */
        double *H = malloc(sizeof *H * (size_t)(n * L));
        for (int64_t k = 0; k < n; k++)
          for (int64_t j = 0; j < L; j++) H[k * L + j] = hs[(k * (nf - 1) / n) * L + j];
        int64_t m = sl_array_local_dims(x)[1 - axis]; /* the loop along rows on as many elements for axis 0 */
        double tl = bench_slowest(time_loop(m, n, L, H, reps));
        ceil = 2.0 * 2.0 * (double)L * (double)(m * n) / tl * 1e-9 * sl_size();
        free(H);
      }
      if (sl_rank() == 0)
        printf("| %lld | %lld | %.3f | %.1f | %.1f | %.1f | %.2f |\n", (long long)n, (long long)L, tt * 1e3, gf, gb, ceil,
               (gpu ? gb : gf) / ceil);
      sl_op_destroy(&op);
      sl_array_destroy(&x);
      sl_array_destroy(&y);
      free(hs);
    }
  sl_finalize();
  return 0;
}
