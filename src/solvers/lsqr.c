/* sl_solve_lsqr: LSQR (Paige and Saunders 1982) with the recurrences and stopping rules of
 * scipy.sparse.linalg.lsqr. The bidiagonalisation's norms come from two fused reductions per iteration;
 * every scalar recurrence runs in two scalar tasks. */
#include <float.h>
#include <math.h>

#include "solvers/solver_internal.h"

enum {
  ALPHA = S_FIRST, BETA, MALPHA, INV_BETA, INV_ALPHA, CU, CV, T1, T2, RHOBAR, PHIBAR, ANORM, ACOND, DDNORM, RES2,
  XNORM, XXNORM, Z, CS2, SN2, BNORM, ARNORM, INV_RHO, NSLOTS
};

struct lsqr_arg {
  double damp, atol, btol, ctol;
  int niter;
  int k;
};

static double *at(double *v, int i) { return &v[slot(i)]; }

/* v[1] = ||y||^2, v[2] = ||u||^2 (u = y - A x0) */
static void lsqr_beta0(double *const *v, const void *arg)
{
  double *s = v[0];
  *at(s, BNORM) = sqrt(v[1][0]);
  double beta = sqrt(v[2][0]);
  *at(s, BETA) = beta;
  *at(s, INV_BETA) = beta > 0 ? 1.0 / beta : 0.0;
  *at(s, PHIBAR) = beta;
  s[slot(S_MON)] = s[slot(S_COST)] = s[slot(S_AUX)] = s[slot(S_REF)] = beta;
}

/* v[1] = ||v||^2 */
static void lsqr_alpha0(double *const *v, const void *arg)
{
  double *s = v[0], alpha = sqrt(v[1][0]);
  *at(s, ALPHA) = alpha;
  *at(s, MALPHA) = -alpha;
  *at(s, INV_ALPHA) = alpha > 0 ? 1.0 / alpha : 0.0;
  *at(s, RHOBAR) = alpha;
  *at(s, CS2) = -1.0;
  if (!isfinite(alpha)) s[slot(S_STOP)] = SL_STOP_NONFINITE;
  *at(s, ARNORM) = alpha * *at(s, BETA);
  if (*at(s, ARNORM) == 0) s[slot(S_STOP)] = SL_STOP_TOL; /* x0 solves the problem already */
}

/* v[1] = ||u||^2 after u = A v - alpha u */
static void lsqr_step_a(double *const *v, const void *arg)
{
  const struct lsqr_arg *a = arg;
  double *s = v[0], beta = sqrt(v[1][0]), alpha = *at(s, ALPHA);
  *at(s, BETA) = beta;
  if (!isfinite(beta)) s[slot(S_STOP)] = SL_STOP_NONFINITE;
  if (beta > 0) {
    *at(s, INV_BETA) = 1.0 / beta;
    *at(s, ANORM) = sqrt(*at(s, ANORM) * *at(s, ANORM) + alpha * alpha + beta * beta + a->damp * a->damp);
    *at(s, CU) = 1.0;
    *at(s, CV) = -beta;
  } else { /* u = 0: keep u and v */
    *at(s, INV_BETA) = 1.0;
    *at(s, CU) = 0.0;
    *at(s, CV) = 1.0;
  }
}

