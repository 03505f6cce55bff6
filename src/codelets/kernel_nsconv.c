/* CPU non-stationary convolution: one body (real or complex through C's complex types) for the four dtypes.
 * The loop over the inner axis is innermost, so the rows of a block stream through. */
#include <complex.h>
#include <string.h>

#include "codelets/kernel_nsconv.h"

#define NSCONV_BODY(T, CONJ)                                                                          \
  const T *h = H, *x = in;                                                                            \
  T *y = out;                                                                                         \
  const int64_t c = L / 2;                                                                            \
  if (inner == 1) { /* contiguous lines: one dot product of at most L taps per output */              \
    for (int64_t o = 0; o < outer; o++) {                                                             \
      const T *xo = x + o * n;                                                                        \
      T *yo = y + o * n;                                                                              \
      for (int64_t k = 0; k < n; k++) {                                                               \
        int64_t j0 = k - c < 0 ? 0 : k - c, j1 = k + c < n - 1 ? k + c : n - 1;                       \
        T acc = 0;                                                                                    \
        if (adjoint)                                                                                  \
          for (int64_t j = j0; j <= j1; j++) acc += CONJ(h[k * L + (j - k) + c]) * xo[j];             \
        else                                                                                          \
          for (int64_t j = j0; j <= j1; j++) acc += h[j * L + (k - j) + c] * xo[j];                   \
        yo[k] = acc;                                                                                  \
      }                                                                                               \
    }                                                                                                 \
    return;                                                                                           \
  }                                                                                                   \
  for (int64_t o = 0; o < outer; o++) {                                                               \
    const T *xo = x + o * n * inner;                                                                  \
    T *yo = y + o * n * inner;                                                                        \
    for (int64_t k = 0; k < n; k++) {                                                                 \
      T *yr = yo + k * inner;                                                                         \
      for (int64_t i = 0; i < inner; i++) yr[i] = 0;                                                  \
      for (int64_t s = -c; s <= c; s++) {                                                             \
        int64_t j = adjoint ? k + s : k - s; /* the input row */                                      \
        if (j < 0 || j >= n) continue;                                                                \
        T w = adjoint ? CONJ(h[k * L + s + c]) : h[j * L + s + c];                                    \
        const T *xr = xo + j * inner;                                                                 \
        for (int64_t i = 0; i < inner; i++) yr[i] += w * xr[i];                                       \
      }                                                                                               \
    }                                                                                                 \
  }

#define IDENT(v) (v)
static void nsconv_s(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H, const void *in, void *out)
{
  NSCONV_BODY(float, IDENT)
}
static void nsconv_d(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H, const void *in, void *out)
{
  NSCONV_BODY(double, IDENT)
}
static void nsconv_c(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H, const void *in, void *out)
{
  NSCONV_BODY(float complex, conjf)
}
static void nsconv_z(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H, const void *in, void *out)
{
  NSCONV_BODY(double complex, conj)
}

void kernel_nsconv(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H,
                   const void *in, void *out)
{
  static void (*const f[])(int, int64_t, int64_t, int64_t, int64_t, const void *, const void *, void *) = {
    nsconv_s, nsconv_d, nsconv_c, nsconv_z};
  f[dt](adjoint, outer, n, inner, L, H, in, out);
}
