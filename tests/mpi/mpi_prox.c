/* The proximal layer and the proximal solvers on 1 to 4 ranks (the last of 4 owning nothing), in the four
 * dtypes: every prox, conjugate prox, value and gradient against the formula evaluated here element by
 * element (L1, Box, L2 with and without an operator, L21 over a stacked array, pre- and postcomposition);
 * ProximalGradient (three accelerations), ADMM-L2 and PrimalDual (TV denoising with Gradient and L21, both
 * update orders, accelerated steps, theta) against serial implementations written here; L2 with a derivative
 * as its operator and ADMM-L2 with A the derivative (coupling the ranks) against dense direct solves; bad input. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;

static int P, R;

static double tolf(sl_dtype dt) { return dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-10; }

/* A 2-D array (n0 x n1, split along axis 0 with share) holding scale * mc_value(seed) + shift. */
static sl_array *make(sl_dtype dt, int64_t n0, int64_t n1, int seed, double scale, double shift, cplx **g)
{
  int64_t dims[2] = {n0, n1}, ln = mc_share(n0);
  sl_dist d = sl_dist_default();
  d.local_n = &ln;
  sl_array *a = NULL;
  CHECK_OK(sl_array_create(&a, 2, dims, dt, &d));
  int64_t n = n0 * n1;
  cplx *z = malloc(sizeof *z * (size_t)n);
  for (int64_t i = 0; i < n; i++) z[i] = scale * mc_value(dt, i, seed) + shift;
  void *buf = malloc((size_t)n * sl_dtype_size(dt));
  mc_to_dtype(dt, n, z, buf);
  CHECK_OK(sl_array_scatter(a, -1, buf));
  mc_from_dtype(dt, n, buf, z);
  free(buf);
  *g = z;
  return a;
}

/* Max relative difference between a (gathered) and ref. */
static double diff(sl_array *a, const cplx *ref)
{
  cplx *got = mc_gather(a);
  int64_t n = sl_array_global_size(a);
  double d = 0, m = 1e-300;
  for (int64_t i = 0; i < n; i++) {
    d = fmax(d, cabs(got[i] - ref[i]));
    m = fmax(m, cabs(ref[i]));
  }
  free(got);
  return d / fmax(m, 1.0);
}

#define EXPECT_CLOSE(a, ref, tol, what)                                                               \
  do {                                                                                                \
    double e_ = diff((a), (ref));                                                                     \
    CHECK(e_ <= (tol), "%s (%s): relative difference %.3g > %.3g", (what), sl_dtype_name(dt), e_, (double)(tol)); \
  } while (0)

static double value_of(sl_prox *p, sl_array *x)
{
  sl_scalar *s = NULL;
  sl_cscalar v = {NAN, NAN};
  CHECK_OK(sl_scalar_create(&s, SL_FLOAT64));
  CHECK_OK(sl_prox_value(p, x, s));
  CHECK_OK(sl_scalar_get_c(s, &v));
  sl_scalar_destroy(&s);
  return v.re;
}

#define EXPECT_VALUE(p, x, ref, what)                                                                 \
  do {                                                                                                \
    double v_ = value_of((p), (x)), r_ = (ref);                                                       \
    CHECK(fabs(v_ - r_) <= tolf(dt) * fmax(1.0, fabs(r_)), "%s value (%s): %.15g, expected %.15g", (what), \
          sl_dtype_name(dt), v_, r_);                                                                 \
  } while (0)

static cplx soft(cplx v, double t) { return cabs(v) > t ? v * (cabs(v) - t) / cabs(v) : 0; }
static cplx ball(cplx v, double t) { return cabs(v) > t ? v * t / cabs(v) : v; }
static double clip1(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }
static cplx clipc(cplx v, double lo, double hi) { return CMPLX(clip1(creal(v), lo, hi), clip1(cimag(v), lo, hi)); }

/* The prox of p at tau applied out of place and in place, against ref. */
static void check_prox(sl_dtype dt, sl_prox *p, double tau, sl_array *x, const cplx *ref, int dual, const char *what)
{
  sl_array *y = NULL, *z = NULL;
  CHECK_OK(sl_array_create_like(&y, x));
  CHECK_OK(sl_array_create_like(&z, x));
  CHECK_OK(dual ? sl_prox_apply_dual(p, tau, x, y) : sl_prox_apply(p, tau, x, y));
  EXPECT_CLOSE(y, ref, tolf(dt), what);
  CHECK_OK(sl_array_copy(z, x));
  CHECK_OK(dual ? sl_prox_apply_dual(p, tau, z, z) : sl_prox_apply(p, tau, z, z));
  char w[128];
  snprintf(w, sizeof w, "%s in place", what);
  EXPECT_CLOSE(z, ref, tolf(dt), w);
  sl_array_destroy(&y);
  sl_array_destroy(&z);
}

