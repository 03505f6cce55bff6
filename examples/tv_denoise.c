/* tv_denoise: total-variation denoising of a 2-D image (rows over the ranks), pyproximal's TV tutorial:
 *   min_x 1/2 ||x - b||^2 + lambda sum_ij ||(grad x)_ij||_2
 * solved by PrimalDual with f = L2 (no operator, data b), g = lambda L21 on the stacked Gradient's range and
 * A = the forward-difference Gradient. The image is piecewise constant (a square and a disc) plus uniform
 * noise. Then one more solve without the iteration table is timed beside the sum of its parts (the two
 * applies, both proxes and the vector updates, each timed alone on the same arrays).
 *   mpirun -n 2 ./tv_denoise [--n N] [--niter K] [--lambda L] [--quiet]
 * N x N pixels (default 192), K iterations (default 100), lambda (default 0.2). Exits non-zero unless the
 * error against the clean image is at most half the noise's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"

static void usage(void) { printf("usage: tv_denoise [--n N] [--niter K] [--lambda L] [--quiet]\n"); }

static double norm2(sl_array *a, sl_array *b, sl_array *tmp) /* ||a - b|| */
{
  sl_scalar *s;
  sl_cscalar v;
  TRY(sl_scalar_create(&s, SL_FLOAT64));
  TRY(sl_array_copy(tmp, a));
  TRY(sl_array_axpby(tmp, SL_REAL(-1), b, SL_REAL(1)));
  TRY(sl_array_norm(tmp, 2, s));
  TRY(sl_scalar_get_c(s, &v));
  TRY(sl_scalar_destroy(&s));
  return v.re;
}

/* Seconds of the steps of one PrimalDual iteration, each timed alone (submitted, then waited for), in the
 * order of an iteration so that each finds the caches as it does in the solve; the mean over reps. */
static double parts_time(sl_op *G, sl_prox *f, sl_prox *g, sl_array *x, int reps)
{
  sl_array *t, *u, *y, *ax;
  TRY(sl_array_create_like(&t, x));
  TRY(sl_array_create_like(&u, x));
  TRY(sl_op_create_range(G, &y));
  TRY(sl_op_create_range(G, &ax));
  TRY(sl_array_fill_random(t, 3));
  TRY(sl_op_apply(G, SL_FORWARD, t, y));
  TRY(sl_wait());
  double total = 0;
  for (int r = 0; r < reps; r++)
    for (int step = 0; step < 7; step++) {
      double t0 = MPI_Wtime();
      switch (step) {
      case 0: TRY(sl_op_apply(G, SL_ADJOINT, y, t)); break;
      case 1: TRY(sl_op_apply(G, SL_FORWARD, t, ax)); break;
      case 2: TRY(sl_prox_apply(f, 0.1, t, t)); break;
      case 3: TRY(sl_prox_apply_dual(g, 0.1, y, y)); break;
      case 4: TRY(sl_array_copy(u, t)); TRY(sl_array_copy(u, t)); break;     /* the two copies on x */
      case 5:                                                                /* the three updates on x, one on y */
        TRY(sl_array_axpby(u, SL_REAL(0.5), t, SL_REAL(1)));
        TRY(sl_array_axpby(u, SL_REAL(0.5), t, SL_REAL(1)));
        TRY(sl_array_axpby(u, SL_REAL(0.5), t, SL_REAL(1)));
        TRY(sl_array_axpby(y, SL_REAL(1e-3), ax, SL_REAL(1)));
        break;
      default: { /* the update norm */
        sl_scalar *s;
        TRY(sl_scalar_create(&s, SL_FLOAT64));
        TRY(sl_array_norm(u, 2, s));
        TRY(sl_scalar_destroy(&s));
      }
      }
      TRY(sl_wait());
      total += (MPI_Wtime() - t0) / reps;
    }
  sl_array *arr[4] = {t, u, y, ax};
  for (int i = 0; i < 4; i++) sl_array_destroy(&arr[i]);
  return total;
}

