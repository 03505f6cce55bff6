/* Element-wise operations of the proximal layer: clipping (a box, or the disc |x| <= t), squared moduli
 * accumulated over the parts of a stacked array, and group factors (soft thresholding or projection of each
 * group's 2-norm). One task per chunk; arguments already checked by the callers (src/prox). */
#include "internal.h"
#include "codelets/codelets.h"

int sl_array_clip_p(sl_array *dst, const sl_array *src, int kind, double lo, double hi, double t)
{
  for (int i = 0; i < dst->nparts; i++) SL_TRY(sl_array_clip_p(dst->parts[i], src->parts[i], kind, lo, hi, t));
  codelet_vec_params p = {.a = {lo, 0}, .b = {hi, 0}, .kind = kind, .t = t};
  for (int c = 0; c < dst->nchunks; c++) {
    sl_trace_block(0, c);
    SL_TRY(codelet_vec_submit_p(SL_VEC_CLIP, dst->dtype,
                                (starpu_data_handle_t[4]){sl_array_chunk(dst, c), sl_array_chunk(src, c), NULL, NULL}, &p));
  }
  return SL_SUCCESS;
}

int sl_array_abs2_p(sl_array *s, const sl_array *x, int acc)
{
  codelet_vec_params p = {.kind = 0};
  for (int c = 0; c < s->nchunks; c++) {
    sl_trace_block(0, c);
    SL_TRY(codelet_vec_submit_p(acc ? SL_VEC_ABS2ACC : SL_VEC_ABS2, s->dtype,
                                (starpu_data_handle_t[4]){sl_array_chunk(s, c), sl_array_chunk(x, c), NULL, NULL}, &p));
  }
  return SL_SUCCESS;
}

int sl_array_group_p(sl_array *dst, const sl_array *src, const sl_array *s, int kind, double t)
{
  codelet_vec_params p = {.kind = kind, .t = t};
  for (int c = 0; c < dst->nchunks; c++) {
    sl_trace_block(0, c);
    SL_TRY(codelet_vec_submit_p(SL_VEC_GROUP, dst->dtype,
                                (starpu_data_handle_t[4]){sl_array_chunk(dst, c), sl_array_chunk(src, c),
                                                          sl_array_chunk(s, c), NULL},
                                &p));
  }
  return SL_SUCCESS;
}