/* v[1] = ||v||^2 after v = A^H u - beta v, v[2] = ||w||^2: the rest of scipy's iteration */
static void lsqr_step_b(double *const *v, const void *arg)
{
  const struct lsqr_arg *a = arg;
  double *s = v[0];
  double beta = *at(s, BETA), alpha = *at(s, ALPHA);
  if (!isfinite(v[1][0]) || !isfinite(v[2][0])) s[slot(S_STOP)] = SL_STOP_NONFINITE;
  if (beta > 0) {
    alpha = sqrt(v[1][0]);
    *at(s, INV_ALPHA) = alpha > 0 ? 1.0 / alpha : 1.0;
  } else {
    *at(s, INV_ALPHA) = 1.0;
  }
  double rhobar = *at(s, RHOBAR), phibar = *at(s, PHIBAR), rhobar1 = rhobar, psi = 0.0;
  if (a->damp > 0) {
    rhobar1 = hypot(rhobar, a->damp);
    double cs1 = rhobar / rhobar1, sn1 = a->damp / rhobar1;
    psi = sn1 * phibar;
    phibar = cs1 * phibar;
  }
  double rho = hypot(rhobar1, beta);
  double cs = rho > 0 ? rhobar1 / rho : 1.0, sn = rho > 0 ? beta / rho : 0.0;
  double theta = sn * alpha;
  rhobar = -cs * alpha;
  double phi = cs * phibar;
  phibar = sn * phibar;
  double tau = sn * phi;
  *at(s, T1) = rho > 0 ? phi / rho : 0.0;
  *at(s, T2) = rho > 0 ? -theta / rho : 0.0;
  *at(s, INV_RHO) = rho > 0 ? 1.0 / rho : 0.0;
  double ddnorm = *at(s, DDNORM) + (rho > 0 ? v[2][0] / (rho * rho) : 0.0);
  double delta = *at(s, SN2) * rho, gambar = -*at(s, CS2) * rho, rhs = phi - delta * *at(s, Z);
  double zbar = gambar != 0 ? rhs / gambar : 0.0;
  double xnorm = sqrt(*at(s, XXNORM) + zbar * zbar);
  double gamma = hypot(gambar, theta);
  *at(s, CS2) = gamma > 0 ? gambar / gamma : 1.0;
  *at(s, SN2) = gamma > 0 ? theta / gamma : 0.0;
  double z = gamma > 0 ? rhs / gamma : 0.0;
  *at(s, Z) = z;
  *at(s, XXNORM) += z * z;
  double anorm = *at(s, ANORM), acond = anorm * sqrt(ddnorm);
  double res2 = *at(s, RES2) + psi * psi, rnorm = sqrt(phibar * phibar + res2), arnorm = alpha * fabs(tau);
  double r1sq = rnorm * rnorm - a->damp * a->damp * *at(s, XXNORM);
  double r1norm = r1sq < 0 ? -sqrt(-r1sq) : sqrt(r1sq);
  double bnorm = *at(s, BNORM), eps = DBL_EPSILON;
  double test1 = bnorm > 0 ? rnorm / bnorm : 0.0, test2 = arnorm / (anorm * rnorm + eps), test3 = 1.0 / (acond + eps);
  double t1 = test1 / (1.0 + (bnorm > 0 ? anorm * xnorm / bnorm : 0.0));
  double rtol = a->btol + a->atol * (bnorm > 0 ? anorm * xnorm / bnorm : 0.0);
  int istop = 0;
  if (a->k >= a->niter) istop = SL_STOP_NITER;
  if (1.0 + test3 <= 1.0) istop = SL_STOP_LSQR_EPS;
  if (1.0 + test2 <= 1.0) istop = SL_STOP_LSQR_EPS;
  if (1.0 + t1 <= 1.0) istop = SL_STOP_LSQR_EPS;
  if (test3 <= a->ctol) istop = SL_STOP_LSQR_CONLIM;
  if (test2 <= a->atol) istop = SL_STOP_LSQR_ATOL;
  if (test1 <= rtol) istop = SL_STOP_TOL;
  *at(s, ALPHA) = alpha;
  *at(s, MALPHA) = -alpha;
  *at(s, RHOBAR) = rhobar;
  *at(s, PHIBAR) = phibar;
  *at(s, DDNORM) = ddnorm;
  *at(s, ACOND) = acond;
  *at(s, RES2) = res2;
  *at(s, XNORM) = xnorm;
  *at(s, ARNORM) = arnorm;
  s[slot(S_MON)] = r1norm;
  s[slot(S_COST)] = r1norm;
  s[slot(S_AUX)] = rnorm;
  if (istop && s[slot(S_STOP)] != SL_STOP_NONFINITE) s[slot(S_STOP)] = istop;
}