static void test_elementwise(sl_dtype dt)
{
  const int64_t n0 = 13, n1 = 5, n = n0 * n1;
  cplx *x = NULL, *b = NULL, *ref = malloc(sizeof *ref * (size_t)n);
  sl_array *ax = make(dt, n0, n1, 1, 1.0, 0.0, &x), *ab = make(dt, n0, n1, 2, 0.5, 0.0, &b);
  const double sigma = 0.4, tau = 0.7;
  /* L1 */
  sl_prox *l1 = NULL;
  CHECK_OK(sl_prox_l1(&l1, sigma));
  double v = 0;
  for (int64_t i = 0; i < n; i++) ref[i] = soft(x[i], tau * sigma), v += sigma * cabs(x[i]);
  check_prox(dt, l1, tau, ax, ref, 0, "L1 prox");
  for (int64_t i = 0; i < n; i++) ref[i] = ball(x[i], sigma);
  check_prox(dt, l1, tau, ax, ref, 1, "L1 dual prox");
  EXPECT_VALUE(l1, ax, v, "L1");
  /* Box: clipping; the dual through Moreau's identity; the indicator */
  sl_prox *box = NULL;
  CHECK_OK(sl_prox_box(&box, -0.3, 0.5));
  for (int64_t i = 0; i < n; i++) ref[i] = sl_dtype_is_complex(dt) ? clipc(x[i], -0.3, 0.5) : clip1(creal(x[i]), -0.3, 0.5);
  check_prox(dt, box, tau, ax, ref, 0, "Box prox");
  sl_array *inside = NULL;
  CHECK_OK(sl_array_create_like(&inside, ax));
  CHECK_OK(sl_prox_apply(box, 1.0, ax, inside));
  EXPECT_VALUE(box, inside, 0.0, "Box inside");
  CHECK(isinf(value_of(box, ax)), "Box value outside the box (%s) is not +Inf", sl_dtype_name(dt));
  for (int64_t i = 0; i < n; i++) {
    cplx c = x[i] / tau;
    c = sl_dtype_is_complex(dt) ? clipc(c, -0.3, 0.5) : clip1(creal(c), -0.3, 0.5);
    ref[i] = x[i] - tau * c;
  }
  check_prox(dt, box, tau, ax, ref, 1, "Box dual prox (Moreau)");
  /* L2 without an operator */
  sl_prox *l2 = NULL;
  const double s2 = 0.8;
  CHECK_OK(sl_prox_l2(&l2, NULL, ab, s2, 0));
  v = 0;
  for (int64_t i = 0; i < n; i++) ref[i] = (x[i] + tau * s2 * b[i]) / (1 + tau * s2), v += 0.5 * s2 * pow(cabs(x[i] - b[i]), 2);
  check_prox(dt, l2, tau, ax, ref, 0, "L2 prox");
  for (int64_t i = 0; i < n; i++) ref[i] = s2 * (x[i] - tau * b[i]) / (s2 + tau);
  check_prox(dt, l2, tau, ax, ref, 1, "L2 dual prox");
  EXPECT_VALUE(l2, ax, v, "L2");
  sl_array *g = NULL;
  CHECK_OK(sl_array_create_like(&g, ax));
  CHECK_OK(sl_prox_gradient(l2, ax, g));
  for (int64_t i = 0; i < n; i++) ref[i] = s2 * (x[i] - b[i]);
  EXPECT_CLOSE(g, ref, tolf(dt), "L2 gradient");
  /* precomposition f(a x + b) of L1 and of L2, postcomposition a f + b of L1 */
  sl_prox *pre = NULL, *pre2 = NULL, *post = NULL;
  const double a = 2.0, sh = 0.1;
  CHECK_OK(sl_prox_precompose(&pre, l1, a, sh));
  v = 0;
  for (int64_t i = 0; i < n; i++) ref[i] = (soft(a * x[i] + sh, a * a * tau * sigma) - sh) / a, v += sigma * cabs(a * x[i] + sh);
  check_prox(dt, pre, tau, ax, ref, 0, "precomposed L1 prox");
  EXPECT_VALUE(pre, ax, v, "precomposed L1");
  for (int64_t i = 0; i < n; i++) { /* Moreau: x - tau prox_(g / tau)(x / tau) */
    cplx c = x[i] / tau;
    ref[i] = x[i] - tau * (soft(a * c + sh, a * a * sigma / tau) - sh) / a;
  }
  check_prox(dt, pre, tau, ax, ref, 1, "precomposed L1 dual prox (Moreau)");
  CHECK_OK(sl_prox_precompose(&pre2, l2, a, sh));
  CHECK_OK(sl_prox_gradient(pre2, ax, g));
  for (int64_t i = 0; i < n; i++) ref[i] = a * s2 * (a * x[i] + sh - b[i]);
  EXPECT_CLOSE(g, ref, tolf(dt), "precomposed L2 gradient");
  CHECK_OK(sl_prox_postcompose(&post, l1, 3.0, 0.5));
  v = 0.5;
  for (int64_t i = 0; i < n; i++) ref[i] = soft(x[i], 3.0 * tau * sigma), v += 3.0 * sigma * cabs(x[i]);
  check_prox(dt, post, tau, ax, ref, 0, "postcomposed L1 prox");
  EXPECT_VALUE(post, ax, v, "postcomposed L1");
  for (int64_t i = 0; i < n; i++) ref[i] = ball(x[i], 3.0 * sigma);
  check_prox(dt, post, tau, ax, ref, 1, "postcomposed L1 dual prox");
  /* the value of a precomposed L2; a postcomposed L2 (prox, value, gradient); a postcomposition of a
   * precomposition; a precomposed Box (a shifted, scaled box) */
  v = 0;
  for (int64_t i = 0; i < n; i++) v += 0.5 * s2 * pow(cabs(a * x[i] + sh - b[i]), 2);
  EXPECT_VALUE(pre2, ax, v, "precomposed L2");
  sl_prox *post2 = NULL, *nest = NULL, *prebox = NULL;
  CHECK_OK(sl_prox_postcompose(&post2, l2, 3.0, 0.5));
  v = 0.5;
  for (int64_t i = 0; i < n; i++)
    ref[i] = (x[i] + 3.0 * tau * s2 * b[i]) / (1 + 3.0 * tau * s2), v += 3.0 * 0.5 * s2 * pow(cabs(x[i] - b[i]), 2);
  check_prox(dt, post2, tau, ax, ref, 0, "postcomposed L2 prox");
  EXPECT_VALUE(post2, ax, v, "postcomposed L2");
  CHECK_OK(sl_prox_gradient(post2, ax, g));
  for (int64_t i = 0; i < n; i++) ref[i] = 3.0 * s2 * (x[i] - b[i]);
  EXPECT_CLOSE(g, ref, tolf(dt), "postcomposed L2 gradient");
  CHECK_OK(sl_prox_postcompose(&nest, pre, 3.0, 0.5));
  v = 0.5;
  for (int64_t i = 0; i < n; i++)
    ref[i] = (soft(a * x[i] + sh, a * a * 3.0 * tau * sigma) - sh) / a, v += 3.0 * sigma * cabs(a * x[i] + sh);
  check_prox(dt, nest, tau, ax, ref, 0, "postcomposed precomposed L1 prox");
  EXPECT_VALUE(nest, ax, v, "postcomposed precomposed L1");
  CHECK_OK(sl_prox_precompose(&prebox, box, a, sh));
  for (int64_t i = 0; i < n; i++) {
    cplx c = a * x[i] + sh;
    ref[i] = ((sl_dtype_is_complex(dt) ? clipc(c, -0.3, 0.5) : clip1(creal(c), -0.3, 0.5)) - sh) / a;
  }
  check_prox(dt, prebox, tau, ax, ref, 0, "precomposed Box prox (the box (lo - b) / a .. (hi - b) / a)");
  sl_prox_destroy(&post2);
  sl_prox_destroy(&nest);
  sl_prox_destroy(&prebox);
  /* not smooth: no gradient; L21 refuses a plain array */
  int rc = sl_prox_gradient(l1, ax, g);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID), "gradient of L1: %s", sl_last_error());
  sl_prox *l21 = NULL;
  CHECK_OK(sl_prox_l21(&l21, 1.0));
  rc = sl_prox_apply(l21, 1.0, ax, g);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "stacked"), "L21 on a plain array: %s",
        sl_last_error());
  sl_prox *objs[] = {l1, box, l2, pre, pre2, post, l21};
  for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) sl_prox_destroy(&objs[i]);
  sl_array *arrs[] = {ax, ab, inside, g};
  for (size_t i = 0; i < sizeof arrs / sizeof *arrs; i++) sl_array_destroy(&arrs[i]);
  free(x);
  free(b);
  free(ref);
}

static void test_l21(sl_dtype dt)
{
  const int64_t n0 = 11, n1 = 4, n = n0 * n1;
  const int np = 3;
  cplx *x[3], *ref = malloc(sizeof *ref * (size_t)(np * n)), *xs = malloc(sizeof *xs * (size_t)(np * n));
  sl_array *parts[3], *sx = NULL, *sy = NULL;
  for (int k = 0; k < np; k++) parts[k] = make(dt, n0, n1, 3 + k, 0.6, 0.0, &x[k]);
  CHECK_OK(sl_array_stack(&sx, np, parts));
  CHECK_OK(sl_array_create_like(&sy, sx));
  const double sigma = 0.3, tau = 0.8;
  sl_prox *p = NULL;
  CHECK_OK(sl_prox_l21(&p, sigma));
  for (int kind = 0; kind < 3; kind++) {
    double v = 0;
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < np; k++) s += pow(cabs(x[k][j]), 2);
      double gn = sqrt(s), f = kind == 0 ? (gn > tau * sigma ? 1 - tau * sigma / gn : 0) : (gn > sigma ? sigma / gn : 1);
      for (int k = 0; k < np; k++) ref[k * n + j] = f * x[k][j];
      v += sigma * gn;
    }
    if (kind == 2) {
      EXPECT_VALUE(p, sx, v, "L21");
      continue;
    }
    CHECK_OK(kind == 0 ? sl_prox_apply(p, tau, sx, sy) : sl_prox_apply_dual(p, tau, sx, sy));
    for (int k = 0; k < np; k++) {
      char w[64];
      snprintf(w, sizeof w, "L21 %s, part %d", kind == 0 ? "prox" : "dual prox", k);
      EXPECT_CLOSE(sl_array_stack_part(sy, k), ref + k * n, tolf(dt), w);
    }
  }
  (void)xs;
  free(xs);
  sl_prox_destroy(&p);
  sl_array_destroy(&sx);
  sl_array_destroy(&sy);
  for (int k = 0; k < np; k++) free(x[k]);
  free(ref);
}

static void test_l21_vector(sl_dtype dt);

/* L21 along axis 1 (lines local) and along axis 0, the distributed one (lines across ranks: redistributed along
 * axis 1, whose 3 columns leave a fourth rank nothing); then a 1-D array */
