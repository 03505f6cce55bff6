/* Sliding1D (pylops' Sliding1D with one dense matrix for every window): windows of nwin samples overlapping by
 * nover along an axis; the model holds, for every window, nm coefficients (the axis replaced by (nwins,
 * nm)). The tapers are pylops' (hanning, cosine, cosinesquare or none; the first window keeps its start, the
 * last its end).
 * Every window is a patch of nwin x 1 samples for the patch kernels (kernel_patch.h: BLAS or cuBLAS GEMMs).
 * Along an axis that is not the distributed one every window is local: one task per rank, no communication.
 * Along the distributed axis (the first axis) a rank owns the windows that start in its rows, and the model is
 * split that way, with ghost layers between ranks (op_window_split.c); along a distributed axis that is not the
 * first, the windows are local in the data's layout moved along another axis, followed by the move back. The operator's object is the windowed
 * operators' (op_windowed.c). M = NULL (nm = nwin) is the identity: the model holds the windows themselves, so
 * that any operator producing them (an FFT along the window axis, say) composes with it into pylops' Sliding1D
 * of that operator; the kernels then add the tapered windows straight into the data. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"

/* pylops' taper(nmask, ntap, tapertype): ramps of ntap samples at both ends, ones between */
static void taper(double *t, int64_t nmask, int64_t ntap, sl_taper kind)
{
  for (int64_t k = 0; k < nmask; k++) t[k] = 1.0;
  if (kind == SL_TAPER_NONE) return;
  if (kind != SL_TAPER_HANNING && ntap == 1) ntap = 0;
  int64_t m = 2 * ntap - 1;
  for (int64_t k = 0; k < ntap && m >= 1; k++) {
    double v;
    if (kind == SL_TAPER_HANNING) v = m == 1 ? 1.0 : 0.5 - 0.5 * cos(2.0 * M_PI * (double)k / (double)(m - 1));
    else {
      double h = (double)(2 * ntap - 2) / 2.0;
      v = 0.5 * (cos(((double)k - h) * M_PI / h) + 1.0);
      if (kind == SL_TAPER_COSINESQUARE) v *= v;
    }
    t[k] = t[nmask - 1 - k] = v;
  }
}

void sl_window_tapers(double *T, int64_t nwins, int64_t nwin, int64_t nover, sl_taper kind)
{
  taper(T, nwin, nover, kind);
  for (int64_t w = nwins - 1; w >= 0; w--)
    for (int64_t q = 0; q < nwin; q++) {
      double v = T[q];
      if (w == 0 && q < nover) v = 1.0;                /* the first window keeps its start */
      if (w == nwins - 1 && q >= nwin - nover) v = 1.0; /* the last its end */
      T[w * nwin + q] = v;
    }
}

void sl_store_real(void *dst, int64_t k0, const double *v, int64_t n, sl_dtype dt)
{
  int cplx = sl_dtype_is_complex(dt), single = dt == SL_FLOAT32 || dt == SL_COMPLEX64;
  for (int64_t i = 0; i < n; i++) {
    int64_t k = (k0 + i) * (cplx ? 2 : 1);
    if (single) ((float *)dst)[k] = (float)v[i];
    else ((double *)dst)[k] = v[i];
    if (cplx && single) ((float *)dst)[k + 1] = 0;
    if (cplx && !single) ((double *)dst)[k + 1] = 0;
  }
}

