/* Distributed FFT over any set of axes of an N-D array scattered along axis a.
 *   forward  real-to-complex along the real axis (the real variant), then complex FFTs over every other
 *            transformed axis but a in layout A (distributed along a): the axes in runs of consecutive axes,
 *            each run one task over the whole block with one multi-dimensional plan; when a is transformed
 *            (or the range is distributed along another axis) one all-to-all moves the data to layout B
 *            (distributed along b) where the FFT along a runs; a second all-to-all moves it back when the
 *            range is distributed along a.
 *   adjoint  the same steps in reverse with backward transforms (complex-to-real last).
 * Where the data go: when x is one chunk (the usual case on a GPU) the first step reads it in place (an
 * out-of-place transform or the all-to-all's packs) and when y is one chunk the last step writes it;
 * otherwise the chunks are copied into the work buffer first or out of it last.
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
  int nloc, loc[SL_MAX_DIMS]; /* complex axes transformed in layout A, in increasing order */
  int nrun, run0[SL_MAX_DIMS], runlen[SL_MAX_DIMS]; /* the same as runs of consecutive axes */
  int a, b, dist_fft, back;   /* domain axis, the other layout's axis (-1: none), a transformed, back to A */
  double scale;
  int dbl;
  sl_array *la, *lb;          /* complex layouts A and B (templates) */
  starpu_data_handle_t xr, wa, wb;
  starpu_data_handle_t scr;   /* the chunked transforms' packing space, for chunks that are not back to back */
  sl_redist *ab, *ba;
  int wb_shared;              /* wb is ab's shared segment (sl_redist_block), owned by ab */
} fft_t;

static void fft_free(void *p)
{
  fft_t *f = p;
  sl_array_destroy(&f->la);
  sl_array_destroy(&f->lb);
  if (f->xr) starpu_data_unregister(f->xr);
  if (f->wa) starpu_data_unregister(f->wa);
  if (f->wb && !f->wb_shared) starpu_data_unregister(f->wb);
  sl_redist_destroy(f->ab);
  sl_redist_destroy(f->ba);
  if (f->scr) starpu_data_unregister(f->scr);
  free(f);
}

