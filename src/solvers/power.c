/* sl_power_iteration: b <- A b / ||A b|| from a random unit b; the Rayleigh quotient b^H A b estimates the
 * eigenvalue of largest modulus. The normalisation runs on the task graph; the host reads the estimate
 * once per iteration for the stopping test. */
#include <complex.h>
#include <math.h>

#include "solvers/solver_internal.h"

/* st[0..1] = b^H A b, st[2] = 1 / ||A b|| (v[1] = b^H A b, v[2] = ||A b||^2), or st[2] = 1 / ||b|| (v[1]) */
static void power_coeffs(double *const *v, const void *arg)
{
  int with_eig = *(const int *)arg;
  if (with_eig) {
    v[0][0] = v[1][0];
    v[0][1] = v[1][1];
  }
  double n2 = v[with_eig ? 2 : 1][0];
  v[0][2] = n2 > 0 ? 1.0 / sqrt(n2) : 0.0;
  v[0][3] = 0.0;
}

static int power_check(sl_op *A, int niter, double tol, const sl_cscalar *eig)
{
  SL_TRY(solver_check_square("sl_power_iteration", A));
  SL_CHECK_ARG(niter >= 1, SL_E_INVALID, "sl_power_iteration: argument 2 (niter) must be >= 1, got %d", niter);
  SL_CHECK_ARG(tol >= 0 && !isnan(tol), SL_E_INVALID, "sl_power_iteration: argument 3 (tol) must be >= 0, got %g", tol);
  SL_CHECK_ARG(eig != NULL, SL_E_INVALID, "sl_power_iteration: argument 5 (eig) is NULL");
  return SL_SUCCESS;
}

int sl_power_iteration(sl_op *A, int niter, double tol, unsigned seed, sl_cscalar *eig, int *iters)
{
  SL_CHECK_INIT();
  int rc = power_check(A, niter, tol, eig);
  SL_TRY(SL_AGREE("sl_power_iteration", rc, SL_SAME_I("argument 2 (niter)", niter), sl_same_d("argument 3 (tol)", tol),
                  SL_SAME_I("argument 4 (seed)", seed)));
  double st[4] = {0, 0, 0, 0};
  starpu_data_handle_t hs;
  starpu_variable_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)st, sizeof st);
  sl_array *b = NULL, *b1 = NULL;
  sl_scalar *s[2] = {NULL, NULL};
  rc = sl_array_create_like(&b, sl_op_domain(A));
  if (rc == SL_SUCCESS) rc = sl_array_create_like(&b1, sl_op_domain(A));
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&s[0], sl_op_dtype(A));
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&s[1], sl_op_dtype(A));
  if (rc == SL_SUCCESS) rc = sl_array_fill_random(b, seed);
  const sl_array *xb[2] = {b, b1}, *yb[2] = {b1, NULL}, *none[1] = {NULL};
  enum starpu_data_access_mode m[3] = {STARPU_RW, STARPU_R, STARPU_R};
  int with_eig = 0;
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, xb, none, &s[1]);
  if (rc == SL_SUCCESS)
    rc = sl_stask_submit(power_coeffs, &with_eig, sizeof with_eig, 2, (starpu_data_handle_t[]){hs, s[1]->handle}, m);
  if (rc == SL_SUCCESS) rc = sl_array_scale_h(b, SL_REAL(1), hs, 2);
  double complex old = 0, cur = 0;
  int k = 0;
  with_eig = 1;
  for (k = 1; rc == SL_SUCCESS && k <= niter; k++) {
    rc = sl_op_apply(A, SL_FORWARD, b, b1);
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, xb, yb, s);
    if (rc == SL_SUCCESS)
      rc = sl_stask_submit(power_coeffs, &with_eig, sizeof with_eig, 3, (starpu_data_handle_t[]){hs, s[0]->handle, s[1]->handle}, m);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(b, SL_REAL(1), hs, 2, b1, SL_REAL(0), NULL, 0);
    if (rc != SL_SUCCESS) break;
    if ((rc = starpu_data_acquire(hs, STARPU_R)) != 0) {
      rc = sl_error_starpu(rc, "starpu_data_acquire", __FILE__, __LINE__);
      break;
    }
    cur = CMPLX(st[0], st[1]);
    starpu_data_release(hs);
    int done = cabs(cur - old) < tol * cabs(old) || !isfinite(creal(cur)) || !isfinite(cimag(cur));
    if ((rc = MPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_MAX, sl_ctx.comm)) != MPI_SUCCESS) {
      rc = sl_error_mpi(rc, "MPI_Allreduce", __FILE__, __LINE__);
      break;
    }
    old = cur;
    if (done) break;
  }
  if (rc == SL_SUCCESS) rc = sl_async_error_take();
  if (rc == SL_SUCCESS && !(isfinite(creal(cur)) && isfinite(cimag(cur)))) /* the same reduced value on every rank */
    rc = sl_error(SL_E_NUMERIC, "sl_power_iteration: the estimate became non-finite (%g%+gi) in iteration %d: the "
                  "operator gives NaN or Inf", creal(cur), cimag(cur), k > niter ? niter : k);
  if (rc == SL_SUCCESS) {
    eig->re = creal(cur);
    eig->im = cimag(cur);
    if (iters) *iters = k > niter ? niter : k;
  }
  sl_scalar_destroy(&s[0]);
  sl_scalar_destroy(&s[1]);
  sl_array_destroy(&b);
  sl_array_destroy(&b1);
  starpu_data_unregister(hs);
  return rc;
}
