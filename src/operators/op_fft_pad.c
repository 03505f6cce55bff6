/* The FFT with pylops' options: nfft per axis (zero padding, or truncation, of the input before the
 * transform), ifftshift of the input and fftshift of the output per axis. A product of starlops operators:
 * rolls (sl_op_roll), restrictions along the axis and their adjoints (padding), a redistribution where the
 * padded or truncated axis is the distributed one, and sl_op_fft on the padded layout. */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"

/* *cur = step * (*cur) (the first step alone when *cur is NULL); the step's reference passes to the chain */
static int then(sl_op **cur, sl_op *step)
{
  if (!*cur) {
    *cur = step;
    return SL_SUCCESS;
  }
  sl_op *p = NULL;
  int rc = sl_op_product(&p, step, *cur);
  sl_op_destroy(&step);
  sl_op_destroy(cur);
  *cur = p;
  return rc;
}

/* The default layout of `like` with dims[axis] = m (the even split along like's axis, or replicated). */
static int resized(sl_array **out, const sl_array *like, int axis, int64_t m)
{
  int64_t dims[SL_MAX_DIMS];
  memcpy(dims, like->dims, sizeof dims);
  dims[axis] = m;
  sl_dist d = {.partition = like->partition, .axis = like->axis};
  int64_t ln = like->ldims[like->axis];
  if (like->partition == SL_SCATTER && like->axis != axis) d.local_n = &ln; /* the other axes keep their split */
  return sl_layout_create(out, like->ndim, dims, like->dtype, &d);
}

/* x (laid out like cur) -> x padded with zeros or truncated to m planes along axis, laid out as resized() */
static int pad_or_cut(sl_op **chain, const sl_array *cur, int axis, int64_t m, sl_array **next)
{
  int64_t n = cur->dims[axis], k = n < m ? n : m;
  int64_t *first = malloc(sizeof *first * (size_t)k);
  int rc = sl_agree(sl_ctx.comm, first ? SL_SUCCESS : sl_error(SL_E_NOMEM, "sl_op_fft_nfft: out of memory"));
  if (rc != SL_SUCCESS) return rc;
  for (int64_t i = 0; i < k; i++) first[i] = i;
  rc = resized(next, cur, axis, m);
  sl_op *r = NULL, *step = NULL, *mv = NULL;
  if (m > n) { /* pad: the adjoint of keeping the first n planes of the padded layout */
    if (rc == SL_SUCCESS) rc = sl_op_restriction_axis(&r, *next, first, n, axis);
    if (rc == SL_SUCCESS && !sl_array_same_split(cur, sl_op_range(r))) {
      rc = sl_op_redistribute(&mv, cur, sl_op_range(r));
      if (rc == SL_SUCCESS) rc = then(chain, mv);
    }
    if (rc == SL_SUCCESS) rc = sl_op_adjoint(&step, r);
    if (rc == SL_SUCCESS) rc = then(chain, step);
  } else { /* truncate: keep the first m planes */
    if (rc == SL_SUCCESS) rc = sl_op_restriction_axis(&r, cur, first, m, axis);
    if (rc == SL_SUCCESS) {
      sl_op_ref(r);
      rc = then(chain, r);
    }
    if (rc == SL_SUCCESS && !sl_array_same_split(sl_op_range(r), *next)) {
      rc = sl_op_redistribute(&mv, sl_op_range(r), *next);
      if (rc == SL_SUCCESS) rc = then(chain, mv);
    }
  }
  sl_op_destroy(&r);
  free(first);
  return rc;
}

