/* Patch2D with a dense matrix per patch (pylops' Patch2D with any operator on a patch: a Radon transform, a
 * learned dictionary, any (nwin0 nwin1) x (nop0 nop1) matrix): patches of nwin0 x nwin1 samples overlapping by
 * (nover0, nover1) over two axes (the first may be the distributed axis, op_window_split.c; another distributed
 * patch axis is moved: the patches local in a layout split along another axis, then the move back), pylops' 2-D tapers (the outer product of
 * the 1-D ones, edge patches keeping their edges). The model's layout is the separable Patch2D's, each patch
 * axis replaced by (nwins, nop), so that M = kron(M0, M1) gives sl_op_patch2d's operator. Away from the
 * distributed axis every patch is local: one task per rank per apply (kernel_patch.h: a GEMM per outer index on the CPU, one cuBLAS GEMM
 * over all of a rank's patches on the GPU, in a work space of (nwin0 nwin1 + nop0 nop1) elements per patch),
 * no communication. The operator's object is the windowed operators' (op_windowed.c). M = NULL (nop = nwin on both
 * axes) is the identity: the model holds the patches themselves, for any operator that produces them (a 2-D FFT
 * over the patch axes, say) to compose with; the kernels then add the tapered patches straight into the data. */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"

int sl_op_patch2d_dense(sl_op **op, const sl_array *like, const int axes[2], const void *M, int64_t nop0, int64_t nop1,
                        int64_t nwin0, int64_t nover0, int64_t nwin1, int64_t nover1, sl_taper taper)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_patch2d_dense";
  int rc = SL_SUCCESS, a0 = 0, a1 = 0;
  if (op) *op = NULL;
  const int64_t nwin[2] = {nwin0, nwin1}, nover[2] = {nover0, nover1};
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else rc = sl_patch_check(fn, like, axes, nwin, nover, taper, &a0, &a1);
  if (rc == SL_SUCCESS) {
    if (like->group->mask) rc = sl_error(SL_E_DIST, "%s: argument 2 (like) has a mask", fn);
    else if (like->ndim + 2 > SL_MAX_DIMS) rc = sl_error(SL_E_DIMS, "%s: the model would have more than %d axes", fn, SL_MAX_DIMS);
    else if (nop0 < 1 || nop1 < 1)
      rc = sl_error(SL_E_INVALID, "%s: arguments 5-6 (nop0 = %lld, nop1 = %lld) must be >= 1", fn, (long long)nop0, (long long)nop1);
    else if (nop0 > INT64_MAX / 16 / nop1 || nwin0 * nwin1 > INT64_MAX / 16 / (nop0 * nop1))
      rc = sl_error(SL_E_DIMS, "%s: arguments 5-6 (nop0 = %lld, nop1 = %lld): M's (nwin0 nwin1) x (nop0 nop1) elements "
                    "overflow", fn, (long long)nop0, (long long)nop1);
    else if (!M && (nop0 != nwin0 || nop1 != nwin1))
      rc = sl_error(SL_E_INVALID, "%s: argument 4 (M) is NULL (the identity: the model holds the patches) but arguments 5-6 "
                    "(nop0 = %lld, nop1 = %lld) are not the patch's (%lld, %lld)", fn, (long long)nop0, (long long)nop1,
                    (long long)nwin0, (long long)nwin1);
  }
  int dist = rc == SL_SUCCESS && like->partition == SL_SCATTER && like->group->size > 1 && (like->axis == a0 || like->axis == a1);
  int64_t rows = nwin0 * nwin1, cols = nop0 * nop1, nmat = M ? rows * cols : 0; /* M's elements in the tables */
  int64_t bad = rc == SL_SUCCESS && M ? sl_first_nonfinite(M, rows * cols, like->dtype) : -1;
  if (bad >= 0) rc = sl_error(SL_E_INVALID, "%s: argument 4 (M) holds a non-finite value at %lld", fn, (long long)bad);
  uint64_t digest = rc == SL_SUCCESS && M ? sl_fnv1a(SL_FNV1A_START, M, (size_t)(rows * cols) * like->elsize) : 0;
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 3 (axes[0])", a0), SL_SAME_I("argument 3 (axes[1])", a1),
                  SL_SAME_I("argument 5 (nop0)", nop0), SL_SAME_I("argument 6 (nop1)", nop1),
                  SL_SAME_I("argument 7 (nwin0)", nwin0), SL_SAME_I("argument 8 (nover0)", nover0),
                  SL_SAME_I("argument 9 (nwin1)", nwin1), SL_SAME_I("argument 10 (nover1)", nover1),
                  SL_SAME_I("argument 11 (taper)", taper), SL_SAME_I("argument 4 (M: given or NULL)", M != NULL),
                  SL_SAME_I("argument 4 (M: its values)", digest)));
  if (sl_patch_moved(like, a0, a1)) { /* patches local in a layout split along another axis, then moved back */
    sl_array *loc = NULL;
    sl_op *inner = NULL;
    const int skip[2] = {a0, a1};
    rc = sl_layout_moved(&loc, like, skip, 2);
    if (rc == SL_SUCCESS) rc = sl_op_patch2d_dense(&inner, loc, axes, M, nop0, nop1, nwin0, nover0, nwin1, nover1, taper);
    if (rc == SL_SUCCESS) rc = sl_window_wrap(op, inner, loc, like, "Patch2D");
    sl_array_destroy(&loc);
    return rc;
  }
  /* the kernel's axes in array order: lo before hi; M's rows and columns follow the caller's axes order */
  int swap = a0 > a1, lo = swap ? a1 : a0, hi = swap ? a0 : a1;
  int64_t kw[2], ko[2], ks[2], knw[2];
  for (int k = 0; k < 2; k++) {
    int a = swap ? 1 - k : k; /* the caller's patch axis that is the kernel's axis k */
    kw[k] = nwin[a];
    ko[k] = a ? nop1 : nop0;
    ks[k] = nwin[a] - nover[a];
    knw[k] = (like->dims[k ? hi : lo] - nwin[a]) / ks[k] + 1;
  }
  int64_t mdims[SL_MAX_DIMS];
  for (int d = 0, e = 0; d < like->ndim; d++) {
    if (d == lo || d == hi) {
      int k = d == hi;
      mdims[e++] = knw[k];
      mdims[e++] = ko[k];
    } else {
      mdims[e++] = like->dims[d];
    }
  }
  sl_dist md = {.partition = like->partition, .axis = like->axis + (like->axis > lo) + (like->axis > hi)};
  int64_t ln = like->ldims[like->axis];
  if (like->axis == lo || like->axis == hi) ln = knw[like->axis == hi]; /* one rank holding the axis: every patch */
  sl_window_split split = {0};
  if (dist) { /* the patches that start in this rank's rows */
    sl_window_split_init(&split, like, kw[0], ks[0], knw[0]);
    ln = split.ln;
  }
  if (like->partition == SL_SCATTER) md.local_n = &ln;
  sl_array *model = NULL;
  rc = sl_layout_create(&model, like->ndim + 2, mdims, like->dtype, &md);
  sl_windowed *c = calloc(1, sizeof *c);
  size_t el = like->elsize;
  int64_t ntab = nmat + knw[0] * kw[0] + knw[1] * kw[1];
  char *tab = malloc((size_t)ntab * el);
  double *tp = malloc(sizeof *tp * (size_t)(knw[0] * kw[0] + knw[1] * kw[1]));
  if (rc == SL_SUCCESS && (!c || !tab || !tp)) rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  if (rc == SL_SUCCESS) {
    c->d = (sl_patch_dims){1, like->ldims[lo], 1, like->ldims[hi], 1, knw[0], ko[0], kw[0], ks[0], knw[1], ko[1], kw[1], ks[1], 0, 0, knw[0], M == NULL, 0};
    for (int d = 0; d < like->ndim; d++) {
      if (d < lo) c->d.A *= like->ldims[d];
      else if (d > lo && d < hi) c->d.B *= like->ldims[d];
      else if (d > hi) c->d.C *= like->ldims[d];
    }
    c->da = c->d;
    c->split = split;
    if (dist) sl_window_split_dims(&c->split, &c->d, &c->da, ko[0] * c->d.B * knw[1] * ko[1] * c->d.C, c->d.B * c->d.n1 * c->d.C, el);
    /* M in the kernel's order: row (q_lo, q_hi), column (j_lo, j_hi) */
    for (int64_t q0 = 0; M && q0 < kw[0]; q0++)
      for (int64_t q1 = 0; q1 < kw[1]; q1++)
        for (int64_t j0 = 0; j0 < ko[0]; j0++)
          for (int64_t j1 = 0; j1 < ko[1]; j1++) {
            int64_t row = swap ? q1 * kw[0] + q0 : q0 * kw[1] + q1, col = swap ? j1 * ko[0] + j0 : j0 * ko[1] + j1;
            memcpy(tab + (size_t)((q0 * kw[1] + q1) * cols + j0 * ko[1] + j1) * el,
                   (const char *)M + (size_t)(row * cols + col) * el, el);
          }
    sl_window_tapers(tp, knw[0], kw[0], swap ? nover1 : nover0, taper);
    sl_window_tapers(tp + knw[0] * kw[0], knw[1], kw[1], swap ? nover0 : nover1, taper);
    sl_store_real(tab, nmat, tp, knw[0] * kw[0] + knw[1] * kw[1], like->dtype);
    rc = sl_kept_copy(&c->tables, tab, ntab, el);
    if (rc == SL_SUCCESS) rc = sl_windowed_scratch(c, fn, el);
  }
  free(tab);
  free(tp);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "Patch2D", model, like, &sl_windowed_ops, c);
  else sl_windowed_free(c);
  sl_array_destroy(&model);
  return sl_op_finish(op, o, rc);
}
