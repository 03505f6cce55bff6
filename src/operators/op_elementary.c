/* Identity, Zero and Diagonal: element-wise tasks on the local blocks (CPU and CUDA codelets of the vector
 * operations), no communication. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"

static int identity_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y) { return sl_array_copy(y, x); }
static const sl_op_ops identity_ops = {identity_apply, NULL, NULL, NULL};

int sl_op_identity(sl_op **op, const sl_array *like)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_identity: argument 1 (op) is NULL");
  SL_CHECK_ARG(like != NULL, SL_E_INVALID, "sl_op_identity: argument 2 (like) is NULL");
  SL_TRY(sl_array_check_session("sl_op_identity", like, "argument 2 (like)"));
  return sl_op_new(op, "Identity", like, like, &identity_ops, NULL);
}

static int zero_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y) { return sl_array_fill(y, SL_REAL(0.0)); }
static const sl_op_ops zero_ops = {zero_apply, NULL, NULL, NULL};

int sl_op_zero(sl_op **op, const sl_array *domain_like, const sl_array *range_like)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_zero: argument 1 (op) is NULL");
  SL_CHECK_ARG(domain_like != NULL, SL_E_INVALID, "sl_op_zero: argument 2 (domain_like) is NULL");
  SL_CHECK_ARG(range_like != NULL, SL_E_INVALID, "sl_op_zero: argument 3 (range_like) is NULL");
  SL_TRY(sl_array_check_session("sl_op_zero", domain_like, "argument 2 (domain_like)"));
  SL_TRY(sl_array_check_session("sl_op_zero", range_like, "argument 3 (range_like)"));
  SL_CHECK_ARG(sl_array_dtype(domain_like) == sl_array_dtype(range_like), SL_E_DTYPE,
               "sl_op_zero: arguments 2 (domain_like) and 3 (range_like) differ in dtype (%s, %s)",
               sl_dtype_name(sl_array_dtype(domain_like)), sl_dtype_name(sl_array_dtype(range_like)));
  return sl_op_new(op, "Zero", domain_like, range_like, &zero_ops, NULL);
}

/* d and its conjugate (the adjoint's factor) */
typedef struct {
  sl_array *d, *dconj;
} diagonal_t;

static void diagonal_free(void *p)
{
  diagonal_t *c = p;
  sl_array_destroy(&c->d);
  sl_array_destroy(&c->dconj);
  free(c);
}

static int diagonal_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  diagonal_t *c = op->data;
  return sl_array_multiply(y, mode == SL_FORWARD ? c->d : c->dconj, x);
}
static const sl_op_ops diagonal_ops = {diagonal_apply, NULL, diagonal_free, NULL};

int sl_op_diagonal(sl_op **op, const sl_array *d)
{
  SL_CHECK_INIT();
  /* a NULL on one rank fails every rank before the collective copies */
  int rc = SL_SUCCESS;
  if (!op) rc = sl_error(SL_E_INVALID, "sl_op_diagonal: argument 1 (op) is NULL");
  else if (!d) rc = sl_error(SL_E_INVALID, "sl_op_diagonal: argument 2 (d) is NULL");
  else if (d->session != sl_session()) rc = sl_array_check_session("sl_op_diagonal", d, "argument 2 (d)");
  SL_TRY(sl_agree(sl_ctx.comm, rc));
  diagonal_t *c = sl_calloc_agreed(sizeof *c, "sl_op_diagonal", &rc);
  if (rc == SL_SUCCESS) rc = sl_array_create_like(&c->d, d);
  if (rc == SL_SUCCESS) rc = sl_agree(sl_ctx.comm, sl_array_copy(c->d, d)); /* before the next collective */
  if (rc == SL_SUCCESS) rc = sl_array_check_finite(c->d, "sl_op_diagonal", "argument 2 (d)"); /* collective, agreed */
  if (rc == SL_SUCCESS) rc = sl_array_create_like(&c->dconj, d);
  if (rc == SL_SUCCESS) rc = sl_array_conj(c->dconj, d);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "Diagonal", d, d, &diagonal_ops, c);
  else if (c) diagonal_free(c);
  return sl_op_finish(op, o, rc);
}

/* d along `axis` written out over like's local block: the factor of every element is d at its index along
 * the axis (offset by the block's start when the axis is the distributed one). */
static int broadcast_fill(sl_array *full, const sl_array *like, const void *d, int axis)
{
  void *p = NULL;
  SL_TRY(sl_array_acquire(full, SL_WRITE, &p));
  const int64_t *ld = sl_array_local_dims(like);
  int64_t inner = 1, n = sl_array_local_size(like), off = axis == sl_array_axis(like) ? sl_array_local_offset(like) : 0;
  for (int k = axis + 1; k < sl_array_ndim(like); k++) inner *= ld[k];
  size_t el = sl_dtype_size(sl_array_dtype(like));
  for (int64_t i = 0; i < n; i++)
    memcpy((char *)p + (size_t)i * el, (const char *)d + (size_t)(off + (i / inner) % ld[axis]) * el, el);
  return sl_array_release(full);
}

int sl_op_diagonal_axis(sl_op **op, const sl_array *like, const void *d, int axis)
{
  const char *fn = "sl_op_diagonal_axis";
  SL_CHECK_INIT();
  int rc = op ? SL_SUCCESS : sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  if (rc == SL_SUCCESS && (!like || like->nparts))
    rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is NULL or a stacked array", fn);
  if (rc == SL_SUCCESS) rc = sl_array_check_session(fn, like, "argument 2 (like)");
  if (rc == SL_SUCCESS && !d) rc = sl_error(SL_E_INVALID, "%s: argument 3 (d) is NULL", fn);
  if (rc == SL_SUCCESS && (axis < 0 || axis >= sl_array_ndim(like)))
    rc = sl_error(SL_E_INVALID, "%s: argument 4 (axis) is %d, like has %d axes", fn, axis, sl_array_ndim(like));
  uint64_t digest = 0;
  if (rc == SL_SUCCESS) {
    sl_dtype dt = sl_array_dtype(like);
    int64_t len = sl_array_dims(like)[axis], bad = sl_first_nonfinite(d, len, dt);
    if (bad >= 0) rc = sl_error(SL_E_INVALID, "%s: argument 3 (d): element %lld is not finite", fn, (long long)bad);
    digest = sl_fnv1a(SL_FNV1A_START, d, (size_t)len * sl_dtype_size(dt));
  }
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_I("argument 4 (axis)", axis), SL_SAME_I("argument 3 (d): the values", (int64_t)digest),
                  SL_SAME_KEY("argument 2 (like: its layout)", rc == SL_SUCCESS ? sl_array_layout_key(SL_FNV1A_START, like) : 0)));
  diagonal_t *c = sl_calloc_agreed(sizeof *c, fn, &rc);
  if (rc == SL_SUCCESS) rc = sl_array_create_like(&c->d, like);
  if (rc == SL_SUCCESS) rc = sl_agree(sl_ctx.comm, broadcast_fill(c->d, like, d, axis)); /* before the next collective */
  if (rc == SL_SUCCESS) rc = sl_array_create_like(&c->dconj, like);
  if (rc == SL_SUCCESS) rc = sl_array_conj(c->dconj, c->d);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "Diagonal", like, like, &diagonal_ops, c);
  else if (c) diagonal_free(c);
  return sl_op_finish(op, o, rc);
}
