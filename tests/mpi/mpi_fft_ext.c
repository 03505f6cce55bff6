/* Roll and the FFT with pylops' options (nfft padding or truncation, ifftshift before, fftshift after) on 1 to
 * 4 ranks (the last of 4 owning nothing), along the distributed axis and another one, against numpy's
 * definitions written here (np.roll; a naive DFT of the shifted, padded or truncated array, the three norms;
 * the adjoint against the dense matrix of that definition); real-to-complex with padding and truncation;
 * even and uneven splits; dot tests; bad input. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;
static int P, R;

static double tol_of(sl_dtype dt) { return dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-5 : 1e-12; }

static void dot(sl_op *op, sl_dtype dt, const char *what)
{
  double err = 1;
  CHECK_OK(sl_dottest(op, 9, &err));
  CHECK(err < 10 * tol_of(dt), "%s dot test (%s): %.3g", what, sl_dtype_name(dt), err);
}

/* ---- Roll ------------------------------------------------------------------------------------------ */
static void test_roll(sl_dtype dt, int ndim, int axis, int64_t shift)
{
  int64_t dims[2] = {11, 4}, ln = mc_share(dims[0]);
  sl_dist d = sl_dist_default();
  d.local_n = &ln;
  cplx *xg = NULL;
  sl_array *x = mc_array(ndim, dims, dt, &d, 2, &xg), *y = NULL, *z = NULL;
  sl_op *op = NULL;
  CHECK_OK(sl_op_roll(&op, x, axis, shift));
  if (!op) return;
  CHECK_OK(sl_array_create_like(&y, x));
  CHECK_OK(sl_array_create_like(&z, x));
  int64_t n0 = dims[0], n1 = ndim == 2 ? dims[1] : 1, n = dims[axis], tot = n0 * n1;
  cplx *ref = malloc(sizeof *ref * (size_t)tot);
  for (int64_t i = 0; i < n0; i++)
    for (int64_t j = 0; j < n1; j++) {
      int64_t src[2] = {i, j}, k = axis == 0 ? i : j;
      src[axis] = ((k - shift) % n + n) % n;
      ref[i * n1 + j] = xg[src[0] * n1 + src[1]];
    }
  char what[64];
  snprintf(what, sizeof what, "Roll %dd axis %d by %lld", ndim, axis, (long long)shift);
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  mc_compare(y, ref, what);
  CHECK_OK(sl_op_apply(op, SL_ADJOINT, y, z)); /* rolled back */
  mc_compare(z, xg, what);
  dot(op, dt, what);
  sl_op_destroy(&op);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&z);
  free(xg), free(ref);
}

/* ---- FFT with nfft and shifts ------------------------------------------------------------------- */
/* numpy along one axis of a 2-D array (n0 x n1): ifftshift, pad/truncate to m, DFT scaled by norm (ortho
 * 1/sqrt(m), none, 1/m), fftshift */
static cplx *ref_axis(const cplx *x, int64_t n0, int64_t n1, int axis, int64_t m, int ish, int fsh, sl_fft_norm norm,
                      int64_t *o0, int64_t *o1)
{
  int64_t n = axis == 0 ? n0 : n1, r0 = axis == 0 ? m : n0, r1 = axis == 0 ? n1 : m;
  cplx *line = malloc(sizeof *line * (size_t)m), *out = malloc(sizeof *out * (size_t)(r0 * r1));
  for (int64_t l = 0; l < (axis == 0 ? n1 : n0); l++) {
    for (int64_t k = 0; k < m; k++) { /* the shifted input, padded or cut to m */
      int64_t src = ish ? (k + n / 2) % n : k;
      line[k] = k < n ? (axis == 0 ? x[src * n1 + l] : x[l * n1 + src]) : 0;
    }
    for (int64_t f = 0; f < m; f++) {
      cplx s = 0;
      for (int64_t k = 0; k < m; k++) s += line[k] * cexp(-2 * M_PI * I * (double)(f * k % m) / (double)m);
      s *= norm == SL_FFT_ORTHO ? 1 / sqrt((double)m) : norm == SL_FFT_ONE_OVER_N ? 1 / (double)m : 1;
      int64_t dst = fsh ? (f + m / 2) % m : f;
      if (axis == 0) out[dst * r1 + l] = s;
      else out[l * r1 + dst] = s;
    }
  }
  free(line);
  *o0 = r0;
  *o1 = r1;
  return out;
}

/* The whole reference pipeline on a 2-D array (n0 x n1): the axes one after the other, then pylops' real
 * bins. Returns the output (*r0 x *r1). */
