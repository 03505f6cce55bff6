/* Distributed FFT over any set of axes of an N-D array scattered along axis a.
 *   forward  the local block is copied into a contiguous work buffer (layout A: distributed along a), then
 *            real-to-complex along the real axis (the real variant), then complex FFTs along every other
 *            transformed axis but a, each one task over all lines of the block; when a is transformed (or
 *            the range is distributed along another axis) one all-to-all moves the buffer to layout B
 *            (distributed along b) where the FFT along a runs; a second all-to-all moves it back when the
 *            range is distributed along a; the result is copied into y's chunks.
 *   adjoint  the same steps in reverse with backward transforms (complex-to-real last).
 * Normalisation (pylops' "ortho", "none", "1/n") is one factor in one task per direction; the adjoint is
 * the true adjoint. The real variant follows pylops: its forward multiplies the bins 1 .. (n-1)/2 by
 * sqrt(2), which makes the adjoint (bins divided by sqrt(2), then complex-to-real) an isometry's. FFTW on
 * the CPU, cuFFT on a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"
#include "codelets/kernel_fft.h"

typedef struct {
  int ndim, real, ar;         /* the real axis (real variant) */
  int nloc, loc[SL_MAX_DIMS]; /* complex axes transformed in layout A */
  int a, b, dist_fft, back;   /* domain axis, the other layout's axis (-1: none), a transformed, back to A */
  double scale;
  int dbl;
  sl_array *la, *lb;          /* complex layouts A and B (templates) */
  starpu_data_handle_t xr, wa, wb;
  sl_redist *ab, *ba;
} fft_t;

static void fft_free(void *p)
{
  fft_t *f = p;
  sl_array_destroy(&f->la);
  sl_array_destroy(&f->lb);
  sl_redist_destroy(f->ab);
  sl_redist_destroy(f->ba);
  if (f->xr) starpu_data_unregister(f->xr);
  if (f->wa) starpu_data_unregister(f->wa);
  if (f->wb) starpu_data_unregister(f->wb);
  free(f);
}

/* Lines along axis k of a block of local dims ld. */
static fft_shape shape_of(const fft_t *f, const int64_t *ld, int k, int real, double scale, double interior)
{
  fft_shape s = {f->dbl, real, 1, ld[k], 1, scale, interior};
  for (int i = 0; i < k; i++) s.outer *= ld[i];
  for (int i = k + 1; i < f->ndim; i++) s.inner *= ld[i];
  return s;
}

static int nh(starpu_data_handle_t h) { return h ? 1 : 0; }

/* Copies between an array's chunks and a contiguous buffer (to_buffer: which way). */
static int copy_all(const sl_array *arr, starpu_data_handle_t buf, int to_buffer)
{
  starpu_data_handle_t *h = NULL;
  int n = 0;
  SL_TRY(sl_op_chunks(arr, &h, &n));
  int64_t len = sl_array_local_size(arr);
  size_t el = sl_dtype_size(sl_array_dtype(arr));
  int rc = to_buffer ? codelet_rows_submit(1, &buf, STARPU_W, n, h, el, 1, len, 0, len, 0, len)
                     : codelet_rows_submit(n, h, STARPU_W, 1, &buf, el, 1, len, 0, len, 0, len);
  free(h);
  return rc;
}

