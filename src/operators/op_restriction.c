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
static const sl_op_ops restriction_ops = {restriction_apply, NULL, restriction_free};

int sl_op_restriction(sl_op **op, const sl_array *like, const int64_t *idx, int64_t n)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_restriction";
  int rc = SL_SUCCESS;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (!like) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  else if (like->partition != SL_SCATTER || like->group->mask)
    rc = sl_error(SL_E_DIST, "%s: argument 2 (like) must be SL_SCATTER without a mask", fn);
  else if (n < 0 || (n > 0 && !idx)) rc = sl_error(SL_E_INVALID, "%s: argument 4 (n) is %lld%s", fn, (long long)n, n > 0 ? " but argument 3 (idx) is NULL" : "");
  else if (n > (int64_t)UINT32_MAX) rc = sl_error(SL_E_INVALID, "%s: argument 4 (n) is too large", fn);
  for (int64_t k = 0; rc == SL_SUCCESS && k < n; k++)
    if (idx[k] < 0 || idx[k] >= like->nlocal)
      rc = sl_error(SL_E_INVALID, "%s: argument 3 (idx) holds %lld, outside this rank's block of %lld elements", fn,
                    (long long)idx[k], (long long)like->nlocal);
  SL_TRY(sl_agree(sl_ctx.comm, rc));
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
