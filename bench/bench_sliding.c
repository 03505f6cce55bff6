/* bench_sliding: Sliding1D (n traces x nt samples float64, traces over the ranks, windows of nwin samples
 * overlapping by nwin / 4 along the samples, a dense nwin x nwin matrix per window) forward plus adjoint, in
 * GFLOP/s (2 nwin nm flops per window and way) and GB/s (data and model read and written), beside a ceiling
 * measured in the same run: on the CPUs a plain loop doing the same windows on the same local block (one
 * thread); with CUDA workers a device-to-device copy of the same bytes.
 * --along: the samples are the distributed axis instead (data nt x traces split along the samples, windows
 * along them, ghost windows and rows exchanged between ranks); the ceiling is then the same windows local
 * (traces over the ranks) timed in the same run, so the ratio is what the exchanges and the layout cost.
 * --along-last: the same with the data traces x nt split along the samples (axis 1, the traces before it).
 * --windows: M = NULL, the windows themselves (the operator that any per-window operator composes with: taper and
 * add, or cut out), in GB/s beside a copy of the same bytes in the same run (one thread's memcpy per rank on the
 * CPUs, a device-to-device copy on the GPU).
 *   mpirun -n P bench_sliding [--traces n] [--samples nt1,nt2,...] [--nwin w1,w2,...] [--reps R] [--along | --along-last] [--windows]
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

/* the plain loop: m traces of nt samples, windows of nwin every step, forward then adjoint, no taper (the
 * same multiply-adds) */
