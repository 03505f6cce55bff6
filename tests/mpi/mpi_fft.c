/* Distributed FFT and redistribution on 1 to 4 ranks, sizes that do not divide evenly (and layouts where a
 * rank owns nothing): forward and adjoint of complex and real-to-complex FFTs over one, two and three
 * axes, every norm, the range distributed like the domain or along another axis, float64/complex128 and
 * float32/complex64, against DFT sums computed here term by term; dot tests; moving the distributed axis
 * of arrays (sl_array_redistribute, sl_op_redistribute); bad input. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;

/* One naive 1-D DFT (sign -1 forward, +1 adjoint) along axis k of a C-order array of dims d, lines of nin
 * values to nout bins: out[m] = sum_j in[j] exp(sign 2 pi i m j / n) with n the transform length. */
static void dft_axis(int nd, const int64_t *din, int k, int64_t n, int64_t nout, int sign, const cplx *in, cplx *out)
{
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < k; i++) outer *= din[i];
  for (int i = k + 1; i < nd; i++) inner *= din[i];
  int64_t nin = din[k];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      for (int64_t m = 0; m < nout; m++) {
        cplx s = 0;
        for (int64_t j = 0; j < nin; j++) s += in[(o * nin + j) * inner + i] * cexp(sign * 2 * M_PI * I * (double)(m * j % n) / (double)n);
        out[(o * nout + m) * inner + i] = s;
      }
}

static double scale_of(sl_fft_norm norm, double N) { return norm == SL_FFT_ORTHO ? 1 / sqrt(N) : norm == SL_FFT_ONE_OVER_N ? 1 / N : 1; }

static int is_interior(int64_t k, int64_t n) { return k >= 1 && k <= (n - 1) / 2; }

/* The reference forward transform of the global x (dims d) over axes; the real variant on axes[naxes-1]. */
static cplx *reference(int nd, const int64_t *d, int naxes, const int *axes, int real, sl_fft_norm norm, const cplx *x, int adjoint,
                       int64_t *outdims)
{
  int64_t cur[8], total = 1, N = 1;
  memcpy(cur, d, sizeof(int64_t) * (size_t)nd);
  int ar = real ? axes[naxes - 1] : -1;
  for (int i = 0; i < nd; i++) total *= d[i];
  for (int i = 0; i < naxes; i++) N *= d[axes[i]];
  int64_t nreal = real ? d[ar] : 0;
  cplx *a = malloc(sizeof *a * (size_t)total), *b = malloc(sizeof *b * (size_t)total);
  int64_t nin = adjoint && real ? total / d[ar] * (d[ar] / 2 + 1) : total; /* the adjoint reads the bins */
  memcpy(a, x, sizeof *a * (size_t)nin);
  if (!adjoint) {
    /* the real axis first (n real samples to n/2 + 1 bins), then the others */
    for (int i = naxes - 1; i >= 0; i--) {
      int k = axes[i];
      int64_t n = d[k], nout = k == ar ? n / 2 + 1 : n;
      dft_axis(nd, cur, k, n, nout, -1, a, b);
      cur[k] = nout;
      cplx *t = a;
      a = b, b = t;
    }
    int64_t cnt = 1, inner = 1;
    for (int i = 0; i < nd; i++) cnt *= cur[i];
    for (int i = ar + 1; real && i < nd; i++) inner *= cur[i];
    for (int64_t e = 0; e < cnt; e++) {
      a[e] *= scale_of(norm, (double)N);
      if (real && is_interior(e / inner % cur[ar], nreal)) a[e] *= sqrt(2.0);
    }
  } else {
    /* x holds the complex side (dims with n/2 + 1 bins on the real axis) */
    int64_t cnt = 1, inner = 1;
    if (real) cur[ar] = d[ar] / 2 + 1;
    for (int i = 0; i < nd; i++) cnt *= cur[i];
    for (int i = ar + 1; real && i < nd; i++) inner *= cur[i];
    for (int64_t e = 0; e < cnt; e++) {
      a[e] *= scale_of(norm, (double)N);
      if (real && is_interior(e / inner % cur[ar], nreal)) a[e] *= sqrt(2.0);
    }
    for (int i = 0; i < naxes; i++) {
      int k = axes[i];
      int64_t n = d[k];
      dft_axis(nd, cur, k, n, n, +1, a, b); /* the real axis: sum over the n/2 + 1 bins only */
      cur[k] = n;
      cplx *t = a;
      a = b, b = t;
    }
    if (real)
      for (int64_t e = 0; e < total; e++) a[e] = creal(a[e]);
  }
  memcpy(outdims, cur, sizeof(int64_t) * (size_t)nd);
  free(b);
  return a;
}

