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
    int64_t e = 0, bad = -1;
    if (nrows[b] < 0 || ncols[b] < 0)
      rc = sl_error(SL_E_INVALID, "%s: arguments 4 and 5 (nrows, ncols): block %d is %lld x %lld", fn, b, (long long)nrows[b],
                    (long long)ncols[b]);
    /* the rank's blocks become one CSR block: at most 2^32 - 1 rows and 2^32 entries, the sums without overflow */
    else if (__builtin_mul_overflow(nrows[b], ncols[b], &e) || __builtin_add_overflow(nnz, e, &nnz) ||
             __builtin_add_overflow(nr, nrows[b], &nr) || __builtin_add_overflow(nc, ncols[b], &nc) ||
             nnz > (int64_t)UINT32_MAX || nr >= (int64_t)UINT32_MAX)
      rc = sl_error(SL_E_DIMS, "%s: arguments 4 and 5 (nrows, ncols): blocks 0-%d hold more than 2^32 entries or rows (%lld x "
                    "%lld at block %d), past one sparse block's limit", fn, b, (long long)nrows[b], (long long)ncols[b], b);
    else if (e > 0 && !A[b]) rc = sl_error(SL_E_INVALID, "%s: argument 3 (A): block %d (%lld x %lld) is NULL", fn, b,
                                           (long long)nrows[b], (long long)ncols[b]);
    else if (e > 0 && (bad = sl_first_nonfinite(A[b], e, dt)) >= 0)
      rc = sl_error(SL_E_INVALID, "%s: argument 3 (A): block %d holds a non-finite value at (%lld, %lld)", fn, b,
                    (long long)(bad / ncols[b]), (long long)(bad % ncols[b]));
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
  rc = SL_AGREE(fn, rc, SL_SAME_I("argument 6 (dt)", dt));
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
