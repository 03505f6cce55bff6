/* bench_stencil: stencil operators (2-D n x n float64, rows over the ranks) forward plus adjoint, in GB/s
 * (read x, write y, both directions), beside a plain single-pass C loop doing the same stencil on the same
 * local block in the same run (one thread: compare with STARPU_NCPU=1) and, with CUDA workers, beside a
 * device-to-device copy of the same bytes (cudaMemcpy); then the fused 3-D Laplacian on a cube of about
 * n^2 elements (c^3, c = n^(2/3)) beside a plain 7-point loop or the copy. Then the halo exchange: the Laplacian with the
 * interior overlapping the exchange, with every task waiting for it (STARLOPS_STENCIL_NO_OVERLAP=1), and the
 * exchange alone; overlapped fraction = (serial - overlapped) / exchange.
 *   mpirun -n P bench_stencil [--sizes n1,n2,...] [--reps R]
 * Time: median of R after a warm-up, slowest rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "starlops.h"
#include "bench_util.h"

/* The plain loops on the local block (rows m with one ghost row zero-padded, n columns): 5-point Laplacian,
 * centered second derivative along the rows, centered-5 first derivative along the columns. */
static void loop_lap(int64_t m, int64_t n, const double *x, double *y)
{
  for (int64_t i = 1; i + 1 < m; i++)
    for (int64_t j = 1; j + 1 < n; j++)
      y[i * n + j] = x[(i - 1) * n + j] + x[(i + 1) * n + j] + x[i * n + j - 1] + x[i * n + j + 1] - 4 * x[i * n + j];
}
static void loop_d2(int64_t m, int64_t n, const double *x, double *y)
{
  for (int64_t i = 1; i + 1 < m; i++)
    for (int64_t j = 0; j < n; j++) y[i * n + j] = x[(i - 1) * n + j] - 2 * x[i * n + j] + x[(i + 1) * n + j];
}
static void loop_d1c5(int64_t m, int64_t n, const double *x, double *y)
{
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 2; j + 2 < n; j++) {
      const double *r = x + i * n + j;
      y[i * n + j] = (1.0 / 12) * r[-2] - (2.0 / 3) * r[-1] + (2.0 / 3) * r[1] - (1.0 / 12) * r[2];
    }
}

/* The 7-point Laplacian on a local block of a x b x c (a: with the ghost planes). */
static void loop_lap3(int64_t a, int64_t b, int64_t c, const double *x, double *y)
{
  for (int64_t i = 1; i + 1 < a; i++)
    for (int64_t j = 1; j + 1 < b; j++)
      for (int64_t k = 1; k + 1 < c; k++) {
        int64_t q = (i * b + j) * c + k;
        y[q] = x[q - b * c] + x[q + b * c] + x[q - c] + x[q + c] + x[q - 1] + x[q + 1] - 6 * x[q];
      }
}

static double time_loop3(int64_t a, int64_t b, int64_t c, int reps)
{
  int64_t len = a * b * c;
  double *x = malloc(sizeof *x * (size_t)len), *y = calloc((size_t)len, sizeof *y), t[64];
  for (int64_t i = 0; i < len; i++) x[i] = (double)(i % 17);
  for (int r = -1; r < reps; r++) {
    double t0 = bench_now();
    loop_lap3(a, b, c, x, y);
    loop_lap3(a, b, c, y, x);
    if (r >= 0) t[r] = bench_slowest(bench_now() - t0);
  }
  free(x);
  free(y);
  return bench_median(t, reps);
}

static double time_loop(void (*f)(int64_t, int64_t, const double *, double *), int64_t m, int64_t n, int reps)
{
  double *x = malloc(sizeof *x * (size_t)(m * n)), *y = calloc((size_t)(m * n), sizeof *y), t[64];
  for (int64_t i = 0; i < m * n; i++) x[i] = (double)(i % 17);
  for (int r = -1; r < reps; r++) {
    double t0 = bench_now();
    f(m, n, x, y); /* forward and adjoint: the same stencil twice (the adjoint of a symmetric one) */
    f(m, n, y, x);
    if (r >= 0) t[r] = bench_slowest(bench_now() - t0);
  }
  free(x);
  free(y);
  return bench_median(t, reps);
}

/* Two device-to-device copies of `bytes` (there and back, as the operators' forward and adjoint), slowest rank;
 * 0 when a rank has no CUDA worker or cannot allocate the buffers */
static double time_d2d(size_t bytes, int reps)
{
#ifdef SL_HAVE_CUDA
  double t = sl_ncuda_workers() > 0 ? bench_time_d2d(bytes, 2, reps) : NAN;
  int ok = !isnan(t);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, sl_comm());
  t = bench_slowest(ok ? t : 0.0);
  return ok ? t : 0.0;
#else
  (void)bytes;
  (void)reps;
  return 0;
#endif
}

