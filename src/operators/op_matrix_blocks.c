/* Several dense blocks per rank, block diagonal (pylops-mpi's MPIBlockDiag of a list of MatrixMult per rank):
 * the rank's blocks become one sparse CSR block (sl_op_csr), so blocks of any sizes mix without padding. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"

int sl_op_matrix_blocks(sl_op **op, int nblocks, const void *const *A, const int64_t *nrows, const int64_t *ncols, sl_dtype dt)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_matrix_blocks";
  int rc = SL_SUCCESS;
  int64_t nr = 0, nc = 0, nnz = 0;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (!sl_dtype_valid(dt)) rc = sl_error(SL_E_INVALID, "%s: argument 6 (dt) is not a valid dtype", fn);
  else if (nblocks < 0 || (nblocks > 0 && (!A || !nrows || !ncols)))
    rc = sl_error(SL_E_INVALID, "%s: argument 2 (nblocks) is %d%s", fn, nblocks, nblocks < 0 ? "" : " but A, nrows or ncols is NULL");
  for (int b = 0; rc == SL_SUCCESS && b < nblocks; b++) {
    if (nrows[b] < 0 || ncols[b] < 0 || (nrows[b] * ncols[b] > 0 && !A[b]))
      rc = sl_error(SL_E_INVALID, "%s: block %d is %lld x %lld%s", fn, b, (long long)nrows[b], (long long)ncols[b],
                    nrows[b] < 0 || ncols[b] < 0 ? "" : " with A[b] NULL");
    else {
      nr += nrows[b];
      nc += ncols[b];
      nnz += nrows[b] * ncols[b];
    }
  }
  size_t el = sl_dtype_size(dt);
  int64_t *rowptr = NULL, *colind = NULL;
  char *vals = NULL;
  if (rc == SL_SUCCESS) {
    rowptr = malloc(sizeof *rowptr * (size_t)(nr + 1));
    colind = malloc(sizeof *colind * (size_t)(nnz ? nnz : 1));
    vals = malloc(el * (size_t)(nnz ? nnz : 1));
    if (!rowptr || !colind || !vals) rc = sl_error(SL_E_NOMEM, "%s: out of memory for %lld entries", fn, (long long)nnz);
  }
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc == SL_SUCCESS) { /* block b's rows: its row-major entries, columns shifted by the blocks before it */
    int64_t r = 0, c0 = 0, k = 0;
    rowptr[0] = 0;
    for (int b = 0; b < nblocks; b++) {
      for (int64_t i = 0; i < nrows[b]; i++, r++) {
        for (int64_t j = 0; j < ncols[b]; j++, k++) colind[k] = c0 + j;
        memcpy(vals + (size_t)(k - ncols[b]) * el, (const char *)A[b] + (size_t)(i * ncols[b]) * el, (size_t)ncols[b] * el);
        rowptr[r + 1] = k;
      }
      c0 += ncols[b];
    }
    rc = sl_op_csr(op, nr, nc, rowptr, colind, vals, dt);
  }
  free(rowptr);
  free(colind);
  free(vals);
  return rc;
}