static void test_l21_axis(sl_dtype dt)
{
  const int64_t n0 = 13, n1 = 3, n = n0 * n1;
  cplx *x = NULL, *ref = malloc(sizeof *ref * (size_t)n);
  sl_array *ax = make(dt, n0, n1, 9, 0.7, 0.0, &x);
  const double sigma = 0.4, tau = 0.6;
  for (int gax = 1; gax >= 0; gax--) {
    sl_prox *p = NULL;
    CHECK_OK(sl_prox_l21_axis(&p, ax, gax, sigma));
    int64_t ng = gax ? n0 : n1, nl = gax ? n1 : n0; /* groups, and the elements of a group */
    for (int kind = 0; p && kind < 3; kind++) {
      double v = 0;
      for (int64_t i = 0; i < ng; i++) {
        double s = 0;
        for (int64_t j = 0; j < nl; j++) s += pow(cabs(x[gax ? i * n1 + j : j * n1 + i]), 2);
        double g = sqrt(s), f = kind == 0 ? (g > tau * sigma ? 1 - tau * sigma / g : 0) : (g > sigma ? sigma / g : 1);
        for (int64_t j = 0; j < nl; j++) {
          int64_t e = gax ? i * n1 + j : j * n1 + i;
          ref[e] = f * x[e];
        }
        v += sigma * g;
      }
      const char *what[2][3] = {{"L21 along the distributed axis, prox", "L21 along the distributed axis, dual prox",
                                 "L21 along the distributed axis"},
                                {"L21 along an axis, prox", "L21 along an axis, dual prox", "L21 along an axis"}};
      if (kind == 2) EXPECT_VALUE(p, ax, v, what[gax][2]);
      else check_prox(dt, p, tau, ax, ref, kind, what[gax][kind]);
    }
    sl_prox_destroy(&p);
  }
  sl_array_destroy(&ax);
  free(x);
  free(ref);
  test_l21_vector(dt);
}

/* L21 along the one axis of a 1-D array (distributed over the ranks, uneven, a fourth rank owning nothing):
 * one group, the whole vector: the prox shrinks it by max(0, 1 - tau sigma / ||x||) (a sigma that keeps part
 * of it and one that zeroes it), the dual prox projects it onto the ball of radius sigma (outside and
 * inside), the value is sigma ||x||; a NaN anywhere gives NaN everywhere */
static void test_l21_vector(sl_dtype dt)
{
  const int64_t n = 11;
  int64_t ln = mc_share(n);
  sl_dist d = sl_dist_default();
  d.local_n = &ln;
  sl_array *v = NULL;
  CHECK_OK(sl_array_create(&v, 1, &n, dt, &d));
  cplx *x = malloc(sizeof *x * (size_t)n), *ref = malloc(sizeof *ref * (size_t)n);
  void *buf = malloc((size_t)n * sl_dtype_size(dt));
  for (int64_t i = 0; i < n; i++) x[i] = 0.5 * mc_value(dt, i, 12);
  mc_to_dtype(dt, n, x, buf);
  CHECK_OK(sl_array_scatter(v, -1, buf));
  mc_from_dtype(dt, n, buf, x);
  double nrm = 0;
  for (int64_t i = 0; i < n; i++) nrm += pow(cabs(x[i]), 2);
  nrm = sqrt(nrm);
  const double tau = 0.5, sigmas[2] = {0.4 * nrm, 3.0 * nrm}; /* tau sigma below, then above ||x|| */
  for (int k = 0; k < 2; k++) {
    sl_prox *p = NULL;
    CHECK_OK(sl_prox_l21_axis(&p, v, -1, sigmas[k]));
    double t = tau * sigmas[k], f = nrm > t ? 1 - t / nrm : 0;
    for (int64_t i = 0; i < n; i++) ref[i] = f * x[i];
    check_prox(dt, p, tau, v, ref, 0, k ? "L21 of a vector, prox (zero)" : "L21 of a vector, prox");
    f = nrm > sigmas[k] ? sigmas[k] / nrm : 1;
    for (int64_t i = 0; i < n; i++) ref[i] = f * x[i];
    check_prox(dt, p, tau, v, ref, 1, k ? "L21 of a vector, dual prox (inside)" : "L21 of a vector, dual prox (outside)");
    EXPECT_VALUE(p, v, sigmas[k] * nrm, "L21 of a vector");
    if (k == 1) { /* NaN in, NaN out */
      x[n / 2] = NAN;
      mc_to_dtype(dt, n, x, buf);
      CHECK_OK(sl_array_scatter(v, -1, buf));
      CHECK_OK(sl_prox_apply(p, tau, v, v));
      cplx *got = mc_gather(v);
      int nans = 0;
      for (int64_t i = 0; i < n; i++) nans += isnan(creal(got[i]));
      CHECK(nans == n, "L21 of a vector with a NaN: %d of %d elements NaN", nans, (int)n);
      free(got);
    }
    sl_prox_destroy(&p);
  }
  sl_array_destroy(&v);
  free(buf);
  free(x);
  free(ref);
}

/* d_i: three moduli (1, 2, 3) so that CG on I + c D^H D is exact after three iterations; a phase when complex */
static cplx dval(sl_dtype dt, int64_t i) { return (1.0 + (double)(i % 3)) * (sl_dtype_is_complex(dt) ? cexp(I * 0.3 * (double)i) : 1.0); }

static sl_op *diag_op(sl_dtype dt, int64_t n0, int64_t n1, cplx **dv)
{
  sl_array *d = NULL;
  cplx *unused = NULL;
  d = make(dt, n0, n1, 0, 0.0, 0.0, &unused);
  int64_t n = n0 * n1;
  cplx *z = malloc(sizeof *z * (size_t)n);
  for (int64_t i = 0; i < n; i++) z[i] = dval(dt, i);
  void *buf = malloc((size_t)n * sl_dtype_size(dt));
  mc_to_dtype(dt, n, z, buf);
  CHECK_OK(sl_array_scatter(d, -1, buf));
  mc_from_dtype(dt, n, buf, z);
  free(buf);
  free(unused);
  sl_op *op = NULL;
  CHECK_OK(sl_op_diagonal(&op, d));
  sl_array_destroy(&d);
  *dv = z;
  return op;
}

static void test_l2_op(sl_dtype dt)
{
  const int64_t n0 = 10, n1 = 3, n = n0 * n1;
  cplx *x = NULL, *b = NULL, *d = NULL, *ref = malloc(sizeof *ref * (size_t)n);
  sl_array *ax = make(dt, n0, n1, 5, 1.0, 0.0, &x), *ab = make(dt, n0, n1, 6, 1.0, 0.0, &b);
  sl_op *D = diag_op(dt, n0, n1, &d);
  const double s = 0.5, tau = 0.9;
  sl_prox *p = NULL;
  CHECK_OK(sl_prox_l2(&p, D, ab, s, 6));
  double v = 0;
  for (int64_t i = 0; i < n; i++) {
    ref[i] = (x[i] + tau * s * conj(d[i]) * b[i]) / (1 + tau * s * pow(cabs(d[i]), 2));
    v += 0.5 * s * pow(cabs(d[i] * x[i] - b[i]), 2);
  }
  check_prox(dt, p, tau, ax, ref, 0, "L2(Op) prox (CG)");
  EXPECT_VALUE(p, ax, v, "L2(Op)");
  for (int64_t i = 0; i < n; i++) {
    cplx c = x[i] / tau;
    ref[i] = x[i] - tau * (c + s / tau * conj(d[i]) * b[i]) / (1 + s / tau * pow(cabs(d[i]), 2));
  }
  check_prox(dt, p, tau, ax, ref, 1, "L2(Op) dual prox (Moreau, CG)");
  sl_array *g = NULL;
  CHECK_OK(sl_array_create_like(&g, ax));
  CHECK_OK(sl_prox_gradient(p, ax, g));
  for (int64_t i = 0; i < n; i++) ref[i] = s * conj(d[i]) * (d[i] * x[i] - b[i]);
  EXPECT_CLOSE(g, ref, tolf(dt), "L2(Op) gradient");
  sl_prox_destroy(&p);
  sl_op_destroy(&D);
  sl_array_destroy(&ax);
  sl_array_destroy(&ab);
  sl_array_destroy(&g);
  free(x);
  free(b);
  free(d);
  free(ref);
}