static void run(int nd, const int64_t *d, int dist_axis, int naxes, const int *axes, int real, sl_fft_norm norm, int out_axis,
                sl_dtype dt)
{
  char what[160];
  int n = snprintf(what, sizeof what, "%sFFT %s dims", real ? "R" : "", sl_dtype_name(dt));
  for (int k = 0; k < nd; k++) n += snprintf(what + n, sizeof what - (size_t)n, "%s%lld", k ? "x" : " ", (long long)d[k]);
  n += snprintf(what + n, sizeof what - (size_t)n, " dist %d axes", dist_axis);
  for (int k = 0; k < naxes; k++) n += snprintf(what + n, sizeof what - (size_t)n, "%s%d", k ? "," : " ", axes[k]);
  snprintf(what + n, sizeof what - (size_t)n, " norm %d out %d", (int)norm, out_axis);
  sl_dist dist = sl_dist_scatter(dist_axis);
  cplx *xg = NULL;
  sl_array *x = mc_array(nd, d, dt, &dist, 5, &xg);
  sl_op *op = NULL;
  CHECK_OK(sl_op_fft(&op, x, naxes, axes, norm, real, out_axis));
  if (!op) {
    sl_array_destroy(&x);
    free(xg);
    return;
  }
  sl_array *y = NULL, *xa = NULL;
  CHECK_OK(sl_op_create_range(op, &y));
  CHECK_OK(sl_op_create_domain(op, &xa));
  CHECK(sl_array_axis(y) == (out_axis < 0 ? dist_axis : out_axis), "%s: the range is distributed along %d", what, sl_array_axis(y));
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  int64_t od[8];
  cplx *ref = reference(nd, d, naxes, axes, real, norm, xg, 0, od);
  char w2[200];
  snprintf(w2, sizeof w2, "%s forward", what);
  int64_t ny = 1;
  for (int k = 0; k < nd; k++) {
    CHECK(sl_array_dims(y)[k] == od[k], "%s: range dim %d is %lld, expected %lld", what, k, (long long)sl_array_dims(y)[k], (long long)od[k]);
    ny *= od[k];
  }
  mc_compare(y, ref, w2);
  free(ref);
  /* adjoint of a range array set from the test formula */
  cplx *yg = malloc(sizeof *yg * (size_t)ny);
  sl_dtype yt = sl_array_dtype(y);
  for (int64_t e = 0; e < ny; e++) yg[e] = mc_value(yt, e, 9);
  void *buf = malloc(sl_dtype_size(yt) * (size_t)ny);
  mc_to_dtype(yt, ny, yg, buf);
  CHECK_OK(sl_array_scatter(y, -1, buf));
  free(buf);
  CHECK_OK(sl_op_apply(op, SL_ADJOINT, y, xa));
  ref = reference(nd, d, naxes, axes, real, norm, yg, 1, od);
  snprintf(w2, sizeof w2, "%s adjoint", what);
  mc_compare(xa, ref, w2);
  free(ref);
  free(yg);
  double err = 1;
  CHECK_OK(sl_dottest(op, 3, &err));
  CHECK(err < (dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-5 : 1e-13), "%s: dot test %g", what, err);
  /* between two identities the transform reads and writes the library's temporaries (with many chunks: several
   * home-less chunks, which do not lie back to back) */
  sl_op *I0 = NULL, *I1 = NULL, *P = NULL, *Q = NULL;
  CHECK_OK(sl_op_identity(&I0, sl_op_domain(op)));
  CHECK_OK(sl_op_identity(&I1, sl_op_range(op)));
  CHECK_OK(sl_op_product(&P, op, I0));
  CHECK_OK(sl_op_product(&Q, I1, P));
  CHECK_OK(sl_op_apply(Q, SL_FORWARD, x, y));
  ref = reference(nd, d, naxes, axes, real, norm, xg, 0, od);
  snprintf(w2, sizeof w2, "%s forward between identities", what);
  mc_compare(y, ref, w2);
  free(ref);
  sl_op_destroy(&Q), sl_op_destroy(&P), sl_op_destroy(&I1), sl_op_destroy(&I0);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&xa);
  sl_op_destroy(&op);
  free(xg);
}

