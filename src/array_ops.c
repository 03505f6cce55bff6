/* Element-wise vector operations: one task per chunk, so the workers (CPU and GPU) share the block. */
#include <math.h>

#include "internal.h"
#include "codelets/codelets.h"

/* Submits op on chunk c of y, x, z for every chunk. */
static int submit_chunks(sl_vec_op op, sl_array *y, const sl_array *x, const sl_array *z, sl_cscalar a, sl_cscalar b)
{
  for (int i = 0; i < y->nparts; i++) /* stacked: part by part */
    SL_TRY(submit_chunks(op, y->parts[i], x ? x->parts[i] : NULL, z ? z->parts[i] : NULL, a, b));
  double av[2] = {a.re, a.im}, bv[2] = {b.re, b.im};
  for (int c = 0; c < y->nchunks; c++) {
    sl_trace_block(0, c);
    SL_TRY(codelet_vec_submit(op, y->dtype, sl_array_chunk(y, c), x ? sl_array_chunk(x, c) : NULL,
                              z ? sl_array_chunk(z, c) : NULL, av, bv));
  }
  return SL_SUCCESS;
}

static int check_one(const char *fn, const sl_array *a)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "%s: argument 1 is NULL", fn);
  SL_TRY(sl_array_check_session(fn, a, "argument 1"));
  SL_CHECK_ARG(!a->acquired, SL_E_STATE, "%s: argument 1 is acquired by the host; release it first", fn);
  return sl_array_check_data(fn, a, "argument 1");
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
  SL_TRY(sl_array_check_data("sl_array_copy", src, "argument 2 (src)"));
  if (dst == src) return SL_SUCCESS;
  return submit_chunks(SL_VEC_COPY, dst, src, NULL, SL_REAL(0), SL_REAL(0));
}

int sl_array_axpby(sl_array *y, sl_cscalar alpha, const sl_array *x, sl_cscalar beta)
{
  SL_TRY(check_one("sl_array_axpby", y));
  SL_TRY(sl_array_check_same(y, "sl_array_axpby: argument 1 (y)", x, "argument 3 (x)"));
  SL_TRY(sl_array_check_data("sl_array_axpby", x, "argument 3 (x)"));
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
  SL_TRY(sl_array_check_data("sl_array_multiply", x, "argument 2 (x)"));
  SL_TRY(sl_array_check_data("sl_array_multiply", y, "argument 3 (y)"));
  return submit_chunks(SL_VEC_MUL, z, x, y, SL_REAL(0), SL_REAL(0));
}

int sl_array_conj(sl_array *dst, const sl_array *src)
{
  SL_TRY(check_one("sl_array_conj", dst));
  SL_TRY(sl_array_check_same(dst, "sl_array_conj: argument 1 (dst)", src, "argument 2 (src)"));
  SL_TRY(sl_array_check_data("sl_array_conj", src, "argument 2 (src)"));
  if (!sl_dtype_is_complex(dst->dtype)) return sl_array_copy(dst, src);
  return submit_chunks(SL_VEC_CONJ, dst, src, NULL, SL_REAL(0), SL_REAL(0));
}

int sl_array_axpby_h(sl_array *y, sl_cscalar alpha, starpu_data_handle_t ha, int ia, const sl_array *x,
                     sl_cscalar beta, starpu_data_handle_t hb, int ib)
{
  for (int i = 0; i < y->nparts; i++) SL_TRY(sl_array_axpby_h(y->parts[i], alpha, ha, ia, x->parts[i], beta, hb, ib));
  codelet_vec_params p = {.a = {alpha.re, alpha.im}, .b = {beta.re, beta.im}, .ia = ha ? ia : 0, .ib = hb ? ib : 0};
  starpu_data_handle_t one = sl_one_handle();
  for (int c = 0; c < y->nchunks; c++) {
    sl_trace_block(0, c);
    SL_TRY(codelet_vec_submit_p(SL_VEC_AXPBYS, y->dtype,
                                (starpu_data_handle_t[4]){sl_array_chunk(y, c), sl_array_chunk(x, c), ha ? ha : one,
                                                          hb ? hb : one},
                                &p));
  }
  return SL_SUCCESS;
}

