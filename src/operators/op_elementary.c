/* Identity, Zero and Diagonal: element-wise tasks on the local blocks (CPU and CUDA codelets of the vector
 * operations), no communication. */
#include <stdlib.h>

#include "operators/op_internal.h"

static int identity_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y) { return sl_array_copy(y, x); }
static const sl_op_ops identity_ops = {identity_apply, NULL, NULL};

int sl_op_identity(sl_op **op, const sl_array *like)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_identity: argument 1 (op) is NULL");
  SL_CHECK_ARG(like != NULL, SL_E_INVALID, "sl_op_identity: argument 2 (like) is NULL");
  return sl_op_new(op, "Identity", like, like, &identity_ops, NULL);
}

static int zero_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y) { return sl_array_fill(y, SL_REAL(0.0)); }
static const sl_op_ops zero_ops = {zero_apply, NULL, NULL};

int sl_op_zero(sl_op **op, const sl_array *domain_like, const sl_array *range_like)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_zero: argument 1 (op) is NULL");
  SL_CHECK_ARG(domain_like != NULL, SL_E_INVALID, "sl_op_zero: argument 2 (domain_like) is NULL");
  SL_CHECK_ARG(range_like != NULL, SL_E_INVALID, "sl_op_zero: argument 3 (range_like) is NULL");
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
static const sl_op_ops diagonal_ops = {diagonal_apply, NULL, diagonal_free};

int sl_op_diagonal(sl_op **op, const sl_array *d)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_diagonal: argument 1 (op) is NULL");
  SL_CHECK_ARG(d != NULL, SL_E_INVALID, "sl_op_diagonal: argument 2 (d) is NULL");
  diagonal_t *c = calloc(1, sizeof *c);
  if (!c) return sl_error(SL_E_NOMEM, "sl_op_diagonal: out of memory");
  int rc = sl_array_create_like(&c->d, d);
  if (rc == SL_SUCCESS) rc = sl_array_copy(c->d, d);
  if (rc == SL_SUCCESS) rc = sl_array_create_like(&c->dconj, d);
  if (rc == SL_SUCCESS) rc = sl_array_conj(c->dconj, d);
  if (rc != SL_SUCCESS) {
    diagonal_free(c);
    return rc;
  }
  return sl_op_new(op, "Diagonal", d, d, &diagonal_ops, c);
}