/* ---- solvers ---------------------------------------------------------------------------------------- */

/* Serial proximal gradient for 1/2 ||D x - b||^2 + eps sigma ||x||_1 (D diagonal). */
static void serial_pg(int64_t n, const cplx *d, const cplx *b, double sigma, double eps, double tau, int accel, int niter,
                      cplx *x)
{
  cplx *z = calloc((size_t)n, sizeof *z), *xo = malloc(sizeof *xo * (size_t)n);
  for (int64_t i = 0; i < n; i++) x[i] = 0;
  double t = 1;
  for (int k = 1; k <= niter; k++) {
    memcpy(xo, x, sizeof *x * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
      cplx zi = accel ? z[i] : x[i];
      x[i] = soft(zi - tau * conj(d[i]) * (d[i] * zi - b[i]), tau * eps * sigma);
    }
    double om = 0;
    if (accel == 1) {
      double told = t;
      t = (1 + sqrt(1 + 4 * t * t)) / 2;
      om = (told - 1) / t;
    } else if (accel == 2) {
      om = (double)(k - 1) / (k + 2);
    }
    for (int64_t i = 0; i < n; i++) z[i] = x[i] + om * (x[i] - xo[i]);
  }
  free(z);
  free(xo);
}

/* Serial proximal gradient with pyproximal's backtracking (tau from 1, beta 0.5, at most 10 tries). */
static double serial_pg_backtrack(int64_t n, const cplx *d, const cplx *b, double sigma, int niter, cplx *x)
{
  cplx *xo = malloc(sizeof *xo * (size_t)n), *gr = malloc(sizeof *gr * (size_t)n), *t = malloc(sizeof *t * (size_t)n);
  double tau = 1.0;
  for (int64_t i = 0; i < n; i++) x[i] = 0;
  for (int k = 0; k < niter; k++) {
    memcpy(xo, x, sizeof *x * (size_t)n);
    double fz = 0;
    for (int64_t i = 0; i < n; i++) gr[i] = conj(d[i]) * (d[i] * xo[i] - b[i]), fz += 0.5 * pow(cabs(d[i] * xo[i] - b[i]), 2);
    for (int tr = 0; tr < 10; tr++) {
      double fx = 0, gd = 0, dd = 0;
      for (int64_t i = 0; i < n; i++) {
        t[i] = soft(xo[i] - tau * gr[i], tau * sigma);
        fx += 0.5 * pow(cabs(d[i] * t[i] - b[i]), 2);
        gd += creal(conj(gr[i]) * (t[i] - xo[i]));
        dd += pow(cabs(t[i] - xo[i]), 2);
      }
      if (fx <= fz + gd + dd / (2 * tau) || tr == 9) break;
      tau *= 0.5;
    }
    memcpy(x, t, sizeof *x * (size_t)n);
  }
  free(xo), free(gr), free(t);
  return tau;
}

/* Serial ADMM-L2 for 1/2 ||D x - b||^2 + sigma ||x||_1 (A = I; the x-update exact). */
static void serial_admm(int64_t n, const cplx *d, const cplx *b, double sigma, double tau, int niter, cplx *x)
{
  cplx *z = calloc((size_t)n, sizeof *z), *u = calloc((size_t)n, sizeof *u);
  for (int k = 1; k <= niter; k++)
    for (int64_t i = 0; i < n; i++) {
      x[i] = (conj(d[i]) * b[i] + (z[i] - u[i]) / tau) / (pow(cabs(d[i]), 2) + 1 / tau);
      z[i] = soft(x[i] + u[i], tau * sigma);
      u[i] += x[i] - z[i];
    }
  free(z);
  free(u);
}

static void test_pg_admm(sl_dtype dt)
{
  const int64_t n0 = 13, n1 = 3, n = n0 * n1;
  cplx *b = NULL, *d = NULL, *ref = malloc(sizeof *ref * (size_t)n);
  sl_array *ab = make(dt, n0, n1, 7, 1.0, 0.0, &b), *x = NULL;
  CHECK_OK(sl_array_create_like(&x, ab));
  sl_op *D = diag_op(dt, n0, n1, &d);
  const double sigma = 0.3, eps = 0.5;
  sl_prox *f = NULL, *g = NULL;
  CHECK_OK(sl_prox_l2(&f, D, ab, 1.0, 6));
  CHECK_OK(sl_prox_l1(&g, sigma));
  sl_solver_options o;
  sl_solver_info info;
  for (int accel = 0; accel < 3; accel++) {
    sl_solver_options_default(&o);
    o.niter = 15;
    o.tol = 0;
    o.tau = 0.1;
    o.epsg = eps;
    o.accel = (sl_accel)accel;
    o.check_every = 4;
    CHECK_OK(sl_solve_proximal_gradient(f, g, x, &o, &info));
    serial_pg(n, d, b, sigma, eps, 0.1, accel, 15, ref);
    char w[64];
    snprintf(w, sizeof w, "ProximalGradient (acceleration %d)", accel);
    EXPECT_CLOSE(x, ref, tolf(dt), w);
    CHECK(info.iterations == 15 && info.stop == SL_STOP_NITER, "%s: %d iterations, stop %d", w, info.iterations, info.stop);
  }
  /* pyproximal's backtracking from tau = 1 (|d| up to 3: several halvings) */
  sl_solver_options_default(&o);
  o.niter = 6;
  o.tol = 0;
  o.backtrack = 1;
  CHECK_OK(sl_solve_proximal_gradient(f, g, x, &o, &info));
  double tb = serial_pg_backtrack(n, d, b, sigma, 6, ref);
  EXPECT_CLOSE(x, ref, tolf(dt) * 10, "ProximalGradient with backtracking");
  CHECK(fabs(info.alpha - tb) < 1e-12 && tb < 1, "ProximalGradient backtracking: tau %g, serial %g (%s)", info.alpha, tb,
        sl_dtype_name(dt));
  /* the step from the Lipschitz constant: 1 / max |d|^2 = 1/9 */
  sl_solver_options_default(&o);
  o.niter = 3;
  CHECK_OK(sl_solve_proximal_gradient(f, g, x, &o, &info));
  CHECK(fabs(info.alpha - 1.0 / 9.0) < 1e-3, "ProximalGradient step %g, expected 1/9 (%s)", info.alpha, sl_dtype_name(dt));
  { /* a postcomposed f (3 f): its Lipschitz constant 3 x 9, and the iterates of the serial ProximalGradient on 3 f */
    sl_prox *f3 = NULL;
    CHECK_OK(sl_prox_postcompose(&f3, f, 3.0, 0.0));
    CHECK_OK(sl_solve_proximal_gradient(f3, g, x, &o, &info));
    CHECK(fabs(info.alpha - 1.0 / 27.0) < 1e-3, "ProximalGradient on 3 f: step %g, expected 1/27 (%s)", info.alpha,
          sl_dtype_name(dt));
    sl_solver_options q;
    sl_solver_options_default(&q);
    q.niter = 15;
    q.tol = 0;
    q.tau = 0.03;
    q.epsg = eps;
    CHECK_OK(sl_solve_proximal_gradient(f3, g, x, &q, &info));
    cplx *d3 = malloc(sizeof *d3 * (size_t)n), *b3 = malloc(sizeof *b3 * (size_t)n);
    for (int64_t i = 0; i < n; i++) d3[i] = sqrt(3.0) * d[i], b3[i] = sqrt(3.0) * b[i]; /* 3/2 ||D x - b||^2 */
    serial_pg(n, d3, b3, sigma, eps, 0.03, 0, 15, ref);
    EXPECT_CLOSE(x, ref, tolf(dt), "ProximalGradient on a postcomposed f");
    free(d3), free(b3);
    sl_prox_destroy(&f3);
  }
  /* converged: the lasso's optimality (soft-threshold fixed point) */
  o.niter = 400;
  o.tol = 1e-12;
  o.accel = SL_ACCEL_FISTA;
  o.tol_rule = SL_TOL_ABSOLUTE;
  if (dt == SL_FLOAT64 || dt == SL_COMPLEX128) {
    CHECK_OK(sl_solve_proximal_gradient(f, g, x, &o, &info));
    CHECK(info.stop == SL_STOP_TOL, "ProximalGradient did not converge (%d iterations)", info.iterations);
    for (int64_t i = 0; i < n; i++) ref[i] = conj(d[i]) * b[i] / pow(cabs(d[i]), 2), ref[i] = soft(ref[i], sigma / pow(cabs(d[i]), 2));
    EXPECT_CLOSE(x, ref, 1e-9, "ProximalGradient at convergence (closed-form lasso of a diagonal operator)");
  }
  /* ADMM-L2 with A = I */
  sl_solver_options_default(&o);
  o.niter = 10;
  o.tol = 0;
  o.tau = 0.7;
  o.inner_niter = 6;
  CHECK_OK(sl_solve_admm_l2(g, D, ab, NULL, x, &o, &info));
  serial_admm(n, d, b, sigma, 0.7, 10, ref);
  EXPECT_CLOSE(x, ref, dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-3 : 1e-9, "ADMM-L2");
  /* bad input: f not smooth, negative tau, sigma differing between ranks */
  int rc = sl_solve_proximal_gradient(g, g, x, NULL, NULL);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "smooth"), "PG with L1 as f: %s", sl_last_error());
  sl_solver_options_default(&o);
  o.tau = -1;
  rc = sl_solve_proximal_gradient(f, g, x, &o, NULL);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "tau"), "PG with tau < 0: %s", sl_last_error());
  sl_prox *bad = NULL;
  rc = sl_prox_l1(&bad, R == P - 1 ? 0.5 : 0.25);
  CHECK(P == 1 || mc_same_error_everywhere(rc, SL_E_INVALID), "L1 with sigma differing between ranks: %s", sl_last_error());
  sl_prox_destroy(&bad);
  rc = sl_prox_apply(g, R == 0 ? 1.0 : 2.0, x, x);
  CHECK(P == 1 || mc_same_error_everywhere(rc, SL_E_INVALID), "prox with tau differing between ranks: %s", sl_last_error());
  sl_prox_destroy(&f);
  sl_prox_destroy(&g);
  sl_op_destroy(&D);
  sl_array_destroy(&ab);
  sl_array_destroy(&x);
  free(b);
  free(d);
  free(ref);
}