int main(int argc, char **argv)
{
  int64_t n = 192;
  double lambda = 0.2;
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 100;
  o.tol = 0;
  o.check_every = 20;
  o.show = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--niter") && i + 1 < argc) o.niter = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--lambda") && i + 1 < argc) lambda = atof(argv[++i]);
    else if (!strcmp(argv[i], "--quiet")) o.show = 0;
    else {
      usage();
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (n < 8 || o.niter < 1 || !(lambda > 0)) {
    usage();
    return 2;
  }
  TRY(sl_init(&argc, &argv, NULL));
  int64_t dims[2] = {n, n};
  sl_array *clean, *b, *x, *tmp;
  TRY(sl_array_create(&clean, 2, dims, SL_FLOAT64, NULL));
  TRY(sl_array_create_like(&b, clean));
  TRY(sl_array_create_like(&x, clean));
  TRY(sl_array_create_like(&tmp, clean));
  double *p;
  int64_t off = sl_array_local_offset(clean), rows = sl_array_local_dims(clean)[0];
  TRY(sl_array_acquire(clean, SL_WRITE, (void **)&p)); /* a square of 1 and a disc of 0.6 on 0 */
  for (int64_t i = 0; p && i < rows; i++)
    for (int64_t j = 0; j < n; j++) {
      double gi = (double)(off + i), gj = (double)j, cn = (double)n;
      int sq = gi >= cn / 5 && gi < cn / 2 && gj >= cn / 5 && gj < 0.7 * cn;
      int disc = hypot(gi - 0.68 * cn, gj - 0.6 * cn) < cn / 6;
      p[i * n + j] = sq ? 1.0 : (disc ? 0.6 : 0.0);
    }
  TRY(sl_array_release(clean));
  TRY(sl_array_fill_random(b, 11)); /* b = clean + 0.3 U(-1, 1) */
  TRY(sl_array_axpby(b, SL_REAL(1), clean, SL_REAL(0.3)));
  sl_op *G;
  sl_prox *f, *g;
  TRY(sl_op_gradient(&G, clean, NULL, SL_DERIV_FORWARD, 0));
  TRY(sl_prox_l2(&f, NULL, b, 1.0, 0));
  TRY(sl_prox_l21(&g, lambda));
  double *cost = malloc(sizeof *cost * (size_t)(o.niter + 1));
  o.cost = cost;
  sl_solver_info info;
  TRY(sl_solve_primal_dual(f, g, G, x, &o, &info));
  double en = norm2(b, clean, tmp), ed = norm2(x, clean, tmp);
  /* the same solve without the table or the cost, one wait at the end: its time per iteration beside the
   * sum of its steps timed alone */
  sl_solver_info t_info;
  o.show = 0;
  o.cost = NULL;
  o.check_every = o.niter;
  TRY(sl_solve_primal_dual(f, g, G, x, &o, &t_info));
  double per_it = t_info.seconds / t_info.iterations, parts = parts_time(G, f, g, x, 20);
  int ok = ed <= 0.5 * en && cost[o.niter] < cost[1];
  if (sl_rank() == 0) {
    printf("tv_denoise: %lld x %lld image on %d ranks, lambda %g, %d PrimalDual iterations (tau = mu = %.4f)\n", (long long)n,
           (long long)n, sl_size(), lambda, info.iterations, info.alpha);
    printf("  error against the clean image: noisy %.4f, denoised %.4f (ratio %.3f); cost %.6g -> %.6g\n", en, ed, ed / en,
           cost[1], cost[o.niter]);
    printf("  time per iteration %.3f ms; its steps timed alone add up to %.3f ms (overhead %+.1f%%)\n", per_it * 1e3,
           parts * 1e3, 100.0 * (per_it / parts - 1.0));
    printf("tv_denoise: %s\n", ok ? "PASSED" : "FAILED");
  }
  free(cost);
  sl_prox_destroy(&f);
  sl_prox_destroy(&g);
  sl_op_destroy(&G);
  sl_array *arr[4] = {clean, b, x, tmp};
  for (int i = 0; i < 4; i++) sl_array_destroy(&arr[i]);
  TRY(sl_finalize());
  return ok ? 0 : 1;
}
