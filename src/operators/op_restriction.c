/* Restriction: a rank's selected elements of its local block (one gather task; the adjoint a zero fill
 * and a scatter-add in the same task). */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"

/* this rank's selected positions */
typedef struct {
  int64_t n;
  sl_kept idx;
} restriction_t;

static void restriction_free(void *p)
{
  restriction_t *c = p;
  sl_kept_free(&c->idx);
  free(c);
}

static int restriction_submit(sl_op *op, sl_op_mode mode, sl_array *y, int nx, const starpu_data_handle_t *hx, int ny,
                              const starpu_data_handle_t *hy)
{
  restriction_t *c = op->data;
  return codelet_select_submit(op->dtype, mode == SL_ADJOINT, c->n, c->idx.h, nx, hx, ny, hy);
}

static int restriction_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  return sl_op_apply_chunked(op, mode, x, y, restriction_submit);
}
static const sl_op_ops restriction_ops = {restriction_apply, NULL, restriction_free, NULL};

int sl_op_restriction(sl_op **op, const sl_array *like, const int64_t *idx, int64_t n)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_restriction";
  int rc = SL_SUCCESS;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (!like) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  else if (like->session != sl_session()) rc = sl_array_check_session(fn, like, "argument 2 (like)");
  else if (like->nparts) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is a stacked array; give one of its parts", fn);
  else if (like->partition != SL_SCATTER || like->group->mask)
    rc = sl_error(SL_E_DIST, "%s: argument 2 (like) must be SL_SCATTER without a mask", fn);
  else if (n < 0 || (n > 0 && !idx)) rc = sl_error(SL_E_INVALID, "%s: argument 4 (n) is %lld%s", fn, (long long)n, n > 0 ? " but argument 3 (idx) is NULL" : "");
  else if (n > (int64_t)UINT32_MAX) rc = sl_error(SL_E_INVALID, "%s: argument 4 (n) is too large", fn);
  for (int64_t k = 0; rc == SL_SUCCESS && k < n; k++)
    if (idx[k] < 0 || idx[k] >= like->nlocal)
      rc = sl_error(SL_E_INVALID, "%s: argument 3 (idx) holds %lld, outside this rank's block of %lld elements", fn,
                    (long long)idx[k], (long long)like->nlocal);
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like)));
  int64_t tot = n;
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &tot, 1, MPI_INT64_T, MPI_SUM, sl_ctx.comm));
  sl_dist rd = sl_dist_default();
  rd.local_n = &n;
  sl_array *rng = NULL;
  rc = sl_layout_create(&rng, 1, &tot, like->dtype, &rd);
  restriction_t *c = calloc(1, sizeof *c);
  if (!c) rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  if (rc == SL_SUCCESS) {
    c->n = n;
    rc = sl_kept_copy(&c->idx, idx, n, sizeof(int64_t));
  }
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "Restriction", like, rng, &restriction_ops, c);
  else if (c) restriction_free(c);
  sl_array_destroy(&rng);
  return sl_op_finish(op, o, rc);
}

/* Restriction along an axis with global indices (pylops' Restriction(dims, iava, axis)): the same gather task
 * on flat positions of the local block, one per element of this rank's output block. */
