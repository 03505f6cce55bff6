/* Fredholm1: a batched matrix product over the slices a rank holds (one batched gemm task per apply, through
 * the dense-product apply of op_matrix.c with nbatch = the rank's slices). */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"

int sl_op_fredholm1(sl_op **op, const void *G, int64_t nsl, int64_t nx, int64_t ny, int64_t nz, sl_dtype dt)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_fredholm1";
  int rc = SL_SUCCESS;
  int64_t e = 0, bad = -1;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (nsl < 0 || nx < 1 || ny < 1 || nz < 1)
    rc = sl_error(SL_E_INVALID, "%s: nsl must be >= 0 and nx, ny, nz >= 1 (got %lld, %lld, %lld, %lld)", fn,
                  (long long)nsl, (long long)nx, (long long)ny, (long long)nz);
  else if (nsl > 0 && !G) rc = sl_error(SL_E_INVALID, "%s: argument 2 (G) is NULL for %lld slices", fn, (long long)nsl);
  else if (!sl_dtype_valid(dt)) rc = sl_error(SL_E_INVALID, "%s: argument 7 (dt) is not a valid dtype", fn);
  else if (__builtin_mul_overflow(nsl, nx, &e) || __builtin_mul_overflow(e, ny, &e) || e > (int64_t)UINT32_MAX)
    rc = sl_error(SL_E_INVALID, "%s: this rank's G (arguments 3-5: %lld slices of %lld x %lld) is too large for one handle (2^32 "
                  "elements)", fn, (long long)nsl, (long long)nx, (long long)ny);
  else if (e > 0 && (bad = sl_first_nonfinite(G, e, dt)) >= 0)
    rc = sl_error(SL_E_INVALID, "%s: argument 2 (G) holds a non-finite value at element %lld", fn, (long long)bad);
  SL_TRY(sl_agree(sl_ctx.comm, rc));
  int64_t lo[3] = {nx, ny, nz}, hi[3] = {nx, ny, nz}, tot = nsl;
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, lo, 3, MPI_INT64_T, MPI_MIN, sl_ctx.comm));
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, hi, 3, MPI_INT64_T, MPI_MAX, sl_ctx.comm));
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &tot, 1, MPI_INT64_T, MPI_SUM, sl_ctx.comm));
  if (memcmp(lo, hi, sizeof lo) != 0)
    return sl_error(SL_E_DIMS, "%s: nx, ny and nz must be the same on every rank", fn);
  int64_t ddims[3] = {tot, ny, nz}, rdims[3] = {tot, nx, nz};
  sl_dist d = sl_dist_default();
  d.local_n = &nsl;
  sl_array *dom = NULL, *rng = NULL;
  rc = sl_layout_create(&dom, 3, ddims, dt, &d);
  if (rc == SL_SUCCESS) rc = sl_layout_create(&rng, 3, rdims, dt, &d);
  rc = sl_op_dense(op, rc, "Fredholm1", dom, rng, G, nx, ny, nz, nsl, -1, NULL);
  sl_array_destroy(&dom);
  sl_array_destroy(&rng);
  return rc;
}
