/* sl_solve_cg: conjugate gradients on (A + damp^2 I) x = y, classic (two reductions per iteration) or pipelined (Ghysels and
 * Vanroose 2014: one fused reduction that overlaps the next apply). Every coefficient is computed by a
 * scalar task; the host waits only for the convergence test. */
#include <complex.h>
#include <math.h>

#include "solvers/solver_internal.h"

/* Solver slots. */
enum { K_OLD = S_FIRST, ALPHA, BETA, MALPHA, DELTA_PREV, ALPHA_PREV };

static double complex get(double *v, int i) { return CMPLX(v[slot(i)], v[slot(i) + 1]); }
static void put(double *v, int i, double complex z)
{
  v[slot(i)] = creal(z);
  v[slot(i) + 1] = cimag(z);
}

/* v[1] = ||r||^2: the monitored norm and its reference */
static void cg_init(double *const *v, const void *arg)
{
  double rr = v[1][0];
  put(v[0], K_OLD, rr);
  v[0][slot(S_MON)] = v[0][slot(S_REF)] = v[0][slot(S_COST)] = sqrt(rr);
}

/* v[1] = c^H A c: alpha = kold / c^H A c */
static void cg_alpha(double *const *v, const void *arg)
{
  double complex d = CMPLX(v[1][0], v[1][1]);
  if (!isfinite(v[1][0]) || !isfinite(v[1][1])) v[0][slot(S_STOP)] = SL_STOP_NONFINITE;
  if (d == 0) {
    v[0][slot(S_STOP)] = SL_STOP_BREAKDOWN;
    put(v[0], ALPHA, 0);
    put(v[0], MALPHA, 0);
    return;
  }
  double complex a = get(v[0], K_OLD) / d;
  put(v[0], ALPHA, a);
  put(v[0], MALPHA, -a);
}

/* v[1] = ||r||^2: beta = k / kold */
static void cg_beta(double *const *v, const void *arg)
{
  double k = v[1][0], kold = creal(get(v[0], K_OLD));
  put(v[0], BETA, kold != 0 ? k / kold : 0.0);
  put(v[0], K_OLD, k);
  v[0][slot(S_MON)] = v[0][slot(S_COST)] = sqrt(k);
}

/* Pipelined: v[1] = gamma = ||r||^2, v[2] = delta = w^H r */
static void pcg_coeffs(double *const *v, const void *arg)
{
  int first = *(const int *)arg;
  double gamma = v[1][0];
  double complex delta = CMPLX(v[2][0], v[2][1]), alpha, beta;
  if (first) {
    beta = 0;
    alpha = delta != 0 ? gamma / delta : 0;
    v[0][slot(S_REF)] = sqrt(gamma);
  } else {
    double gold = creal(get(v[0], K_OLD));
    beta = gold != 0 ? gamma / gold : 0;
    double complex den = delta - beta * gamma / get(v[0], ALPHA_PREV);
    alpha = den != 0 ? gamma / den : 0;
  }
  if (delta == 0 && gamma != 0) v[0][slot(S_STOP)] = SL_STOP_BREAKDOWN;
  if (!isfinite(gamma) || !isfinite(v[2][0]) || !isfinite(v[2][1])) v[0][slot(S_STOP)] = SL_STOP_NONFINITE;
  put(v[0], ALPHA, alpha);
  put(v[0], MALPHA, -alpha);
  put(v[0], BETA, beta);
  put(v[0], ALPHA_PREV, alpha);
  put(v[0], K_OLD, gamma);
  v[0][slot(S_MON)] = v[0][slot(S_COST)] = sqrt(gamma);
}

/* out = (A + damp^2 I) in */
static int apply_damped(const sl_solver *sv, sl_op *A, const sl_array *in, sl_array *out)
{
  SL_TRY(sl_op_apply(A, SL_FORWARD, in, out));
  double d2 = sv->o.damp * sv->o.damp;
  return d2 > 0 ? sl_array_axpby(out, SL_REAL(d2), in, SL_REAL(1)) : SL_SUCCESS;
}

/* r = y - (A + damp^2 I) x0 (tmp laid out like the range), or y when x is zero */
static int residual(sl_solver *sv, sl_op *A, const sl_array *y, const sl_array *x, sl_array *r, sl_array *tmp)
{
  SL_TRY(sl_array_copy(r, y));
  if (!sv->o.x0) return SL_SUCCESS;
  SL_TRY(apply_damped(sv, A, x, tmp));
  return sl_array_axpby(r, SL_REAL(-1), tmp, SL_REAL(1));
}