static double time_loop(int64_t m, int64_t nt, int64_t nwin, int64_t step, int64_t nwins, const double *M, int reps)
{
  int64_t nmod = m * nwins * nwin;
  double *x = malloc(sizeof *x * (size_t)nmod), *y = malloc(sizeof *y * (size_t)(m * nt)), t[64];
  for (int64_t i = 0; i < nmod; i++) x[i] = (double)(i % 13) - 6;
  for (int r = -1; r < reps; r++) {
    double t0 = bench_now();
    memset(y, 0, sizeof *y * (size_t)(m * nt));
    for (int64_t o = 0; o < m; o++)
      for (int64_t w = 0; w < nwins; w++)
        for (int64_t q = 0; q < nwin; q++) {
          double s = 0;
          const double *xw = x + (o * nwins + w) * nwin;
          for (int64_t j = 0; j < nwin; j++) s += M[q * nwin + j] * xw[j];
          y[o * nt + w * step + q] += s;
        }
    for (int64_t o = 0; o < m; o++)
      for (int64_t w = 0; w < nwins; w++) {
        double *xw = x + (o * nwins + w) * nwin;
        for (int64_t j = 0; j < nwin; j++) xw[j] = 0;
        for (int64_t q = 0; q < nwin; q++) {
          double v = y[o * nt + w * step + q];
          for (int64_t j = 0; j < nwin; j++) xw[j] += M[q * nwin + j] * v;
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
  int64_t traces = 256, samples[8] = {4096}, wins[8] = {32, 128};
  int nsamples = 1, nwins_l = 2, reps = 5, along = 0, windows = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--traces") && i + 1 < argc) traces = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--samples") && i + 1 < argc) nsamples = bench_parse_list(argv[++i], samples, 8);
    else if (!strcmp(argv[i], "--nwin") && i + 1 < argc) nwins_l = bench_parse_list(argv[++i], wins, 8);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--along")) along = 1;
    else if (!strcmp(argv[i], "--along-last")) along = 2;
    else if (!strcmp(argv[i], "--windows")) windows = 1;
    else {
      printf("usage: bench_sliding [--traces n] [--samples nt1,...] [--nwin w1,...] [--reps R] [--along | --along-last] [--windows]\n");
      return 2;
    }
  }
  if (reps < 1 || reps > 64) reps = 5;
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) return 1;
  int gpu = sl_ncuda_workers() > 0;
  if (sl_rank() == 0) {
    printf("# bench_sliding: %d ranks, %d CPU + %d CUDA workers on rank 0, float64, %lld traces, forward + adjoint, %s, median of %d\n",
           sl_size(), sl_ncpu_workers(), sl_ncuda_workers(), (long long)traces,
           windows ? "the windows themselves (M = NULL)" : "a dense nwin x nwin M", reps);
    printf("# ceiling: %s\n", along ? "the same windows along a non-distributed axis (traces over the ranks)"
                               : gpu ? "device-to-device copy of the same bytes (GB/s)"
                               : windows ? "memcpy of the same bytes, one thread per rank (GB/s)"
                                         : "plain loop on the local block, one thread (GFLOP/s)");
    printf("| samples | nwin | windows | time (ms) | GFLOP/s | GB/s | ceiling | ratio |\n|---|---|---|---|---|---|---|---|\n");
  }
  for (int s = 0; s < nsamples; s++)
    for (int w = 0; w < nwins_l; w++) {
      int64_t nt = samples[s], nwin = wins[w], nover = nwin / 4, step = nwin - nover, nwins = (nt - nwin) / step + 1;
      int64_t dims[2] = {traces, nt};
      double *M = malloc(sizeof *M * (size_t)(nwin * nwin));
      for (int64_t i = 0; i < nwin * nwin; i++) M[i] = cos(0.01 * (double)i);
      sl_array *d = NULL, *x = NULL, *y = NULL;
      sl_op *op = NULL;
      if (sl_array_create(&d, 2, dims, SL_FLOAT64, NULL) ||
          sl_op_sliding1d(&op, d, 1, windows ? NULL : M, nwin, nwin, nover, SL_TAPER_HANNING) || sl_op_create_domain(op, &x) ||
          sl_op_create_range(op, &y)) {
        fprintf(stderr, "bench_sliding: %s\n", sl_last_error());
        return 1;
      }
      sl_array_fill_random(x, 3);
      double tt = bench_time_fwd_adj(op, x, y, reps);
      /* a dense M: a multiply-add per matrix element, window and way; the windows: a taper and an add per sample */
      double flops = 2.0 * 2.0 * (double)(traces * nwins * nwin * (windows ? 1 : nwin));
      double bytes = 2.0 * 8.0 * (double)(traces * (nt + nwins * nwin)), ceil = NAN;
#ifdef SL_HAVE_CUDA
      if (gpu && !along) {
        int64_t mine = sl_array_local_size(x) + sl_array_local_size(y);
        ceil = 2.0 * 8.0 * (double)mine / bench_time_d2d((size_t)mine * 8, 1, reps) * 1e-9 * sl_size();
      }
#endif
      if (!gpu && !along && windows) {
        int64_t mine = sl_array_local_size(x) + sl_array_local_size(y);
        ceil = 2.0 * 8.0 * (double)mine / bench_slowest(bench_time_memcpy((size_t)mine * 8, reps)) * 1e-9 * sl_size();
      }
      if (!gpu && !along && !windows) {
        int64_t m = sl_array_local_dims(d)[0];
        double tl = bench_slowest(time_loop(m, nt, nwin, step, nwins, M, reps));
        ceil = 2.0 * 2.0 * (double)(m * nwins * nwin * nwin) / tl * 1e-9 * sl_size();
      }
      if (along) { /* the windows along the distributed axis: (nt, traces), or (traces, nt), split along the samples */
        int64_t da[2] = {along == 1 ? nt : traces, along == 1 ? traces : nt};
        sl_dist dd = sl_dist_scatter(along == 1 ? 0 : 1);
        sl_array *d2 = NULL, *x2 = NULL, *y2 = NULL;
        sl_op *op2 = NULL;
        if (sl_array_create(&d2, 2, da, SL_FLOAT64, &dd) ||
            sl_op_sliding1d(&op2, d2, along == 1 ? 0 : 1, windows ? NULL : M, nwin, nwin, nover, SL_TAPER_HANNING) ||
            sl_op_create_domain(op2, &x2) || sl_op_create_range(op2, &y2)) {
          fprintf(stderr, "bench_sliding: %s\n", sl_last_error());
          return 1;
        }
        sl_array_fill_random(x2, 3);
        ceil = flops / tt * 1e-9; /* the local windows above */
        tt = bench_time_fwd_adj(op2, x2, y2, reps);
        sl_op_destroy(&op2);
        sl_array_destroy(&d2);
        sl_array_destroy(&x2);
        sl_array_destroy(&y2);
      }
      double gf = flops / tt * 1e-9, gb = bytes / tt * 1e-9;
      if (sl_rank() == 0)
        printf("| %lld | %lld | %lld | %.3f | %.1f | %.1f | %.1f | %.2f |\n", (long long)nt, (long long)nwin, (long long)nwins,
               tt * 1e3, gf, gb, ceil, ((gpu || windows) && !along ? gb : gf) / ceil);
      sl_op_destroy(&op);
      sl_array_destroy(&d);
      sl_array_destroy(&x);
      sl_array_destroy(&y);
      free(M);
    }
  sl_finalize();
  return 0;
}
