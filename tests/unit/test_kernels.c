/* The CPU kernels against naive double-complex loops, in the four dtypes. */
#include <complex.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "codelets/kernel_vec.h"

#define N 37

static const sl_dtype all[4] = {SL_FLOAT32, SL_FLOAT64, SL_COMPLEX64, SL_COMPLEX128};

static double complex val(sl_dtype dt, int i, int seed)
{
  if (i % 5 == 0 && seed == 3) return 0; /* zeros for the nnz count */
  return CMPLX(cos(0.3 * i + seed), sl_dtype_is_complex(dt) ? sin(0.7 * i - seed) : 0);
}

static void put(sl_dtype dt, void *p, int i, double complex v)
{
  switch (dt) {
  case SL_FLOAT32: ((float *)p)[i] = (float)creal(v); break;
  case SL_FLOAT64: ((double *)p)[i] = creal(v); break;
  case SL_COMPLEX64: ((float complex *)p)[i] = (float complex)v; break;
  case SL_COMPLEX128: ((double complex *)p)[i] = v; break;
  }
}

static double complex get(sl_dtype dt, const void *p, int i)
{
  switch (dt) {
  case SL_FLOAT32: return ((const float *)p)[i];
  case SL_FLOAT64: return ((const double *)p)[i];
  case SL_COMPLEX64: return ((const float complex *)p)[i];
  default: return ((const double complex *)p)[i];
  }
}

static double tol(sl_dtype dt) { return dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-5 : 1e-14; }

/* Fills buf with val(dt, i, seed) and returns the values as stored. */
static void *make(sl_dtype dt, int seed, double complex *ref)
{
  void *p = calloc(N, 16);
  for (int i = 0; i < N; i++) {
    put(dt, p, i, val(dt, i, seed));
    ref[i] = get(dt, p, i);
  }
  return p;
}

static void expect_close(sl_dtype dt, double complex got, double complex want, const char *what, int i)
{
  cr_expect(cabs(got - want) <= tol(dt) * fmax(1, cabs(want)), "%s %s [%d]: got %g%+gi want %g%+gi", what,
            sl_dtype_name(dt), i, creal(got), cimag(got), creal(want), cimag(want));
}

Test(kernels, elementwise_match_naive_loops)
{
  for (int t = 0; t < 4; t++) {
    sl_dtype dt = all[t];
    int c = sl_dtype_is_complex(dt);
    double complex rx[N], ry[N], rz[N];
    void *x = make(dt, 1, rx), *y = make(dt, 2, ry), *z = make(dt, 3, rz);
    double a[2] = {1.25, c ? -0.5 : 0}, b[2] = {0.5, c ? 2.0 : 0};
    double complex ac = CMPLX(a[0], a[1]), bc = CMPLX(b[0], b[1]);

    kernel_axpby(dt, N, y, x, a, b);
    for (int i = 0; i < N; i++) expect_close(dt, get(dt, y, i), ac * rx[i] + bc * ry[i], "axpby", i);
    double zero[2] = {0, 0};
    for (int i = 0; i < N; i++) put(dt, z, i, NAN); /* beta = 0 must not read y */
    kernel_axpby(dt, N, z, x, a, zero);
    for (int i = 0; i < N; i++) expect_close(dt, get(dt, z, i), ac * rx[i], "axpby beta=0", i);
    kernel_scale(dt, N, x, b);
    for (int i = 0; i < N; i++) expect_close(dt, get(dt, x, i), bc * rx[i], "scale", i);
    for (int i = 0; i < N; i++) rx[i] = get(dt, x, i), ry[i] = get(dt, y, i);
    kernel_mul(dt, N, z, x, y);
    for (int i = 0; i < N; i++) expect_close(dt, get(dt, z, i), rx[i] * ry[i], "mul", i);
    kernel_conj(dt, N, z, x);
    for (int i = 0; i < N; i++) expect_close(dt, get(dt, z, i), conj(rx[i]), "conj", i);
    kernel_fill(dt, N, z, a);
    for (int i = 0; i < N; i++) expect_close(dt, get(dt, z, i), ac, "fill", i);
    free(x);
    free(y);
    free(z);
  }
}

