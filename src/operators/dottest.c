/* sl_dottest: <A u, v> against <u, A^H v> on random distributed arrays. */
#include <math.h>
#include <stdint.h>

#include "operators/op_internal.h"

int sl_dottest(sl_op *op, unsigned seed, double *err)
{
  SL_CHECK_INIT();
  int rc = !op ? sl_error(SL_E_INVALID, "sl_dottest: argument 1 (op) is NULL")
           : !err ? sl_error(SL_E_INVALID, "sl_dottest: argument 3 (err) is NULL")
                  : sl_op_check_session("sl_dottest", op, "argument 1 (op)");
  /* one verdict, and the same operator (its name and layouts) and seed on every rank */
  SL_TRY(SL_AGREE("sl_dottest", rc, SL_SAME_KEY("argument 1 (op: its name and layouts)", rc == SL_SUCCESS ? sl_op_key(op) : 0),
                  SL_SAME_I("argument 2 (seed)", seed)));
  sl_array *u = NULL, *v = NULL, *au = NULL, *ahv = NULL;
  sl_scalar *s1 = NULL, *s2 = NULL;
  rc = sl_op_create_domain(op, &u);
  if (rc == SL_SUCCESS) rc = sl_op_create_range(op, &v);
  if (rc == SL_SUCCESS) rc = sl_op_create_range(op, &au);
  if (rc == SL_SUCCESS) rc = sl_op_create_domain(op, &ahv);
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&s1, op->dtype);
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&s2, op->dtype);
  if (rc == SL_SUCCESS) rc = sl_array_fill_random(u, 2 * seed);
  if (rc == SL_SUCCESS) rc = sl_array_fill_random(v, 2 * seed + 1);
  if (rc == SL_SUCCESS) rc = sl_op_apply(op, SL_FORWARD, u, au);
  if (rc == SL_SUCCESS) rc = sl_op_apply(op, SL_ADJOINT, v, ahv);
  if (rc == SL_SUCCESS) rc = sl_array_vdot(v, au, s1);   /* v^H (A u) */
  if (rc == SL_SUCCESS) rc = sl_array_vdot(ahv, u, s2);  /* (A^H v)^H u */
  sl_cscalar a = {0, 0}, b = {0, 0};
  if (rc == SL_SUCCESS) rc = sl_scalar_get_c(s1, &a);
  if (rc == SL_SUCCESS) rc = sl_scalar_get_c(s2, &b);
  /* a real domain with a complex range (real-to-complex FFT): the adjoint is taken for the real inner
   * product Re(v^H w), so only the real parts compare */
  if (rc == SL_SUCCESS && sl_dtype_is_complex(sl_array_dtype(op->dom)) != sl_dtype_is_complex(sl_array_dtype(op->rng)))
    a.im = b.im = 0;
  if (rc == SL_SUCCESS) {
    double d = hypot(a.re - b.re, a.im - b.im), m = fmax(hypot(a.re, a.im), hypot(b.re, b.im));
    *err = m > 0 ? d / m : d;
    if (!isfinite(*err)) /* the values agree on every rank (allreduced): so does the verdict */
      rc = sl_error(SL_E_NUMERIC, "sl_dottest: v^H (A u) = %g%+gi and (A^H v)^H u = %g%+gi are not both finite (the operator "
                    "overflows or makes NaN on random data)", a.re, a.im, b.re, b.im);
  }
  sl_scalar_destroy(&s1);
  sl_scalar_destroy(&s2);
  sl_array_destroy(&u);
  sl_array_destroy(&v);
  sl_array_destroy(&au);
  sl_array_destroy(&ahv);
  return rc;
}
