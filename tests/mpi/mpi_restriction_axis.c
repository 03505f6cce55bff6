/* Restriction along an axis with global indices on 1 to 4 ranks (the last of 4 owning nothing), four dtypes:
 * along the distributed axis (increasing indices, ranks keeping 0 or several planes), along another axis
 * (any order, repeats), on a replicated array; forward and adjoint against the selection written here,
 * the range's layout, dot tests, bad input. */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;
static int P, R;

static void test_case(sl_dtype dt, int dist_axis, int broadcast, int axis, const int64_t *iava, int64_t n)
{
  int64_t dims[3] = {9, 7, 4}, ln = mc_share(dims[dist_axis]);
  sl_dist d = broadcast ? sl_dist_broadcast() : sl_dist_scatter(dist_axis);
  if (!broadcast) d.local_n = &ln;
  cplx *xg = NULL;
  sl_array *x = mc_array(3, dims, dt, &d, 4, &xg);
  sl_op *op = NULL;
  CHECK_OK(sl_op_restriction_axis(&op, x, iava, n, axis));
  if (!op) {
    sl_array_destroy(&x);
    free(xg);
    return;
  }
  int64_t od[3] = {dims[0], dims[1], dims[2]};
  od[axis] = n;
  const int64_t *rd = sl_array_dims(sl_op_range(op));
  CHECK(rd[0] == od[0] && rd[1] == od[1] && rd[2] == od[2], "Restriction along %d: range dims %lld %lld %lld", axis,
        (long long)rd[0], (long long)rd[1], (long long)rd[2]);
  sl_array *y = NULL, *z = NULL;
  CHECK_OK(sl_op_create_range(op, &y));
  CHECK_OK(sl_array_create_like(&z, x));
  int64_t ny = od[0] * od[1] * od[2], nx = dims[0] * dims[1] * dims[2];
  cplx *ref = calloc((size_t)nx, sizeof *ref), *yref = malloc(sizeof *yref * (size_t)ny);
  for (int64_t a = 0; a < od[0]; a++)
    for (int64_t b = 0; b < od[1]; b++)
      for (int64_t c = 0; c < od[2]; c++) {
        int64_t s[3] = {a, b, c};
        s[axis] = iava[s[axis]];
        yref[(a * od[1] + b) * od[2] + c] = xg[(s[0] * dims[1] + s[1]) * dims[2] + s[2]];
      }
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  char what[96];
  snprintf(what, sizeof what, "Restriction along axis %d (%s %d) forward", axis, broadcast ? "replicated" : "split", dist_axis);
  mc_compare(y, yref, what);
  /* adjoint of y = x restricted: the kept planes added back (repeats twice) */
  for (int64_t a = 0; a < od[0]; a++)
    for (int64_t b = 0; b < od[1]; b++)
      for (int64_t c = 0; c < od[2]; c++) {
        int64_t s[3] = {a, b, c};
        s[axis] = iava[s[axis]];
        ref[(s[0] * dims[1] + s[1]) * dims[2] + s[2]] += yref[(a * od[1] + b) * od[2] + c];
      }
  CHECK_OK(sl_op_apply(op, SL_ADJOINT, y, z));
  snprintf(what, sizeof what, "Restriction along axis %d (%s %d) adjoint", axis, broadcast ? "replicated" : "split", dist_axis);
  mc_compare(z, ref, what);
  double err = 1;
  CHECK_OK(sl_dottest(op, 3, &err));
  CHECK(err < (dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-5 : 1e-13), "Restriction along axis %d dot test %s: %.3g", axis,
        sl_dtype_name(dt), err);
  sl_op_destroy(&op);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&z);
  free(xg), free(ref), free(yref);
}

static void test_bad_input(void)
{
  int64_t dims[2] = {8, 5};
  sl_array *x = NULL;
  CHECK_OK(sl_array_create(&x, 2, dims, SL_FLOAT64, NULL));
  sl_op *op = NULL;
  int64_t down[2] = {5, 2}, out[1] = {8}, mine[1] = {R % 2};
  int rc = sl_op_restriction_axis(&op, x, down, 2, 0);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "increasing"), "decreasing along the split axis: %s",
        sl_last_error());
  rc = sl_op_restriction_axis(&op, x, out, 1, 0);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "outside"), "index out of range: %s", sl_last_error());
  rc = sl_op_restriction_axis(&op, x, mine, 1, 1);
  CHECK(P == 1 || mc_same_error_everywhere(rc, SL_E_INVALID), "iava differing between ranks: %s", sl_last_error());
  sl_op_destroy(&op);
  rc = sl_op_restriction_axis(&op, x, down, 2, 4);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "axis"), "axis out of range: %s", sl_last_error());
  sl_array_destroy(&x);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  P = sl_size();
  R = sl_rank();
  const sl_dtype *dts = mc_dtypes;
  const int64_t inc[4] = {0, 3, 4, 8}, any[5] = {6, 1, 1, 0, 3}, ends[3] = {0, 1, 8};
  for (int t = 0; t < 4; t++) {
    test_case(dts[t], 0, 0, 0, inc, 4); /* the distributed axis: ranks keep 0 to 2 planes */
    test_case(dts[t], 0, 0, 0, ends, 3); /* a middle rank (3 ranks and more) owns planes and keeps none of them */
    test_case(dts[t], 0, 0, 1, any, 5); /* another axis: any order, a repeat */
    test_case(dts[t], 1, 0, 2, any + 2, 3);
    test_case(dts[t], 0, 1, 0, any, 5); /* replicated */
  }
  test_bad_input();
  return mc_finish("mpi_restriction_axis");
}