static cplx *ref_fft(const cplx *x, int64_t n0, int64_t n1, int naxes, const int *axes, const int64_t *nfft, const int *ish,
                     const int *fsh, sl_fft_norm norm, int real, int64_t *o0, int64_t *o1)
{
  int64_t r0 = n0, r1 = n1;
  cplx *cur = malloc(sizeof *cur * (size_t)(r0 * r1));
  memcpy(cur, x, sizeof *cur * (size_t)(r0 * r1));
  for (int i = 0; i < naxes; i++) { /* separable: one axis after the other */
    int64_t a0, a1;
    cplx *nx = ref_axis(cur, r0, r1, axes[i], nfft[i], ish && ish[i], fsh && fsh[i], norm, &a0, &a1);
    free(cur);
    cur = nx, r0 = a0, r1 = a1;
  }
  if (real) { /* pylops' real: bins 0 .. m/2 of the last axis, the interior ones times sqrt(2) */
    int64_t m = r1, h = m / 2 + 1;
    cplx *nx = malloc(sizeof *nx * (size_t)(r0 * h));
    for (int64_t i = 0; i < r0; i++)
      for (int64_t f = 0; f < h; f++) nx[i * h + f] = cur[i * m + f] * (f >= 1 && f <= (m - 1) / 2 ? sqrt(2.0) : 1.0);
    free(cur);
    cur = nx, r1 = h;
  }
  *o0 = r0, *o1 = r1;
  return cur;
}

/* sl_op_fft_nfft on an n0 x 5 array split along axis 0 (the last of 4 ranks owning nothing): the forward
 * against the reference pipeline, the adjoint against the conjugate transpose of the reference's dense
 * matrix (its columns the pipeline of unit vectors; real: the real part of that product), dot test. */
static void test_fft(sl_dtype dt, int64_t n0, int naxes, const int *axes, const int64_t *nfft, const int *ish, const int *fsh,
                     sl_fft_norm norm, int real)
{
  int64_t dims[2] = {n0, 5}, ln = mc_share(dims[0]);
  sl_dist d = sl_dist_default();
  d.local_n = &ln;
  cplx *xg = NULL;
  sl_array *x = mc_array(2, dims, dt, &d, 5, &xg), *y = NULL, *z = NULL;
  sl_op *op = NULL;
  CHECK_OK(sl_op_fft_nfft(&op, x, naxes, axes, nfft, norm, real, ish, fsh));
  if (!op) return;
  int64_t r0, r1;
  cplx *cur = ref_fft(xg, dims[0], dims[1], naxes, axes, nfft, ish, fsh, norm, real, &r0, &r1);
  const int64_t *rd = sl_array_dims(sl_op_range(op));
  CHECK(rd[0] == r0 && rd[1] == r1, "FFT nfft: range %lld x %lld, expected %lld x %lld", (long long)rd[0], (long long)rd[1],
        (long long)r0, (long long)r1);
  char what[128];
  snprintf(what, sizeof what, "FFT %lld x 5, nfft %lld%s%s (axis %d%s, norm %d%s)", (long long)n0, (long long)nfft[0],
           ish && ish[0] ? " ifftshift" : "", fsh && fsh[0] ? " fftshift" : "", axes[0], naxes > 1 ? " and more" : "", (int)norm,
           real ? ", real" : "");
  CHECK_OK(sl_op_create_range(op, &y));
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  cplx *got = mc_gather(y);
  double e = 0, mx = 0;
  for (int64_t i = 0; i < r0 * r1; i++) e = fmax(e, cabs(got[i] - cur[i])), mx = fmax(mx, cabs(cur[i]));
  CHECK(e <= 10 * tol_of(dt) * fmax(1, mx), "%s (%s): max difference %.3g to the naive DFT", what, sl_dtype_name(dt), e);
  /* the adjoint of y (the forward's output) against F^H y, F column by column from unit vectors */
  const int64_t nin = dims[0] * dims[1], nout = r0 * r1;
  cplx *unit = calloc((size_t)nin, sizeof *unit), *adj = calloc((size_t)nin, sizeof *adj);
  for (int64_t c = 0; c < nin; c++) {
    int64_t q0, q1;
    unit[c] = 1;
    cplx *col = ref_fft(unit, dims[0], dims[1], naxes, axes, nfft, ish, fsh, norm, real, &q0, &q1);
    unit[c] = 0;
    for (int64_t r = 0; r < nout; r++) adj[c] += conj(col[r]) * got[r];
    if (real) adj[c] = creal(adj[c]);
    free(col);
  }
  CHECK_OK(sl_array_create_like(&z, x));
  CHECK_OK(sl_op_apply(op, SL_ADJOINT, y, z));
  cplx *back = mc_gather(z);
  e = 0, mx = 0;
  for (int64_t i = 0; i < nin; i++) e = fmax(e, cabs(back[i] - adj[i])), mx = fmax(mx, cabs(adj[i]));
  CHECK(e <= 10 * tol_of(dt) * fmax(1, mx), "%s adjoint (%s): max difference %.3g to the dense F^H", what, sl_dtype_name(dt), e);
  dot(op, dt, what);
  free(got), free(cur), free(xg), free(unit), free(adj), free(back);
  sl_op_destroy(&op);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&z);
}