/* Transforms over the axes k .. k + r - 1 of a block of local dims ld. */
static fft_shape shape_of(const fft_t *f, const int64_t *ld, int k, int r, int real, double scale, double interior)
{
  fft_shape s = {.dbl = f->dbl, .real = real, .rank = r, .outer = 1, .n = 1, .inner = 1, .scale = scale, .interior = interior};
  for (int i = 0; i < r; i++) s.dims[i] = ld[k + i], s.n *= ld[k + i];
  for (int i = 0; i < k; i++) s.outer *= ld[i];
  for (int i = k + r; i < f->ndim; i++) s.inner *= ld[i];
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

/* The array's local block as one handle when it is one chunk, else NULL (none when the rank owns nothing). */
static starpu_data_handle_t one_chunk(const sl_array *arr)
{
  starpu_data_handle_t *h = NULL, one = NULL;
  int n = 0;
  if (sl_op_chunks(arr, &h, &n) == SL_SUCCESS && n == 1 &&
      (int64_t)starpu_vector_get_nx(h[0]) == sl_array_local_size(arr))
    one = h[0];
  free(h);
  return one;
}

/* The data's way through one direction's steps: cur holds it (ro: the caller's x, only read), or, on the CPUs,
 * x's chunks do (xs) until the first step reads them; the last step writes y's one chunk (hy) or, on the CPUs,
 * y's chunks (ys), when it can. */
typedef struct {
  starpu_data_handle_t cur, hy;
  int ro, left;
  int scaled;  /* the normalisation is applied */
  int nxs, nys, in_y;  /* in_y: the last step wrote y's chunks */
  starpu_data_handle_t *xs, *ys, scr;
} route;

static int has_data(const route *r) { return r->cur || r->nxs; }

/* The handle a step writes: y's chunk for the last step, else work (in place when cur may be written). */
static starpu_data_handle_t route_dest(const route *r, starpu_data_handle_t work, int in_place_ok)
{
  if (r->left == 1 && r->hy) return r->hy;
  return in_place_ok && !r->ro && !r->nxs ? r->cur : work;
}

/* Where a step's output went: the step's own destination, or y's chunks. */
static void route_moved(route *r, starpu_data_handle_t dst, int to_y)
{
  r->cur = to_y ? NULL : dst;
  r->in_y = to_y;
  r->nxs = 0, r->ro = 0, r->left--;
}

/* One transform step (kind FFT_FORWARD / FFT_BACKWARD / FFT_R2C) of shape s from the route's data. */
static int route_transform(route *r, const fft_shape *s, int kind, starpu_data_handle_t work, int in_place_ok)
{
  if (!has_data(r)) { /* this rank holds nothing in this layout */
    r->left--;
    return SL_SUCCESS;
  }
  int to_y = r->left == 1 && !r->hy && r->nys > 0;
  starpu_data_handle_t dst = route_dest(r, work, in_place_ok && kind != FFT_R2C);
  if (r->nxs || to_y) /* from x's chunks or to y's: one chunked task */
    SL_TRY(codelet_fft_submit_chunks(s, kind, r->nxs ? r->nxs : 1, r->nxs ? r->xs : &r->cur, to_y ? r->nys : 1,
                                     to_y ? r->ys : &dst, r->scr));
  else SL_TRY(codelet_fft_submit(s, kind, r->cur, dst));
  route_moved(r, dst, to_y);
  return SL_SUCCESS;
}

static int route_fft(route *r, const fft_t *f, const int64_t *ld, int k, int len, int kind, starpu_data_handle_t work)
{
  /* the first transform of the direction scales, on every rank alike (one that holds nothing here too) */
  fft_shape s = shape_of(f, ld, k, len, 0, r->scaled ? 1.0 : f->scale, 1.0);
  r->scaled = 1;
  return route_transform(r, &s, kind, work, 1);
}

static int route_redist(route *r, sl_redist *rd, starpu_data_handle_t work)
{
  starpu_data_handle_t dst = route_dest(r, work, 0);
  if (!work) dst = NULL; /* this rank holds nothing in the target layout */
  int to_y = work && r->left == 1 && !r->hy && r->nys > 0;
  int ns = r->nxs ? r->nxs : nh(r->cur);
  SL_TRY(sl_redist_submit(rd, ns, r->nxs ? r->xs : &r->cur, to_y ? r->nys : nh(dst), to_y ? r->ys : &dst));
  route_moved(r, dst, to_y);
  return SL_SUCCESS;
}

/* Starts a route from x: its one chunk; on the CPUs its chunks (direct), else a copy into buf. */
static int route_start(route *r, const sl_array *x, const sl_array *y, starpu_data_handle_t buf, int steps, int direct)
{
  r->hy = y ? one_chunk(y) : NULL;
  r->cur = one_chunk(x);
  r->ro = r->cur != NULL;
  r->left = steps;
  r->scaled = 0;
  if (direct && y && !r->hy) SL_TRY(sl_op_chunks(y, &r->ys, &r->nys));
  if (!r->cur && direct) SL_TRY(sl_op_chunks(x, &r->xs, &r->nxs));
  else if (!r->cur && buf) {
    SL_TRY(copy_all(x, buf, 1));
    r->cur = buf;
  }
  return SL_SUCCESS;
}

/* Ends a route in y: nothing when the last step wrote y. */
static int route_end(const route *r, sl_array *y)
{
  if (r->in_y || (r->cur && r->cur == r->hy)) return SL_SUCCESS;
  return r->cur ? copy_all(y, r->cur, 0) : SL_SUCCESS;
}

static int fft_apply_route(fft_t *f, route *r, sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  const int64_t *lda = sl_array_local_dims(f->la), *ldb = f->lb ? sl_array_local_dims(f->lb) : NULL;
  const int64_t *ldd = sl_array_local_dims(op->dom);
  int redist = f->b >= 0 && f->ab, steps = f->nrun + (redist ? 1 + f->dist_fft + f->back : 0);
  /* on the CPUs the first and last steps take x's and y's chunks themselves (they lie back to back) */
  int direct = sl_ctx.ncuda == 0 || codelet_where() == STARPU_CPU;
  if (mode == SL_FORWARD) {
    if (f->real) {
      /* R2C from x (its chunks, or a copy of x) into wa, or into y when it is the only step */
      SL_TRY(route_start(r, x, y, f->xr, steps + 1, direct));
      fft_shape s = shape_of(f, ldd, f->ar, 1, 1, f->scale, sqrt(2.0));
      SL_TRY(route_transform(r, &s, FFT_R2C, f->wa, 0));
      r->scaled = 1;
    } else {
      SL_TRY(route_start(r, x, y, f->wa, steps, direct));
    }
    for (int i = 0; i < f->nrun; i++) SL_TRY(route_fft(r, f, lda, f->run0[i], f->runlen[i], FFT_FORWARD, f->wa));
    if (redist) {
      SL_TRY(route_redist(r, f->ab, f->wb));
      if (f->dist_fft) SL_TRY(route_fft(r, f, ldb, f->a, 1, FFT_FORWARD, f->wb));
      if (f->back) SL_TRY(route_redist(r, f->ba, f->wa));
    }
    return route_end(r, y);
  }
  int c2r = f->real;
  SL_TRY(route_start(r, x, c2r ? NULL : y, redist && !f->back ? f->wb : f->wa, steps + c2r, direct));
  if (redist) {
    if (f->back) SL_TRY(route_redist(r, f->ab, f->wb));
    if (f->dist_fft) SL_TRY(route_fft(r, f, ldb, f->a, 1, FFT_BACKWARD, f->wb));
    SL_TRY(route_redist(r, f->ba, f->wa));
  }
  for (int i = 0; i < f->nrun; i++) SL_TRY(route_fft(r, f, lda, f->run0[i], f->runlen[i], FFT_BACKWARD, f->wa));
  if (!c2r) return route_end(r, y);
  if (!has_data(r)) return SL_SUCCESS;
  if (r->ro || r->nxs) { /* complex-to-real overwrites its input: never the caller's x (its chunk or chunks) */
    SL_TRY(copy_all(x, f->wa, 1));
    r->cur = f->wa, r->nxs = 0;
  }
  fft_shape s = shape_of(f, ldd, f->ar, 1, 1, r->scaled ? 1.0 : f->scale, 1.0 / sqrt(2.0));
  starpu_data_handle_t hy = one_chunk(y), dst = hy ? hy : f->xr;
  SL_TRY(codelet_fft_submit(&s, FFT_C2R, r->cur, dst));
  return hy ? SL_SUCCESS : copy_all(y, f->xr, 0);
}

static int fft_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  fft_t *f = op->data;
  route r = {.scr = f->scr};
  int rc = fft_apply_route(f, &r, op, mode, x, y);
  free(r.xs);
  free(r.ys);
  return rc;
}

