/* MatrixMult with a dense block per rank (block diagonal across ranks): one gemv/gemm task per apply on
 * the rank's chunks of x and y (codelet_matmul.c). */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"

static int chunks_of(const sl_array *a, starpu_data_handle_t **h, int *n)
{
  *n = sl_array_nchunks(a);
  *h = NULL;
  if (*n == 0) return SL_SUCCESS;
  *h = malloc(sizeof **h * (size_t)*n);
  if (!*h) return sl_error(SL_E_NOMEM, "MatrixMult: out of memory");
  for (int c = 0; c < *n; c++) (*h)[c] = sl_array_chunk(a, c);
  return SL_SUCCESS;
}

static int matrix_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  starpu_data_handle_t *hx = NULL, *hy = NULL;
  int nx = 0, ny = 0;
  int rc = chunks_of(x, &hx, &nx);
  if (rc == SL_SUCCESS) rc = chunks_of(y, &hy, &ny);
  if (rc == SL_SUCCESS)
    rc = codelet_matmul_submit(op->dtype, mode == SL_ADJOINT, op->nr, op->nc, op->nrhs, op->mat_handle, nx, hx, ny, hy);
  free(hx);
  free(hy);
  return rc;
}

int sl_op_matrix(sl_op **op, const void *A, int64_t nrows, int64_t ncols, int64_t nrhs, sl_dtype dt)
{
  SL_CHECK_INIT();
  int rc = SL_SUCCESS;
  if (!op) rc = sl_error(SL_E_INVALID, "sl_op_matrix: argument 1 (op) is NULL");
  else if (nrows < 0 || ncols < 0) rc = sl_error(SL_E_INVALID, "sl_op_matrix: arguments 3 (nrows) and 4 (ncols) must be >= 0, got %lld and %lld", (long long)nrows, (long long)ncols);
  else if (nrows * ncols > 0 && !A) rc = sl_error(SL_E_INVALID, "sl_op_matrix: argument 2 (A) is NULL for a %lld x %lld block", (long long)nrows, (long long)ncols);
  else if (nrhs < 1) rc = sl_error(SL_E_INVALID, "sl_op_matrix: argument 5 (nrhs) is %lld, must be >= 1", (long long)nrhs);
  else if (!sl_dtype_valid(dt)) rc = sl_error(SL_E_INVALID, "sl_op_matrix: argument 6 (dt) is not a valid dtype");
  else if (nrows * ncols > (int64_t)UINT32_MAX) rc = sl_error(SL_E_INVALID, "sl_op_matrix: a %lld x %lld block is too large for one handle", (long long)nrows, (long long)ncols);
  SL_TRY(sl_agree(sl_ctx.comm, rc));
  int64_t tot[2] = {nrows, ncols};
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, tot, 2, MPI_INT64_T, MPI_SUM, sl_ctx.comm));
  int nd = nrhs > 1 ? 2 : 1;
  int64_t ddims[2] = {tot[1], nrhs}, rdims[2] = {tot[0], nrhs};
  sl_dist dd = sl_dist_default(), rd = sl_dist_default();
  dd.local_n = &ncols;
  rd.local_n = &nrows;
  sl_array *dom = NULL, *rng = NULL;
  rc = sl_array_create(&dom, nd, ddims, dt, &dd);
  if (rc == SL_SUCCESS) rc = sl_array_create(&rng, nd, rdims, dt, &rd);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "MatrixMult", dom, rng, matrix_apply);
  sl_array_destroy(&dom);
  sl_array_destroy(&rng);
  if (rc != SL_SUCCESS) return rc;
  o->nr = nrows;
  o->nc = ncols;
  o->nrhs = nrhs;
  size_t bytes = (size_t)(nrows * ncols) * sl_dtype_size(dt);
  if (bytes > 0) {
    o->mat = malloc(bytes);
    rc = o->mat ? SL_SUCCESS : sl_error(SL_E_NOMEM, "sl_op_matrix: out of memory for a %zu-byte block", bytes);
    if (rc == SL_SUCCESS) {
      memcpy(o->mat, A, bytes);
      starpu_vector_data_register(&o->mat_handle, STARPU_MAIN_RAM, (uintptr_t)o->mat, (uint32_t)(nrows * ncols),
                                  sl_dtype_size(dt));
    }
  }
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc != SL_SUCCESS) {
    sl_op_destroy(&o);
    return rc;
  }
  *op = o;
  return SL_SUCCESS;
}
