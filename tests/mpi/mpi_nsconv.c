/* NonStationaryConvolve1D on 1 to 4 ranks (the last of 4 owning nothing), in the four dtypes, along every
 * axis of a 3-D array distributed along another one (and replicated): forward and adjoint against the dense
 * matrix written from pylops' definition (filters interpolated between the centres, the end ones repeated),
 * dot tests, bad input (the distributed axis, an even filter, irregular centres, non-finite or differing
 * filters). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;
static int P, R;

/* filter f, sample j (complex part only for complex dtypes) */
static cplx hval(sl_dtype dt, int64_t f, int64_t j)
{
  return cos(0.7 * (double)f + 0.3 * (double)j) + (sl_dtype_is_complex(dt) ? I * sin(0.4 * (double)f - 0.9 * (double)j) : 0);
}

/* The dense n x n matrix: column ix holds the interpolated filter of sample ix, centred on row ix. */
static cplx *dense(sl_dtype dt, int64_t n, int64_t nf, int64_t L, const int64_t *ih)
{
  cplx *M = calloc((size_t)(n * n), sizeof *M);
  double dh = nf > 1 ? (double)(ih[1] - ih[0]) : 1.0;
  for (int64_t ix = 0; ix < n; ix++) {
    double t = ((double)ix - (double)ih[0]) / dh;
    int64_t i0 = (int64_t)floor(t);
    for (int64_t j = 0; j < L; j++) {
      cplx h;
      if (i0 < 0) h = hval(dt, 0, j);
      else if (i0 >= nf - 1) h = hval(dt, nf - 1, j);
      else h = (1 - (t - i0)) * hval(dt, i0, j) + (t - i0) * hval(dt, i0 + 1, j);
      int64_t k = ix + j - L / 2; /* the output row of tap j */
      if (k >= 0 && k < n) M[k * n + ix] = h;
    }
  }
  return M;
}

/* y = M x along axis of the global 3-D array (adjoint: M^H). */
static void apply_ref(const int64_t *dims, int axis, const cplx *M, int adjoint, const cplx *x, cplx *y)
{
  int64_t n = dims[axis], outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= dims[d];
  for (int d = axis + 1; d < 3; d++) inner *= dims[d];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      for (int64_t k = 0; k < n; k++) {
        cplx s = 0;
        for (int64_t j = 0; j < n; j++) s += (adjoint ? conj(M[j * n + k]) : M[k * n + j]) * x[(o * n + j) * inner + i];
        y[(o * n + k) * inner + i] = s;
      }
}