int sl_op_sliding1d(sl_op **op, const sl_array *like, int axis, const void *M, int64_t nm, int64_t nwin, int64_t nover,
                    sl_taper kind)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_sliding1d";
  int rc = SL_SUCCESS;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (!like) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like, the data) is NULL", fn);
  else if (like->session != sl_session()) rc = sl_array_check_session(fn, like, "argument 2 (like, the data)");
  else if (like->nparts) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is a stacked array", fn);
  else if (like->group->mask) rc = sl_error(SL_E_DIST, "%s: argument 2 (like) has a mask", fn);
  else if (like->ndim + 1 > SL_MAX_DIMS) rc = sl_error(SL_E_DIMS, "%s: the model would have more than %d axes", fn, SL_MAX_DIMS);
  else if (axis < -like->ndim || axis >= like->ndim)
    rc = sl_error(SL_E_INVALID, "%s: argument 3 (axis) is %d, outside the %d axes of argument 2 (like)", fn, axis, like->ndim);
  else if (nm < 1) rc = sl_error(SL_E_INVALID, "%s: argument 5 (nm = %lld) must be >= 1", fn, (long long)nm);
  else if (kind < SL_TAPER_NONE || kind > SL_TAPER_COSINESQUARE) rc = sl_error(SL_E_INVALID, "%s: argument 8 (taper) is invalid (%d)", fn, (int)kind);
  if (rc == SL_SUCCESS && axis < 0) axis += like->ndim;
  int64_t n = rc == SL_SUCCESS ? like->dims[axis] : 0;
  if (rc == SL_SUCCESS && (nwin < 1 || nwin > n || nover < 0 || nover >= nwin))
    rc = sl_error(SL_E_INVALID, "%s: arguments 6-7 (nwin %lld, nover %lld) must satisfy 1 <= nwin <= %lld (the axis) and 0 <= "
                  "nover < nwin", fn, (long long)nwin, (long long)nover, (long long)n);
  if (rc == SL_SUCCESS && nm > INT64_MAX / 16 / nwin)
    rc = sl_error(SL_E_DIMS, "%s: arguments 5-6 (nm = %lld, nwin = %lld): M's nwin x nm elements overflow", fn, (long long)nm,
                  (long long)nwin);
  if (rc == SL_SUCCESS && !M && nm != nwin)
    rc = sl_error(SL_E_INVALID, "%s: argument 4 (M) is NULL (the identity: the model holds the windows) but argument 5 (nm = "
                  "%lld) is not nwin = %lld", fn, (long long)nm, (long long)nwin);
  if (rc == SL_SUCCESS && kind != SL_TAPER_NONE && nover > 0 && nwin / nover < 2) /* pylops' tapers span nover a side */
    rc = sl_error(SL_E_INVALID, "%s: argument 7 (nover = %lld) must be at most nwin / 2 = %lld with a taper (argument 8)", fn,
                  (long long)nover, (long long)(nwin / 2));
  int dist = rc == SL_SUCCESS && like->partition == SL_SCATTER && like->axis == axis && like->group->size > 1, notfirst = 0;
  for (int d = 0; dist && d < axis; d++) notfirst |= like->dims[d] != 1;
  int64_t bad = rc == SL_SUCCESS && M ? sl_first_nonfinite(M, nwin * nm, like->dtype) : -1;
  if (bad >= 0) rc = sl_error(SL_E_INVALID, "%s: argument 4 (M) holds a non-finite value at %lld", fn, (long long)bad);
  uint64_t digest = rc == SL_SUCCESS && M ? sl_fnv1a(SL_FNV1A_START, M, (size_t)(nwin * nm) * like->elsize) : 0;
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 3 (axis)", axis), SL_SAME_I("argument 5 (nm)", nm), SL_SAME_I("argument 6 (nwin)", nwin),
                  SL_SAME_I("argument 7 (nover)", nover), SL_SAME_I("argument 8 (taper)", kind),
                  SL_SAME_I("argument 4 (M: given or NULL)", M != NULL), SL_SAME_I("argument 4 (M: its values)", digest)));
  const int64_t nmat = M ? nwin * nm : 0; /* M's elements in the tables (none for the identity) */
  if (notfirst) { /* the distributed axis is not the first: windows local in a layout split along another axis */
    sl_array *loc = NULL;
    sl_op *inner = NULL;
    rc = sl_layout_moved(&loc, like, &axis, 1);
    if (rc == SL_SUCCESS) rc = sl_op_sliding1d(&inner, loc, axis, M, nm, nwin, nover, kind);
    if (rc == SL_SUCCESS) rc = sl_window_wrap(op, inner, loc, like, "Sliding1D");
    sl_array_destroy(&loc);
    return rc;
  }
  int64_t step = nwin - nover, nwins = (n - nwin) / step + 1;
  /* the model: the axis replaced by (nwins, nm), distributed as the data */
  int64_t mdims[SL_MAX_DIMS];
  for (int d = 0, e = 0; d < like->ndim; d++) {
    if (d == axis) {
      mdims[e++] = nwins;
      mdims[e++] = nm;
    } else {
      mdims[e++] = like->dims[d];
    }
  }
  sl_dist md = {.partition = like->partition, .axis = like->axis > axis ? like->axis + 1 : like->axis};
  int64_t ln = like->ldims[like->axis];
  if (like->axis == axis) ln = nwins; /* one rank holding the whole axis: it holds every window */
  sl_window_split split = {0};
  if (dist) { /* the windows that start in this rank's rows */
    sl_window_split_init(&split, like, nwin, step, nwins);
    ln = split.ln;
  }
  if (like->partition == SL_SCATTER) md.local_n = &ln;
  sl_array *model = NULL;
  rc = sl_layout_create(&model, like->ndim + 1, mdims, like->dtype, &md);
  sl_windowed *c = calloc(1, sizeof *c);
  size_t el = like->elsize;
  char *tab = malloc((size_t)(nmat + nwins * nwin + 1) * el);
  double *tp = malloc(sizeof *tp * (size_t)(nwins * nwin));
  if (rc == SL_SUCCESS && (!c || !tab || !tp)) rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  if (rc == SL_SUCCESS) {
    int64_t outer = 1, in_ = 1;
    for (int d = 0; d < axis; d++) outer *= like->ldims[d];
    for (int d = axis + 1; d < like->ndim; d++) in_ *= like->ldims[d];
    /* data (outer, n, inner) and model (outer, nwins, nm, inner): patches of nwin x 1 */
    c->d = (sl_patch_dims){outer, n, 1, 1, in_, nwins, nm, nwin, step, 1, 1, 1, 1, 0, 0, nwins, M == NULL, 0};
    c->da = c->d;
    c->split = split;
    if (dist) sl_window_split_dims(&c->split, &c->d, &c->da, nm * in_, in_, el);
    if (M) memcpy(tab, M, (size_t)nmat * el);
    sl_window_tapers(tp, nwins, nwin, nover, kind);
    sl_store_real(tab, nmat, tp, nwins * nwin, like->dtype);
    const double one = 1; /* the taper of the patch kernels' second axis */
    sl_store_real(tab, nmat + nwins * nwin, &one, 1, like->dtype);
    rc = sl_kept_copy(&c->tables, tab, nmat + nwins * nwin + 1, el);
    if (rc == SL_SUCCESS) rc = sl_windowed_scratch(c, fn, el);
  }
  free(tab);
  free(tp);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "Sliding1D", model, like, &sl_windowed_ops, c);
  else sl_windowed_free(c);
  sl_array_destroy(&model);
  return sl_op_finish(op, o, rc);
}
