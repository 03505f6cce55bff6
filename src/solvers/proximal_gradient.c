/* sl_solve_proximal_gradient: x_k = prox_(tau epsg g)(z - tau grad f(z)), z the last iterate or its
 * extrapolation z = x_k + omega_k (x_k - x_(k-1)) (FISTA's t-sequence or Vandenberghe's k / (k + 3)), as
 * pyproximal's ProximalGradient with a constant step. */
#include <math.h>
#include <stdio.h>

#include "solvers/proximal_common.h"

/* The host's view of a scalar the graph computes (one wait). */
static int host_value(sl_scalar *s, double *v)
{
  sl_cscalar c = {0, 0};
  SL_TRY(sl_scalar_get_c(s, &c));
  *v = c.re;
  return SL_SUCCESS;
}

/* pyproximal's backtracking from z (grad = grad f(z)): x = prox_(tau epsg g)(z - tau grad), accepted when
 * f(x) <= f(z) + Re <grad, x - z> + ||x - z||^2 / (2 tau), else tau *= beta; at most inner_niter tries (the
 * last one is kept). Values are allreduced, so every rank takes the same decisions; a host wait per try. */
static int backtrack(sl_solver *sv, sl_prox *f, sl_prox *g, sl_array *z, sl_array *grad, sl_array *x, sl_array *dz, double *tau)
{
  const sl_solver_options *o = &sv->o;
  double fz = 0;
  SL_TRY(prox_value_p(f, z, sv->sc[3]));
  SL_TRY(host_value(sv->sc[3], &fz));
  for (int t = 0; t < o->inner_niter; t++) {
    SL_TRY(sl_array_copy(x, z));
    SL_TRY(sl_array_axpby(x, SL_REAL(-*tau), grad, SL_REAL(1)));
    SL_TRY(prox_apply_p(g, *tau * o->epsg, x, x));
    SL_TRY(sl_array_copy(dz, x));
    SL_TRY(sl_array_axpby(dz, SL_REAL(-1), z, SL_REAL(1))); /* x - z */
    double fx = 0, gd = 0, dd = 0;
    const sl_array *a[2] = {grad, dz}, *b[2] = {dz, NULL};
    SL_TRY(sl_array_vdots_fused(2, a, b, &sv->sc[3]));
    SL_TRY(host_value(sv->sc[3], &gd));
    SL_TRY(host_value(sv->sc[4], &dd));
    SL_TRY(prox_value_p(f, x, sv->sc[3]));
    SL_TRY(host_value(sv->sc[3], &fx));
    if (!isfinite(fx) || !isfinite(gd) || !isfinite(dd))
      return sl_error(SL_E_NUMERIC, "ProximalGradient: a non-finite value in the backtracking (f = %g): check the data", fx);
    /* the values are allreduced, but a rank's rounding may still differ (its partial sums on another kind of
     * worker): the ranks agree the decision, so that every rank makes the same number of tries */
    int accept = fx <= fz + gd + dd / (2.0 * *tau);
    SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &accept, 1, MPI_INT, MPI_MIN, sl_ctx.comm));
    if (accept || t == o->inner_niter - 1) break;
    *tau *= o->beta;
  }
  return SL_SUCCESS;
}

