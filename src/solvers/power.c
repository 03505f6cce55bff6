/* sl_power_iteration: b <- A b / ||A b|| from a random unit b; the Rayleigh quotient b^H A b estimates the
 * eigenvalue of largest modulus. It runs on the solver driver (solver.c): the estimate and its change live
 * in the state, the driver tests |eig_k - eig_k-1| <= tol |eig_k-1| (the relative rule), stops on a
 * non-finite estimate, and counts the iterations. */
#include <complex.h>
#include <math.h>

#include "solvers/solver_internal.h"

/* Solver slots: the estimate, and the scale of the next b. */
enum { P_EIG = S_FIRST, P_SCALE };

/* v[1] = ||b||^2: b is scaled to unit norm */
static void power_start(double *const *v, const void *arg)
{
  double n2 = v[1][0];
  v[0][slot(P_SCALE)] = n2 > 0 ? 1.0 / sqrt(n2) : 0.0;
  v[0][slot(P_SCALE) + 1] = 0.0;
  v[0][slot(P_EIG)] = v[0][slot(P_EIG) + 1] = 0.0;
}

/* v[1] = b^H A b (the new estimate), v[2] = ||A b||^2 (the next scale) */
static void power_coeffs(double *const *v, const void *arg)
{
  double complex old = CMPLX(v[0][slot(P_EIG)], v[0][slot(P_EIG) + 1]), cur = CMPLX(v[1][0], v[1][1]);
  double n2 = v[2][0];
  v[0][slot(P_EIG)] = creal(cur);
  v[0][slot(P_EIG) + 1] = cimag(cur);
  v[0][slot(P_SCALE)] = n2 > 0 ? 1.0 / sqrt(n2) : 0.0;
  v[0][slot(S_COST)] = cabs(cur);
  v[0][slot(S_MON)] = cabs(cur - old);
  v[0][slot(S_REF)] = cabs(old);
  if (!isfinite(creal(cur)) || !isfinite(cimag(cur))) v[0][slot(S_STOP)] = SL_STOP_NONFINITE;
}

static int power_check(sl_op *A, int niter, double tol, const sl_cscalar *eig)
{
  SL_CHECK_ARG(A != NULL, SL_E_INVALID, "sl_power_iteration: argument 1 (A) is NULL");
  SL_TRY(solver_check_square("sl_power_iteration", A));
  SL_CHECK_ARG(niter >= 1, SL_E_INVALID, "sl_power_iteration: argument 2 (niter) must be >= 1, got %d", niter);
  SL_CHECK_ARG(tol >= 0 && !isnan(tol), SL_E_INVALID, "sl_power_iteration: argument 3 (tol) must be >= 0, got %g", tol);
  SL_CHECK_ARG(eig != NULL, SL_E_INVALID, "sl_power_iteration: argument 5 (eig) is NULL");
  return SL_SUCCESS;
}

int sl_power_iteration(sl_op *A, int niter, double tol, unsigned seed, sl_cscalar *eig, int *iters)
{
  SL_CHECK_INIT();
  SL_TRY(SL_AGREE("sl_power_iteration", power_check(A, niter, tol, eig), SL_SAME_I("argument 2 (niter)", niter),
                  sl_same_d("argument 3 (tol)", tol), SL_SAME_I("argument 4 (seed)", seed)));
  sl_array *t[2] = {NULL, NULL}; /* b (the driver's x) and A b (its y) */
  SL_TRY(solver_arrays(A, 0, t, 2));
  sl_array *b = t[0], *ab = t[1];
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = niter;
  o.tol = tol;
  o.tol_rule = SL_TOL_RELATIVE;
  sl_solver_info info;
  sl_solver sv;
  int rc = solver_begin(&sv, "power iteration", A, ab, b, &o, &info);
  if (rc != SL_SUCCESS) {
    solver_arrays_free(A, 0, t, 2);
    return solver_end(&sv, rc);
  }
  const sl_array *xb[2] = {b, ab}, *yb[2] = {ab, NULL}, *none[1] = {NULL};
  rc = sl_array_fill_random(b, seed);
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, xb, none, &sv.sc[1]);
  if (rc == SL_SUCCESS) rc = solver_step(&sv, power_start, NULL, 0, 1, &sv.sc[1]);
  if (rc == SL_SUCCESS) rc = sl_array_scale_h(b, SL_REAL(1), sv.hstate, slot(P_SCALE));
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(&sv, 0, b, &stop);
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    rc = sl_op_apply(A, SL_FORWARD, b, ab);
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, xb, yb, sv.sc); /* b^H A b, ||A b||^2 */
    if (rc == SL_SUCCESS) rc = solver_step(&sv, power_coeffs, NULL, 0, 2, sv.sc);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(b, SL_REAL(1), sv.hstate, slot(P_SCALE), ab, SL_REAL(0), NULL, 0);
    if (rc == SL_SUCCESS) rc = solver_after(&sv, k, b, &stop);
  }
  rc = solver_end(&sv, rc);
  if (rc == SL_SUCCESS) {
    eig->re = sv.state[slot(P_EIG)];
    eig->im = sv.state[slot(P_EIG) + 1];
    if (iters) *iters = info.iterations;
  }
  solver_arrays_free(A, 0, t, 2);
  return rc;
}

int sl_normal_eig(sl_op *A, int niter, double *lambda)
{
  sl_op *ah = NULL, *aha = NULL;
  sl_cscalar eig = {0, 0};
  int rc = sl_op_adjoint(&ah, A);
  if (rc == SL_SUCCESS) rc = sl_op_product(&aha, ah, A);
  if (rc == SL_SUCCESS) rc = sl_power_iteration(aha, niter, 1e-5, 7, &eig, NULL);
  sl_op_destroy(&aha);
  sl_op_destroy(&ah);
  if (rc == SL_SUCCESS) *lambda = hypot(eig.re, eig.im);
  return rc;
}
