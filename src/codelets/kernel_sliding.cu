/* CUDA Sliding1D: forward one thread per data element (the windows covering its row), adjoint one thread per
 * model element (its window's rows); the same semantics as kernel_sliding.c (buffer origins r0, w0). */
#include <cuda_runtime.h>

#include "kernel_cuda_ops.cuh"
#include "kernel_sliding.h"

template <typename T> __global__ void sliding_fwd(sl_sliding_dims d, const T *m, const T *t, const T *x, T *y)
{
  const int64_t total = d.outer * d.n * d.inner;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e % d.inner, r = (e / d.inner) % d.n, o = e / (d.inner * d.n), R = d.r0 + r;
    /* the global windows covering global row R, within the buffer's windows and the axis's */
    int64_t W0 = R - d.nwin + 1 <= 0 ? 0 : (R - d.nwin + 1 + d.step - 1) / d.step, W1 = R / d.step;
    if (W0 < d.w0) W0 = d.w0;
    if (W1 > d.w0 + d.nwins - 1) W1 = d.w0 + d.nwins - 1;
    if (W1 > d.nwtot - 1) W1 = d.nwtot - 1;
    T acc = ops<T>::zero();
    for (int64_t W = W0; W <= W1; W++) {
      int64_t q = R - W * d.step, w = W - d.w0;
      T s = ops<T>::zero();
      for (int64_t j = 0; j < d.nm; j++) s = ops<T>::add(s, ops<T>::mul(m[q * d.nm + j], x[((o * d.nwins + w) * d.nm + j) * d.inner + i]));
      acc = ops<T>::add(acc, ops<T>::mul(t[W * d.nwin + q], s));
    }
    y[e] = acc;
  }
}

template <typename T> __global__ void sliding_adj(sl_sliding_dims d, const T *m, const T *t, const T *x, T *y)
{
  const int64_t total = d.outer * d.nwins * d.nm * d.inner;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e % d.inner, j = (e / d.inner) % d.nm, w = (e / (d.inner * d.nm)) % d.nwins, o = e / (d.inner * d.nm * d.nwins);
    int64_t W = d.w0 + w, s = W * d.step - d.r0, qa = s < 0 ? -s : 0, qb = s + d.nwin > d.n ? d.n - s : d.nwin;
    T acc = ops<T>::zero();
    for (int64_t q = qa; W >= 0 && W < d.nwtot && q < qb; q++)
      acc = ops<T>::add(acc, ops<T>::mul(ops<T>::mul(t[W * d.nwin + q], ops<T>::conj(m[q * d.nm + j])),
                                           x[(o * d.n + s + q) * d.inner + i]));
    y[e] = acc;
  }
}

extern "C" int kernel_cuda_sliding(sl_dtype dt, int adjoint, const sl_sliding_dims *d, const void *M, const void *T,
                                   const void *in, void *out, void *stream)
{
  int64_t total = adjoint ? d->outer * d->nwins * d->nm * d->inner : d->outer * d->n * d->inner;
  if (total <= 0) return cudaSuccess;
  unsigned grid = sl_cuda_grid(total);
  cudaStream_t s = (cudaStream_t)stream;
#define L_(U)                                                                                         \
  if (adjoint) sliding_adj<U><<<grid, SL_CUDA_THREADS, 0, s>>>(*d, (const U *)M, (const U *)T, (const U *)in, (U *)out); \
  else sliding_fwd<U><<<grid, SL_CUDA_THREADS, 0, s>>>(*d, (const U *)M, (const U *)T, (const U *)in, (U *)out)
  SL_CUDA_DISPATCH(dt, L_)
#undef L_
  return cudaGetLastError();
}