static int run(sl_solver *sv, sl_prox *f, sl_prox *g, sl_array *x)
{
  const sl_solver_options *o = &sv->o;
  double tau = o->tau, L = 0;
  int want = 0, rc = prox_want_cost(sv, &want);
  if (o->backtrack && !(tau > 0)) tau = 1.0; /* pyproximal's start */
  if (rc == SL_SUCCESS && !(tau > 0)) {
    rc = prox_lipschitz_p(f, x, &L);
    if (rc == SL_SUCCESS && !(L > 0 && isfinite(L)))
      rc = sl_error(SL_E_INVALID, "ProximalGradient: the Lipschitz constant of grad f is %g (is f's operator zero?): give options.tau", L);
    if (rc == SL_SUCCESS) tau = 1.0 / L;
  }
  sv->info->alpha = tau;
  int accel = o->accel != SL_ACCEL_NONE;
  sl_array *w[4] = {NULL}; /* xold (then the update), grad, z, and the backtracking's z - x */
  if (rc == SL_SUCCESS) rc = prox_work(x, w, 2 + accel + (o->backtrack != 0));
  sl_array *xold = w[0], *grad = w[1], *z = accel ? w[2] : x, *dz = o->backtrack ? w[2 + accel] : NULL;
  if (rc == SL_SUCCESS && accel) rc = sl_array_copy(z, x);
  if (rc == SL_SUCCESS && o->show && sl_ctx.rank == 0)
    fprintf(sv->out, "  tau = %g%s, epsg = %g, acceleration %s\n", tau, o->tau > 0 ? "" : " (1 / Lipschitz constant)", o->epsg,
            o->accel == SL_ACCEL_FISTA ? "fista" : (o->accel == SL_ACCEL_VANDENBERGHE ? "vandenberghe" : "none"));
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  double t = 1.0;
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    rc = sl_array_copy(xold, x);
    if (rc == SL_SUCCESS) rc = prox_grad_p(f, z, grad);
    if (rc == SL_SUCCESS && o->backtrack) {
      rc = backtrack(sv, f, g, accel ? z : xold, grad, x, dz, &tau); /* xold: x before this step */
      sv->info->alpha = tau;
    } else {
      if (rc == SL_SUCCESS && accel) rc = sl_array_copy(x, z);
      if (rc == SL_SUCCESS) rc = sl_array_axpby(x, SL_REAL(-tau), grad, SL_REAL(1)); /* x = z - tau grad f(z) */
      if (rc == SL_SUCCESS) rc = prox_apply_p(g, tau * o->epsg, x, x);
    }
    if (rc == SL_SUCCESS) rc = sl_array_axpby(xold, SL_REAL(1), x, SL_REAL(-1));      /* xold = x - xold */
    if (rc == SL_SUCCESS && accel) {
      double omega;
      if (o->accel == SL_ACCEL_FISTA) {
        double told = t;
        t = (1.0 + sqrt(1.0 + 4.0 * t * t)) / 2.0;
        omega = (told - 1.0) / t;
      } else {
        omega = (double)(k - 1) / (k + 2);
      }
      rc = sl_array_copy(z, x);
      if (rc == SL_SUCCESS) rc = sl_array_axpby(z, SL_REAL(omega), xold, SL_REAL(1));
    }
    /* ||x - xold||^2 and ||grad f(z)||^2 in one reduction: g may map a non-finite step back to finite values
     * (a Box clips +-Inf), so the gradient is checked itself */
    const sl_array *d[2] = {xold, grad}, *none[2] = {NULL, NULL};
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, d, none, sv->sc);
    if (rc == SL_SUCCESS && want) rc = prox_value_p(f, x, sv->sc[2]);
    if (rc == SL_SUCCESS && want) rc = prox_value_p(g, x, sv->sc[3]);
    if (rc == SL_SUCCESS) rc = prox_record(sv, k, want, o->epsg, 1);
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  prox_work_free(w, 4);
  return rc;
}

int sl_solve_proximal_gradient(sl_prox *f, sl_prox *g, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  const char *name = "ProximalGradient";
  int rc = SL_SUCCESS;
  if (!f) rc = sl_error(SL_E_INVALID, "%s: argument 1 (f) is NULL", name);
  else if (!g) rc = sl_error(SL_E_INVALID, "%s: argument 2 (g) is NULL", name);
  else if (!x) rc = sl_error(SL_E_INVALID, "%s: argument 3 (x) is NULL", name);
  else if (!prox_smooth(f)) rc = sl_error(SL_E_INVALID, "%s: argument 1 (f = %s) is not smooth: f needs a gradient (L2)", name, f->name);
  else if ((rc = prox_check_p(f, x, "ProximalGradient: argument 3 (x), for f")) == SL_SUCCESS)
    rc = prox_check_p(g, x, "ProximalGradient: argument 3 (x), for g");
  char desc[160];
  snprintf(desc, sizeof desc, "f = %s, g = %s", f ? f->name : "?", g ? g->name : "?");
  sl_solver sv;
  rc = solver_begin_prox(&sv, name, rc, desc, x, o, info);
  if (rc == SL_SUCCESS)
    rc = SL_AGREE(name, SL_SUCCESS, SL_SAME_KEY("argument 1 (f: its kind and parameters)", prox_key(f)),
                  SL_SAME_KEY("argument 2 (g: its kind and parameters)", prox_key(g)));
  if (rc == SL_SUCCESS) rc = run(&sv, f, g, x);
  return solver_end(&sv, rc);
}