static int classic(sl_solver *sv, sl_op *A, const sl_array *y, sl_array *x)
{
  sl_array *t[3] = {NULL}; /* r, c, Ac */
  int rc = solver_arrays(A, 0, t, 3);
  sl_array *r = t[0], *c = t[1], *Ac = t[2];
  const sl_array *rn[1] = {r}, *none[1] = {NULL}, *cv[1] = {c}, *acv[1] = {Ac};
  if (rc == SL_SUCCESS) rc = residual(sv, A, y, x, r, Ac);
  if (rc == SL_SUCCESS) rc = sl_array_copy(c, r);
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, rn, none, &sv->sc[0]);
  if (rc == SL_SUCCESS) rc = solver_step(sv, cg_init, NULL, 0, 1, &sv->sc[0]);
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    rc = apply_damped(sv, A, c, Ac);
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, cv, acv, &sv->sc[1]);
    if (rc == SL_SUCCESS) rc = solver_step(sv, cg_alpha, NULL, 0, 1, &sv->sc[1]);
    /* x += alpha c and r -= alpha Ac in one task per chunk */
    if (rc == SL_SUCCESS) rc = sl_array_axpy2_h(x, c, slot(ALPHA), r, Ac, slot(MALPHA), sv->hstate);
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, rn, none, &sv->sc[0]);
    if (rc == SL_SUCCESS) rc = solver_step(sv, cg_beta, NULL, 0, 1, &sv->sc[0]);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(c, SL_REAL(1), NULL, 0, r, SL_REAL(1), sv->hstate, slot(BETA));
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  solver_arrays_free(A, 0, t, 3);
  return rc;
}

static int pipelined(sl_solver *sv, sl_op *A, const sl_array *y, sl_array *x)
{
  sl_array *t[6] = {NULL}; /* r, w, q, z, s, p */
  int rc = solver_arrays(A, 0, t, 6);
  sl_array *r = t[0], *w = t[1], *q = t[2], *z = t[3], *s = t[4], *p = t[5];
  const sl_array *xs[2] = {r, w}, *ys[2] = {NULL, r};
  if (rc == SL_SUCCESS) rc = residual(sv, A, y, x, r, q);
  if (rc == SL_SUCCESS) rc = apply_damped(sv, A, r, w);
  /* the first test sees ||r_0|| */
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, xs, ys, &sv->sc[0]);
  if (rc == SL_SUCCESS) rc = solver_step(sv, cg_init, NULL, 0, 1, &sv->sc[0]);
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    int first = k == 1;
    rc = sl_array_vdots_fused(2, xs, ys, sv->sc);     /* gamma = r^H r, delta = w^H r: one allreduce ... */
    if (rc == SL_SUCCESS) rc = apply_damped(sv, A, w, q); /* ... overlapped by q = A w */
    if (rc == SL_SUCCESS) rc = solver_step(sv, pcg_coeffs, &first, sizeof first, 2, sv->sc);
    if (rc == SL_SUCCESS && first) {
      rc = sl_array_copy(z, q);
      if (rc == SL_SUCCESS) rc = sl_array_copy(s, w);
      if (rc == SL_SUCCESS) rc = sl_array_copy(p, r);
    } else if (rc == SL_SUCCESS) {
      rc = sl_array_axpby_h(z, SL_REAL(1), NULL, 0, q, SL_REAL(1), sv->hstate, slot(BETA));
      if (rc == SL_SUCCESS) rc = sl_array_axpby_h(s, SL_REAL(1), NULL, 0, w, SL_REAL(1), sv->hstate, slot(BETA));
      if (rc == SL_SUCCESS) rc = sl_array_axpby_h(p, SL_REAL(1), NULL, 0, r, SL_REAL(1), sv->hstate, slot(BETA));
    }
    if (rc == SL_SUCCESS) rc = sl_array_axpy2_h(x, p, slot(ALPHA), r, s, slot(MALPHA), sv->hstate);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(w, SL_REAL(1), sv->hstate, slot(MALPHA), z, SL_REAL(1), NULL, 0);
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  solver_arrays_free(A, 0, t, 6);
  return rc;
}

int sl_solve_cg(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  sl_solver sv;
  int rc = solver_begin(&sv, o && o->pipelined ? "CG (pipelined)" : "CG", A, y, x, o, info);
  if (rc == SL_SUCCESS) rc = sv.o.pipelined ? pipelined(&sv, A, y, x) : classic(&sv, A, y, x);
  return solver_end(&sv, rc);
}