static const sl_op_ops fft_ops = {fft_apply, NULL, fft_free, NULL};

/* The checks of sl_op_fft (every rank reaches the same verdict: like is agreed, the rest must be). */
int sl_fft_kind_check(const char *fn, const sl_array *like, sl_fft_norm norm, int normpos, int real, int realpos, int last)
{
  SL_CHECK_ARG(norm == SL_FFT_ORTHO || norm == SL_FFT_NONE || norm == SL_FFT_ONE_OVER_N, SL_E_INVALID,
               "%s: argument %d (norm) must be SL_FFT_ORTHO, SL_FFT_NONE or SL_FFT_ONE_OVER_N", fn, normpos);
  sl_dtype dt = sl_array_dtype(like);
  SL_CHECK_ARG(real ? !sl_dtype_is_complex(dt) : sl_dtype_is_complex(dt), SL_E_DTYPE,
               "%s: argument %d (real): %s needs a %s array, argument 2 (like) is %s", fn, realpos,
               real ? "the real variant" : "a complex FFT", real ? "float32 or float64" : "complex64 or complex128",
               sl_dtype_name(dt));
  SL_CHECK_ARG(!real || last != sl_array_axis(like), SL_E_DIST,
               "%s: argument 4 (axes): the real-to-complex axis %d (the last of axes) is the distributed axis of "
               "argument 2 (like); distribute it along another axis", fn, last);
  return SL_SUCCESS;
}

