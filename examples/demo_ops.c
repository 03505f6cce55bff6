/* demo_ops: operators as task graphs. Each rank holds a dense block A_r of a block-diagonal MatrixMult;
 * the example builds Op = 2 A^H A + D (D diagonal), applies it, checks it against the same product built
 * step by step with vector operations, runs dot tests, and prints the operators' sizes.
 *   mpirun -n 2 ./demo_ops [--rows N] [--cols M] [--dtype float64|complex128]
 * With STARLOPS_TRACE=<dir> the run is traced (STARLOPS_TRACE_REGION=1: only the operator applications);
 * scripts/starlops-trace <dir> converts it.
 * Exits non-zero if a check fails. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"


int main(int argc, char **argv)
{
  int64_t rows = 300, cols = 200;
  sl_dtype dt = SL_FLOAT64;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--cols") && i + 1 < argc) cols = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) dt = !strcmp(argv[++i], "complex128") ? SL_COMPLEX128 : SL_FLOAT64;
    else {
      printf("usage: demo_ops [--rows N] [--cols M] [--dtype float64|complex128]\n");
      return 2;
    }
  }
  TRY(sl_init(&argc, &argv, NULL));
  int me = sl_rank(), cplx = dt == SL_COMPLEX128;
  /* this rank's block, from a formula (a real program would read its own data) */
  size_t el = sl_dtype_size(dt);
  double *a = malloc(el * (size_t)(rows * cols));
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      double v = sin(0.01 * (double)(i + 1) * (double)(j + 1 + me));
      if (cplx) {
        a[2 * (i * cols + j)] = v;
        a[2 * (i * cols + j) + 1] = cos(0.02 * (double)(i + j));
      } else {
        a[i * cols + j] = v;
      }
    }
  sl_op *A, *Ah, *AhA, *two_AhA, *D, *Op;
  TRY(sl_op_matrix(&A, a, rows, cols, 1, dt));
  free(a);
  sl_array *d;
  TRY(sl_op_create_domain(A, &d));
  TRY(sl_array_fill(d, SL_REAL(0.5)));
  TRY(sl_op_diagonal(&D, d));
  TRY(sl_op_adjoint(&Ah, A));
  TRY(sl_op_product(&AhA, Ah, A));
  TRY(sl_op_scaled(&two_AhA, AhA, SL_REAL(2.0)));
  TRY(sl_op_sum(&Op, two_AhA, D));
  if (me == 0)
    printf("Op = %s: %lld x %lld, %s, on %d ranks\n", sl_op_name(Op), (long long)sl_op_nrows(Op),
           (long long)sl_op_ncols(Op), sl_dtype_name(dt), sl_size());

  /* y = Op x as one task graph, and the same built by hand: t = A x; u = A^H t; z = 2 u + 0.5 x */
  sl_array *x, *y, *t, *u;
  TRY(sl_op_create_domain(Op, &x));
  TRY(sl_op_create_range(Op, &y));
  TRY(sl_op_create_range(A, &t));
  TRY(sl_op_create_domain(A, &u));
  TRY(sl_array_fill(x, SL_REAL(1.0)));
  TRY(sl_trace_begin()); /* with STARLOPS_TRACE_REGION=1, only this part is traced */
  TRY(sl_op_apply(Op, SL_FORWARD, x, y));
  TRY(sl_op_apply(A, SL_FORWARD, x, t));
  TRY(sl_op_apply(A, SL_ADJOINT, t, u));
  TRY(sl_array_axpby(u, SL_REAL(0.5), x, SL_REAL(2.0)));
  TRY(sl_array_axpby(u, SL_REAL(-1.0), y, SL_REAL(1.0))); /* u = by hand - graph */
  TRY(sl_trace_end());
  sl_scalar *s, *n;
  TRY(sl_scalar_create(&s, SL_FLOAT64));
  TRY(sl_scalar_create(&n, SL_FLOAT64));
  TRY(sl_array_norm(u, 2.0, s));
  TRY(sl_array_norm(y, 2.0, n));
  double diff = 0, norm = 0;
  TRY(sl_scalar_get(s, &diff));
  TRY(sl_scalar_get(n, &norm));
  int ok = diff <= 1e-12 * norm;
  if (me == 0) printf("||Op x|| = %.6e, ||Op x - (2 A^H A x + 0.5 x)|| = %.3e (%s)\n", norm, diff, ok ? "ok" : "MISMATCH");
  double err_a = 1, err_op = 1;
  TRY(sl_dottest(A, 1, &err_a));
  TRY(sl_dottest(Op, 2, &err_op));
  ok = ok && err_a < 1e-12 && err_op < 1e-12;
  if (me == 0) printf("dot tests: A %.2e, Op %.2e (%s)\n", err_a, err_op, err_a < 1e-12 && err_op < 1e-12 ? "ok" : "FAILED");
  sl_scalar_destroy(&s);
  sl_scalar_destroy(&n);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&t);
  sl_array_destroy(&u);
  sl_array_destroy(&d);
  sl_op *ops[] = {A, Ah, AhA, two_AhA, D, Op};
  for (int i = 0; i < 6; i++) sl_op_destroy(&ops[i]);
  TRY(sl_finalize());
  return ok ? 0 : 1;
}
