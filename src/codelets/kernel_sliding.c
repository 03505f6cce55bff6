/* CPU Sliding1D: one body (real or complex through C's complex types) for the four dtypes; the inner axis
 * innermost so that rows stream. */
#include <complex.h>
#include <string.h>

#include "codelets/kernel_sliding.h"

#define SLIDING_BODY(T, CONJ)                                                                         \
  const T *m = M, *t = Tp, *x = in;                                                                   \
  T *y = out;                                                                                         \
  const int64_t in_ = d->inner, nm = d->nm, nwin = d->nwin, n = d->n, nw = d->nwins;                  \
  memset(y, 0, sizeof(T) * (size_t)(d->outer * (adjoint ? nw * nm : n) * in_));                       \
  for (int64_t o = 0; o < d->outer; o++)                                                              \
    for (int64_t w = 0; w < nw; w++) {                                                                \
      const int64_t W = d->w0 + w, s = W * d->step - d->r0;                                           \
      const int64_t qa = s < 0 ? -s : 0, qb = s + nwin > n ? n - s : nwin;                            \
      if (W < 0 || W >= d->nwtot) continue;                                                           \
      const T *tw = t + W * nwin;                                                                     \
      const int64_t mo = (o * nw + w) * nm, dr = o * n + s; /* model row of (o, w, 0); data row of q = 0 */ \
      if (in_ == 1 && !adjoint) { /* windows along the last axis: a dot product per data sample */    \
        for (int64_t q = qa; q < qb; q++) {                                                           \
          T acc = 0;                                                                                  \
          for (int64_t j = 0; j < nm; j++) acc += m[q * nm + j] * x[mo + j];                          \
          y[dr + q] += tw[q] * acc;                                                                   \
        }                                                                                             \
      } else if (in_ == 1) { /* and the adjoint: a row of M^H per window sample */                    \
        for (int64_t q = qa; q < qb; q++) {                                                           \
          T c = tw[q] * x[dr + q];                                                                    \
          for (int64_t j = 0; j < nm; j++) y[mo + j] += CONJ(m[q * nm + j]) * c;                      \
        }                                                                                             \
      } else if (!adjoint) { /* data (outer, n, inner) from model (outer, nwins, nm, inner) */        \
        for (int64_t q = qa; q < qb; q++) {                                                           \
          T *yr = y + (dr + q) * in_;                                                                 \
          for (int64_t j = 0; j < nm; j++) {                                                          \
            T c = tw[q] * m[q * nm + j];                                                              \
            const T *xr = x + (mo + j) * in_;                                                         \
            for (int64_t i = 0; i < in_; i++) yr[i] += c * xr[i];                                     \
          }                                                                                           \
        }                                                                                             \
      } else { /* model from data */                                                                  \
        for (int64_t q = qa; q < qb; q++) {                                                           \
          const T *xr = x + (dr + q) * in_;                                                           \
          for (int64_t j = 0; j < nm; j++) {                                                          \
            T c = tw[q] * CONJ(m[q * nm + j]);                                                        \
            T *yr = y + (mo + j) * in_;                                                               \
            for (int64_t i = 0; i < in_; i++) yr[i] += c * xr[i];                                     \
          }                                                                                           \
        }                                                                                             \
      }                                                                                               \
    }

#define IDENT(v) (v)
static void sliding_s(int adjoint, const sl_sliding_dims *d, const void *M, const void *Tp, const void *in, void *out)
{
  SLIDING_BODY(float, IDENT)
}
static void sliding_d(int adjoint, const sl_sliding_dims *d, const void *M, const void *Tp, const void *in, void *out)
{
  SLIDING_BODY(double, IDENT)
}
static void sliding_c(int adjoint, const sl_sliding_dims *d, const void *M, const void *Tp, const void *in, void *out)
{
  SLIDING_BODY(float complex, conjf)
}
static void sliding_z(int adjoint, const sl_sliding_dims *d, const void *M, const void *Tp, const void *in, void *out)
{
  SLIDING_BODY(double complex, conj)
}

void kernel_sliding(sl_dtype dt, int adjoint, const sl_sliding_dims *d, const void *M, const void *T, const void *in, void *out)
{
  static void (*const f[])(int, const sl_sliding_dims *, const void *, const void *, const void *, void *) = {
    sliding_s, sliding_d, sliding_c, sliding_z};
  f[dt](adjoint, d, M, T, in, out);
}
