/* sl_solve_ista and sl_solve_fista: iterative shrinkage-thresholding for
 * min 1/2 ||y - A x||^2 + eps ||x||_1 (soft; hard and half thresholding for the l0 and l1/2 penalties),
 * following pylops: x = T_(eps alpha / 2)(z + alpha A^H (y - A z)), z = x (ISTA) or Nesterov's
 * extrapolation (FISTA). One host wait per test only. */
#include <math.h>

#include "solvers/solver_internal.h"

struct ista_arg {
  double eps;
  int first;
};

/* v[1] = ||x_k - x_(k-1)||^2, v[2] = ||y - A z||^2, v[3] = ||x||_1 */
static void ista_record(double *const *v, const void *arg)
{
  const struct ista_arg *a = arg;
  double upd = sqrt(v[1][0]);
  v[0][slot(S_MON)] = upd;
  if (a->first) v[0][slot(S_REF)] = upd;
  v[0][slot(S_COST)] = 0.5 * v[2][0] + a->eps * v[3][0];
}

/* The step: alpha if given, else 1 / the largest eigenvalue of A^H A. */
static int step_size(sl_op *A, const sl_solver_options *o, double *alpha)
{
  if (o->alpha > 0) {
    *alpha = o->alpha;
    return SL_SUCCESS;
  }
  double lambda = 0;
  int rc = sl_normal_eig(A, o->power_niter, &lambda);
  if (rc == SL_SUCCESS && !(lambda > 0))
    rc = sl_error(SL_E_INVALID, "ISTA/FISTA: A^H A has no positive eigenvalue estimate (is A zero?)");
  if (rc == SL_SUCCESS) *alpha = 1.0 / lambda;
  return rc;
}

/* Percentile thresholding: the level of kind whose cut (the modulus at and below which values become 0) is
 * the p-th percentile t of |x|: soft t, hard t^2 / 2 (cut sqrt(2 T)), half (4 t / 54^(1/3))^(3/2). */
static int percentile_thresh(sl_array *x, double p, int kind, double *level)
{
  double t = 0;
  SL_TRY(sl_array_abs_percentile_p(x, p, &t));
  if (kind == SL_THRESH_SOFT) *level = t;
  else if (kind == SL_THRESH_HARD) *level = 0.5 * t * t;
  else *level = pow(4.0 * t / cbrt(54.0), 1.5);
  return SL_SUCCESS;
}

static int run(sl_solver *sv, sl_op *A, const sl_array *y, sl_array *x, int fista)
{
  const sl_solver_options *o = &sv->o;
  double alpha = 0;
  int rc = step_size(A, o, &alpha);
  sv->info->alpha = alpha;
  double thresh = o->eps * alpha * 0.5, dmax = 1.0;
  for (int k = 0; o->decay && k < o->niter; k++) dmax = k == 0 || o->decay[k] > dmax ? o->decay[k] : dmax;
  if (rc == SL_SUCCESS && o->perc == 0 && !isfinite(thresh * dmax)) /* alpha is agreed: every rank sees the same */
    rc = sl_error(SL_E_INVALID, "%s: argument 4 (options): the threshold eps alpha / 2%s = %g overflows (eps %g, alpha %g%s%g)",
                  sv->name, o->decay ? " x decay[k]" : "", thresh * dmax, o->eps, alpha, o->decay ? ", largest decay " : "",
                  o->decay ? dmax : 0.0);
  sl_array *d[3] = {NULL}, *g[1] = {NULL}; /* domain: xold (then the update), grad, z; range: res */
  if (rc == SL_SUCCESS) rc = solver_arrays(A, 0, d, fista ? 3 : 2);
  if (rc == SL_SUCCESS) rc = solver_arrays(A, 1, g, 1);
  sl_array *xold = d[0], *grad = d[1], *z = fista ? d[2] : x, *res = g[0];
  if (rc == SL_SUCCESS && fista) rc = sl_array_copy(z, x);
  if (rc == SL_SUCCESS && sv->o.show && sl_ctx.rank == 0 && o->perc > 0)
    fprintf(sv->out, "  percentile thresholding at the %g-th percentile of |x|%s\n", o->perc, o->decay ? " (decayed)" : "");
  else if (rc == SL_SUCCESS && sv->o.show && sl_ctx.rank == 0)
    fprintf(sv->out, "  eps = %g, alpha = %g, thresholding %s at %g%s\n", o->eps, alpha,
            o->thresh == SL_THRESH_SOFT ? "soft" : (o->thresh == SL_THRESH_HARD ? "hard" : "half"), thresh,
            o->decay ? " times decay[k]" : "");
  int stop = 0;
  sv->no_initial_test = 1;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  double t = 1.0;
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    rc = sl_array_copy(xold, x);
    if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_FORWARD, z, res);                 /* res = y - A z */
    if (rc == SL_SUCCESS) rc = sl_array_axpby(res, SL_REAL(1), y, SL_REAL(-1));
    if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_ADJOINT, res, grad);
    if (rc == SL_SUCCESS && fista) rc = sl_array_copy(x, z);
    if (rc == SL_SUCCESS) rc = sl_array_axpby(x, SL_REAL(alpha), grad, SL_REAL(1)); /* x = z + alpha grad */
    double dk = o->decay ? o->decay[k - 1] : 1.0, tk = thresh * dk;
    if (rc == SL_SUCCESS && o->perc > 0) rc = percentile_thresh(x, 100.0 - dk * (100.0 - o->perc), o->thresh, &tk);
    if (rc == SL_E_NUMERIC) /* agreed inside: every rank restates it with the solver's name */
      rc = sl_error(SL_E_NUMERIC, "%s: iteration %d: the iterate holds NaN at the percentile thresholding (check y, options.x0 and "
                    "the operator)", sv->name, k);
    if (rc == SL_SUCCESS) rc = sl_array_threshold(x, x, o->thresh, tk);
    if (rc == SL_SUCCESS) rc = sl_array_axpby(xold, SL_REAL(1), x, SL_REAL(-1));   /* xold = x - xold */
    if (rc == SL_SUCCESS && fista) {
      double told = t;
      t = (1.0 + sqrt(1.0 + 4.0 * t * t)) / 2.0;
      rc = sl_array_copy(z, x);                                                    /* z = x + (told-1)/t dx */
      if (rc == SL_SUCCESS) rc = sl_array_axpby(z, SL_REAL((told - 1.0) / t), xold, SL_REAL(1));
    }
    const sl_array *nx[2] = {xold, res}, *none[2] = {NULL, NULL};
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, nx, none, sv->sc);
    if (rc == SL_SUCCESS) rc = sl_array_norm_p(x, 1.0, sv->sc[2]);
    struct ista_arg arg = {o->eps, k == 1};
    if (rc == SL_SUCCESS) rc = solver_step(sv, ista_record, &arg, sizeof arg, 3, sv->sc);
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  solver_arrays_free(A, 0, d, 3);
  solver_arrays_free(A, 1, g, 1);
  return rc;
}

static int solve(const char *name, int fista, sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o,
                 sl_solver_info *info)
{
  sl_solver sv;
  int rc = solver_begin(&sv, name, A, y, x, o, info);
  if (rc == SL_SUCCESS) rc = run(&sv, A, y, x, fista);
  return solver_end(&sv, rc);
}

int sl_solve_ista(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  return solve("ISTA", 0, A, y, x, o, info);
}

int sl_solve_fista(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  return solve("FISTA", 1, A, y, x, o, info);
}