/* ---- an operator that couples the ranks: L2 and ADMM against dense direct solves -------------------- */

/* The forward first derivative along axis 0 of an n0 x n1 image as a dense n x n matrix (column-major):
 * row i j holds x[i+1, j] - x[i, j] (0 on the last row), pylops' FirstDerivative(kind="forward"). */
static cplx *dense_dx(int64_t n0, int64_t n1)
{
  const int64_t n = n0 * n1;
  cplx *K = calloc((size_t)(n * n), sizeof *K);
  CHECK(K != NULL, "dense_dx: out of memory");
  for (int64_t i = 0; i + 1 < n0; i++)
    for (int64_t j = 0; j < n1; j++) {
      const int64_t r = i * n1 + j;
      K[r + (r + n1) * n] += 1;
      K[r + r * n] -= 1;
    }
  return K;
}

/* y = K x (adj 0) or K^H x (adj 1), K n x n column-major */
static void dense_mv(int64_t n, const cplx *K, int adj, const cplx *x, cplx *y)
{
  for (int64_t r = 0; r < n; r++) {
    cplx v = 0;
    for (int64_t c = 0; c < n; c++) v += adj ? conj(K[c + r * n]) * x[c] : K[r + c * n] * x[c];
    y[r] = v;
  }
}

/* M = c0 D^H D + c1 K^H K (D diagonal d, or the identity when d is NULL), column-major */
static cplx *dense_normal(int64_t n, const cplx *d, double c0, const cplx *K, double c1)
{
  cplx *M = calloc((size_t)(n * n), sizeof *M);
  CHECK(M != NULL, "dense_normal: out of memory");
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      cplx v = 0;
      for (int64_t k = 0; k < n; k++) v += conj(K[k + i * n]) * K[k + j * n];
      M[i + j * n] = c1 * v + (i == j ? c0 * (d ? pow(cabs(d[i]), 2) : 1.0) : 0);
    }
  return M;
}

/* L2 with the derivative as its operator (the prox's CG couples the ranks through the halo), and ADMM-L2 with
 * A the derivative: 13 rows over the ranks (the last of 4 owning nothing), enough CG iterations to solve
 * exactly, against dense direct solves. */
static void test_coupled(sl_dtype dt)
{
  const int64_t n0 = 13, n1 = 3, n = n0 * n1;
  const double tolc = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-3 : 1e-9;
  cplx *x = NULL, *b = NULL, *d = NULL, *ref = malloc(sizeof *ref * (size_t)n), *t = malloc(sizeof *t * (size_t)n);
  cplx *r2 = malloc(sizeof *r2 * (size_t)n);
  sl_array *ax = make(dt, n0, n1, 11, 1.0, 0.0, &x), *ab = make(dt, n0, n1, 12, 1.0, 0.0, &b);
  sl_op *K = NULL, *D = diag_op(dt, n0, n1, &d);
  CHECK_OK(sl_op_first_derivative(&K, ax, 0, 1.0, SL_DERIV_FORWARD, 0, 0));
  cplx *Kd = dense_dx(n0, n1);
  /* L2(K, b): prox_tau(v) = (I + tau s K^H K)^-1 (v + tau s K^H b), value s/2 ||K v - b||^2, gradient s K^H (K v - b) */
  const double s = 0.6, tau = 0.75;
  sl_prox *p = NULL;
  CHECK_OK(sl_prox_l2(&p, K, ab, s, 60));
  cplx *M = dense_normal(n, NULL, 1.0, Kd, tau * s);
  dense_mv(n, Kd, 1, b, t);
  for (int64_t i = 0; i < n; i++) r2[i] = x[i] + tau * s * t[i];
  mc_solve_dense(n, M, r2, ref);
  check_prox(dt, p, tau, ax, ref, 0, "L2(FirstDerivative) prox (CG across the ranks)");
  dense_mv(n, Kd, 0, x, t);
  double v = 0;
  for (int64_t i = 0; i < n; i++) t[i] -= b[i], v += 0.5 * s * pow(cabs(t[i]), 2);
  EXPECT_VALUE(p, ax, v, "L2(FirstDerivative)");
  sl_array *g = NULL;
  CHECK_OK(sl_array_create_like(&g, ax));
  CHECK_OK(sl_prox_gradient(p, ax, g));
  dense_mv(n, Kd, 1, t, ref);
  for (int64_t i = 0; i < n; i++) ref[i] *= s;
  EXPECT_CLOSE(g, ref, tolf(dt), "L2(FirstDerivative) gradient");
  free(M);
  /* ADMM-L2: min 1/2 ||D x - b||^2 + sigma ||K x||_1 (anisotropic TV along axis 0) */
  const double sigma = 0.2, ta = 0.7;
  const int niter = 8;
  sl_prox *l1 = NULL;
  CHECK_OK(sl_prox_l1(&l1, sigma));
  sl_solver_options o;
  sl_solver_info info;
  sl_solver_options_default(&o);
  o.niter = niter;
  o.tol = 0;
  o.tau = ta;
  o.inner_niter = 80;
  CHECK_OK(sl_solve_admm_l2(l1, D, ab, K, g, &o, &info));
  M = dense_normal(n, d, 1.0, Kd, 1.0 / ta);
  cplx *z = calloc((size_t)n, sizeof *z), *u = calloc((size_t)n, sizeof *u), *kx = malloc(sizeof *kx * (size_t)n);
  for (int k = 0; k < niter; k++) {
    for (int64_t i = 0; i < n; i++) r2[i] = (z[i] - u[i]) / ta;
    dense_mv(n, Kd, 1, r2, t);
    for (int64_t i = 0; i < n; i++) t[i] += conj(d[i]) * b[i];
    mc_solve_dense(n, M, t, ref);
    dense_mv(n, Kd, 0, ref, kx);
    for (int64_t i = 0; i < n; i++) {
      z[i] = soft(kx[i] + u[i], ta * sigma);
      u[i] += kx[i] - z[i];
    }
  }
  EXPECT_CLOSE(g, ref, tolc, "ADMM-L2 with A = FirstDerivative");
  CHECK(info.iterations == niter, "ADMM-L2 with A: %d iterations, expected %d (%s)", info.iterations, niter, sl_dtype_name(dt));
  free(M), free(z), free(u), free(kx), free(Kd);
  sl_prox_destroy(&p);
  sl_prox_destroy(&l1);
  sl_op_destroy(&K);
  sl_op_destroy(&D);
  sl_array_destroy(&ax);
  sl_array_destroy(&ab);
  sl_array_destroy(&g);
  free(x), free(b), free(d), free(ref), free(t), free(r2);
}

