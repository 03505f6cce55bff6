/* Element-wise vector operations: one task per chunk, so the workers (CPU and GPU) share the block. */
#include "internal.h"
#include "codelets/codelets.h"

/* Submits op on chunk c of y, x, z for every chunk. */
static int submit_chunks(sl_vec_op op, sl_array *y, const sl_array *x, const sl_array *z, sl_cscalar a, sl_cscalar b)
{
  double av[2] = {a.re, a.im}, bv[2] = {b.re, b.im};
  for (int c = 0; c < y->nchunks; c++)
    SL_TRY(codelet_vec_submit(op, y->dtype, sl_array_chunk(y, c), x ? sl_array_chunk(x, c) : NULL,
                              z ? sl_array_chunk(z, c) : NULL, av, bv));
  return SL_SUCCESS;
}

static int check_one(const char *fn, const sl_array *a)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "%s: argument 1 is NULL", fn);
  SL_CHECK_ARG(!a->acquired, SL_E_STATE, "%s: argument 1 is acquired by the host; release it first", fn);
  return SL_SUCCESS;
}

int sl_array_fill(sl_array *a, sl_cscalar value)
{
  SL_TRY(check_one("sl_array_fill", a));
  return submit_chunks(SL_VEC_FILL, a, NULL, NULL, value, SL_REAL(0));
}

int sl_array_scale(sl_array *a, sl_cscalar alpha)
{
  SL_TRY(check_one("sl_array_scale", a));
  if (alpha.re == 1.0 && alpha.im == 0.0) return SL_SUCCESS;
  if (alpha.re == 0.0 && alpha.im == 0.0) return submit_chunks(SL_VEC_FILL, a, NULL, NULL, alpha, alpha);
  return submit_chunks(SL_VEC_SCALE, a, NULL, NULL, alpha, SL_REAL(0));
}

int sl_array_copy(sl_array *dst, const sl_array *src)
{
  SL_TRY(check_one("sl_array_copy", dst));
  SL_TRY(sl_array_check_same(dst, "sl_array_copy: argument 1 (dst)", src, "argument 2 (src)"));
  if (dst == src) return SL_SUCCESS;
  return submit_chunks(SL_VEC_COPY, dst, src, NULL, SL_REAL(0), SL_REAL(0));
}

int sl_array_axpby(sl_array *y, sl_cscalar alpha, const sl_array *x, sl_cscalar beta)
{
  SL_TRY(check_one("sl_array_axpby", y));
  SL_TRY(sl_array_check_same(y, "sl_array_axpby: argument 1 (y)", x, "argument 3 (x)"));
  int b0 = beta.re == 0.0 && beta.im == 0.0;
  if (x == y) /* y = (alpha + beta) y */
    return sl_array_scale(y, (sl_cscalar){alpha.re + beta.re, alpha.im + beta.im});
  return submit_chunks(b0 ? SL_VEC_AXPY0 : SL_VEC_AXPBY, y, x, NULL, alpha, beta);
}

int sl_array_multiply(sl_array *z, const sl_array *x, const sl_array *y)
{
  SL_TRY(check_one("sl_array_multiply", z));
  SL_TRY(sl_array_check_same(z, "sl_array_multiply: argument 1 (z)", x, "argument 2 (x)"));
  SL_TRY(sl_array_check_same(z, "sl_array_multiply: argument 1 (z)", y, "argument 3 (y)"));
  return submit_chunks(SL_VEC_MUL, z, x, y, SL_REAL(0), SL_REAL(0));
}

int sl_array_conj(sl_array *dst, const sl_array *src)
{
  SL_TRY(check_one("sl_array_conj", dst));
  SL_TRY(sl_array_check_same(dst, "sl_array_conj: argument 1 (dst)", src, "argument 2 (src)"));
  if (!sl_dtype_is_complex(dst->dtype)) return sl_array_copy(dst, src);
  return submit_chunks(SL_VEC_CONJ, dst, src, NULL, SL_REAL(0), SL_REAL(0));
}
