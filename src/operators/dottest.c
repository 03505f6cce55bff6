/* sl_dottest: <A u, v> against <u, A^H v> on random distributed arrays. */
#include <math.h>
#include <stdint.h>

#include "operators/op_internal.h"

/* Fills a's local block with uniform values in [-1, 1) from seed and the block's place: the rank within
 * its group for scattered arrays (so replicas of masked arrays agree), nothing for replicated ones. */
static int fill_random(sl_array *a, unsigned seed)
{
  void *p = NULL;
  SL_TRY(sl_array_acquire(a, SL_WRITE, &p));
  int place = a->partition == SL_BROADCAST ? 0 : a->group->rank + 1;
  uint64_t s = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)seed << 32) ^ (uint64_t)place * 0xbf58476d1ce4e5b9ULL;
  int64_t n = sl_array_local_size(a) * (sl_dtype_is_complex(sl_array_dtype(a)) ? 2 : 1);
  int single = sl_array_dtype(a) == SL_FLOAT32 || sl_array_dtype(a) == SL_COMPLEX64;
  for (int64_t i = 0; p && i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    double v = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    if (single) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
  }
  return sl_array_release(a);
}

int sl_dottest(sl_op *op, unsigned seed, double *err)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_dottest: argument 1 (op) is NULL");
  SL_CHECK_ARG(err != NULL, SL_E_INVALID, "sl_dottest: argument 3 (err) is NULL");
  sl_array *u = NULL, *v = NULL, *au = NULL, *ahv = NULL;
  sl_scalar *s1 = NULL, *s2 = NULL;
  int rc = sl_op_create_domain(op, &u);
  if (rc == SL_SUCCESS) rc = sl_op_create_range(op, &v);
  if (rc == SL_SUCCESS) rc = sl_op_create_range(op, &au);
  if (rc == SL_SUCCESS) rc = sl_op_create_domain(op, &ahv);
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&s1, op->dtype);
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&s2, op->dtype);
  if (rc == SL_SUCCESS) rc = fill_random(u, 2 * seed);
  if (rc == SL_SUCCESS) rc = fill_random(v, 2 * seed + 1);
  if (rc == SL_SUCCESS) rc = sl_op_apply(op, SL_FORWARD, u, au);
  if (rc == SL_SUCCESS) rc = sl_op_apply(op, SL_ADJOINT, v, ahv);
  if (rc == SL_SUCCESS) rc = sl_array_vdot(v, au, s1);   /* v^H (A u) */
  if (rc == SL_SUCCESS) rc = sl_array_vdot(ahv, u, s2);  /* (A^H v)^H u */
  sl_cscalar a = {0, 0}, b = {0, 0};
  if (rc == SL_SUCCESS) rc = sl_scalar_get_c(s1, &a);
  if (rc == SL_SUCCESS) rc = sl_scalar_get_c(s2, &b);
  if (rc == SL_SUCCESS) {
    double d = hypot(a.re - b.re, a.im - b.im), m = fmax(hypot(a.re, a.im), hypot(b.re, b.im));
    *err = m > 0 ? d / m : d;
  }
  sl_scalar_destroy(&s1);
  sl_scalar_destroy(&s2);
  sl_array_destroy(&u);
  sl_array_destroy(&v);
  sl_array_destroy(&au);
  sl_array_destroy(&ahv);
  return rc;
}