int sl_array_axpy2_h(sl_array *y1, const sl_array *x1, int i1, sl_array *y2, const sl_array *x2, int i2,
                     starpu_data_handle_t hs)
{
  for (int i = 0; i < y1->nparts; i++)
    SL_TRY(sl_array_axpy2_h(y1->parts[i], x1->parts[i], i1, y2->parts[i], x2->parts[i], i2, hs));
  codelet_vec_params p = {.a = {1, 0}, .b = {1, 0}, .ia = i1, .ib = i2};
  for (int c = 0; c < y1->nchunks; c++) {
    sl_trace_block(0, c);
    SL_TRY(codelet_vec_submit_p(SL_VEC_AXPYS2, y1->dtype,
                                (starpu_data_handle_t[5]){sl_array_chunk(y1, c), sl_array_chunk(x1, c), sl_array_chunk(y2, c),
                                                          sl_array_chunk(x2, c), hs},
                                &p));
  }
  return SL_SUCCESS;
}

int sl_array_scale_h(sl_array *y, sl_cscalar alpha, starpu_data_handle_t ha, int ia)
{
  for (int i = 0; i < y->nparts; i++) SL_TRY(sl_array_scale_h(y->parts[i], alpha, ha, ia));
  codelet_vec_params p = {.a = {alpha.re, alpha.im}, .ia = ha ? ia : 0};
  for (int c = 0; c < y->nchunks; c++)
    SL_TRY(codelet_vec_submit_p(SL_VEC_SCALES, y->dtype,
                                (starpu_data_handle_t[4]){sl_array_chunk(y, c), ha ? ha : sl_one_handle(), NULL, NULL},
                                &p));
  return SL_SUCCESS;
}

int sl_array_axpby_s(sl_array *y, sl_cscalar alpha, const sl_scalar *sa, const sl_array *x, sl_cscalar beta,
                     const sl_scalar *sb)
{
  SL_TRY(check_one("sl_array_axpby_s", y));
  SL_TRY(sl_array_check_same(y, "sl_array_axpby_s: argument 1 (y)", x, "argument 4 (x)"));
  SL_CHECK_ARG(x != y, SL_E_INVALID, "sl_array_axpby_s: argument 4 (x) must differ from argument 1 (y)");
  SL_TRY(sl_scalar_check_session("sl_array_axpby_s", sa, "argument 3 (sa)"));
  SL_TRY(sl_scalar_check_session("sl_array_axpby_s", sb, "argument 6 (sb)"));
  return sl_array_axpby_h(y, alpha, sa ? sa->handle : NULL, 0, x, beta, sb ? sb->handle : NULL, 0);
}

int sl_array_threshold(sl_array *dst, const sl_array *src, sl_thresh kind, double thresh)
{
  SL_TRY(check_one("sl_array_threshold", dst));
  SL_TRY(sl_array_check_same(dst, "sl_array_threshold: argument 1 (dst)", src, "argument 2 (src)"));
  SL_CHECK_ARG(kind == SL_THRESH_SOFT || kind == SL_THRESH_HARD || kind == SL_THRESH_HALF, SL_E_INVALID,
               "sl_array_threshold: argument 3 (kind) must be SL_THRESH_SOFT, SL_THRESH_HARD or SL_THRESH_HALF");
  SL_CHECK_ARG(thresh >= 0 && isfinite(thresh), SL_E_INVALID,
               "sl_array_threshold: argument 4 (thresh) must be finite and >= 0, got %g", thresh);
  for (int i = 0; i < dst->nparts; i++) SL_TRY(sl_array_threshold(dst->parts[i], src->parts[i], kind, thresh));
  codelet_vec_params p = {.kind = (int)kind, .t = thresh};
  for (int c = 0; c < dst->nchunks; c++)
    SL_TRY(codelet_vec_submit_p(SL_VEC_THRESH, dst->dtype,
                                (starpu_data_handle_t[4]){sl_array_chunk(dst, c), sl_array_chunk(src, c), NULL, NULL}, &p));
  return SL_SUCCESS;
}
