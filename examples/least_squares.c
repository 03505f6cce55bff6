/* least_squares: an overdetermined system split by rows over the ranks (a VStack of dense blocks: y
 * scattered, x replicated), solved with CGLS and with LSQR; prints both iteration tables and checks that
 * each recovers the model that made the data and that the two agree.
 *   mpirun -n 2 ./least_squares [--rows R] [--cols C] [--damp D] [--niter K] [--dtype float64|complex128] [--quiet]
 * R rows per rank (default 400), C columns (default 100). Exits non-zero if a check fails. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"

static void usage(void)
{
  printf("usage: least_squares [--rows R] [--cols C] [--damp D] [--niter K] [--dtype float64|complex128] [--quiet]\n");
}

/* The gathered difference |a - b| / |b| of two replicated arrays. */
static double rel_diff(sl_array *a, sl_array *b, sl_array *tmp)
{
  sl_scalar *s1, *s2;
  double d = 0, n = 0;
  if (sl_scalar_create(&s1, SL_FLOAT64) || sl_scalar_create(&s2, SL_FLOAT64)) return INFINITY;
  sl_array_copy(tmp, a);
  sl_array_axpby(tmp, SL_REAL(-1), b, SL_REAL(1));
  sl_array_norm(tmp, 2, s1);
  sl_array_norm(b, 2, s2);
  sl_scalar_get(s1, &d);
  sl_scalar_get(s2, &n);
  sl_scalar_destroy(&s1);
  sl_scalar_destroy(&s2);
  return d / n;
}

int main(int argc, char **argv)
{
  int64_t rows = 400, cols = 100;
  sl_dtype dt = SL_FLOAT64;
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 500;
  o.tol = 1e-12;
  o.show = 1;
  o.atol = o.btol = 1e-12;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--cols") && i + 1 < argc) cols = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--damp") && i + 1 < argc) o.damp = atof(argv[++i]);
    else if (!strcmp(argv[i], "--niter") && i + 1 < argc) o.niter = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) dt = !strcmp(argv[++i], "complex128") ? SL_COMPLEX128 : SL_FLOAT64;
    else if (!strcmp(argv[i], "--quiet")) o.show = 0;
    else {
      usage();
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (rows < 1 || cols < 1) {
    usage();
    return 2;
  }
  TRY(sl_init(&argc, &argv, NULL));
  int me = sl_rank(), cplx = dt == SL_COMPLEX128;
  /* this rank's rows, from a formula with a strong diagonal part (a real program reads its own) */
  double *a = malloc(sizeof(double) * (size_t)(rows * cols * (cplx ? 2 : 1)));
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      int64_t gi = me * rows + i, k = i * cols + j;
      double v = sin(0.37 * (double)gi * (double)j + 0.11 * (double)j) + ((gi % cols) == j ? 3.0 : 0.0);
      if (cplx) a[2 * k] = v, a[2 * k + 1] = cos(0.23 * (double)gi - 0.5 * (double)j);
      else a[k] = v;
    }
  sl_op *A;
  TRY(sl_op_vstack_matrix(&A, a, rows, cols, 1, dt));
  free(a);
  sl_array *xt, *y, *x1, *x2, *tmp;
  TRY(sl_op_create_domain(A, &xt));
  TRY(sl_op_create_range(A, &y));
  TRY(sl_op_create_domain(A, &x1));
  TRY(sl_op_create_domain(A, &x2));
  TRY(sl_op_create_domain(A, &tmp));
  TRY(sl_array_fill_random(xt, 1));
  TRY(sl_op_apply(A, SL_FORWARD, xt, y)); /* consistent data: both solvers must find xt when damp = 0 */
  sl_solver_info i1, i2;
  TRY(sl_solve_cgls(A, y, x1, &o, &i1));
  TRY(sl_solve_lsqr(A, y, x2, &o, &i2));
  double e1 = rel_diff(x1, xt, tmp), e2 = rel_diff(x2, xt, tmp), e12 = rel_diff(x1, x2, tmp);
  double lim = o.damp > 0 ? INFINITY : 1e-6;
  int ok = e1 < lim && e2 < lim && e12 < 1e-6;
  if (me == 0) {
    printf("least_squares: %lld x %lld (%s) on %d ranks, damp %g\n", (long long)(rows * sl_size()), (long long)cols,
           sl_dtype_name(dt), sl_size(), o.damp);
    printf("  CGLS: %4d iterations, %.3f s, ||x - x_true|| / ||x_true|| = %.2e (%s)\n", i1.iterations, i1.seconds, e1,
           sl_stop_reason_name(i1.stop));
    printf("  LSQR: %4d iterations, %.3f s, ||x - x_true|| / ||x_true|| = %.2e (%s)\n", i2.iterations, i2.seconds, e2,
           sl_stop_reason_name(i2.stop));
    printf("  CGLS and LSQR differ by %.2e: %s\n", e12, ok ? "PASSED" : "FAILED");
  }
  sl_array *arr[5] = {xt, y, x1, x2, tmp};
  for (int i = 0; i < 5; i++) sl_array_destroy(&arr[i]);
  sl_op_destroy(&A);
  TRY(sl_finalize());
  return ok ? 0 : 1;
}
