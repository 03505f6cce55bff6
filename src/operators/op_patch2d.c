/* Patch2D (pylops' Patch2D with a separable operator on every patch): patches of nwin0 x nwin1 samples
 * overlapping by (nover0, nover1) over two axes (one of them may be the distributed axis when it is the
 * first: its Sliding1D exchanges ghost windows and rows, op_sliding.c; else the patches are local in the
 * data's layout moved along another axis, followed by the move back), the operator on each
 * patch the Kronecker product M0 (x) M1 of two dense matrices, pylops' 2-D tapers (the outer product of
 * the 1-D tapers, edge patches keeping their edges). Built as the product of two Sliding1D operators: along
 * axis1 from the model to an intermediate array, then along axis0 to the data; on a patch that product is
 * exactly (T0 (x) T1)(M0 (x) M1). pylops' Sliding2D is the case of one window along the second axis. */
#include <stdio.h>

#include "operators/op_internal.h"

int sl_patch_check(const char *fn, const sl_array *like, const int axes[2], const int64_t nwin[2], const int64_t nover[2],
                   sl_taper taper, int *a0, int *a1)
{
  int rc = SL_SUCCESS;
  *a0 = *a1 = 0;
  if (!like) return sl_error(SL_E_INVALID, "%s: argument 2 (like, the data) is NULL", fn);
  SL_TRY(sl_array_check_session(fn, like, "argument 2 (like, the data)"));
  if (!axes) return sl_error(SL_E_INVALID, "%s: argument 3 (axes) is NULL", fn);
  if (like->nparts) return sl_error(SL_E_INVALID, "%s: argument 2 (like) is a stacked array", fn);
  if (taper < SL_TAPER_NONE || taper > SL_TAPER_COSINESQUARE) return sl_error(SL_E_INVALID, "%s: the taper is invalid (%d)", fn, (int)taper);
  *a0 = axes[0] < 0 ? axes[0] + like->ndim : axes[0];
  *a1 = axes[1] < 0 ? axes[1] + like->ndim : axes[1];
  if (*a0 < 0 || *a0 >= like->ndim || *a1 < 0 || *a1 >= like->ndim || *a0 == *a1)
    return sl_error(SL_E_INVALID, "%s: argument 3 (axes = %d, %d) must be two different axes of the %d of argument 2 (like)",
                    fn, axes[0], axes[1], like->ndim);
  for (int a = 0; a < 2 && rc == SL_SUCCESS; a++) {
    int ax = a ? *a1 : *a0;
    int64_t n = like->dims[ax];
    if (nwin[a] < 1 || nwin[a] > n || nover[a] < 0 || nover[a] >= nwin[a])
      rc = sl_error(SL_E_INVALID, "%s: nwin%d = %lld and nover%d = %lld must satisfy 1 <= nwin%d <= %lld (axis %d) and 0 <= "
                    "nover%d < nwin%d", fn, a, (long long)nwin[a], a, (long long)nover[a], a, (long long)n, ax, a, a);
    else if (like->partition == SL_SCATTER && like->axis == ax && like->group->size > 1 && like->group->mask)
      rc = sl_error(SL_E_DIST, "%s: argument 3 (axes[%d] = %d) is the distributed axis of argument 2 (like), which has a "
                    "mask", fn, a, ax);
  }
  /* pylops keeps an edge patch's edge at the taper's middle value, which is 1 when the ramps do not meet */
  if (rc == SL_SUCCESS && taper != SL_TAPER_NONE && (2 * nover[0] > nwin[0] || 2 * nover[1] > nwin[1]))
    rc = sl_error(SL_E_INVALID, "%s: nover0 = %lld and nover1 = %lld must be at most half the patches (%lld, %lld) with a "
                  "taper", fn, (long long)nover[0], (long long)nover[1], (long long)nwin[0], (long long)nwin[1]);
  return rc;
}

int sl_patch_moved(const sl_array *like, int a0, int a1)
{
  int lo = a0 < a1 ? a0 : a1, notfirst = 0;
  if (like->partition != SL_SCATTER || like->group->size == 1 || (like->axis != a0 && like->axis != a1)) return 0;
  for (int d = 0; d < like->axis; d++) notfirst |= like->dims[d] != 1;
  return notfirst || like->axis != lo;
}

/* An error of the Sliding1D along axes[a] (agreed there) restated with Patch2D's arguments for that axis. */
static int along_error(const char *fn, int a, int rc)
{
  if (rc == SL_SUCCESS) return rc;
  char was[400];
  snprintf(was, sizeof was, "%s", sl_last_error());
  return sl_error(rc, "%s: along axes[%d] (arguments %d-%d: M%d, nop%d, nwin%d, nover%d), the windows refuse: %s", fn, a, a ? 8 : 4,
                  a ? 11 : 7, a, a, a, a, was);
}

int sl_op_patch2d(sl_op **op, const sl_array *like, const int axes[2], const void *M0, int64_t nop0, int64_t nwin0,
                  int64_t nover0, const void *M1, int64_t nop1, int64_t nwin1, int64_t nover1, sl_taper taper)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_patch2d";
  int rc = SL_SUCCESS, a0 = 0, a1 = 0;
  if (op) *op = NULL;
  const int64_t nwin[2] = {nwin0, nwin1}, nover[2] = {nover0, nover1}, nop[2] = {nop0, nop1};
  const void *M[2] = {M0, M1};
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else rc = sl_patch_check(fn, like, axes, nwin, nover, taper, &a0, &a1);
  for (int a = 0; a < 2 && rc == SL_SUCCESS; a++)
    if (!M[a] || nop[a] < 1)
      rc = sl_error(SL_E_INVALID, "%s: argument %d (M%d) must be given with nop%d >= 1 (nop%d %lld)", fn, a ? 8 : 4, a, a, a,
                    (long long)nop[a]);
  /* agreed here so that every rank fails at the same point; the two Sliding1D constructors agree the rest */
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 3 (axes[0])", a0), SL_SAME_I("argument 3 (axes[1])", a1)));
  if (sl_patch_moved(like, a0, a1)) { /* patches local in a layout split along another axis, then moved back */
    sl_array *loc = NULL;
    sl_op *inner = NULL;
    const int skip[2] = {a0, a1};
    rc = sl_layout_moved(&loc, like, skip, 2);
    if (rc == SL_SUCCESS) rc = sl_op_patch2d(&inner, loc, axes, M0, nop0, nwin0, nover0, M1, nop1, nwin1, nover1, taper);
    if (rc == SL_SUCCESS) rc = sl_window_wrap(op, inner, loc, like, "Patch2D");
    sl_array_destroy(&loc);
    return rc;
  }
  sl_op *s0 = NULL, *s1 = NULL, *p = NULL;
  rc = along_error(fn, 0, sl_op_sliding1d(&s0, like, a0, M0, nop0, nwin0, nover0, taper));
  /* in the intermediate array axis0 is (nwins0, nop0): axis1 moves one place when it comes after */
  if (rc == SL_SUCCESS) rc = along_error(fn, 1, sl_op_sliding1d(&s1, sl_op_domain(s0), a1 + (a1 > a0), M1, nop1, nwin1, nover1, taper));
  if (rc == SL_SUCCESS) rc = sl_op_product(&p, s0, s1);
  sl_op_destroy(&s0);
  sl_op_destroy(&s1);
  if (rc == SL_SUCCESS) snprintf(p->name, sizeof p->name, "Patch2D");
  return sl_op_finish(op, p, rc); /* the product's local allocations: one verdict for every rank */
}
