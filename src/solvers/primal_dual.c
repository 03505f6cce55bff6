/* sl_solve_primal_dual: Chambolle and Pock's primal-dual algorithm for min f(x) + g(A x), pyproximal's
 * PrimalDual: x_k = prox_(tau f)(x - tau A^H y), xhat = x_k + theta (x_k - x_(k-1)), y = prox_(mu g*)(y + mu A
 * xhat), the dual update first when gfirst (the default); constant steps, or the accelerated ones for a
 * gamma-strongly convex f. */
#include <math.h>
#include <stdio.h>

#include "solvers/proximal_common.h"

/* ||A|| by power iteration on A^H A */
static int op_norm(sl_op *A, int niter, double *n)
{
  double lambda = 0;
  int rc = sl_normal_eig(A, niter, &lambda);
  if (rc == SL_SUCCESS) *n = sqrt(lambda);
  if (rc == SL_SUCCESS && !(*n > 0 && isfinite(*n)))
    rc = sl_error(SL_E_INVALID, "PrimalDual: ||A|| is estimated as %g (is A zero?): give options.tau and options.mu", *n);
  return rc;
}

static int run(sl_solver *sv, sl_prox *f, sl_prox *g, sl_op *A, sl_array *x)
{
  const sl_solver_options *o = &sv->o;
  double tau = o->tau, mu = o->mu, theta = o->theta, L = 0;
  int want = 0, rc = prox_want_cost(sv, &want);
  if (rc == SL_SUCCESS && (!(tau > 0) || !(mu > 0))) {
    rc = op_norm(A, o->power_niter, &L);
    if (!(tau > 0) && !(mu > 0)) tau = mu = 0.95 / L;
    else if (!(mu > 0)) mu = 0.95 / (tau * L * L);
    else tau = 0.95 / (mu * L * L);
    if (rc == SL_SUCCESS && !(tau > 0 && isfinite(tau) && mu > 0 && isfinite(mu)))
      rc = sl_error(SL_E_INVALID, "PrimalDual: the steps derived from options.tau = %g, options.mu = %g and ||A|| = %g are tau = %g, "
                    "mu = %g, not finite and > 0: give both options.tau and options.mu", o->tau, o->mu, L, tau, mu);
  }
  /* the accelerated steps divide mu by theta_k = 1 / sqrt(1 + 2 gamma tau_k) every iteration: 2 gamma tau must be
   * finite (tau_k only decreases after the first) */
  if (rc == SL_SUCCESS && o->gamma > 0 && !isfinite(2.0 * o->gamma * tau))
    rc = sl_error(SL_E_INVALID, "PrimalDual: argument 5 (options): 2 gamma tau = %g overflows (gamma %g, tau %g)",
                  2.0 * o->gamma * tau, o->gamma, tau);
  sv->info->alpha = tau;
  sl_array *d[2] = {NULL}, *r[2] = {NULL}; /* domain: xold (then the update), t (A^H y, then xhat); range: y, Axhat */
  if (rc == SL_SUCCESS) rc = prox_work(x, d, 2);
  if (rc == SL_SUCCESS) rc = prox_work(sl_op_range(A), r, 2);
  sl_array *xold = d[0], *t = d[1], *y = r[0], *ax = r[1];
  if (rc == SL_SUCCESS) rc = sl_array_fill(y, SL_REAL(0));
  if (rc == SL_SUCCESS && o->gfirst) rc = sl_array_copy(t, x); /* xhat = x0 */
  if (rc == SL_SUCCESS && o->show && sl_ctx.rank == 0)
    fprintf(sv->out, "  tau = %g, mu = %g%s, theta = %g%s, %s update first\n", tau, mu, L > 0 ? " (from ||A||)" : "", theta,
            o->gamma > 0 ? " (accelerated steps)" : "", o->gfirst ? "dual" : "primal");
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    if (o->gfirst) { /* y = prox_(mu g*)(y + mu A xhat) */
      rc = sl_op_apply(A, SL_FORWARD, t, ax);
      if (rc == SL_SUCCESS) rc = sl_array_axpby(y, SL_REAL(mu), ax, SL_REAL(1));
      if (rc == SL_SUCCESS) rc = prox_dual_p(g, mu, y, y);
    }
    if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_ADJOINT, y, t); /* x = prox_(tau f)(x - tau A^H y) */
    if (rc == SL_SUCCESS) rc = sl_array_copy(xold, x);
    if (rc == SL_SUCCESS) rc = sl_array_axpby(x, SL_REAL(-tau), t, SL_REAL(1));
    if (rc == SL_SUCCESS) rc = prox_apply_p(f, tau, x, x);
    if (o->gamma > 0) { /* Chambolle-Pock's accelerated steps */
      theta = 1.0 / sqrt(1.0 + 2.0 * o->gamma * tau);
      tau *= theta;
      mu /= theta;
    }
    if (rc == SL_SUCCESS) rc = sl_array_axpby(xold, SL_REAL(1), x, SL_REAL(-1)); /* xold = x - xold */
    if (rc == SL_SUCCESS) rc = sl_array_copy(t, x);                               /* xhat */
    if (rc == SL_SUCCESS) rc = sl_array_axpby(t, SL_REAL(theta), xold, SL_REAL(1));
    if (!o->gfirst) {
      if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_FORWARD, t, ax);
      if (rc == SL_SUCCESS) rc = sl_array_axpby(y, SL_REAL(mu), ax, SL_REAL(1));
      if (rc == SL_SUCCESS) rc = prox_dual_p(g, mu, y, y);
    }
    const sl_array *dd[1] = {xold}, *none[1] = {NULL};
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, dd, none, sv->sc);
    if (rc == SL_SUCCESS && want) rc = prox_value_p(f, x, sv->sc[1]);
    if (rc == SL_SUCCESS && want) rc = sl_op_apply(A, SL_FORWARD, x, ax);
    if (rc == SL_SUCCESS && want) rc = prox_value_p(g, ax, sv->sc[2]);
    if (rc == SL_SUCCESS) rc = prox_record(sv, k, want, 1.0, 0);
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  prox_work_free(d, 2);
  prox_work_free(r, 2);
  return rc;
}

