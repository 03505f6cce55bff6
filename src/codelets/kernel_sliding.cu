/* CUDA Sliding1D: forward one thread per data element (the windows covering its row), adjoint one thread per
 * model element (its window's rows); the same semantics as kernel_sliding.c. */
#include <cuda_runtime.h>

#include "kernel_cuda_ops.cuh"
#include "kernel_sliding.h"

template <typename T> __global__ void sliding_fwd(sl_sliding_dims d, const T *m, const T *t, const T *x, T *y)
{
  const int64_t total = d.outer * d.n * d.inner;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e % d.inner, r = (e / d.inner) % d.n, o = e / (d.inner * d.n);
    int64_t w0 = r - d.nwin + 1 <= 0 ? 0 : (r - d.nwin + 1 + d.step - 1) / d.step, w1 = r / d.step;
    if (w1 > d.nwins - 1) w1 = d.nwins - 1;
    T acc = ops<T>::zero();
    for (int64_t w = w0; w <= w1; w++) {
      int64_t q = r - w * d.step;
      T s = ops<T>::zero();
      for (int64_t j = 0; j < d.nm; j++) s = ops<T>::add(s, ops<T>::mul(m[q * d.nm + j], x[((o * d.nwins + w) * d.nm + j) * d.inner + i]));
      acc = ops<T>::add(acc, ops<T>::mul(t[w * d.nwin + q], s));
    }
    y[e] = acc;
  }
}

template <typename T> __global__ void sliding_adj(sl_sliding_dims d, const T *m, const T *t, const T *x, T *y)
{
  const int64_t total = d.outer * d.nwins * d.nm * d.inner;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e % d.inner, j = (e / d.inner) % d.nm, w = (e / (d.inner * d.nm)) % d.nwins, o = e / (d.inner * d.nm * d.nwins);
    T acc = ops<T>::zero();
    for (int64_t q = 0; q < d.nwin; q++)
      acc = ops<T>::add(acc, ops<T>::mul(ops<T>::mul(t[w * d.nwin + q], ops<T>::conj(m[q * d.nm + j])),
                                           x[(o * d.n + w * d.step + q) * d.inner + i]));
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
