/* Identity, Zero and Diagonal: element-wise tasks on the local blocks (CPU and CUDA codelets of the vector
 * operations), no communication. */
#include "operators/op_internal.h"

static int identity_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y) { return sl_array_copy(y, x); }

int sl_op_identity(sl_op **op, const sl_array *like)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_identity: argument 1 (op) is NULL");
  SL_CHECK_ARG(like != NULL, SL_E_INVALID, "sl_op_identity: argument 2 (like) is NULL");
  return sl_op_new(op, "Identity", like, like, identity_apply);
}

static int zero_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y) { return sl_array_fill(y, SL_REAL(0.0)); }

int sl_op_zero(sl_op **op, const sl_array *domain_like, const sl_array *range_like)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_zero: argument 1 (op) is NULL");
  SL_CHECK_ARG(domain_like != NULL, SL_E_INVALID, "sl_op_zero: argument 2 (domain_like) is NULL");
  SL_CHECK_ARG(range_like != NULL, SL_E_INVALID, "sl_op_zero: argument 3 (range_like) is NULL");
  SL_CHECK_ARG(sl_array_dtype(domain_like) == sl_array_dtype(range_like), SL_E_DTYPE,
               "sl_op_zero: arguments 2 (domain_like) and 3 (range_like) differ in dtype (%s, %s)",
               sl_dtype_name(sl_array_dtype(domain_like)), sl_dtype_name(sl_array_dtype(range_like)));
  return sl_op_new(op, "Zero", domain_like, range_like, zero_apply);
}

static int diagonal_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  return sl_array_multiply(y, mode == SL_FORWARD ? op->data : op->data_conj, x);
}

int sl_op_diagonal(sl_op **op, const sl_array *d)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_diagonal: argument 1 (op) is NULL");
  SL_CHECK_ARG(d != NULL, SL_E_INVALID, "sl_op_diagonal: argument 2 (d) is NULL");
  sl_op *o = NULL;
  SL_TRY(sl_op_new(&o, "Diagonal", d, d, diagonal_apply));
  int rc = sl_array_create_like(&o->data, d);
  if (rc == SL_SUCCESS) rc = sl_array_copy(o->data, d);
  if (rc == SL_SUCCESS) rc = sl_array_create_like(&o->data_conj, d);
  if (rc == SL_SUCCESS) rc = sl_array_conj(o->data_conj, d);
  if (rc != SL_SUCCESS) {
    sl_op_destroy(&o);
    return rc;
  }
  *op = o;
  return SL_SUCCESS;
}