static void redistribute(void)
{
  int P = sl_size(), me = sl_rank();
  int64_t d[3] = {5, 7, 3};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      sl_dist da = sl_dist_scatter(a), db = sl_dist_scatter(b);
      /* the same axis: uneven extents (rank 0 takes all it can) */
      int64_t ln = 0;
      if (a == b) {
        ln = me == 0 ? d[b] - (P - 1) / 2 : (me <= (P - 1) / 2 ? 1 : 0);
        db.local_n = &ln;
      }
      cplx *g = NULL;
      sl_array *x = mc_array(3, d, SL_COMPLEX128, &da, 4, &g), *y = NULL;
      CHECK_OK(sl_array_create(&y, 3, d, SL_COMPLEX128, &db));
      CHECK_OK(sl_array_redistribute(y, x));
      char what[96];
      snprintf(what, sizeof what, "redistribute axis %d to %d", a, b);
      mc_compare(y, g, what);
      sl_op *op = NULL;
      CHECK_OK(sl_op_redistribute(&op, x, y));
      /* the operator's plan (shared-memory segments between the node's ranks unless STARLOPS_COMM_SHM=0),
       * applied three times to new values, forward and back: each lands whole */
      sl_array *z = NULL, *x2 = NULL;
      CHECK_OK(sl_array_create(&z, 3, d, SL_COMPLEX128, &db));
      CHECK_OK(sl_array_create(&x2, 3, d, SL_COMPLEX128, &da));
      for (int k = 1; k <= 3 && op; k++) {
        if (k > 1) CHECK_OK(sl_array_scale(x, SL_REAL(-2.0)));
        for (int64_t i = 0; k > 1 && i < d[0] * d[1] * d[2]; i++) g[i] *= -2.0;
        CHECK_OK(sl_op_apply(op, SL_FORWARD, x, z));
        CHECK_OK(sl_op_apply(op, SL_ADJOINT, z, x2));
        char w2[128];
        snprintf(w2, sizeof w2, "%s, operator, application %d", what, k);
        mc_compare(z, g, w2);
        snprintf(w2, sizeof w2, "%s, operator back, application %d", what, k);
        mc_compare(x2, g, w2);
      }
      sl_array_destroy(&z);
      sl_array_destroy(&x2);
      double err = 1;
      if (op) CHECK_OK(sl_dottest(op, 7, &err));
      CHECK(err < 1e-14, "%s: dot test %g", what, err);
      sl_op_destroy(&op);
      sl_array_destroy(&x);
      sl_array_destroy(&y);
      free(g);
    }
  /* errors: different dims; a mask */
  int64_t d2[3] = {5, 7, 4};
  sl_array *x = NULL, *y = NULL, *m = NULL;
  CHECK_OK(sl_array_create(&x, 3, d, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_create(&y, 3, d2, SL_FLOAT64, NULL));
  int rc = sl_array_redistribute(y, x);
  CHECK(mc_same_error_everywhere(rc, SL_E_DIMS) && strstr(sl_last_error(), "dims"), "redistribute dims: %s", sl_last_error());
  int *mask = calloc((size_t)P, sizeof *mask);
  sl_dist dm = sl_dist_scatter(1);
  dm.mask = mask;
  CHECK_OK(sl_array_create(&m, 3, d, SL_FLOAT64, &dm));
  mask[0] = 0;
  rc = sl_array_redistribute(m, x);
  CHECK(mc_same_error_everywhere(rc, SL_E_DIST) && strstr(sl_last_error(), "mask"), "redistribute mask: %s", sl_last_error());
  rc = sl_array_redistribute(x, x);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "same"), "redistribute same: %s", sl_last_error());
  free(mask);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&m);
}

