/* A sparse CSR block per rank (block diagonal across ranks): one SpMV task per apply (codelet_csr.c), on the
 * rank's CPU cores for large blocks (the adjoint through a transposed copy the task makes once). */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"

/* this rank's block: nr x nc with nnz entries */
typedef struct {
  int64_t nr, nc, nnz;
  sl_kept rowptr, colind, vals;
  csr_trans *trans; /* the block transposed, made by the CPU task when an adjoint first runs on several threads */
} csr_t;

static void csr_free(void *p)
{
  csr_t *c = p;
  sl_kept_free(&c->rowptr);
  sl_kept_free(&c->colind);
  sl_kept_free(&c->vals);
  codelet_csr_trans_free(c->trans);
  free(c);
}

static int csr_submit(sl_op *op, sl_op_mode mode, sl_array *y, int nx, const starpu_data_handle_t *hx, int ny,
                      const starpu_data_handle_t *hy)
{
  csr_t *c = op->data;
  return codelet_csr_submit(op->dtype, mode == SL_ADJOINT, c->nr, c->nc, c->nnz, c->rowptr.h, c->colind.h, c->vals.h, c->trans, nx, hx,
                            ny, hy);
}

static int csr_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  return sl_op_apply_chunked(op, mode, x, y, csr_submit);
}
static const sl_op_ops csr_ops = {csr_apply, NULL, csr_free, NULL};

/* Local checks of the CSR arrays. */
static int check_csr(int64_t nr, int64_t nc, const int64_t *rp, const int64_t *ci, const void *v, sl_dtype dt)
{
  const char *fn = "sl_op_csr";
  SL_CHECK_ARG(nr >= 0 && nc >= 0, SL_E_INVALID, "%s: arguments 2 (nrows) and 3 (ncols) must be >= 0", fn);
  SL_CHECK_ARG(rp != NULL, SL_E_INVALID, "%s: argument 4 (rowptr) is NULL", fn);
  SL_CHECK_ARG(rp[0] == 0, SL_E_INVALID, "%s: argument 4 (rowptr) must start at 0, not %lld", fn, (long long)rp[0]);
  for (int64_t i = 0; i < nr; i++)
    SL_CHECK_ARG(rp[i + 1] >= rp[i], SL_E_INVALID, "%s: argument 4 (rowptr) decreases at row %lld", fn, (long long)i);
  int64_t nnz = rp[nr];
  SL_CHECK_ARG(nnz == 0 || (ci && v), SL_E_INVALID, "%s: argument %s is NULL with %lld entries", fn,
               ci ? "6 (vals)" : "5 (colind)", (long long)nnz);
  SL_CHECK_ARG(nnz <= (int64_t)UINT32_MAX && nr < (int64_t)UINT32_MAX, SL_E_INVALID, "%s: the block is too large", fn);
  for (int64_t p = 0; p < nnz; p++)
    SL_CHECK_ARG(ci[p] >= 0 && ci[p] < nc, SL_E_INVALID, "%s: argument 5 (colind) holds %lld, outside [0, %lld)", fn,
                 (long long)ci[p], (long long)nc);
  int64_t bad = nnz > 0 ? sl_first_nonfinite(v, nnz, dt) : -1;
  SL_CHECK_ARG(bad < 0, SL_E_INVALID, "%s: argument 6 (vals) holds a non-finite value at entry %lld", fn, (long long)bad);
  return SL_SUCCESS;
}

int sl_op_csr(sl_op **op, int64_t nrows, int64_t ncols, const int64_t *rowptr, const int64_t *colind,
              const void *vals, sl_dtype dt)
{
  SL_CHECK_INIT();
  int rc = op ? SL_SUCCESS : sl_error(SL_E_INVALID, "sl_op_csr: argument 1 (op) is NULL");
  if (rc == SL_SUCCESS && !sl_dtype_valid(dt)) rc = sl_error(SL_E_INVALID, "sl_op_csr: argument 7 (dt) is not a valid dtype");
  if (rc == SL_SUCCESS) rc = check_csr(nrows, ncols, rowptr, colind, vals, dt);
  SL_TRY(sl_agree(sl_ctx.comm, rc));
  int64_t tot[2] = {nrows, ncols};
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, tot, 2, MPI_INT64_T, MPI_SUM, sl_ctx.comm));
  sl_dist dd = sl_dist_default(), rd = sl_dist_default();
  dd.local_n = &ncols;
  rd.local_n = &nrows;
  sl_array *dom = NULL, *rng = NULL;
  rc = sl_layout_create(&dom, 1, &tot[1], dt, &dd);
  if (rc == SL_SUCCESS) rc = sl_layout_create(&rng, 1, &tot[0], dt, &rd);
  csr_t *c = calloc(1, sizeof *c);
  if (rc == SL_SUCCESS && !c) rc = sl_error(SL_E_NOMEM, "sl_op_csr: out of memory");
  if (rc == SL_SUCCESS) {
    *c = (csr_t){.nr = nrows, .nc = ncols, .nnz = rowptr[nrows]};
    rc = sl_kept_copy(&c->rowptr, rowptr, nrows + 1, sizeof(int64_t));
    if (rc == SL_SUCCESS) rc = sl_kept_copy(&c->colind, colind, c->nnz, sizeof(int64_t));
    if (rc == SL_SUCCESS) rc = sl_kept_copy(&c->vals, vals, c->nnz, sl_dtype_size(dt));
    c->trans = codelet_csr_trans_new(); /* NULL: the adjoint stays on one thread */
  }
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "CSR", dom, rng, &csr_ops, c);
  else if (c) csr_free(c);
  sl_array_destroy(&dom);
  sl_array_destroy(&rng);
  return sl_op_finish(op, o, rc);
}