static int fft_check(const char *fn, sl_op **op, const sl_array *like, int naxes, const int *axes, sl_fft_norm norm,
                     int real, int out_axis, int *ax)
{
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  SL_CHECK_ARG(like != NULL, SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  SL_TRY(sl_array_check_session(fn, like, "argument 2 (like)"));
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
  SL_TRY(sl_fft_kind_check(fn, like, norm, 5, real, 6, ax[naxes - 1]));
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
  sl_same same[SL_MAX_DIMS + 5] = {SL_SAME_I("argument 3 (naxes)", naxes), SL_SAME_I("argument 5 (norm)", norm),
                                   SL_SAME_I("argument 6 (real)", real != 0), SL_SAME_I("argument 7 (out_axis)", out_axis),
                                   SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like)};
  for (int i = 0; i < SL_MAX_DIMS; i++) same[5 + i] = SL_SAME_I("argument 4 (axes)", rc == SL_SUCCESS && i < naxes ? ax[i] : -1);
  rc = sl_agree_same(sl_ctx.comm, fn, rc, SL_MAX_DIMS + 5, same);
  if (rc != SL_SUCCESS) return rc;
  fft_t *f = sl_calloc_agreed(sizeof *f, fn, &rc);
  if (!f) return rc;
  int nd = sl_array_ndim(like), a = sl_array_axis(like);
  if (out_axis < 0) out_axis = a;
  /* one rank: every axis is local, and the layouts A and B hold the same block (no all-to-all) */
  int local_a = sl_ctx.size == 1;
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
  /* the local axes in increasing order, then as runs of at most 3 consecutive axes (one plan each: cuFFT
   * plans have rank 1 to 3) */
  for (int i = 1; i < f->nloc; i++)
    for (int j = i; j > 0 && f->loc[j - 1] > f->loc[j]; j--) {
      int t = f->loc[j];
      f->loc[j] = f->loc[j - 1], f->loc[j - 1] = t;
    }
  for (int i = 0; i < f->nloc; i++) {
    if (f->nrun > 0 && f->runlen[f->nrun - 1] < 3 && f->run0[f->nrun - 1] + f->runlen[f->nrun - 1] == f->loc[i])
      f->runlen[f->nrun - 1]++;
    else f->run0[f->nrun] = f->loc[i], f->runlen[f->nrun++] = 1;
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
    if (f->lb && sl_ctx.size > 1) f->wb = sl_buffer(sl_array_local_size(f->lb), cel);
    /* a chunked transform's input and output, each at most the largest of the blocks (complex elements) */
    int64_t most = sl_array_local_size(f->la) > sl_array_local_size(like) ? sl_array_local_size(f->la) : sl_array_local_size(like);
    if (f->lb && sl_array_local_size(f->lb) > most) most = sl_array_local_size(f->lb);
    /* (two blocks of up to 2^32 - 1 elements: only its pointer is used) */
    f->scr = sl_buffer_space(2 * most + (int64_t)(64 / cel), cel); /* the output part starts at a 64-byte boundary */
    /* buffers written in parts (unpacks, in-place transforms) must hold values from the start (wb below) */
    if (f->wa) rc = codelet_vec_submit(SL_VEC_FILL, ct, f->wa, NULL, NULL, zero, zero);
  }
  if (rc == SL_SUCCESS && f->lb && sl_ctx.size > 1) rc = sl_redist_create(&f->ab, f->la, f->lb, fn);
  if (rc == SL_SUCCESS && f->lb && sl_ctx.size > 1) rc = sl_redist_create(&f->ba, f->lb, f->la, fn);
  if (f->b >= 0 && sl_ctx.size > 1) { /* every rank, whatever its rc */
    rc = sl_redist_share(f->ab, f->la, f->lb, rc);
    rc = sl_redist_share(f->ba, f->lb, f->la, rc);
  }
  /* the move to layout B lands each piece in place in a segment laid out as the B block: that segment is the
   * work buffer there, and the move needs no unpack */
  starpu_data_handle_t blk = rc == SL_SUCCESS ? sl_redist_block(f->ab) : NULL;
  if (blk && f->wb) { /* (a segment starts as zeros) */
    starpu_data_unregister_submit(f->wb);
    f->wb = blk;
    f->wb_shared = 1;
  }
  if (rc == SL_SUCCESS && f->wb && !f->wb_shared) rc = codelet_vec_submit(SL_VEC_FILL, ct, f->wb, NULL, NULL, zero, zero);
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