static void test_bad_input(void)
{
  int64_t dims[2] = {6, 5};
  sl_array *x = NULL;
  CHECK_OK(sl_array_create(&x, 2, dims, SL_FLOAT64, NULL));
  sl_op *op = NULL;
  int ax[1] = {1}, yes[1] = {1};
  int64_t m[1] = {8}, zero[1] = {0};
  int rc = sl_op_fft_nfft(&op, x, 1, ax, m, SL_FFT_ORTHO, 1, NULL, yes);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "fftshift"), "fftshift on the real axis: %s",
        sl_last_error());
  rc = sl_op_fft_nfft(&op, x, 1, ax, zero, SL_FFT_ORTHO, 1, NULL, NULL);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "nfft"), "nfft 0: %s", sl_last_error());
  int64_t mine[1] = {8 + R};
  rc = sl_op_fft_nfft(&op, x, 1, ax, mine, SL_FFT_ORTHO, 1, NULL, NULL);
  CHECK(P == 1 || mc_same_error_everywhere(rc, SL_E_INVALID), "nfft differing between ranks: %s", sl_last_error());
  sl_op_destroy(&op);
  rc = sl_op_roll(&op, x, 2, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "axis"), "roll axis out of range: %s", sl_last_error());
  sl_array_destroy(&x);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  P = sl_size();
  R = sl_rank();
  const sl_dtype *dts = mc_dtypes;
  for (int t = 0; t < 4; t++) {
    test_roll(dts[t], 1, 0, 3);   /* the distributed axis: slabs move between ranks */
    test_roll(dts[t], 1, 0, -15);
    test_roll(dts[t], 2, 0, 5);
    test_roll(dts[t], 2, 1, -1);  /* a local permutation */
    test_roll(dts[t], 2, 1, 0);
  }
  const sl_dtype cdt[2] = {SL_COMPLEX128, SL_COMPLEX64};
  for (int t = 0; t < 2; t++) {
    int a0[1] = {0}, a1[1] = {1}, a01[2] = {0, 1}, one[2] = {1, 1}, mix[2] = {1, 0};
    int64_t pad8[1] = {8}, cut3[1] = {3}, both[2] = {4, 7}, odd[1] = {9};
    for (int64_t n0 = 6; n0 <= 7; n0++) { /* 7: uneven on 2 to 4 ranks */
      test_fft(cdt[t], n0, 1, a0, pad8, NULL, NULL, SL_FFT_ORTHO, 0);  /* padding the distributed axis */
      test_fft(cdt[t], n0, 1, a1, cut3, one, one, SL_FFT_ORTHO, 0);    /* truncating a local axis, both shifts */
      test_fft(cdt[t], n0, 2, a01, both, one, mix, SL_FFT_ORTHO, 0);   /* truncate the distributed axis, pad the other */
      test_fft(cdt[t], n0, 1, a0, pad8, one, one, SL_FFT_ORTHO, 0);    /* shifts along the distributed axis */
    }
    test_fft(cdt[t], 7, 1, a0, odd, one, NULL, SL_FFT_NONE, 0);       /* the norms divide by the padded length */
    test_fft(cdt[t], 7, 2, a01, both, NULL, one, SL_FFT_ONE_OVER_N, 0);
    test_fft(cdt[t], 7, 1, a1, cut3, NULL, NULL, SL_FFT_NONE, 0);
  }
  int a1[1] = {1}, one[1] = {1};
  int64_t pad8[1] = {8}, pad7[1] = {7}, cut3[1] = {3};
  for (int64_t n0 = 6; n0 <= 7; n0++) {
    test_fft(SL_FLOAT64, n0, 1, a1, pad8, one, NULL, SL_FFT_ORTHO, 1); /* real-to-complex, padded */
    test_fft(SL_FLOAT32, n0, 1, a1, pad8, NULL, NULL, SL_FFT_ORTHO, 1);
  }
  test_fft(SL_FLOAT64, 7, 1, a1, pad7, NULL, NULL, SL_FFT_ORTHO, 1); /* odd padded length */
  test_fft(SL_FLOAT64, 7, 1, a1, cut3, one, NULL, SL_FFT_ORTHO, 1);  /* truncated */
  test_fft(SL_FLOAT32, 7, 1, a1, cut3, NULL, NULL, SL_FFT_ORTHO, 1);
  test_bad_input();
  return mc_finish("mpi_fft_ext");
}
