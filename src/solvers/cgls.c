/* sl_solve_cgls: CG on the normal equations (A^H A + damp^2 I) x = A^H y, in pylops' arrangement:
 * s = y - A x, r = A^H s - damp^2 x, c the direction, q = A c. Two fused reductions per iteration. */
#include <complex.h>
#include <math.h>

#include "solvers/solver_internal.h"

enum { K_OLD = S_FIRST, ALPHA, MALPHA, BETA };

struct cgls_arg {
  double damp2;
};

/* v[1] = ||r||^2, v[2] = ||s||^2 */
static void cgls_init(double *const *v, const void *arg)
{
  v[0][slot(K_OLD)] = v[1][0];
  v[0][slot(S_MON)] = v[0][slot(S_REF)] = sqrt(v[1][0]);
  v[0][slot(S_COST)] = v[0][slot(S_AUX)] = sqrt(v[2][0]);
}

/* v[1] = ||q||^2, v[2] = ||c||^2: alpha = kold / (||q||^2 + damp^2 ||c||^2) */
static void cgls_alpha(double *const *v, const void *arg)
{
  const struct cgls_arg *a = arg;
  double den = v[1][0] + a->damp2 * v[2][0];
  double al = den != 0 ? v[0][slot(K_OLD)] / den : 0.0;
  if (den == 0) v[0][slot(S_STOP)] = SL_STOP_BREAKDOWN;
  if (!isfinite(den)) v[0][slot(S_STOP)] = SL_STOP_NONFINITE;
  v[0][slot(ALPHA)] = al;
  v[0][slot(MALPHA)] = -al;
}

/* v[1] = ||r||^2, v[2] = ||s||^2, v[3] = ||x||^2 */
static void cgls_beta(double *const *v, const void *arg)
{
  const struct cgls_arg *a = arg;
  double k = v[1][0], kold = v[0][slot(K_OLD)];
  v[0][slot(BETA)] = kold != 0 ? k / kold : 0.0;
  v[0][slot(K_OLD)] = k;
  v[0][slot(S_MON)] = sqrt(k);
  v[0][slot(S_COST)] = sqrt(v[2][0]);
  v[0][slot(S_AUX)] = sqrt(v[2][0] + a->damp2 * v[3][0]);
}

/* r = A^H s - damp^2 x */
static int normal_residual(sl_op *A, const sl_array *s, const sl_array *x, sl_array *r, double damp2)
{
  SL_TRY(sl_op_apply(A, SL_ADJOINT, s, r));
  if (damp2 == 0) return SL_SUCCESS;
  return sl_array_axpby(r, SL_REAL(-damp2), x, SL_REAL(1));
}

static int run(sl_solver *sv, sl_op *A, const sl_array *y, sl_array *x)
{
  sl_array *d[2] = {NULL}, *g[2] = {NULL}; /* domain: r, c; range: s, q */
  int rc = solver_arrays(A, 0, d, 2);
  if (rc == SL_SUCCESS) rc = solver_arrays(A, 1, g, 2);
  sl_array *r = d[0], *c = d[1], *s = g[0], *q = g[1];
  struct cgls_arg arg = {sv->o.damp * sv->o.damp};
  const sl_array *rs[3] = {r, s, x}, *qc[2] = {q, c}, *none[3] = {NULL, NULL, NULL};
  if (rc == SL_SUCCESS) rc = solver_residual(sv, A, y, x, s, q);
  if (rc == SL_SUCCESS) rc = normal_residual(A, s, x, r, arg.damp2);
  if (rc == SL_SUCCESS) rc = sl_array_copy(c, r);
  if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_FORWARD, c, q);
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, rs, none, sv->sc);
  if (rc == SL_SUCCESS) rc = solver_step(sv, cgls_init, &arg, sizeof arg, 2, sv->sc);
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    rc = sl_array_vdots_fused(2, qc, none, sv->sc);
    if (rc == SL_SUCCESS) rc = solver_step(sv, cgls_alpha, &arg, sizeof arg, 2, sv->sc);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(x, SL_REAL(1), sv->hstate, slot(ALPHA), c, SL_REAL(1), NULL, 0);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(s, SL_REAL(1), sv->hstate, slot(MALPHA), q, SL_REAL(1), NULL, 0);
    if (rc == SL_SUCCESS) rc = normal_residual(A, s, x, r, arg.damp2);
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(3, rs, none, sv->sc);
    if (rc == SL_SUCCESS) rc = solver_step(sv, cgls_beta, &arg, sizeof arg, 3, sv->sc);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(c, SL_REAL(1), NULL, 0, r, SL_REAL(1), sv->hstate, slot(BETA));
    if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_FORWARD, c, q);
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  solver_arrays_free(A, 0, d, 2);
  solver_arrays_free(A, 1, g, 2);
  return rc;
}

int sl_solve_cgls(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  sl_solver sv;
  int rc = solver_begin(&sv, "CGLS", A, y, x, o, info);
  if (rc == SL_SUCCESS) rc = run(&sv, A, y, x);
  return solver_end(&sv, rc);
}