Test(kernels, reductions_match_naive_loops)
{
  for (int t = 0; t < 4; t++) {
    sl_dtype dt = all[t];
    double complex rx[N], ry[N];
    void *x = make(dt, 3, rx), *y = make(dt, 4, ry);
    double complex dot = 0, vdot = 0, sum = 0;
    double p1 = 0, p2 = 0, p3 = 0, mx = 0, mn = INFINITY, nnz = 0;
    for (int i = 0; i < N; i++) {
      dot += rx[i] * ry[i];
      vdot += conj(rx[i]) * ry[i];
      sum += rx[i];
      double m = cabs(rx[i]);
      p1 += m, p2 += m * m, p3 += pow(m, 3.5);
      mx = fmax(mx, m), mn = fmin(mn, m), nnz += rx[i] != 0;
    }
    cr_assert(nnz < N, "the test data has zeros");
    struct { sl_red_kind k; double p; double complex want; const char *name; } cases[] = {
      {SL_RED_DOT, 0, dot, "dot"},       {SL_RED_VDOT, 0, vdot, "vdot"},   {SL_RED_SUM, 0, sum, "sum"},
      {SL_RED_ABSPOW, 1, p1, "abs^1"},   {SL_RED_ABSPOW, 2, p2, "abs^2"},  {SL_RED_ABSPOW, 3.5, p3, "abs^3.5"},
      {SL_RED_MAXABS, 0, mx, "max|x|"},  {SL_RED_MINABS, 0, mn, "min|x|"}, {SL_RED_NNZ, 0, nnz, "nnz"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      double out[2];
      kernel_reduce(dt, cases[k].k, N, x, y, cases[k].p, out);
      expect_close(dt, CMPLX(out[0], out[1]), cases[k].want, cases[k].name, 0);
    }
    free(x);
    free(y);
  }
}

Test(kernels, reductions_of_nothing_are_identities)
{
  double out[2];
  kernel_reduce(SL_FLOAT64, SL_RED_MINABS, 0, NULL, NULL, 0, out);
  cr_expect(isinf(out[0]) && out[0] > 0);
  kernel_reduce(SL_COMPLEX128, SL_RED_DOT, 0, NULL, NULL, 0, out);
  cr_expect(out[0] == 0 && out[1] == 0);
  double acc[2];
  sl_red_identity(SL_RED_MAXABS, acc);
  sl_red_combine(SL_RED_MAXABS, acc, (double[2]){3, 0});
  sl_red_combine(SL_RED_MAXABS, acc, (double[2]){2, 0});
  cr_expect(acc[0] == 3);
}

/* splitmix64 as a sequential generator seeded with key: its k-th output (k = 1, 2, ...). */
static double splitmix_nth(uint64_t key, int64_t k)
{
  uint64_t state = key, z = 0;
  for (int64_t i = 0; i < k; i++) {
    state += 0x9e3779b97f4a7c15ULL;
    z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z = z ^ (z >> 31);
  }
  return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

Test(kernels, random_fill_is_splitmix64_by_position)
{
  const uint64_t key = 0xabcdef0123ULL;
  for (int t = 0; t < 4; t++) {
    sl_dtype dt = all[t];
    int comps = sl_dtype_is_complex(dt) ? 2 : 1;
    void *whole = calloc(N, 16), *cut = calloc(N, 16);
    kernel_random(dt, N, whole, key, 5);
    /* the same block filled as two chunks: the second numbered from where the first ends */
    kernel_random(dt, 11, cut, key, 5);
    kernel_random(dt, N - 11, (char *)cut + 11 * sl_dtype_size(dt), key, 5 + 11 * comps);
    double sum = 0;
    for (int j = 0; j < N * comps; j++) {
      double w = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? ((float *)whole)[j] : ((double *)whole)[j];
      double c = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? ((float *)cut)[j] : ((double *)cut)[j];
      double ref = splitmix_nth(key, 5 + j + 1);
      cr_expect(fabs(w - ref) <= tol(dt) * fmax(1, fabs(ref)), "%s [%d]: got %g want %g", sl_dtype_name(dt), j, w, ref);
      cr_expect(w == c, "%s [%d]: one chunk %g, two chunks %g", sl_dtype_name(dt), j, w, c);
      cr_expect(w >= -1.0 && w < 1.0 + tol(dt), "%s [%d]: %g outside [-1, 1)", sl_dtype_name(dt), j, w);
      sum += w;
    }
    cr_expect(fabs(sum / (N * comps)) < 0.35, "%s: mean %g of %d uniform values", sl_dtype_name(dt), sum / (N * comps), N * comps);
    free(whole);
    free(cut);
  }
}
