/* Roll (pylops' Roll, numpy.roll): y[k] = x[(k - shift) mod n] along one axis. Along an axis that is not the
 * distributed one it is a Restriction by the permutation (local); along the distributed one, the two
 * contiguous slabs that change places are each restricted, redistributed to where they land, and added back
 * (two restrictions, two redistributions, their adjoints). */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"

/* y planes [y0, y0 + m) = x planes [x0, x0 + m), along the distributed axis of like: Ry^H Redist Rx */
static int slab(sl_op **out, const sl_array *like, int axis, int64_t x0, int64_t y0, int64_t m)
{
  int64_t *ix = malloc(sizeof *ix * (size_t)m), *iy = malloc(sizeof *iy * (size_t)m);
  int rc = ix && iy ? SL_SUCCESS : sl_error(SL_E_NOMEM, "sl_op_roll: out of memory");
  rc = sl_agree(sl_ctx.comm, rc);
  for (int64_t k = 0; rc == SL_SUCCESS && k < m; k++) ix[k] = x0 + k, iy[k] = y0 + k;
  sl_op *rx = NULL, *ry = NULL, *ryh = NULL, *mv = NULL, *t = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_restriction_axis(&rx, like, ix, m, axis);
  if (rc == SL_SUCCESS) rc = sl_op_restriction_axis(&ry, like, iy, m, axis);
  if (rc == SL_SUCCESS) rc = sl_op_redistribute(&mv, sl_op_range(rx), sl_op_range(ry));
  if (rc == SL_SUCCESS) rc = sl_op_adjoint(&ryh, ry);
  if (rc == SL_SUCCESS) rc = sl_op_product(&t, mv, rx);
  if (rc == SL_SUCCESS) rc = sl_op_product(out, ryh, t);
  sl_op *tmp[5] = {rx, ry, ryh, mv, t};
  for (int i = 0; i < 5; i++) sl_op_destroy(&tmp[i]);
  free(ix);
  free(iy);
  return rc;
}

int sl_op_roll(sl_op **op, const sl_array *like, int axis, int64_t shift)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_roll";
  int rc = SL_SUCCESS;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (!like) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  else if (like->session != sl_session()) rc = sl_array_check_session(fn, like, "argument 2 (like)");
  else if (like->nparts) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is a stacked array; give one of its parts", fn);
  else if (axis < -like->ndim || axis >= like->ndim)
    rc = sl_error(SL_E_INVALID, "%s: argument 3 (axis) is %d, outside the %d axes of argument 2 (like)", fn, axis, like->ndim);
  if (rc == SL_SUCCESS && axis < 0) axis += like->ndim; /* -1 and ndim - 1 agree */
  int64_t n = rc == SL_SUCCESS ? like->dims[axis] : 0, s = n > 0 ? ((shift % n) + n) % n : 0; /* so do shifts n apart */
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 3 (axis)", axis), SL_SAME_I("argument 4 (shift, modulo the axis length)", s)));
  if (s == 0) return sl_op_identity(op, like);
  if (like->partition != SL_SCATTER || like->axis != axis) { /* local: a permutation */
    int64_t *perm = malloc(sizeof *perm * (size_t)n);
    rc = sl_agree(sl_ctx.comm, perm ? SL_SUCCESS : sl_error(SL_E_NOMEM, "%s: out of memory", fn));
    if (rc != SL_SUCCESS) return rc;
    for (int64_t k = 0; k < n; k++) perm[k] = (k - s + n) % n;
    rc = sl_op_restriction_axis(op, like, perm, n, axis);
    free(perm);
    return rc;
  }
  sl_op *a = NULL, *b = NULL;
  rc = slab(&a, like, axis, n - s, 0, s);   /* y[0, s) = x[n - s, n) */
  if (rc == SL_SUCCESS) rc = slab(&b, like, axis, 0, s, n - s); /* y[s, n) = x[0, n - s) */
  if (rc == SL_SUCCESS) rc = sl_op_sum(op, a, b);
  sl_op_destroy(&a);
  sl_op_destroy(&b);
  return rc;
}