static double gv(int64_t t, int64_t s, int64_t r) { return exp(-0.3 * (double)t) * cos(0.7 * (double)s + 0.4 * (double)r + 0.2 * (double)t); }
static double mv(int64_t t, int64_t r, int64_t v) { return sin(0.9 * (double)t + 0.5 * (double)r - 0.8 * (double)v + 0.1); }

/* MDC against sums written here: with nfmax = nt/2 + 1, c times the circular convolution in time summed over
 * receivers; with fewer frequencies, the inverse real DFT (interior bins twice) of the truncated products. */
static void mdc(int64_t nt, int64_t ns, int64_t nr, int64_t nv, int64_t nfmax, sl_dtype dt, int twosided)
{
  int P = sl_size(), me = sl_rank();
  int64_t nf = nt / 2 + 1, nfl = nfmax / P + (me < nfmax % P), f0 = 0;
  for (int r = 0; r < me; r++) f0 += nfmax / P + (r < nfmax % P);
  double ddt = 0.004, ddr = 10.0, c = ddt * ddr * sqrt((double)nt);
  cplx *G = malloc(sizeof *G * (size_t)(nfmax * ns * nr));
  for (int64_t f = 0; f < nfmax; f++)
    for (int64_t s = 0; s < ns; s++)
      for (int64_t r = 0; r < nr; r++) {
        cplx z = 0;
        for (int64_t t = 0; t < nt; t++) z += gv(t, s, r) * cexp(-2 * M_PI * I * (double)(f * t % nt) / (double)nt);
        G[(f * ns + s) * nr + r] = z;
      }
  sl_dtype ct = dt == SL_FLOAT64 ? SL_COMPLEX128 : SL_COMPLEX64;
  void *Gl = malloc(sl_dtype_size(ct) * (size_t)(nfl * ns * nr + 1));
  mc_to_dtype(ct, nfl * ns * nr, G + f0 * ns * nr, Gl);
  sl_op *op = NULL;
  CHECK_OK((twosided ? sl_op_mdc_twosided : sl_op_mdc)(&op, Gl, nfl, nfmax, ns, nr, nt, nv, ddt, ddr, dt));
  free(Gl);
  if (!op) {
    free(G);
    return;
  }
  double *m = malloc(sizeof *m * (size_t)(nt * nr * nv));
  for (int64_t t = 0; t < nt; t++)
    for (int64_t r = 0; r < nr; r++)
      for (int64_t v = 0; v < nv; v++) m[(t * nr + r) * nv + v] = mv(t, r, v);
  /* twosided: the reference convolves numpy's ifftshift of the model along time, ms[t] = m[(t + nt/2) % nt] */
  double *ms = malloc(sizeof *ms * (size_t)(nt * nr * nv));
  for (int64_t t = 0; t < nt; t++)
    memcpy(ms + t * nr * nv, m + (twosided ? (t + nt / 2) % nt : t) * nr * nv, sizeof *ms * (size_t)(nr * nv));
  cplx *ref = calloc((size_t)(nt * ns * nv), sizeof *ref);
  for (int64_t t = 0; t < nt; t++)
    for (int64_t s = 0; s < ns; s++)
      for (int64_t v = 0; v < nv; v++) {
        double acc = 0;
        if (nfmax == nf) {
          for (int64_t r = 0; r < nr; r++)
            for (int64_t tau = 0; tau < nt; tau++) acc += gv((t - tau + nt) % nt, s, r) * ms[(tau * nr + r) * nv + v];
          acc *= c;
        } else {
          for (int64_t f = 0; f < nfmax; f++) {
            cplx D = 0;
            for (int64_t r = 0; r < nr; r++) {
              cplx M = 0;
              for (int64_t tau = 0; tau < nt; tau++) M += ms[(tau * nr + r) * nv + v] * cexp(-2 * M_PI * I * (double)(f * tau % nt) / (double)nt);
              D += G[(f * ns + s) * nr + r] * M;
            }
            double w = is_interior(f, nt) ? 2 : 1;
            acc += w * creal(D * cexp(2 * M_PI * I * (double)(f * t % nt) / (double)nt));
          }
          acc *= c / (double)nt;
        }
        ref[(t * ns + s) * nv + v] = acc;
      }
  sl_array *x = NULL, *y = NULL;
  CHECK_OK(sl_op_create_domain(op, &x));
  CHECK_OK(sl_op_create_range(op, &y));
  CHECK(x && y && sl_array_ndim(x) == 3 && sl_array_dims(x)[0] == nt && sl_array_dims(x)[1] == nr && sl_array_dims(y)[1] == ns,
        "MDC layouts");
  void *mb = malloc(sl_dtype_size(dt) * (size_t)(nt * nr * nv));
  cplx *mz = malloc(sizeof *mz * (size_t)(nt * nr * nv));
  for (int64_t i = 0; i < nt * nr * nv; i++) mz[i] = m[i];
  mc_to_dtype(dt, nt * nr * nv, mz, mb);
  CHECK_OK(sl_array_scatter(x, -1, mb));
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  char what[120];
  snprintf(what, sizeof what, "MDC%s %s nt %lld ns %lld nr %lld nv %lld nfmax %lld", twosided ? " twosided" : "", sl_dtype_name(dt),
           (long long)nt, (long long)ns, (long long)nr, (long long)nv, (long long)nfmax);
  mc_compare(y, ref, what);
  double err = 1;
  CHECK_OK(sl_dottest(op, 5, &err));
  CHECK(err < (dt == SL_FLOAT32 ? 1e-5 : 1e-13), "%s: dot test %g", what, err);
  free(mb), free(mz), free(m), free(ms), free(ref), free(G);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_op_destroy(&op);
  /* bad input: frequencies that do not add up, nfmax too large */
  int rc = sl_op_mdc(&op, NULL, 0, nfmax, ns, nr, nt, nv, ddt, ddr, dt);
  CHECK(mc_same_error_everywhere(rc, SL_E_DIMS) && strstr(sl_last_error(), "nfl"), "MDC nfl: %s", sl_last_error());
  rc = sl_op_mdc(&op, NULL, 0, nf + 1, ns, nr, nt, nv, ddt, ddr, dt);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "nfmax"), "MDC nfmax: %s", sl_last_error());
}

