/* CPU Sliding1D: one body (real or complex through C's complex types) for the four dtypes; the inner axis
 * innermost so that rows stream. */
#include <complex.h>
#include <string.h>

#include "codelets/kernel_sliding.h"

#define SLIDING_BODY(T, CONJ)                                                                         \
  const T *m = M, *t = Tp, *x = in;                                                                   \
  T *y = out;                                                                                         \
  const int64_t in_ = d->inner, nm = d->nm, nwin = d->nwin;                                           \
  if (in_ == 1 && !adjoint) { /* windows along the last axis: a dot product per data sample */        \
    memset(y, 0, sizeof(T) * (size_t)(d->outer * d->n));                                              \
    for (int64_t o = 0; o < d->outer; o++)                                                            \
      for (int64_t w = 0; w < d->nwins; w++) {                                                        \
        const T *xw = x + (o * d->nwins + w) * nm;                                                    \
        T *yw = y + o * d->n + w * d->step;                                                           \
        for (int64_t q = 0; q < nwin; q++) {                                                          \
          T acc = 0;                                                                                  \
          for (int64_t j = 0; j < nm; j++) acc += m[q * nm + j] * xw[j];                              \
          yw[q] += t[w * nwin + q] * acc;                                                             \
        }                                                                                             \
      }                                                                                               \
    return;                                                                                           \
  }                                                                                                   \
  if (in_ == 1) { /* and the adjoint: a row of M^H per window sample, accumulated contiguously */     \
    memset(y, 0, sizeof(T) * (size_t)(d->outer * d->nwins * nm));                                     \
    for (int64_t o = 0; o < d->outer; o++)                                                            \
      for (int64_t w = 0; w < d->nwins; w++) {                                                        \
        const T *xw = x + o * d->n + w * d->step;                                                     \
        T *yw = y + (o * d->nwins + w) * nm;                                                          \
        for (int64_t q = 0; q < nwin; q++) {                                                          \
          T c = t[w * nwin + q] * xw[q];                                                              \
          for (int64_t j = 0; j < nm; j++) yw[j] += CONJ(m[q * nm + j]) * c;                          \
        }                                                                                             \
      }                                                                                               \
    return;                                                                                           \
  }                                                                                                   \
  if (!adjoint) { /* data (outer, n, inner) from model (outer, nwins, nm, inner) */                   \
    memset(y, 0, sizeof(T) * (size_t)(d->outer * d->n * in_));                                        \
    for (int64_t o = 0; o < d->outer; o++)                                                            \
      for (int64_t w = 0; w < d->nwins; w++)                                                          \
        for (int64_t q = 0; q < nwin; q++) {                                                          \
          T *yr = y + (o * d->n + w * d->step + q) * in_;                                             \
          T tw = t[w * nwin + q];                                                                     \
          for (int64_t j = 0; j < nm; j++) {                                                          \
            T c = tw * m[q * nm + j];                                                                 \
            const T *xr = x + ((o * d->nwins + w) * nm + j) * in_;                                    \
            for (int64_t i = 0; i < in_; i++) yr[i] += c * xr[i];                                     \
          }                                                                                           \
        }                                                                                             \
  } else { /* model from data */                                                                      \
    memset(y, 0, sizeof(T) * (size_t)(d->outer * d->nwins * nm * in_));                               \
    for (int64_t o = 0; o < d->outer; o++)                                                            \
      for (int64_t w = 0; w < d->nwins; w++)                                                          \
        for (int64_t q = 0; q < nwin; q++) {                                                          \
          const T *xr = x + (o * d->n + w * d->step + q) * in_;                                       \
          T tw = t[w * nwin + q];                                                                     \
          for (int64_t j = 0; j < nm; j++) {                                                          \
            T c = tw * CONJ(m[q * nm + j]);                                                           \
            T *yr = y + ((o * d->nwins + w) * nm + j) * in_;                                          \
            for (int64_t i = 0; i < in_; i++) yr[i] += c * xr[i];                                     \
          }                                                                                           \
        }                                                                                             \
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
