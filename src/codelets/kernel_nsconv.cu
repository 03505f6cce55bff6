/* CUDA non-stationary convolution: one thread per output element (grid-stride), the filter taps of its row
 * read from H (tap-major, so that neighbouring threads read neighbouring values); the same semantics as
 * kernel_nsconv.c. */
#include <cuda_runtime.h>

#include "kernel_cuda_ops.cuh"
#include "kernel_nsconv.h"

template <typename T>
__global__ void nsconv_k(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const T *h, const T *x, T *y)
{
  const int64_t total = outer * n * inner, c = L / 2;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e % inner, k = (e / inner) % n, o = e / (inner * n);
    const T *xo = x + o * n * inner + i;
    T acc = ops<T>::zero();
    for (int64_t s = -c; s <= c; s++) {
      int64_t j = adjoint ? k + s : k - s;
      if (j < 0 || j >= n) continue;
      T w = adjoint ? ops<T>::conj(h[(s + c) * n + k]) : h[(s + c) * n + j]; /* H stored tap-major */
      acc = ops<T>::add(acc, ops<T>::mul(w, xo[j * inner]));
    }
    y[e] = acc;
  }
}

extern "C" int kernel_cuda_nsconv(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L,
                                  const void *H, const void *in, void *out, void *stream)
{
  int64_t total = outer * n * inner;
  if (total <= 0) return cudaSuccess;
  unsigned grid = sl_cuda_grid(total);
  cudaStream_t s = (cudaStream_t)stream;
#define L_(T) nsconv_k<T><<<grid, SL_CUDA_THREADS, 0, s>>>(adjoint, outer, n, inner, L, (const T *)H, (const T *)in, (T *)out)
  SL_CUDA_DISPATCH(dt, L_)
#undef L_
  return cudaGetLastError();
}
