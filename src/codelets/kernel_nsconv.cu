/* CUDA non-stationary convolution: one thread per output element (grid-stride), the filter taps of its row
 * read from H (tap-major, so that neighbouring threads read neighbouring values), and along the last axis one
 * thread per sample of R rows; the same semantics as kernel_nsconv.c. */
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

/* Convolution along the last axis (inner = 1), the common case: rows of the grid (blockIdx.y) walk groups of R
 * rows of the block, so a thread reads each tap of its sample's filter once for R outputs (the filters vary
 * along the convolution axis only) and does no index division; blocks whose samples all lie at least c from
 * both ends skip the bounds tests; 32-bit indices when the block's elements fit. */
template <typename T, typename I, int R>
__global__ void nsconv_rows_k(int adjoint, I outer, I n, I L, const T *h, const T *x, T *y)
{
  const I c = L / 2;
  for (I o0 = (I)blockIdx.y * R; o0 < outer; o0 += (I)gridDim.y * R) {
    const int rows = outer - o0 < R ? (int)(outer - o0) : R;
    const T *xo = x + o0 * n;
    T *yo = y + o0 * n;
    for (I b0 = (I)blockIdx.x * blockDim.x; b0 < n; b0 += (I)gridDim.x * blockDim.x) {
      const I k = b0 + threadIdx.x;
      const bool interior = b0 >= c && b0 + (I)blockDim.x + c <= n; /* the same for the whole block */
      T acc[R];
#pragma unroll
      for (int r = 0; r < R; r++) acc[r] = ops<T>::zero();
      if (k < n) {
        for (I s = -c; s <= c; s++) {
          const I j = adjoint ? k + s : k - s;
          if (!interior && (j < 0 || j >= n)) continue;
          const T w = adjoint ? ops<T>::conj(h[(s + c) * n + k]) : h[(s + c) * n + j]; /* H tap-major */
#pragma unroll
          for (int r = 0; r < R; r++)
            if (r < rows) acc[r] = ops<T>::add(acc[r], ops<T>::mul(w, xo[r * n + j]));
        }
#pragma unroll
        for (int r = 0; r < R; r++)
          if (r < rows) yo[r * n + k] = acc[r];
      }
    }
  }
}

extern "C" int kernel_cuda_nsconv(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L,
                                  const void *H, const void *in, void *out, void *stream)
{
  int64_t total = outer * n * inner;
  if (total <= 0) return cudaSuccess;
  cudaStream_t s = (cudaStream_t)stream;
  if (inner == 1) { /* along the last axis: R = 4 rows per thread */
    const int R = 4;
    int64_t groups = (outer + R - 1) / R, bx = (n + SL_CUDA_THREADS - 1) / SL_CUDA_THREADS;
    unsigned gy = (unsigned)(groups < 65535 ? groups : 65535), gx = (unsigned)(bx < 65535 ? bx : 65535);
    int narrow = total + n + L < ((int64_t)1 << 31) && n * L < ((int64_t)1 << 31); /* the data's and the table's indices */
#define L_(T)                                                                                                  \
  if (narrow)                                                                                                  \
    nsconv_rows_k<T, int32_t, R><<<dim3(gx, gy), SL_CUDA_THREADS, 0, s>>>(adjoint, (int32_t)outer, (int32_t)n, (int32_t)L, \
                                                                        (const T *)H, (const T *)in, (T *)out);  \
  else                                                                                                         \
    nsconv_rows_k<T, int64_t, R><<<dim3(gx, gy), SL_CUDA_THREADS, 0, s>>>(adjoint, outer, n, L, (const T *)H,   \
                                                                        (const T *)in, (T *)out)
    SL_CUDA_DISPATCH(dt, L_)
#undef L_
    return cudaGetLastError();
  }
  unsigned grid = sl_cuda_grid(total);
#define L_(T) nsconv_k<T><<<grid, SL_CUDA_THREADS, 0, s>>>(adjoint, outer, n, inner, L, (const T *)H, (const T *)in, (T *)out)
  SL_CUDA_DISPATCH(dt, L_)
#undef L_
  return cudaGetLastError();
}