static int fft_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  fft_t *f = op->data;
  const int64_t *lda = sl_array_local_dims(f->la), *ldb = f->lb ? sl_array_local_dims(f->lb) : NULL;
  int fwd = mode == SL_FORWARD, rc = SL_SUCCESS;
  /* the one task of this direction that applies the normalisation (the real kinds always carry it) */
  int scaled = f->real;
  starpu_data_handle_t last = f->b >= 0 && !f->back ? f->wb : f->wa;
  if (fwd) {
    if (f->real) {
      rc = copy_all(x, f->xr, 1);
      fft_shape s = shape_of(f, sl_array_local_dims(op->dom), f->ar, 1, f->scale, sqrt(2.0));
      if (rc == SL_SUCCESS) rc = codelet_fft_submit(&s, FFT_R2C, f->xr, f->wa);
    } else {
      rc = copy_all(x, f->wa, 1);
    }
    for (int i = 0; i < f->nloc && rc == SL_SUCCESS; i++) {
      fft_shape s = shape_of(f, lda, f->loc[i], 0, scaled ? 1.0 : f->scale, 1.0);
      scaled = 1;
      rc = codelet_fft_submit(&s, FFT_FORWARD, f->wa, NULL);
    }
    if (rc == SL_SUCCESS && f->b >= 0) {
      rc = sl_redist_submit(f->ab, nh(f->wa), &f->wa, nh(f->wb), &f->wb);
      if (rc == SL_SUCCESS && f->dist_fft) {
        fft_shape s = shape_of(f, ldb, f->a, 0, scaled ? 1.0 : f->scale, 1.0);
        scaled = 1;
        rc = codelet_fft_submit(&s, FFT_FORWARD, f->wb, NULL);
      }
      if (rc == SL_SUCCESS && f->back) rc = sl_redist_submit(f->ba, nh(f->wb), &f->wb, nh(f->wa), &f->wa);
    }
    if (rc == SL_SUCCESS) rc = copy_all(y, last, 0);
    return rc;
  }
  rc = copy_all(x, last, 1);
  if (rc == SL_SUCCESS && f->b >= 0) {
    if (f->back) rc = sl_redist_submit(f->ab, nh(f->wa), &f->wa, nh(f->wb), &f->wb);
    if (rc == SL_SUCCESS && f->dist_fft) {
      fft_shape s = shape_of(f, ldb, f->a, 0, scaled ? 1.0 : f->scale, 1.0);
      scaled = 1;
      rc = codelet_fft_submit(&s, FFT_BACKWARD, f->wb, NULL);
    }
    if (rc == SL_SUCCESS) rc = sl_redist_submit(f->ba, nh(f->wb), &f->wb, nh(f->wa), &f->wa);
  }
  for (int i = 0; i < f->nloc && rc == SL_SUCCESS; i++) {
    fft_shape s = shape_of(f, lda, f->loc[i], 0, scaled ? 1.0 : f->scale, 1.0);
    scaled = 1;
    rc = codelet_fft_submit(&s, FFT_BACKWARD, f->wa, NULL);
  }
  if (rc == SL_SUCCESS && f->real) {
    fft_shape s = shape_of(f, sl_array_local_dims(op->dom), f->ar, 1, f->scale, 1.0 / sqrt(2.0));
    rc = codelet_fft_submit(&s, FFT_C2R, f->wa, f->xr);
    if (rc == SL_SUCCESS) rc = copy_all(y, f->xr, 0);
  } else if (rc == SL_SUCCESS) {
    rc = copy_all(y, f->wa, 0);
  }
  return rc;
}
static const sl_op_ops fft_ops = {fft_apply, NULL, fft_free};