int sl_op_fft_nfft(sl_op **op, const sl_array *like, int naxes, const int *axes, const int64_t *nfft, sl_fft_norm norm,
                   int real, const int *ifftshift_before, const int *fftshift_after)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_fft_nfft";
  int rc = SL_SUCCESS, ax[SL_MAX_DIMS] = {0};
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (!like) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  else if (like->session != sl_session()) rc = sl_array_check_session(fn, like, "argument 2 (like)");
  else if (like->nparts) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is a stacked array", fn);
  else if (naxes < 1 || naxes > like->ndim)
    rc = sl_error(SL_E_INVALID, "%s: argument 3 (naxes) must be 1 to %d, got %d", fn, like->ndim, naxes);
  for (int i = 0; rc == SL_SUCCESS && i < naxes; i++) {
    ax[i] = axes ? axes[i] : like->ndim - naxes + i;
    if (ax[i] < 0) ax[i] += like->ndim;
    if (ax[i] < 0 || ax[i] >= like->ndim) rc = sl_error(SL_E_INVALID, "%s: argument 4 (axes): axis %d is out of range", fn, axes[i]);
    else if (nfft && nfft[i] < 1) rc = sl_error(SL_E_INVALID, "%s: argument 5 (nfft): nfft[%d] must be >= 1, got %lld", fn, i, (long long)nfft[i]);
    else if (real && i == naxes - 1 && fftshift_after && fftshift_after[i])
      rc = sl_error(SL_E_INVALID, "%s: argument 9 (fftshift_after): not on the real-to-complex axis %d (its n/2 + 1 bins)", fn, ax[i]);
  }
  /* what sl_op_fft would refuse, named by this call's arguments; and padded sizes that overflow */
  if (rc == SL_SUCCESS) rc = sl_fft_kind_check(fn, like, norm, 6, real, 7, ax[naxes - 1]);
  int64_t size = 1;
  for (int d = 0; rc == SL_SUCCESS && d < like->ndim; d++) size *= like->dims[d] > 0 ? like->dims[d] : 1;
  for (int i = 0; rc == SL_SUCCESS && nfft && i < naxes; i++) {
    const int64_t rest = size / (like->dims[ax[i]] > 0 ? like->dims[ax[i]] : 1);
    if (nfft[i] > INT64_MAX / 16 / rest)
      rc = sl_error(SL_E_DIMS, "%s: argument 5 (nfft): nfft[%d] = %lld makes an array of more than 2^59 elements", fn, i,
                    (long long)nfft[i]);
    else size = rest * (nfft[i] > like->dims[ax[i]] ? nfft[i] : like->dims[ax[i]]);
  }
  uint64_t digest = SL_FNV1A_START;
  for (int i = 0; i < naxes && rc == SL_SUCCESS; i++) {
    int64_t v[4] = {ax[i], nfft ? nfft[i] : 0, ifftshift_before ? ifftshift_before[i] != 0 : 0, fftshift_after ? fftshift_after[i] != 0 : 0};
    digest = sl_fnv1a(digest, v, sizeof v);
  }
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 3 (naxes)", naxes), SL_SAME_I("argument 6 (norm)", norm), SL_SAME_I("argument 7 (real)", real != 0),
                  SL_SAME_I("arguments 4, 5, 8 and 9 (axes, nfft, the shifts)", digest)));
  sl_op *chain = NULL, *step = NULL;
  const sl_array *cur = like;
  sl_array *owned[SL_MAX_DIMS] = {NULL};
  for (int i = 0; rc == SL_SUCCESS && i < naxes; i++) /* numpy's ifftshift of the input: roll by -(n / 2) */
    if (ifftshift_before && ifftshift_before[i]) {
      rc = sl_op_roll(&step, cur, ax[i], -(cur->dims[ax[i]] / 2));
      if (rc == SL_SUCCESS) rc = then(&chain, step);
    }
  for (int i = 0; rc == SL_SUCCESS && i < naxes; i++)
    if (nfft && nfft[i] != cur->dims[ax[i]]) {
      rc = pad_or_cut(&chain, cur, ax[i], nfft[i], &owned[i]);
      cur = owned[i];
    }
  if (rc == SL_SUCCESS) rc = sl_op_fft(&step, cur, naxes, ax, norm, real, -1);
  if (rc == SL_SUCCESS) rc = then(&chain, step);
  for (int i = 0; rc == SL_SUCCESS && i < naxes; i++) /* numpy's fftshift of the output: roll by n / 2 */
    if (fftshift_after && fftshift_after[i]) {
      const sl_array *r = sl_op_range(chain);
      rc = sl_op_roll(&step, r, ax[i], r->dims[ax[i]] / 2);
      if (rc == SL_SUCCESS) rc = then(&chain, step);
    }
  for (int i = 0; i < SL_MAX_DIMS; i++) sl_array_destroy(&owned[i]);
  if (rc != SL_SUCCESS) {
    sl_op_destroy(&chain);
    return rc;
  }
  *op = chain;
  return SL_SUCCESS;
}