/* Forward differences of an n0 x n1 image along both axes (0 at the last row or column) and the adjoint. */
static void grad2(int64_t n0, int64_t n1, const cplx *x, cplx *g0, cplx *g1)
{
  for (int64_t i = 0; i < n0; i++)
    for (int64_t j = 0; j < n1; j++) {
      g0[i * n1 + j] = i + 1 < n0 ? x[(i + 1) * n1 + j] - x[i * n1 + j] : 0;
      g1[i * n1 + j] = j + 1 < n1 ? x[i * n1 + j + 1] - x[i * n1 + j] : 0;
    }
}

static void grad2h(int64_t n0, int64_t n1, const cplx *g0, const cplx *g1, cplx *x)
{
  for (int64_t i = 0; i < n0; i++)
    for (int64_t j = 0; j < n1; j++) {
      cplx v = 0;
      if (i + 1 < n0) v -= g0[i * n1 + j];
      if (i > 0) v += g0[(i - 1) * n1 + j];
      if (j + 1 < n1) v -= g1[i * n1 + j];
      if (j > 0) v += g1[i * n1 + j - 1];
      x[i * n1 + j] = v;
    }
}

/* Serial Chambolle-Pock for 1/2 ||x - b||^2 + lam sum sqrt(|g0|^2 + |g1|^2), as the library orders it. */
static void serial_tv(int64_t n0, int64_t n1, const cplx *b, double lam, double tau, double mu, double theta, double gamma,
                      int gfirst, int niter, cplx *x, double *cost)
{
  int64_t n = n0 * n1;
  cplx *y0 = calloc((size_t)n, sizeof(cplx)), *y1 = calloc((size_t)n, sizeof(cplx)), *xh = malloc(sizeof(cplx) * (size_t)n);
  cplx *t = malloc(sizeof(cplx) * (size_t)n), *a0 = malloc(sizeof(cplx) * (size_t)n), *a1 = malloc(sizeof(cplx) * (size_t)n);
  cplx *xo = malloc(sizeof(cplx) * (size_t)n);
  for (int64_t i = 0; i < n; i++) x[i] = 0, xh[i] = 0;
  for (int k = 1; k <= niter; k++) {
    for (int pass = 0; pass < 2; pass++) {
      if (pass == (gfirst ? 0 : 1)) { /* y = proj(y + mu A xhat) */
        grad2(n0, n1, xh, a0, a1);
        for (int64_t i = 0; i < n; i++) {
          y0[i] += mu * a0[i];
          y1[i] += mu * a1[i];
          double gn = sqrt(pow(cabs(y0[i]), 2) + pow(cabs(y1[i]), 2)), f = gn > lam ? lam / gn : 1;
          y0[i] *= f;
          y1[i] *= f;
        }
      } else { /* x = prox_(tau f)(x - tau A^H y), xhat */
        grad2h(n0, n1, y0, y1, t);
        memcpy(xo, x, sizeof(cplx) * (size_t)n);
        for (int64_t i = 0; i < n; i++) x[i] = (x[i] - tau * t[i] + tau * b[i]) / (1 + tau);
        if (gamma > 0) {
          theta = 1 / sqrt(1 + 2 * gamma * tau);
          tau *= theta;
          mu /= theta;
        }
        for (int64_t i = 0; i < n; i++) xh[i] = x[i] + theta * (x[i] - xo[i]);
      }
    }
  }
  grad2(n0, n1, x, a0, a1);
  *cost = 0;
  for (int64_t i = 0; i < n; i++) *cost += 0.5 * pow(cabs(x[i] - b[i]), 2) + lam * sqrt(pow(cabs(a0[i]), 2) + pow(cabs(a1[i]), 2));
  free(y0), free(y1), free(xh), free(t), free(a0), free(a1), free(xo);
}

/* element i of x's local block set to v (i < 0: nothing), float64 */
static void poke(sl_array *x, int64_t i, double v)
{
  double *p = NULL;
  CHECK_OK(sl_array_acquire(x, SL_READ_WRITE, (void **)&p));
  if (p && i >= 0 && i < sl_array_local_size(x)) p[i] = v;
  CHECK_OK(sl_array_release(x));
}

static void test_primal_dual(sl_dtype dt)
{
  const int64_t n0 = 9, n1 = 7, n = n0 * n1;
  const double lam = 0.3;
  cplx *b = NULL, *ref = malloc(sizeof *ref * (size_t)n);
  sl_array *ab = make(dt, n0, n1, 8, 1.0, 0.0, &b), *x = NULL;
  CHECK_OK(sl_array_create_like(&x, ab));
  sl_op *G = NULL;
  CHECK_OK(sl_op_gradient(&G, ab, NULL, SL_DERIV_FORWARD, 0));
  sl_prox *f = NULL, *g = NULL;
  CHECK_OK(sl_prox_l2(&f, NULL, ab, 1.0, 0));
  CHECK_OK(sl_prox_l21(&g, lam));
  const int niter = 12;
  double *cost = malloc(sizeof *cost * (niter + 1));
  for (int c = 0; c < 4; c++) { /* the two update orders, the accelerated steps, theta 0.5 */
    int gfirst = c != 1;
    double gamma = c == 2 ? 0.5 : 0.0, tau = 0.95 / sqrt(8.0), mu = 0.95 / sqrt(8.0), ref_cost = 0, theta = c == 3 ? 0.5 : 1.0;
    sl_solver_options o;
    sl_solver_info info;
    sl_solver_options_default(&o);
    o.niter = niter;
    o.tol = 0;
    o.tau = tau;
    o.mu = mu;
    o.gfirst = gfirst;
    o.gamma = gamma;
    o.theta = theta;
    o.cost = cost;
    o.check_every = 5;
    CHECK_OK(sl_solve_primal_dual(f, g, G, x, &o, &info));
    serial_tv(n0, n1, b, lam, tau, mu, theta, gamma, gfirst, niter, ref, &ref_cost);
    char w[80];
    snprintf(w, sizeof w, "PrimalDual TV (gfirst %d, gamma %g, theta %g)", gfirst, gamma, theta);
    EXPECT_CLOSE(x, ref, tolf(dt) * 10, w);
    CHECK(fabs(cost[niter] - ref_cost) <= tolf(dt) * 10 * fabs(ref_cost), "%s: cost %.15g, expected %.15g (%s)", w, cost[niter],
          ref_cost, sl_dtype_name(dt));
  }
  /* the default steps: 0.95 / ||Gradient|| (||.||^2 < 8 in 2-D) */
  sl_solver_options o;
  sl_solver_info info;
  sl_solver_options_default(&o);
  o.niter = 2;
  CHECK_OK(sl_solve_primal_dual(f, g, G, x, &o, &info));
  CHECK(info.alpha > 0.95 / sqrt(8.0) && info.alpha < 0.95 / sqrt(7.0), "PrimalDual default tau %g (%s)", info.alpha,
        sl_dtype_name(dt));
  /* NaN in the start: SL_E_NUMERIC on every rank (NaN data is refused by sl_prox_l2: test_hostile) */
  if (dt == SL_FLOAT64) {
    sl_array *xn = NULL;
    CHECK_OK(sl_array_create_like(&xn, ab));
    CHECK_OK(sl_array_copy(xn, ab));
    poke(xn, R == 0 ? 0 : -1, NAN);
    o.niter = 5;
    o.x0 = xn;
    int rc = sl_solve_primal_dual(f, g, G, x, &o, &info);
    CHECK(mc_same_error_everywhere(rc, SL_E_NUMERIC), "PrimalDual from a NaN start: %s", sl_last_error());
    o.x0 = NULL;
    sl_array_destroy(&xn);
  }
  free(cost);
  sl_prox_destroy(&f);
  sl_prox_destroy(&g);
  sl_op_destroy(&G);
  sl_array_destroy(&ab);
  sl_array_destroy(&x);
  free(b);
  free(ref);
}