int main(int argc, char **argv)
{
  int64_t sizes[16] = {1000, 4000};
  int nsizes = 2, reps = 7;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *p = strtok(argv[++i], ","); p && nsizes < 16; p = strtok(NULL, ",")) sizes[nsizes++] = atoll(p);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_stencil [--sizes n1,n2,...] [--reps R]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (reps > 64) reps = 64;
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "bench_stencil: sl_init: %s\n", sl_last_error());
    return 1;
  }
  int me = sl_rank(), gpu = sl_ncuda_workers() > 0;
  if (me == 0) {
    printf("# bench_stencil: %d ranks, %d CPU + %d CUDA workers on rank 0, float64, forward + adjoint, median of %d\n",
           sl_size(), sl_ncpu_workers(), sl_ncuda_workers(), reps);
    printf("# ceiling: %s\n", gpu ? "device-to-device cudaMemcpy of the same bytes (2 x 2 n^2 x 8 B)"
                                  : "plain single-pass C loop on the local block, one thread");
    printf("| operator | n | time (ms) | GB/s per rank | ceiling GB/s | ratio |\n|---|---|---|---|---|---|\n");
  }
  for (int si = 0; si < nsizes; si++) {
    int64_t n = sizes[si], dims[2] = {n, n};
    sl_array *x = NULL, *y = NULL;
    if (sl_array_create(&x, 2, dims, SL_FLOAT64, NULL) || sl_array_create(&y, 2, dims, SL_FLOAT64, NULL)) {
      fprintf(stderr, "bench_stencil: %s\n", sl_last_error());
      return 1;
    }
    sl_array_fill_random(x, 1);
    int64_t m = sl_array_local_dims(x)[0];
    double bytes = 2.0 * 2.0 * (double)(m * n) * 8.0;
    sl_op *ops[3] = {NULL, NULL, NULL};
    sl_op_laplacian(&ops[0], x, 2, NULL, NULL, NULL, SL_DERIV_CENTERED, 0);
    sl_op_second_derivative(&ops[1], x, 0, 1.0, SL_DERIV_CENTERED, 0);
    sl_op_first_derivative(&ops[2], x, 1, 1.0, SL_DERIV_CENTERED, 5, 0);
    void (*loops[3])(int64_t, int64_t, const double *, double *) = {loop_lap, loop_d2, loop_d1c5};
    const char *names[3] = {"Laplacian (2 axes, fused)", "SecondDerivative axis 0", "FirstDerivative c5 axis 1"};
    double d2d = gpu ? time_d2d((size_t)(m * n) * 8, reps) : 0;
    for (int k = 0; k < 3; k++) {
      if (!ops[k]) continue;
      double t = bench_time_fwd_adj(ops[k], x, y, reps);
      double c = gpu ? d2d : time_loop(loops[k], m + 2, n, reps);
      if (me == 0)
        printf("| %s | %lld | %.3f | %.2f | %.2f | %.2f |\n", names[k], (long long)n, 1e3 * t, bytes / t / 1e9,
               c > 0 ? bytes / c / 1e9 : 0.0, c > 0 ? c / t : 0.0);
    }
    /* the fused 3-D Laplacian on a cube of about the same size */
    {
      int64_t c = (int64_t)llround(cbrt((double)n * (double)n)), d3[3] = {c, c, c};
      sl_array *x3 = NULL, *y3 = NULL;
      sl_op *l3 = NULL;
      if (sl_array_create(&x3, 3, d3, SL_FLOAT64, NULL) || sl_array_create(&y3, 3, d3, SL_FLOAT64, NULL) ||
          sl_op_laplacian(&l3, x3, 3, NULL, NULL, NULL, SL_DERIV_CENTERED, 0)) {
        fprintf(stderr, "bench_stencil: %s\n", sl_last_error());
        return 1;
      }
      sl_array_fill_random(x3, 1);
      int64_t m3 = sl_array_local_dims(x3)[0];
      double b3 = 2.0 * 2.0 * (double)(m3 * c * c) * 8.0;
      double t = bench_time_fwd_adj(l3, x3, y3, reps);
      double cl = gpu ? time_d2d((size_t)(m3 * c * c) * 8, reps) : time_loop3(m3 + 2, c, c, reps);
      if (me == 0)
        printf("| Laplacian 3-D (3 axes, fused), n^3 | %lld | %.3f | %.2f | %.2f | %.2f |\n", (long long)c, 1e3 * t,
               b3 / t / 1e9, cl > 0 ? b3 / cl / 1e9 : 0.0, cl > 0 ? cl / t : 0.0);
      sl_op_destroy(&l3);
      sl_array_destroy(&x3);
      sl_array_destroy(&y3);
    }
    /* the halo exchange: overlapped, serialised, alone */
    if (sl_size() > 1 && ops[0]) {
      double tov = bench_time_fwd_adj(ops[0], x, y, reps);
      setenv("STARLOPS_STENCIL_NO_OVERLAP", "1", 1);
      double tser = bench_time_fwd_adj(ops[0], x, y, reps);
      unsetenv("STARLOPS_STENCIL_NO_OVERLAP");
      sl_dist dg = sl_dist_default();
      dg.ghost_lo = dg.ghost_hi = 2;
      sl_array *g = NULL;
      double tex[64];
      sl_array_create(&g, 2, dims, SL_FLOAT64, &dg);
      for (int r = -1; r < reps; r++) {
        sl_wait();
        MPI_Barrier(sl_comm());
        double t0 = bench_now();
        sl_array_exchange_ghosts(g); /* twice: forward and adjoint each exchange once */
        sl_array_exchange_ghosts(g);
        sl_wait();
        if (r >= 0) tex[r] = bench_slowest(bench_now() - t0);
      }
      double te = bench_median(tex, reps);
      sl_array_destroy(&g);
      if (me == 0)
        printf("| halo n=%lld: overlapped %.3f ms, serialised %.3f ms, exchange alone %.3f ms | | | | | overlapped "
               "fraction %.2f |\n",
               (long long)n, 1e3 * tov, 1e3 * tser, 1e3 * te, te > 0 ? (tser - tov) / te : 0.0);
    }
    for (int k = 0; k < 3; k++) sl_op_destroy(&ops[k]);
    sl_array_destroy(&x);
    sl_array_destroy(&y);
  }
  sl_finalize();
  return 0;
}