static void test_case_dims(sl_dtype dt, const int64_t dims_in[3], int64_t L, int dist_axis, int broadcast, int axis)
{
  int64_t dims[3] = {dims_in[0], dims_in[1], dims_in[2]};
  const int64_t nf = 4;
  int64_t ih[4];
  /* 1, 4, 7, 10 (spaced 1 or 2 on axes shorter than 12, which the centres must lie on): samples beyond the last centre */
  const int64_t step = dims[axis] >= 12 ? 3 : (dims[axis] - 3) / 3 > 1 ? (dims[axis] - 3) / 3 : 1;
  for (int f = 0; f < nf; f++) ih[f] = 1 + step * f;
  int64_t ln = mc_share(dims[dist_axis]);
  sl_dist d = broadcast ? sl_dist_broadcast() : sl_dist_scatter(dist_axis);
  if (!broadcast) d.local_n = &ln;
  double complex *xg = NULL;
  sl_array *x = mc_array(3, dims, dt, &d, 3, &xg), *y = NULL, *z = NULL;
  CHECK_OK(sl_array_create_like(&y, x));
  CHECK_OK(sl_array_create_like(&z, x));
  cplx *hz = malloc(sizeof *hz * (size_t)(nf * L));
  for (int64_t f = 0; f < nf; f++)
    for (int64_t j = 0; j < L; j++) hz[f * L + j] = hval(dt, f, j);
  void *hs = malloc(sl_dtype_size(dt) * (size_t)(nf * L));
  mc_to_dtype(dt, nf * L, hz, hs);
  sl_op *op = NULL;
  CHECK_OK(sl_op_nonstationary_convolve1d(&op, x, hs, nf, L, ih, axis));
  int64_t n = dims[0] * dims[1] * dims[2];
  cplx *M = dense(dt, dims[axis], nf, L, ih), *ref = malloc(sizeof *ref * (size_t)n);
  char what[96];
  if (op) {
    CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
    apply_ref(dims, axis, M, 0, xg, ref);
    snprintf(what, sizeof what, "NonStationaryConvolve1D forward (axis %d, %s %d)", axis, broadcast ? "replicated" : "split", dist_axis);
    mc_compare(y, ref, what);
    CHECK_OK(sl_op_apply(op, SL_ADJOINT, x, z));
    apply_ref(dims, axis, M, 1, xg, ref);
    snprintf(what, sizeof what, "NonStationaryConvolve1D adjoint (axis %d, %s %d)", axis, broadcast ? "replicated" : "split", dist_axis);
    mc_compare(z, ref, what);
    double err = 1;
    CHECK_OK(sl_dottest(op, 5, &err));
    /* relative to |<A u, v>|, which cancels: 1e-12 is round-off for sums of 2250 products of 35 terms (9000 ulp),
     * 1e-4 in single precision (1700 ulp; the GPU's float32 kernel, which sums in another order, gave 2.5e-5 on 2
     * ranks), as mpi_ops' dot tests */
    CHECK(err < (dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-12), "NonStationaryConvolve1D dot test %s axis %d: %.3g",
          sl_dtype_name(dt), axis, err);
  }
  sl_op_destroy(&op);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&z);
  free(xg), free(hz), free(hs), free(M), free(ref);
}

static void test_case(sl_dtype dt, int dist_axis, int broadcast, int axis)
{
  const int64_t dims[3] = {7, 13, 6};
  test_case_dims(dt, dims, 5, dist_axis, broadcast, axis);
}