int sl_op_restriction_axis(sl_op **op, const sl_array *like, const int64_t *iava, int64_t n, int axis)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_restriction_axis";
  int rc = SL_SUCCESS;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (!like) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  else if (like->session != sl_session()) rc = sl_array_check_session(fn, like, "argument 2 (like)");
  else if (like->nparts) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is a stacked array; give one of its parts", fn);
  else if (like->group->mask) rc = sl_error(SL_E_DIST, "%s: argument 2 (like) has a mask; give an array without one", fn);
  else if (axis < -like->ndim || axis >= like->ndim)
    rc = sl_error(SL_E_INVALID, "%s: argument 5 (axis) is %d, outside the %d axes of argument 2 (like)", fn, axis, like->ndim);
  else if (n < 1 || !iava) rc = sl_error(SL_E_INVALID, "%s: argument 4 (n) must be >= 1 with argument 3 (iava) given, got %lld", fn, (long long)n);
  if (rc == SL_SUCCESS && axis < 0) axis += like->ndim;
  int split = rc == SL_SUCCESS && like->partition == SL_SCATTER && like->axis == axis;
  for (int64_t k = 0; rc == SL_SUCCESS && k < n; k++) {
    if (iava[k] < 0 || iava[k] >= like->dims[axis])
      rc = sl_error(SL_E_INVALID, "%s: argument 3 (iava) holds %lld at %lld, outside 0..%lld along axis %d", fn, (long long)iava[k],
                    (long long)k, (long long)like->dims[axis] - 1, axis);
    else if (split && k > 0 && iava[k] <= iava[k - 1])
      rc = sl_error(SL_E_INVALID, "%s: argument 3 (iava) must be increasing along the distributed axis %d (iava[%lld] = %lld "
                    "after %lld), so that the selection stays in rank order", fn, axis, (long long)k, (long long)iava[k],
                    (long long)iava[k - 1]);
  }
  uint64_t digest = rc == SL_SUCCESS ? sl_fnv1a(SL_FNV1A_START, iava, sizeof(int64_t) * (size_t)n) : 0;
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 4 (n)", n), SL_SAME_I("argument 5 (axis)", axis),
                  SL_SAME_I("argument 3 (iava: its values)", digest)));
  /* this rank's selected planes: all n, or those inside its block along the distributed axis */
  int64_t first = 0, cnt = n, off = split ? like->offset : 0, lax = like->ldims[axis];
  if (split) {
    while (first < n && iava[first] < off) first++;
    cnt = 0;
    while (first + cnt < n && iava[first + cnt] < off + lax) cnt++;
  }
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= like->ldims[d];
  for (int d = axis + 1; d < like->ndim; d++) inner *= like->ldims[d];
  int64_t m = 0, dims[SL_MAX_DIMS];
  memcpy(dims, like->dims, sizeof dims);
  dims[axis] = n;
  /* the rank's range block: one StarPU vector (fewer than 2^32 elements), checked before its index table */
  if (__builtin_mul_overflow(outer, cnt, &m) || __builtin_mul_overflow(m, inner, &m) || m >= (int64_t)UINT32_MAX)
    rc = sl_error(SL_E_DIMS, "%s: argument 4 (n = %lld): the selection gives this rank a block of more than 2^32 - 1 elements "
                  "(StarPU 1.3's limit): use more ranks or fewer repeats", fn, (long long)n);
  int64_t *idx = rc == SL_SUCCESS ? malloc(sizeof *idx * (size_t)(m ? m : 1)) : NULL;
  restriction_t *c = rc == SL_SUCCESS ? calloc(1, sizeof *c) : NULL;
  if (rc == SL_SUCCESS && (!idx || !c)) rc = sl_error(SL_E_NOMEM, "%s: out of memory for %lld indices", fn, (long long)m);
  for (int64_t o = 0; rc == SL_SUCCESS && o < outer; o++)
    for (int64_t k = 0; k < cnt; k++)
      for (int64_t i = 0; i < inner; i++) idx[(o * cnt + k) * inner + i] = (o * lax + (iava[first + k] - off)) * inner + i;
  sl_dist rd = {.partition = like->partition, .axis = like->axis};
  int64_t rl = split ? cnt : like->ldims[like->axis];
  if (like->partition == SL_SCATTER) rd.local_n = &rl;
  sl_array *rng = NULL;
  rc = sl_agree(sl_ctx.comm, rc); /* the layout below is collective */
  if (rc == SL_SUCCESS) rc = sl_layout_create(&rng, like->ndim, dims, like->dtype, &rd);
  if (rc == SL_SUCCESS) {
    c->n = m;
    rc = sl_kept_copy(&c->idx, idx, m, sizeof(int64_t));
  }
  free(idx);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "Restriction", like, rng, &restriction_ops, c);
  else if (c) restriction_free(c);
  sl_array_destroy(&rng);
  return sl_op_finish(op, o, rc);
}