static void errors(void)
{
  int64_t d[2] = {6, 8};
  sl_array *c = NULL, *r = NULL, *r1 = NULL;
  CHECK_OK(sl_array_create(&c, 2, d, SL_COMPLEX128, NULL));
  CHECK_OK(sl_array_create(&r, 2, d, SL_FLOAT64, NULL));
  sl_op *op = NULL;
  int ax0[1] = {0}, dup[2] = {1, 1}, bad[1] = {2};
  int rc = sl_op_fft(&op, c, 1, NULL, SL_FFT_ORTHO, 1, -1);
  CHECK(mc_same_error_everywhere(rc, SL_E_DTYPE) && strstr(sl_last_error(), "real"), "real on complex: %s", sl_last_error());
  rc = sl_op_fft(&op, r, 1, NULL, SL_FFT_ORTHO, 0, -1);
  CHECK(mc_same_error_everywhere(rc, SL_E_DTYPE) && strstr(sl_last_error(), "complex"), "complex on real: %s", sl_last_error());
  rc = sl_op_fft(&op, r, 1, ax0, SL_FFT_ORTHO, 1, -1);
  CHECK(mc_same_error_everywhere(rc, SL_E_DIST) && strstr(sl_last_error(), "distributed"), "real axis distributed: %s", sl_last_error());
  rc = sl_op_fft(&op, c, 2, dup, SL_FFT_ORTHO, 0, -1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "twice"), "duplicate axis: %s", sl_last_error());
  rc = sl_op_fft(&op, c, 1, bad, SL_FFT_ORTHO, 0, -1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "axes"), "bad axis: %s", sl_last_error());
  rc = sl_op_fft(&op, c, 1, NULL, (sl_fft_norm)9, 0, -1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "norm"), "bad norm: %s", sl_last_error());
  rc = sl_op_fft(&op, c, 1, NULL, SL_FFT_ORTHO, 0, 5);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "out_axis"), "bad out_axis: %s", sl_last_error());
  rc = sl_op_fft(&op, c, 3, NULL, SL_FFT_ORTHO, 0, -1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "naxes"), "bad naxes: %s", sl_last_error());
  int64_t n1 = 10;
  CHECK_OK(sl_array_create(&r1, 1, &n1, SL_COMPLEX128, NULL));
  rc = sl_op_fft(&op, r1, 1, NULL, SL_FFT_ORTHO, 0, -1);
  if (sl_size() > 1) CHECK(mc_same_error_everywhere(rc, SL_E_DIST) && strstr(sl_last_error(), "1-D"), "1-D distributed: %s", sl_last_error());
  else CHECK(rc == SL_SUCCESS, "1-D on one rank: %s", sl_last_error());
  sl_op_destroy(&op);
  CHECK(op == NULL, "no operator after an error");
  sl_array_destroy(&c);
  sl_array_destroy(&r);
  sl_array_destroy(&r1);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  int64_t d2[2] = {7, 10}, d2b[2] = {3, 8}, d2c[2] = {7, 3}, d3[3] = {5, 6, 4}, d3r[3] = {6, 5, 9};
  int a01[2] = {0, 1}, a12[2] = {1, 2}, a0[1] = {0}, a2[1] = {2}, a021[3] = {0, 2, 1};
  run(2, d2, 0, 2, a01, 0, SL_FFT_ORTHO, -1, SL_COMPLEX128);
  run(2, d2, 0, 2, a01, 0, SL_FFT_ORTHO, 1, SL_COMPLEX128);
  run(2, d2b, 0, 2, a01, 0, SL_FFT_NONE, -1, SL_COMPLEX128);
  run(2, d2c, 0, 2, a01, 0, SL_FFT_ONE_OVER_N, -1, SL_COMPLEX128);
  run(3, d3, 1, 2, a12, 0, SL_FFT_NONE, -1, SL_COMPLEX128);
  run(3, d3, 2, 1, a0, 0, SL_FFT_ORTHO, -1, SL_COMPLEX128);
  run(3, d3, 0, 3, a021, 0, SL_FFT_ORTHO, 2, SL_COMPLEX128);
  /* local axes apart (two plans), and two consecutive local axes before a local inner axis */
  run(3, d3, 1, 2, (int[2]){2, 0}, 0, SL_FFT_ORTHO, -1, SL_COMPLEX128);
  run(3, d3, 2, 2, (int[2]){1, 0}, 0, SL_FFT_ONE_OVER_N, -1, SL_COMPLEX64);
  /* four axes: local runs of at most three axes (cuFFT plans have rank 1 to 3) */
  run(4, (int64_t[4]){5, 3, 4, 2}, 0, 4, (int[4]){0, 1, 2, 3}, 0, SL_FFT_ORTHO, -1, SL_COMPLEX128);
  run(2, d2, 0, 2, a01, 1, SL_FFT_ORTHO, -1, SL_FLOAT64);
  run(2, d2, 0, 2, a01, 1, SL_FFT_NONE, 1, SL_FLOAT64);
  run(3, d3r, 0, 1, a2, 1, SL_FFT_ONE_OVER_N, -1, SL_FLOAT64);
  run(3, d3r, 1, 3, (int[3]){1, 0, 2}, 1, SL_FFT_ORTHO, -1, SL_FLOAT64);
  run(2, d2, 0, 2, a01, 0, SL_FFT_ORTHO, -1, SL_COMPLEX64);
  run(2, d2, 0, 2, a01, 1, SL_FFT_ORTHO, -1, SL_FLOAT32);
  mdc(8, 3, 5, 2, 5, SL_FLOAT64, 0);
  mdc(9, 4, 3, 1, 3, SL_FLOAT64, 0);
  mdc(10, 2, 7, 3, 6, SL_FLOAT32, 0);
  mdc(9, 3, 4, 2, 5, SL_FLOAT64, 1); /* twosided: nt = 2 * 5 - 1, every frequency */
  mdc(11, 2, 3, 2, 4, SL_FLOAT64, 1);
  mdc(7, 2, 5, 1, 4, SL_FLOAT32, 1);
  mdc(10, 2, 3, 2, 4, SL_FLOAT64, 1); /* twosided with an even nt */
  redistribute();
  errors();
  return mc_finish("mpi_fft");
}