/* hostile input to the proximal layer and its solvers (float64): non-finite data, arguments that differ
 * between ranks, steps that overflow; every rank gets the same error, which names the argument */
static void test_hostile(void)
{
  const sl_dtype dt = SL_FLOAT64;
  const int64_t n0 = 12, n1 = 3;
  cplx *b = NULL, *d = NULL;
  sl_array *ab = make(dt, n0, n1, 7, 1.0, 0.0, &b), *x = NULL, *bad = NULL;
  CHECK_OK(sl_array_create_like(&x, ab));
  CHECK_OK(sl_array_create_like(&bad, ab));
  sl_op *D = diag_op(dt, n0, n1, &d);
  sl_prox *f = NULL, *g = NULL, *h = NULL, *q = NULL;
  CHECK_OK(sl_prox_l2(&f, D, ab, 1.0, 6));
  CHECK_OK(sl_prox_l1(&g, 0.3));
  sl_solver_options o;
  sl_solver_info info;
  /* NaN or Inf in L2's data, on rank 0 only (on 4 ranks the last owns nothing): refused where L2 is made (a
   * Box after it would hide an Inf) */
  const double nonfinite[2] = {NAN, INFINITY};
  for (int k = 0; k < 2; k++) {
    CHECK_OK(sl_array_copy(bad, ab));
    poke(bad, R == 0 ? 0 : -1, nonfinite[k]);
    int rc = sl_prox_l2(&h, NULL, bad, 1.0, 0);
    CHECK(mc_same_error_everywhere(rc, SL_E_NUMERIC) && strstr(sl_last_error(), "sl_prox_l2: argument 3 (b) holds NaN or Inf"),
          "L2 with %g in b: %s", nonfinite[k], sl_last_error());
    CHECK(h == NULL, "a refused L2 is not made");
    rc = sl_prox_l2(&h, D, bad, 1.0, 4);
    CHECK(mc_same_error_everywhere(rc, SL_E_NUMERIC), "L2(Op) with %g in b: %s", nonfinite[k], sl_last_error());
    sl_solver_options_default(&o);
    o.niter = 3;
    rc = sl_solve_admm_l2(g, D, bad, NULL, x, &o, &info);
    CHECK(mc_same_error_everywhere(rc, SL_E_NUMERIC) && strstr(sl_last_error(), "ADMM-L2: argument 3 (b)"), "ADMM with %g in b: %s",
          nonfinite[k], sl_last_error());
  }
  /* an operator that makes Inf at its first apply (the largest double on one rank, scaled by 2), under a Box
   * that clips +-Inf back to finite values: ProximalGradient still stops with SL_E_NUMERIC on every rank */
  {
    sl_array *dv = NULL, *x0 = NULL;
    CHECK_OK(sl_array_create_like(&dv, ab));
    CHECK_OK(sl_array_create_like(&x0, ab));
    CHECK_OK(sl_array_fill(dv, SL_REAL(1)));
    CHECK_OK(sl_array_fill(x0, SL_REAL(1)));
    poke(dv, R == 0 ? 0 : -1, DBL_MAX);
    sl_op *Dm = NULL, *Dinf = NULL;
    sl_prox *fi = NULL, *box = NULL;
    CHECK_OK(sl_op_diagonal(&Dm, dv));
    CHECK_OK(sl_op_scaled(&Dinf, Dm, SL_REAL(2.0)));
    CHECK_OK(sl_prox_l2(&fi, Dinf, ab, 1.0, 4));
    CHECK_OK(sl_prox_box(&box, -1.0, 1.0));
    for (int accel = 0; accel < 2; accel++) {
      sl_solver_options_default(&o);
      o.niter = 5;
      o.tau = 0.1;
      o.x0 = x0;
      o.accel = accel ? SL_ACCEL_FISTA : SL_ACCEL_NONE;
      memset(&info, 0, sizeof info);
      int rc = sl_solve_proximal_gradient(fi, box, x, &o, &info);
      CHECK(mc_same_error_everywhere(rc, SL_E_NUMERIC) && info.stop == SL_STOP_NONFINITE,
            "ProximalGradient (acceleration %d) on an operator making Inf, under a Box: rc %d, stop %d (%s)", accel, rc,
            (int)info.stop, sl_last_error());
    }
    sl_prox_destroy(&fi);
    sl_prox_destroy(&box);
    sl_op_destroy(&Dm);
    sl_op_destroy(&Dinf);
    sl_array_destroy(&dv);
    sl_array_destroy(&x0);
  }
  /* epsg = 0 with a precomposed g: its prox is asked with a zero step (pyproximal's prox(x, 0)), not refused; the
   * result is plain gradient descent on f for an L1 g */
  {
    sl_prox *l1 = NULL, *pre = NULL;
    CHECK_OK(sl_prox_l1(&l1, 0.3));
    CHECK_OK(sl_prox_precompose(&pre, l1, 2.0, 0.5));
    sl_array *x2 = NULL;
    CHECK_OK(sl_array_create_like(&x2, ab));
    sl_solver_options_default(&o);
    o.niter = 4;
    o.tol = 0;
    o.tau = 0.1;
    o.epsg = 0;
    CHECK_OK(sl_solve_proximal_gradient(f, pre, x, &o, &info));
    CHECK_OK(sl_solve_proximal_gradient(f, l1, x2, &o, &info));
    cplx *a1 = mc_gather(x), *a2g = mc_gather(x2);
    double e = 0;
    for (int64_t i = 0; i < n0 * n1; i++) e = fmax(e, cabs(a1[i] - a2g[i]));
    CHECK(e < 1e-12, "ProximalGradient with epsg = 0: a precomposed g and a plain one differ by %g", e);
    free(a1), free(a2g);
    sl_array_destroy(&x2);
    sl_prox_destroy(&pre);
    sl_prox_destroy(&l1);
  }
  /* PrimalDual's accelerated steps with 2 gamma tau overflowing: refused, naming gamma */
  {
    sl_op *G = NULL;
    sl_prox *l21 = NULL, *fl = NULL;
    CHECK_OK(sl_op_gradient(&G, ab, NULL, SL_DERIV_FORWARD, 0));
    CHECK_OK(sl_prox_l21(&l21, 0.3));
    CHECK_OK(sl_prox_l2(&fl, NULL, ab, 1.0, 0));
    sl_solver_options_default(&o);
    o.niter = 3;
    o.tau = o.mu = 0.3;
    o.gamma = 1e308;
    int rc = sl_solve_primal_dual(fl, l21, G, x, &o, &info);
    CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "gamma"), "PrimalDual with gamma 1e308: %s",
          sl_last_error());
    sl_prox_destroy(&fl);
    sl_prox_destroy(&l21);
    sl_op_destroy(&G);
  }
  /* without an operator cg_niter is unused: ranks may pass different values, and the object agrees */
  CHECK_OK(sl_prox_l2(&h, NULL, ab, 1.0, R));
  CHECK_OK(sl_prox_apply(h, 1.0, ab, x));
  sl_prox_destroy(&h);
  /* ADMM writing its solution over its data */
  CHECK_OK(sl_array_copy(bad, ab));
  int rc = sl_solve_admm_l2(g, D, bad, NULL, bad, NULL, NULL);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "arguments 3 (b) and 5 (x) are the same"),
        "ADMM with x = b: %s", sl_last_error());
  /* proximal objects of one kind made alike on every rank but passed differently: their parameters are agreed */
  CHECK_OK(sl_prox_l1(&h, 0.6));
  rc = sl_prox_apply(R == P - 1 ? h : g, 1.0, ab, x);
  CHECK(P == 1 ? rc == SL_SUCCESS
               : mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 1 (p: its kind and parameters) differs"),
        "L1 objects of different sigma on different ranks: %s", sl_last_error());
  sl_solver_options_default(&o);
  o.niter = 3;
  o.tau = 0.1;
  rc = sl_solve_proximal_gradient(f, R == P - 1 ? h : g, x, &o, &info);
  CHECK(P == 1 ? rc == SL_SUCCESS : mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 2 (g"),
        "ProximalGradient with g differing between ranks: %s", sl_last_error());
  sl_prox_destroy(&h);
  CHECK_OK(sl_prox_l2(&h, D, ab, 1.0, 9)); /* another number of inner CG iterations: a hang if not caught */
  rc = sl_solve_proximal_gradient(R == P - 1 ? h : f, g, x, &o, &info);
  CHECK(P == 1 ? rc == SL_SUCCESS : mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 1 (f"),
        "ProximalGradient with f differing between ranks: %s", sl_last_error());
  sl_prox_destroy(&h);
  sl_op *D2 = NULL; /* the same shapes, another operator */
  CHECK_OK(sl_op_scaled(&D2, D, SL_REAL(2.0)));
  CHECK_OK(sl_prox_l2(&h, NULL, ab, 1.0, 0));
  rc = sl_solve_primal_dual(h, g, R == P - 1 ? D2 : D, x, &o, &info);
  CHECK(P == 1 ? rc == SL_SUCCESS : mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 3 (A"),
        "PrimalDual with A differing between ranks: %s", sl_last_error());
  rc = sl_solve_cg(R == P - 1 ? D2 : D, ab, x, &o, &info);
  CHECK(P == 1 ? rc == SL_SUCCESS : mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 1 (A"),
        "CG with A differing between ranks: %s", sl_last_error());
  /* PrimalDual's steps from ||A|| need power iterations */
  sl_solver_options_default(&o);
  o.niter = 3;
  o.power_niter = 0;
  rc = sl_solve_primal_dual(h, g, D, x, &o, &info);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "power_niter"), "PrimalDual, power_niter 0: %s",
        sl_last_error());
  sl_prox_destroy(&h);
  /* steps that overflow: the threshold tau sigma, a precomposition's a^2 tau, Moreau's 1 / tau */
  CHECK_OK(sl_prox_l1(&h, 1e300));
  rc = sl_prox_apply(h, 1e10, ab, x);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "tau sigma"), "L1 threshold past DBL_MAX: %s",
        sl_last_error());
  sl_prox_destroy(&h);
  CHECK_OK(sl_prox_precompose(&q, g, 1e200, 0));
  rc = sl_prox_apply(q, 1.0, ab, x);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "a^2 tau"), "precomposed step past DBL_MAX: %s",
        sl_last_error());
  sl_prox_destroy(&q);
  CHECK_OK(sl_prox_box(&h, -1, 1));
  rc = sl_prox_apply_dual(h, 1e-310, ab, x);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "too small"), "Box's conjugate with tau 1e-310: %s",
        sl_last_error());
  sl_prox_destroy(&h);
  /* constructors' and solvers' arguments refused on every rank, one rank's NULL included */
  rc = sl_prox_box(&h, 1, 0);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "lower <= upper") && !h, "Box(1, 0): %s", sl_last_error());
  rc = sl_prox_box(&h, NAN, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && !h, "Box(NaN, 1): %s", sl_last_error());
  rc = sl_prox_precompose(&h, g, 0, 1);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 3 (a)") && !h, "precompose, a = 0: %s",
        sl_last_error());
  rc = sl_prox_postcompose(&h, g, -1, 0);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 3 (a)") && !h, "postcompose, a < 0: %s",
        sl_last_error());
  rc = sl_prox_precompose(&h, g, 1, INFINITY);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 4 (b)") && !h, "precompose, b = Inf: %s",
        sl_last_error());
  rc = sl_prox_l2(&h, D, ab, 1.0, 0);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 5 (cg_niter)") && !h, "L2(Op), cg_niter 0: %s",
        sl_last_error());
  rc = sl_prox_l21_axis(&h, ab, 2, 1.0);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 3 (axis)") && !h, "L21 along axis 2 of 2: %s",
        sl_last_error());
  rc = sl_prox_apply(g, 1.0, R == 0 ? NULL : ab, x);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 3 (x) is NULL"), "prox of NULL on rank 0: %s",
        sl_last_error());
  rc = sl_solve_primal_dual(f, g, NULL, x, NULL, NULL);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 3 (A) is NULL"), "PrimalDual, A NULL: %s",
        sl_last_error());
  sl_solver_options_default(&o);
  o.niter = 3;
  o.theta = R == P - 1 ? 0.5 : 1.0;
  rc = sl_solve_primal_dual(f, g, D, x, &o, &info);
  CHECK(P == 1 ? rc == SL_SUCCESS : mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "options.theta"),
        "PrimalDual, theta differing between ranks: %s", sl_last_error());
  o.theta = NAN;
  rc = sl_solve_primal_dual(f, g, D, x, &o, &info);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "options.theta"), "PrimalDual, theta NaN: %s",
        sl_last_error());
  sl_solver_options_default(&o);
  o.inner_niter = 0;
  rc = sl_solve_admm_l2(g, D, ab, NULL, x, &o, &info);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "options.inner_niter"), "ADMM, inner_niter 0: %s",
        sl_last_error());
  /* the gradient's arguments by their numbers */
  rc = sl_prox_gradient(f, ab, NULL);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 3 (g) is NULL"), "gradient into NULL: %s",
        sl_last_error());
  sl_op_destroy(&D2);
  sl_prox_destroy(&f);
  sl_prox_destroy(&g);
  sl_op_destroy(&D);
  sl_array_destroy(&ab);
  sl_array_destroy(&bad);
  sl_array_destroy(&x);
  free(b);
  free(d);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  MPI_Comm_size(sl_comm(), &P);
  MPI_Comm_rank(sl_comm(), &R);
  const sl_dtype *dts = mc_dtypes;
  for (int i = 0; i < 4; i++) {
    test_elementwise(dts[i]);
    test_l21(dts[i]);
    test_l21_axis(dts[i]);
    test_l2_op(dts[i]);
    test_pg_admm(dts[i]);
    test_coupled(dts[i]);
    test_primal_dual(dts[i]);
  }
  test_hostile();
  return mc_finish("mpi_prox");
}