/* The checks of sl_op_fft (every rank reaches the same verdict: like is agreed, the rest must be). */
static int fft_check(const char *fn, sl_op **op, const sl_array *like, int naxes, const int *axes, sl_fft_norm norm,
                     int real, int out_axis, int *ax)
{
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  SL_CHECK_ARG(like != NULL, SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  SL_CHECK_PLAIN(fn, like);
  int nd = sl_array_ndim(like);
  SL_CHECK_ARG(sl_array_partition(like) == SL_SCATTER && !like->group->mask, SL_E_DIST,
               "%s: argument 2 (like) must be SL_SCATTER over the whole communicator (no mask)", fn);
  SL_CHECK_ARG(naxes >= 1 && naxes <= nd, SL_E_INVALID, "%s: argument 3 (naxes) must be in [1, %d], got %d", fn, nd, naxes);
  for (int i = 0; i < naxes; i++) {
    int k = axes ? axes[i] : nd - naxes + i;
    if (k < 0) k += nd;
    SL_CHECK_ARG(k >= 0 && k < nd, SL_E_INVALID, "%s: argument 4 (axes): axes[%d] = %d is not an axis of a %d-D array", fn,
                 i, axes ? axes[i] : k, nd);
    for (int j = 0; j < i; j++) SL_CHECK_ARG(ax[j] != k, SL_E_INVALID, "%s: argument 4 (axes): axis %d appears twice", fn, k);
    ax[i] = k;
  }
  SL_CHECK_ARG(norm == SL_FFT_ORTHO || norm == SL_FFT_NONE || norm == SL_FFT_ONE_OVER_N, SL_E_INVALID,
               "%s: argument 5 (norm) must be SL_FFT_ORTHO, SL_FFT_NONE or SL_FFT_ONE_OVER_N", fn);
  sl_dtype dt = sl_array_dtype(like);
  SL_CHECK_ARG(real ? !sl_dtype_is_complex(dt) : sl_dtype_is_complex(dt), SL_E_DTYPE,
               "%s: argument 6 (real): %s needs a %s array, argument 2 (like) is %s", fn, real ? "the real variant" : "a complex FFT",
               real ? "float32 or float64" : "complex64 or complex128", sl_dtype_name(dt));
  SL_CHECK_ARG(!real || ax[naxes - 1] != sl_array_axis(like), SL_E_DIST,
               "%s: argument 4 (axes): the real-to-complex axis %d (the last of axes) is the distributed axis of "
               "argument 2 (like); distribute it along another axis", fn, ax[naxes - 1]);
  SL_CHECK_ARG(out_axis >= -1 && out_axis < nd, SL_E_INVALID,
               "%s: argument 7 (out_axis) %d is neither -1 (the axis of like) nor an axis of a %d-D array", fn, out_axis, nd);
  SL_CHECK_ARG(nd >= 2 || (naxes == 1 && ax[0] != sl_array_axis(like)) || sl_ctx.size == 1, SL_E_DIST,
               "%s: a 1-D array distributed along its only axis cannot be transformed (no axis to transpose to)", fn);
  return SL_SUCCESS;
}

int sl_op_fft(sl_op **op, const sl_array *like, int naxes, const int *axes, sl_fft_norm norm, int real, int out_axis)
{
  const char *fn = "sl_op_fft";
  SL_CHECK_INIT();
  int ax[SL_MAX_DIMS] = {0};
  int rc = fft_check(fn, op, like, naxes, axes, norm, real, out_axis, ax);
  sl_same same[SL_MAX_DIMS + 4] = {SL_SAME_I("argument 3 (naxes)", naxes), SL_SAME_I("argument 5 (norm)", norm),
                                   SL_SAME_I("argument 6 (real)", real != 0), SL_SAME_I("argument 7 (out_axis)", out_axis)};
  for (int i = 0; i < SL_MAX_DIMS; i++) same[4 + i] = SL_SAME_I("argument 4 (axes)", rc == SL_SUCCESS && i < naxes ? ax[i] : -1);
  rc = sl_agree_same(sl_ctx.comm, fn, rc, SL_MAX_DIMS + 4, same);
  if (rc != SL_SUCCESS) return rc;
  fft_t *f = calloc(1, sizeof *f);
  if (!f) return sl_agree(sl_ctx.comm, sl_error(SL_E_NOMEM, "%s: out of memory", fn));
  int nd = sl_array_ndim(like), a = sl_array_axis(like);
  if (out_axis < 0) out_axis = a;
  int local_a = sl_ctx.size == 1 && out_axis == a; /* one rank: the distributed axis is local */
  f->ndim = nd;
  f->real = real;
  f->ar = real ? ax[naxes - 1] : -1;
  f->a = a;
  f->dbl = sl_dtype_real(sl_array_dtype(like)) == SL_FLOAT64;
  int64_t ntot = 1;
  for (int i = 0; i < naxes; i++) {
    ntot *= sl_array_dims(like)[ax[i]];
    if (ax[i] == a && !local_a) f->dist_fft = 1;
    else if (ax[i] != f->ar) f->loc[f->nloc++] = ax[i];
  }
  f->scale = norm == SL_FFT_ORTHO ? 1.0 / sqrt((double)ntot) : norm == SL_FFT_ONE_OVER_N ? 1.0 / (double)ntot : 1.0;
  /* layout B: the range's axis when it differs from a, else the first axis that is not a */
  f->b = -1;
  if (out_axis != a) f->b = out_axis;
  else if (f->dist_fft)
    for (int k = 0; k < nd && f->b < 0; k++)
      if (k != a) f->b = k;
  f->back = f->dist_fft && out_axis == a && f->b >= 0;
  /* the complex layouts */
  int64_t cd[SL_MAX_DIMS];
  memcpy(cd, sl_array_dims(like), sizeof(int64_t) * (size_t)nd);
  if (real) cd[f->ar] = cd[f->ar] / 2 + 1;
  sl_dtype ct = real ? (f->dbl ? SL_COMPLEX128 : SL_COMPLEX64) : sl_array_dtype(like);
  int64_t na = sl_array_local_dims(like)[a];
  sl_dist da = sl_dist_scatter(a);
  da.local_n = &na;
  rc = sl_layout_create(&f->la, nd, cd, ct, &da);
  sl_dist db = sl_dist_scatter(f->b);
  if (rc == SL_SUCCESS && f->b >= 0) rc = sl_layout_create(&f->lb, nd, cd, ct, &db);
  size_t cel = sl_dtype_size(ct);
  const double zero[2] = {0, 0};
  if (rc == SL_SUCCESS) {
    f->wa = sl_buffer(sl_array_local_size(f->la), cel);
    if (real) f->xr = sl_buffer(sl_array_local_size(like), sl_dtype_size(sl_array_dtype(like)));
    if (f->lb) f->wb = sl_buffer(sl_array_local_size(f->lb), cel);
    /* buffers written in parts (unpacks, in-place transforms) must hold values from the start */
    if (f->wa) rc = codelet_vec_submit(SL_VEC_FILL, ct, f->wa, NULL, NULL, zero, zero);
    if (rc == SL_SUCCESS && f->wb) rc = codelet_vec_submit(SL_VEC_FILL, ct, f->wb, NULL, NULL, zero, zero);
  }
  if (rc == SL_SUCCESS && f->lb) rc = sl_redist_create(&f->ab, f->la, f->lb, fn);
  if (rc == SL_SUCCESS && f->lb) rc = sl_redist_create(&f->ba, f->lb, f->la, fn);
  /* the domain is laid out like `like` (without ghosts); the range is the last complex layout */
  sl_array *dom = NULL;
  sl_dist dd = sl_dist_scatter(a);
  dd.local_n = &na;
  if (rc == SL_SUCCESS) rc = sl_layout_create(&dom, nd, sl_array_dims(like), sl_array_dtype(like), &dd);
  sl_op *o = NULL;
  char name[96];
  int n = snprintf(name, sizeof name, "%sFFT(axes", real ? "R" : "");
  for (int i = 0; i < naxes && n < (int)sizeof name - 8; i++) n += snprintf(name + n, sizeof name - (size_t)n, "%s%d", i ? "," : " ", ax[i]);
  snprintf(name + n, sizeof name - (size_t)n, ")");
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, name, dom, f->b >= 0 && !f->back ? f->lb : f->la, &fft_ops, f);
  else fft_free(f);
  sl_array_destroy(&dom);
  return sl_op_finish(op, o, rc);
}
