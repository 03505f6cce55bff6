/* Redistribution as an operator: a permutation of the elements among the ranks (forward: from one layout
 * to the other; adjoint: back, its inverse), each direction one plan made at construction. */
#include <stdlib.h>

#include "operators/op_internal.h"

typedef struct {
  sl_redist *fwd, *adj;
} redist_op;

static void redist_free(void *p)
{
  redist_op *r = p;
  sl_redist_destroy(r->fwd);
  sl_redist_destroy(r->adj);
  free(r);
}

static int redist_fn(sl_op *op, sl_op_mode mode, sl_array *y, int nx, const starpu_data_handle_t *hx, int ny,
                     const starpu_data_handle_t *hy)
{
  redist_op *r = op->data;
  return sl_redist_submit(mode == SL_FORWARD ? r->fwd : r->adj, nx, hx, ny, hy);
}

static int redist_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  return sl_op_apply_chunked(op, mode, x, y, redist_fn);
}
static const sl_op_ops redist_ops = {redist_apply, NULL, redist_free, NULL};

int sl_op_redistribute(sl_op **op, const sl_array *from_like, const sl_array *to_like)
{
  const char *fn = "sl_op_redistribute";
  SL_CHECK_INIT();
  int rc = SL_SUCCESS;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (!from_like || !to_like)
    rc = sl_error(SL_E_INVALID, "%s: argument %d (%s) is NULL", fn, from_like ? 3 : 2, from_like ? "to_like" : "from_like");
  else if (from_like->session != sl_session()) rc = sl_array_check_session(fn, from_like, "argument 2 (from_like)");
  else if (to_like->session != sl_session()) rc = sl_array_check_session(fn, to_like, "argument 3 (to_like)");
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (from_like: its layout)", rc, from_like),
                  SL_SAME_LAYOUT("argument 3 (to_like: its layout)", rc, to_like)));
  redist_op *r = rc == SL_SUCCESS ? calloc(1, sizeof *r) : NULL;
  if (rc == SL_SUCCESS && !r) rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  if (rc == SL_SUCCESS) rc = sl_redist_create(&r->fwd, from_like, to_like, fn);
  if (rc == SL_SUCCESS) rc = sl_redist_create(&r->adj, to_like, from_like, fn);
  rc = sl_redist_share(r ? r->fwd : NULL, from_like, to_like, rc); /* every rank, whatever its rc */
  rc = sl_redist_share(r ? r->adj : NULL, to_like, from_like, rc);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "Redistribute", from_like, to_like, &redist_ops, r);
  else if (r) redist_free(r);
  return sl_op_finish(op, o, rc);
}
