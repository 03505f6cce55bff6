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
  if (x) x->value = sl_scalar_slot_get();
  if (!x || !x->value) {
    free(x);
    return sl_error(SL_E_NOMEM, "sl_scalar_create: out of memory");
  }
  x->dtype = dt;
  x->generation = sl_scalar_slots_generation();
  starpu_variable_data_register(&x->handle, STARPU_MAIN_RAM, (uintptr_t)x->value, 2 * sizeof(double));
  *s = x;
  return SL_SUCCESS;
}

int sl_scalar_check_session(const char *fn, const sl_scalar *s, const char *an)
{
  if (!s || s->generation == sl_scalar_slots_generation()) return SL_SUCCESS;
  return sl_error_stale(fn, an);
}

int sl_scalar_destroy(sl_scalar **s)
{
  if (!s || !*s) return SL_SUCCESS;
  if (!sl_ctx.initialized) return sl_error(SL_E_STATE, "sl_scalar_destroy: called after sl_finalize; destroy scalars before it");
  SL_TRY(sl_scalar_check_session("sl_scalar_destroy", *s, "the scalar"));
  starpu_data_unregister((*s)->handle);
  sl_scalar_slot_put((*s)->value);
  free(*s);
  *s = NULL;
  return SL_SUCCESS;
}

sl_dtype sl_scalar_dtype(const sl_scalar *s) { return s ? s->dtype : (sl_dtype)-1; }

int sl_scalar_get_c(sl_scalar *s, sl_cscalar *value)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(s != NULL, SL_E_INVALID, "sl_scalar_get: argument 1 (s) is NULL");
  SL_CHECK_ARG(value != NULL, SL_E_INVALID, "sl_scalar_get: argument 2 (value) is NULL");
  SL_TRY(sl_scalar_check_session("sl_scalar_get", s, "argument 1 (s)"));
  sl_watch_begin("sl_scalar_get (the reduction writing the scalar, its allreduce included)");
  int rc = sl_host_acquire(s->handle, STARPU_R);
  sl_watch_end();
  if (rc != 0) return sl_error_starpu(rc, "starpu_data_acquire", __FILE__, __LINE__);
  value->re = s->value[0];
  value->im = s->value[1];
  starpu_data_release(s->handle);
  return sl_async_error_take();
}

int sl_scalar_get(sl_scalar *s, void *value)
{
  SL_CHECK_ARG(value != NULL, SL_E_INVALID, "sl_scalar_get: argument 2 (value) is NULL");
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

struct sop_args {
  sl_scalar_opkind kind;
  int na, nb;       /* buffer index of a and b (out is buffer 0) */
  double value[2];  /* sl_scalar_set */
};

static void sop_set(double *const *v, const void *arg)
{
  const struct sop_args *o = arg;
  v[0][0] = o->value[0];
  v[0][1] = o->value[1];
}

static void sop_apply(double *const *v, const void *arg)
{
  const struct sop_args *o = arg;
  double complex a = CMPLX(v[o->na][0], v[o->na][1]);
  double complex b = o->nb >= 0 ? CMPLX(v[o->nb][0], v[o->nb][1]) : 0;
  double complex r = 0;
  switch (o->kind) {
  case SL_SOP_ADD: r = a + b; break;
  case SL_SOP_SUB: r = a - b; break;
  case SL_SOP_MUL: r = a * b; break;
  case SL_SOP_DIV: r = b != 0 ? a / b : 0; break;
  case SL_SOP_SQRT: r = sqrt(creal(a) > 0 ? creal(a) : 0.0); break;
  case SL_SOP_RECIP: r = a != 0 ? 1.0 / a : 0; break;
  case SL_SOP_ABS: r = cabs(a); break;
  }
  v[0][0] = creal(r);
  v[0][1] = cimag(r);
}

int sl_scalar_set(sl_scalar *s, sl_cscalar value)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(s != NULL, SL_E_INVALID, "sl_scalar_set: argument 1 (s) is NULL");
  SL_TRY(sl_scalar_check_session("sl_scalar_set", s, "argument 1 (s)"));
  struct sop_args o = {.value = {value.re, sl_dtype_is_complex(s->dtype) ? value.im : 0.0}};
  return sl_stask_submit(sop_set, &o, sizeof o, 1, &s->handle, (enum starpu_data_access_mode[]){STARPU_W});
}

int sl_scalar_op(sl_scalar *out, sl_scalar_opkind kind, const sl_scalar *a, const sl_scalar *b)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(out != NULL, SL_E_INVALID, "sl_scalar_op: argument 1 (out) is NULL");
  SL_CHECK_ARG(kind >= SL_SOP_ADD && kind <= SL_SOP_ABS, SL_E_INVALID, "sl_scalar_op: argument 2 (kind) is invalid (%d)", (int)kind);
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_scalar_op: argument 3 (a) is NULL");
  int binary = kind <= SL_SOP_DIV;
  SL_CHECK_ARG(!binary || b != NULL, SL_E_INVALID, "sl_scalar_op: argument 4 (b) is NULL for a binary kind");
  SL_TRY(sl_scalar_check_session("sl_scalar_op", out, "argument 1 (out)"));
  SL_TRY(sl_scalar_check_session("sl_scalar_op", a, "argument 3 (a)"));
  if (binary) SL_TRY(sl_scalar_check_session("sl_scalar_op", b, "argument 4 (b)"));
  starpu_data_handle_t h[3] = {out->handle};
  enum starpu_data_access_mode m[3] = {STARPU_RW};
  int n = 1;
  struct sop_args o = {.kind = kind, .na = 0, .nb = -1};
  if (a != out) {
    h[n] = a->handle;
    m[n] = STARPU_R;
    o.na = n++;
  }
  if (binary) {
    if (b == out) o.nb = 0;
    else if (b == a) o.nb = o.na;
    else {
      h[n] = b->handle;
      m[n] = STARPU_R;
      o.nb = n++;
    }
  }
  int cplx = sl_dtype_is_complex(a->dtype) || (binary && sl_dtype_is_complex(b->dtype));
  sl_dtype rt = kind == SL_SOP_SQRT || kind == SL_SOP_ABS ? sl_dtype_real(a->dtype) : a->dtype;
  if (cplx && kind != SL_SOP_SQRT && kind != SL_SOP_ABS && !sl_dtype_is_complex(rt))
    rt = rt == SL_FLOAT32 ? SL_COMPLEX64 : SL_COMPLEX128;
  SL_TRY(sl_stask_submit(sop_apply, &o, sizeof o, n, h, m));
  out->dtype = rt;
  return SL_SUCCESS;
}
