/* Dense blocks per rank, in three arrangements, each one gemv/gemm task per apply on the rank's chunks of
 * x and y (codelet_matmul.c):
 *   block diagonal  y_r = A_r x_r                          no communication
 *   VStack          y_r = A_r x (x replicated)             adjoint x = sum_r A_r^H y_r: one allreduce
 *   HStack          y = sum_r A_r x_r (y replicated)       forward: one allreduce; adjoint x_r = A_r^H y */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"

enum { SL_STACK_NONE, SL_STACK_V, SL_STACK_H };

/* The context of every dense kind: this rank's blocks and where a result is summed over ranks. */
typedef struct {
  sl_kept mat;            /* nbatch blocks of nr x nc, row-major */
  int64_t nr, nc, nrhs, nbatch;
  int sum_mode;           /* the mode whose result is allreduced (SL_FORWARD, SL_ADJOINT), or -1 */
  comm_channel *channel;  /* the ranks of that sum (owned), or NULL: the result's own group */
} dense_t;

static void dense_free(void *p)
{
  dense_t *c = p;
  sl_kept_free(&c->mat);
  if (c->channel) comm_channel_destroy(c->channel);
  free(c);
}

static int dense_submit(sl_op *op, sl_op_mode mode, sl_array *y, int nx, const starpu_data_handle_t *hx, int ny,
                        const starpu_data_handle_t *hy)
{
  dense_t *c = op->data;
  SL_TRY(codelet_matmul_submit(op->dtype, mode == SL_ADJOINT, c->nr, c->nc, c->nrhs, c->nbatch, c->mat.h, nx, hx, ny, hy));
  if ((int)mode != c->sum_mode || ny == 0) return SL_SUCCESS;
  comm_channel *ch = c->channel ? c->channel : y->group->channel;
  return ch->size > 1 ? comm_allreduce_n(ch, op->dtype, COMM_SUM, ny, hy) : SL_SUCCESS;
}

static int dense_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  return sl_op_apply_chunked(op, mode, x, y, dense_submit);
}
static const sl_op_ops dense_ops = {dense_apply, NULL, dense_free, NULL};

int sl_op_dense(sl_op **out, int rc, const char *name, const sl_array *dom, const sl_array *rng, const void *A, int64_t nr,
                int64_t nc, int64_t nrhs, int64_t nbatch, int sum_mode, comm_channel *sum_channel)
{
  dense_t *c = rc == SL_SUCCESS ? calloc(1, sizeof *c) : NULL;
  if (rc == SL_SUCCESS && !c) rc = sl_error(SL_E_NOMEM, "%s: out of memory", name);
  if (c) {
    *c = (dense_t){.nr = nr, .nc = nc, .nrhs = nrhs, .nbatch = nbatch, .sum_mode = sum_mode, .channel = sum_channel};
    sum_channel = NULL;
    rc = sl_kept_copy(&c->mat, A, nbatch * nr * nc, sl_dtype_size(sl_array_dtype(dom)));
  }
  if (sum_channel) comm_channel_destroy(sum_channel);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, name, dom, rng, &dense_ops, c);
  else if (c) dense_free(c);
  return sl_op_finish(out, o, rc);
}

static int matrix_of(sl_op **op, int kind, const void *A, int64_t nrows, int64_t ncols, int64_t nrhs, sl_dtype dt);

int sl_op_matrix(sl_op **op, const void *A, int64_t nrows, int64_t ncols, int64_t nrhs, sl_dtype dt)
{
  return matrix_of(op, SL_STACK_NONE, A, nrows, ncols, nrhs, dt);
}

int sl_op_vstack_matrix(sl_op **op, const void *A, int64_t nrows, int64_t ncols, int64_t nrhs, sl_dtype dt)
{
  return matrix_of(op, SL_STACK_V, A, nrows, ncols, nrhs, dt);
}

int sl_op_hstack_matrix(sl_op **op, const void *A, int64_t nrows, int64_t ncols, int64_t nrhs, sl_dtype dt)
{
  return matrix_of(op, SL_STACK_H, A, nrows, ncols, nrhs, dt);
}

