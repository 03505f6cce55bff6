/* Distributed MatrixMult, "block" kind (pylops-mpi's kind="block", on any pr x pc grid): rank (i, j) holds
 * A's rows-block i (of N over pr, all K columns) and X's columns-block j (of M over pc, all K rows); X is
 * replicated over the grid rows (a mask: every grid row holds one whole X, split by columns). Y is in
 * 2-D blocks (rows-block i, columns-block j).
 *   forward  Y_ij = A_i X_j: one local gemm, no communication
 *   adjoint  X_j = sum_i A_i^H Y_ij: one local gemm, then one allreduce along grid column j */
#include <stdlib.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"

#define part_of sl_split_count

int sl_op_matmul_block(sl_op **op, const void *A, int64_t N, int64_t K, int64_t M, int pr, int pc, sl_dtype dt)
{
  const char *fn = "sl_op_matmul_block";
  SL_TRY(sl_op_grid_check(fn, op, N, K, M, pr, pc, dt));
  int rc = SL_SUCCESS;
  int i = sl_ctx.rank / pc, j = sl_ctx.rank % pc;
  int64_t nb = part_of(N, pr, i), mb = part_of(M, pc, j);
  rc = nb * K > 0 && !A ? sl_error(SL_E_INVALID, "%s: argument 2 (A) is NULL for a %lld x %lld block", fn, (long long)nb, (long long)K) : SL_SUCCESS;
  int64_t bad = rc == SL_SUCCESS && nb * K > 0 ? sl_first_nonfinite(A, nb * K, dt) : -1;
  if (bad >= 0)
    rc = sl_error(SL_E_INVALID, "%s: argument 2 (A) holds a non-finite value at (%lld, %lld) of this rank's block", fn,
                  (long long)(bad / K), (long long)(bad % K));
  /* X: (K, M) scattered along its columns within each grid row (mask = grid row) */
  int *mask = malloc(sizeof *mask * (size_t)sl_ctx.size);
  if (!mask) rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  for (int r = 0; mask && r < sl_ctx.size; r++) mask[r] = r / pc;
  int64_t xd[2] = {K, M}, yd = N * M, yloc = nb * mb;
  sl_dist dx = sl_dist_scatter(1), dy = sl_dist_default();
  dx.local_n = &mb;
  dx.mask = mask;
  dy.local_n = &yloc;
  sl_array *dom = NULL, *rng = NULL;
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc == SL_SUCCESS) rc = sl_layout_create(&dom, 2, xd, dt, &dx);
  if (rc == SL_SUCCESS) rc = sl_layout_create(&rng, 1, &yd, dt, &dy);
  free(mask);
  /* the adjoint sums over grid column j */
  comm_channel *col = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_grid_channel(fn, j, i, &col);
  char name[96];
  snprintf(name, sizeof name, "MatrixMult(block %d x %d)", pr, pc);
  rc = sl_op_dense(op, rc, name, dom, rng, A, nb, K, mb, 1, SL_ADJOINT, col);
  sl_array_destroy(&dom);
  sl_array_destroy(&rng);
  return rc;
}