static void test_bad_input(void)
{
  int64_t dims[2] = {9, 8};
  sl_array *x = NULL;
  CHECK_OK(sl_array_create(&x, 2, dims, SL_FLOAT64, NULL)); /* split along axis 0 */
  double hs[6] = {1, 2, 3, 4, 5, 6};
  int64_t ih[2] = {1, 5};
  sl_op *op = NULL;
  int rc = sl_op_nonstationary_convolve1d(&op, x, hs, 2, 3, ih, 0);
  CHECK(P == 1 ? rc == SL_SUCCESS : mc_same_error_everywhere(rc, SL_E_DIST), "convolution along the distributed axis: %s",
        sl_last_error());
  sl_op_destroy(&op);
  rc = sl_op_nonstationary_convolve1d(&op, x, hs, 3, 2, ih, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "hsize"), "even filter: %s", sl_last_error());
  int64_t down[2] = {5, 1};
  rc = sl_op_nonstationary_convolve1d(&op, x, hs, 2, 3, down, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "increasing"), "decreasing centres: %s",
        sl_last_error());
  int64_t ih3[3] = {0, 2, 5};
  rc = sl_op_nonstationary_convolve1d(&op, x, hs, 3, 1, ih3, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "regularly"), "irregular centres: %s", sl_last_error());
  double nanhs[3] = {1, NAN, 2};
  rc = sl_op_nonstationary_convolve1d(&op, x, nanhs, 1, 3, ih, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "non-finite"), "NaN filter: %s", sl_last_error());
  double mine[3] = {1, 2, (double)R};
  rc = sl_op_nonstationary_convolve1d(&op, x, mine, 1, 3, ih, 1);
  CHECK(P == 1 || mc_same_error_everywhere(rc, SL_E_INVALID), "filters differing between ranks: %s", sl_last_error());
  sl_op_destroy(&op);
  rc = sl_op_nonstationary_convolve1d(&op, x, hs, 2, 3, ih, 2);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "axis"), "axis out of range: %s", sl_last_error());
  /* a filter table (2 n hsize elements) past what one StarPU vector holds: refused before anything is allocated */
  int64_t wide[2] = {2, 65537};
  sl_array *xw = NULL;
  CHECK_OK(sl_array_create(&xw, 2, wide, SL_FLOAT64, NULL));
  double *long_h = calloc(65537, sizeof *long_h);
  rc = sl_op_nonstationary_convolve1d(&op, xw, long_h, 1, 65537, ih, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_DIMS) && strstr(sl_last_error(), "2^32"), "a filter table above 2^32 elements: %s",
        sl_last_error());
  /* sizes whose products overflow 64 bits, and centres far outside any axis: refused before hs is read */
  rc = sl_op_nonstationary_convolve1d(&op, xw, long_h, 8, ((int64_t)1 << 61) + 1, ih, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_DIMS) && strstr(sl_last_error(), "overflows"), "nfilt x hsize past 2^63: %s",
        sl_last_error());
  int64_t far[2] = {0, INT64_MAX / 2};
  rc = sl_op_nonstationary_convolve1d(&op, x, hs, 2, 3, far, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "ih[1]"), "a centre at 2^62: %s", sl_last_error());
  /* centres off the axis (pylops refuses them): before it, past its end */
  int64_t before[2] = {-1, 3}, past[2] = {3, 8};
  rc = sl_op_nonstationary_convolve1d(&op, x, hs, 2, 3, before, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 6 (ih)") && strstr(sl_last_error(), "0 <= ih < 8"),
        "a centre before the axis: %s", sl_last_error());
  rc = sl_op_nonstationary_convolve1d(&op, x, hs, 2, 3, past, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 6 (ih)"), "a centre past the axis: %s",
        sl_last_error());
  free(long_h);
  sl_array_destroy(&xw);
  sl_array_destroy(&x);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  P = sl_size();
  R = sl_rank();
  const sl_dtype *dts = mc_dtypes;
  for (int t = 0; t < 4; t++) {
    test_case(dts[t], 0, 0, 1);
    test_case(dts[t], 0, 0, 2);
    test_case(dts[t], 1, 0, 0);
    test_case(dts[t], 2, 0, 1);
    test_case(dts[t], 0, 1, 0);
    /* a long convolution axis (the last): samples far from both ends as well as near them, rows in groups */
    const int64_t long_dims[3] = {5, 3, 700};
    test_case_dims(dts[t], long_dims, 9, 0, 0, 2);
    /* long filters (31 and 61 taps) over several blocks of samples and groups of rows, the distributed axis
     * the middle one or the first */
    const int64_t rows_dims[3] = {4, 9, 400}, short_dims[3] = {2, 3, 300};
    test_case_dims(dts[t], rows_dims, 31, 1, 0, 2);
    test_case_dims(dts[t], short_dims, 61, 0, 0, 2);
    /* every filter length class of the GPU kernels along the last axis (the float64 tensor-core kernel takes
     * 1, 17, 25 and 33 taps in steps of 2, 6, 8 and 10 groups of 4 inputs; 35 the next kernel), 150 samples: one
     * block of 128 and a partial one */
    const int64_t class_dims[3] = {3, 5, 150};
    const int64_t class_taps[5] = {1, 17, 25, 33, 35};
    for (int l = 0; l < 5; l++) test_case_dims(dts[t], class_dims, class_taps[l], 0, 0, 2);
    /* along a middle or the first axis with values after it (the tensor-core kernel from 8 of them: 20 is one
     * group of 16 and a partial one, 9 an odd count, 36 along axis 0), blocks of samples and their edges */
    const int64_t mid_dims[3] = {3, 150, 20}, odd_dims[3] = {4, 70, 9}, first_dims[3] = {150, 3, 12};
    test_case_dims(dts[t], mid_dims, 31, 2, 0, 1);
    test_case_dims(dts[t], odd_dims, 17, 0, 0, 1);
    test_case_dims(dts[t], first_dims, 9, 1, 0, 0);
  }
  test_bad_input();
  return mc_finish("mpi_nsconv");
}
