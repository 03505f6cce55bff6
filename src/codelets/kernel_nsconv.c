/* CPU non-stationary convolution: one body (real or complex through C's complex types) for the four dtypes.
 * Along the last axis tap by tap, four rows at a time, from the tap-major table (each tap a product of two
 * contiguous runs added into the rows: loops the compiler vectorises); along another axis the loop over the
 * inner axis is innermost, so the rows of a block stream through (sample-major table). */
#include <complex.h>
#include <string.h>

#include "codelets/kernel_nsconv.h"

enum { NSCONV_ROWS = 4 };

#define NSCONV_BODY(T, CONJ)                                                                          \
  const T *h = H, *x = in;                                                                            \
  T *y = out;                                                                                         \
  const int64_t c = L / 2;                                                                            \
  if (inner == 1) { /* contiguous lines: tap by tap over NSCONV_ROWS rows at a time (tap-major table) */ \
    const T *ht = h + n * L;                                                                          \
    const int64_t oend = hi * NSCONV_ROWS < outer ? hi * NSCONV_ROWS : outer; /* units of NSCONV_ROWS rows */ \
    for (int64_t o0 = lo * NSCONV_ROWS; o0 < oend; o0 += NSCONV_ROWS) {                               \
      const int64_t rows = outer - o0 < NSCONV_ROWS ? outer - o0 : NSCONV_ROWS;                       \
      for (int64_t r = 0; r < rows; r++) memset(y + (o0 + r) * n, 0, sizeof(T) * (size_t)n);          \
      for (int64_t t = 0; t < L; t++) {                                                               \
        /* forward: y[k] += ht[t n + j] x[j], j = k + c - t; adjoint: y[k] += conj(ht[t n + k]) x[k + t - c] */ \
        const int64_t d = adjoint ? t - c : c - t, k0 = d < 0 ? -d : 0, k1 = d > 0 ? n - d : n;      \
        const T *w = ht + t * n + (adjoint ? 0 : d);                                                  \
        for (int64_t r = 0; r < rows; r++) {                                                          \
          const T *xr = x + (o0 + r) * n + d;                                                         \
          T *yr = y + (o0 + r) * n;                                                                   \
          if (adjoint)                                                                                \
            for (int64_t k = k0; k < k1; k++) yr[k] += CONJ(w[k]) * xr[k];                            \
          else                                                                                        \
            for (int64_t k = k0; k < k1; k++) yr[k] += w[k] * xr[k];                                  \
        }                                                                                             \
      }                                                                                               \
    }                                                                                                 \
    return;                                                                                           \
  }                                                                                                   \
  for (int64_t l = lo; l < hi; l++) { /* units: the output rows (o, k) */                            \
    const int64_t o = l / n, k = l - o * n;                                                           \
    const T *xo = x + o * n * inner;                                                                  \
    T *yr = y + (o * n + k) * inner;                                                                  \
    for (int64_t i = 0; i < inner; i++) yr[i] = 0;                                                    \
    for (int64_t s = -c; s <= c; s++) {                                                               \
      int64_t j = adjoint ? k + s : k - s; /* the input row */                                        \
      if (j < 0 || j >= n) continue;                                                                  \
      T w = adjoint ? CONJ(h[k * L + s + c]) : h[j * L + s + c];                                      \
      const T *xr = xo + j * inner;                                                                   \
      for (int64_t i = 0; i < inner; i++) yr[i] += w * xr[i];                                         \
    }                                                                                                 \
  }

#define IDENT(v) (v)
/* The products bound this kernel, so each dtype's body is built for three x86-64 levels and the loader picks
 * the widest the CPU has (AVX-512, AVX2 with FMA, the baseline): 1.15-1.3x over the baseline build on the 2-core
 * machine (docs/benchmarks.md). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NSCONV_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NSCONV_CLONES
#endif
NSCONV_CLONES static void nsconv_s(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H, const void *in, void *out,
                     int64_t lo, int64_t hi)
{
  NSCONV_BODY(float, IDENT)
}
NSCONV_CLONES static void nsconv_d(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H, const void *in, void *out,
                     int64_t lo, int64_t hi)
{
  NSCONV_BODY(double, IDENT)
}
NSCONV_CLONES static void nsconv_c(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H, const void *in, void *out,
                     int64_t lo, int64_t hi)
{
  NSCONV_BODY(float complex, conjf)
}
NSCONV_CLONES static void nsconv_z(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H, const void *in, void *out,
                     int64_t lo, int64_t hi)
{
  NSCONV_BODY(double complex, conj)
}

int64_t kernel_nsconv_units(int64_t outer, int64_t n, int64_t inner)
{
  return inner == 1 ? (outer + NSCONV_ROWS - 1) / NSCONV_ROWS : outer * n;
}

void kernel_nsconv_range(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H,
                         const void *in, void *out, int64_t lo, int64_t hi)
{
  static void (*const f[])(int, int64_t, int64_t, int64_t, int64_t, const void *, const void *, void *, int64_t, int64_t) = {
    nsconv_s, nsconv_d, nsconv_c, nsconv_z};
  f[dt](adjoint, outer, n, inner, L, H, in, out, lo, hi);
}

void kernel_nsconv(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H,
                   const void *in, void *out)
{
  kernel_nsconv_range(dt, adjoint, outer, n, inner, L, H, in, out, 0, kernel_nsconv_units(outer, n, inner));
}
