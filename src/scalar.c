/* sl_scalar: a value living in a StarPU handle, so reductions feed later tasks without a host round trip. */
#include <complex.h>
#include <stdlib.h>

#include "internal.h"

int sl_scalar_create(sl_scalar **s, sl_dtype dt)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(s != NULL, SL_E_INVALID, "sl_scalar_create: argument 1 (s) is NULL");
  SL_CHECK_ARG(sl_dtype_valid(dt), SL_E_DTYPE, "sl_scalar_create: argument 2 (dt) is not a valid dtype (%d)", (int)dt);
  sl_scalar *x = calloc(1, sizeof *x);
  if (!x) return sl_error(SL_E_NOMEM, "sl_scalar_create: out of memory");
  x->dtype = dt;
  starpu_variable_data_register(&x->handle, STARPU_MAIN_RAM, (uintptr_t)x->value, sizeof x->value);
  *s = x;
  return SL_SUCCESS;
}

int sl_scalar_destroy(sl_scalar **s)
{
  if (!s || !*s) return SL_SUCCESS;
  starpu_data_unregister((*s)->handle);
  free(*s);
  *s = NULL;
  return SL_SUCCESS;
}

sl_dtype sl_scalar_dtype(const sl_scalar *s) { return s->dtype; }

int sl_scalar_get_c(sl_scalar *s, sl_cscalar *value)
{
  SL_CHECK_ARG(s != NULL, SL_E_INVALID, "sl_scalar_get: argument 1 (s) is NULL");
  SL_CHECK_ARG(value != NULL, SL_E_INVALID, "sl_scalar_get: argument 2 (value) is NULL");
  SL_CHECK_STARPU(starpu_data_acquire(s->handle, STARPU_R));
  value->re = s->value[0];
  value->im = s->value[1];
  starpu_data_release(s->handle);
  return sl_async_error_take();
}

int sl_scalar_get(sl_scalar *s, void *value)
{
  sl_cscalar v;
  SL_TRY(sl_scalar_get_c(s, &v));
  switch (s->dtype) {
  case SL_FLOAT32: *(float *)value = (float)v.re; break;
  case SL_FLOAT64: *(double *)value = v.re; break;
  case SL_COMPLEX64: *(float complex *)value = CMPLXF((float)v.re, (float)v.im); break;
  case SL_COMPLEX128: *(double complex *)value = CMPLX(v.re, v.im); break;
  }
  return SL_SUCCESS;
}