static int matrix_of(sl_op **op, int kind, const void *A, int64_t nrows, int64_t ncols, int64_t nrhs, sl_dtype dt)
{
  SL_CHECK_INIT();
  const char *fn = kind == SL_STACK_V ? "sl_op_vstack_matrix" : (kind == SL_STACK_H ? "sl_op_hstack_matrix" : "sl_op_matrix");
  int rc = SL_SUCCESS;
  int64_t e = 0, bad = -1;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (nrows < 0 || ncols < 0) rc = sl_error(SL_E_INVALID, "%s: arguments 3 (nrows) and 4 (ncols) must be >= 0, got %lld and %lld", fn, (long long)nrows, (long long)ncols);
  else if (__builtin_mul_overflow(nrows, ncols, &e) || e > (int64_t)UINT32_MAX)
    rc = sl_error(SL_E_INVALID, "%s: a %lld x %lld block (arguments 3 and 4) is too large for one handle (2^32 elements)", fn,
                  (long long)nrows, (long long)ncols);
  else if (nrows * ncols > 0 && !A) rc = sl_error(SL_E_INVALID, "%s: argument 2 (A) is NULL for a %lld x %lld block", fn, (long long)nrows, (long long)ncols);
  else if (nrhs < 1) rc = sl_error(SL_E_INVALID, "%s: argument 5 (nrhs) is %lld, must be >= 1", fn, (long long)nrhs);
  else if (!sl_dtype_valid(dt)) rc = sl_error(SL_E_INVALID, "%s: argument 6 (dt) is not a valid dtype", fn);
  else if (e > 0 && (bad = sl_first_nonfinite(A, e, dt)) >= 0)
    rc = sl_error(SL_E_INVALID, "%s: argument 2 (A) holds a non-finite value at (%lld, %lld)", fn, (long long)(bad / ncols),
                  (long long)(bad % ncols));
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_I("argument 5 (nrhs)", nrhs), SL_SAME_I("argument 6 (dt)", dt)));
  /* sums over ranks, and min/max of the replicated side's extent, which every rank must share */
  int64_t tot[2] = {nrows, ncols}, lo[2] = {nrows, ncols}, hi[2] = {nrows, ncols};
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, tot, 2, MPI_INT64_T, MPI_SUM, sl_ctx.comm));
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, lo, 2, MPI_INT64_T, MPI_MIN, sl_ctx.comm));
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, hi, 2, MPI_INT64_T, MPI_MAX, sl_ctx.comm));
  if (kind == SL_STACK_V && lo[1] != hi[1])
    return sl_error(SL_E_DIMS, "%s: argument 4 (ncols) differs between ranks (%lld to %lld): a VStack's blocks share their columns", fn, (long long)lo[1], (long long)hi[1]);
  if (kind == SL_STACK_H && lo[0] != hi[0])
    return sl_error(SL_E_DIMS, "%s: argument 3 (nrows) differs between ranks (%lld to %lld): an HStack's blocks share their rows", fn, (long long)lo[0], (long long)hi[0]);
  int nd = nrhs > 1 ? 2 : 1;
  int64_t ddims[2] = {kind == SL_STACK_V ? ncols : tot[1], nrhs}, rdims[2] = {kind == SL_STACK_H ? nrows : tot[0], nrhs};
  sl_dist dd = kind == SL_STACK_V ? sl_dist_broadcast() : sl_dist_default();
  sl_dist rd = kind == SL_STACK_H ? sl_dist_broadcast() : sl_dist_default();
  if (kind != SL_STACK_V) dd.local_n = &ncols;
  if (kind != SL_STACK_H) rd.local_n = &nrows;
  sl_array *dom = NULL, *rng = NULL;
  rc = sl_layout_create(&dom, nd, ddims, dt, &dd);
  if (rc == SL_SUCCESS) rc = sl_layout_create(&rng, nd, rdims, dt, &rd);
  /* the replicated side of a stack is a sum over ranks: VStack's adjoint, HStack's forward */
  rc = sl_op_dense(op, rc, kind == SL_STACK_V ? "VStack(MatrixMult)" : (kind == SL_STACK_H ? "HStack(MatrixMult)" : "MatrixMult"),
                   dom, rng, A, nrows, ncols, nrhs, 1, kind == SL_STACK_V ? SL_ADJOINT : kind == SL_STACK_H ? SL_FORWARD : -1, NULL);
  sl_array_destroy(&dom);
  sl_array_destroy(&rng);
  return rc;
}