static int run(sl_solver *sv, sl_op *A, const sl_array *y, sl_array *x)
{
  sl_array *d[4] = {NULL}, *g[2] = {NULL}; /* domain: v, w, A^H u (, w / rho for var); range: u, A v */
  sl_array *var = (sl_array *)sv->o.var;
  int rc = solver_arrays(A, 0, d, var ? 4 : 3);
  if (rc == SL_SUCCESS) rc = solver_arrays(A, 1, g, 2);
  sl_array *v = d[0], *w = d[1], *atu = d[2], *u = g[0], *av = g[1];
  const sl_solver_options *o = &sv->o;
  struct lsqr_arg arg = {o->damp, o->atol, o->btol, o->conlim > 0 ? 1.0 / o->conlim : 0.0, o->niter, 0};
  const sl_array *yu[2] = {y, u}, *vw[2] = {v, w}, *none[2] = {NULL, NULL};
  if (rc == SL_SUCCESS) rc = solver_residual(sv, A, y, x, u, av);
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, yu, none, sv->sc);
  if (rc == SL_SUCCESS) rc = solver_step(sv, lsqr_beta0, &arg, sizeof arg, 2, sv->sc);
  if (rc == SL_SUCCESS) rc = sl_array_scale_h(u, SL_REAL(1), sv->hstate, slot(INV_BETA));
  if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_ADJOINT, u, v);
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, vw, none, sv->sc);
  if (rc == SL_SUCCESS) rc = solver_step(sv, lsqr_alpha0, &arg, sizeof arg, 1, sv->sc);
  if (rc == SL_SUCCESS) rc = sl_array_scale_h(v, SL_REAL(1), sv->hstate, slot(INV_ALPHA));
  if (rc == SL_SUCCESS) rc = sl_array_copy(w, v);
  if (rc == SL_SUCCESS && var) rc = sl_array_fill(var, SL_REAL(0));
  int stop = 0;
  sv->o.tol = 0; /* LSQR's own rules decide (S_STOP) */
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    arg.k = k;
    rc = sl_op_apply(A, SL_FORWARD, v, av);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(u, SL_REAL(1), NULL, 0, av, SL_REAL(1), sv->hstate, slot(MALPHA));
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, &yu[1], none, sv->sc);
    if (rc == SL_SUCCESS) rc = solver_step(sv, lsqr_step_a, &arg, sizeof arg, 1, sv->sc);
    if (rc == SL_SUCCESS) rc = sl_array_scale_h(u, SL_REAL(1), sv->hstate, slot(INV_BETA));
    if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_ADJOINT, u, atu);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(v, SL_REAL(1), sv->hstate, slot(CU), atu, SL_REAL(1), sv->hstate, slot(CV));
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, vw, none, sv->sc);
    if (rc == SL_SUCCESS) rc = solver_step(sv, lsqr_step_b, &arg, sizeof arg, 2, sv->sc);
    if (rc == SL_SUCCESS) rc = sl_array_scale_h(v, SL_REAL(1), sv->hstate, slot(INV_ALPHA));
    if (rc == SL_SUCCESS && var) { /* scipy's calc_var: var += |w / rho|^2 */
      rc = sl_array_axpby_h(d[3], SL_REAL(1), sv->hstate, slot(INV_RHO), w, SL_REAL(0), NULL, 0);
      if (rc == SL_SUCCESS) rc = sl_array_abs2_p(var, d[3], 1);
    }
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(x, SL_REAL(1), sv->hstate, slot(T1), w, SL_REAL(1), NULL, 0);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(w, SL_REAL(1), NULL, 0, v, SL_REAL(1), sv->hstate, slot(T2));
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  if (rc == SL_SUCCESS) {
    sv->info->anorm = *at(sv->state, ANORM);
    sv->info->acond = *at(sv->state, ACOND);
    sv->info->arnorm = *at(sv->state, ARNORM);
    sv->info->xnorm = *at(sv->state, XNORM);
  }
  solver_arrays_free(A, 0, d, 4);
  solver_arrays_free(A, 1, g, 2);
  return rc;
}

int sl_solve_lsqr(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  sl_solver sv;
  int rc = solver_begin(&sv, "LSQR", A, y, x, o, info);
  if (rc == SL_SUCCESS) rc = run(&sv, A, y, x);
  return solver_end(&sv, rc);
}