int sl_solve_primal_dual(sl_prox *f, sl_prox *g, sl_op *A, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  const char *name = "PrimalDual";
  int rc = SL_SUCCESS;
  if (!f) rc = sl_error(SL_E_INVALID, "%s: argument 1 (f) is NULL", name);
  else if (!g) rc = sl_error(SL_E_INVALID, "%s: argument 2 (g) is NULL", name);
  else if (!A) rc = sl_error(SL_E_INVALID, "%s: argument 3 (A) is NULL", name);
  else if (!x) rc = sl_error(SL_E_INVALID, "%s: argument 4 (x) is NULL", name);
  else if ((rc = sl_array_check_same(x, "PrimalDual: argument 4 (x)", sl_op_domain(A), "the domain of argument 3 (A)")) != SL_SUCCESS) {
  } else if ((rc = prox_check_p(f, x, "PrimalDual: argument 4 (x), for f")) == SL_SUCCESS) {
    rc = prox_check_p(g, sl_op_range(A), "PrimalDual: the range of argument 3 (A), for g");
  }
  char desc[200];
  snprintf(desc, sizeof desc, "f = %s, g = %s, A = %s", f ? f->name : "?", g ? g->name : "?", A ? sl_op_name(A) : "?");
  sl_solver sv;
  rc = solver_begin_prox(&sv, name, rc, desc, x, o, info);
  if (rc == SL_SUCCESS)
    rc = SL_AGREE(name, SL_SUCCESS, SL_SAME_KEY("argument 1 (f: its kind and parameters)", prox_key(f)),
                  SL_SAME_KEY("argument 2 (g: its kind and parameters)", prox_key(g)),
                  SL_SAME_KEY("argument 3 (A: its name and shapes)", sl_op_key(A)));
  if (rc == SL_SUCCESS) rc = run(&sv, f, g, A, x);
  return solver_end(&sv, rc);
}
