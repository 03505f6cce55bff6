/* CUDA non-stationary convolution: float64 and complex128 with up to 33 taps on the tensor cores
 * (kernel_nsconv_dmma.cu) along the last axis or with at least 8 values after the axis; otherwise one thread per
 * output element (grid-stride), the filter taps of its row read from H (tap-major, so that neighbouring threads
 * read neighbouring values), and along the last axis a tiled kernel for float32 and complex64 (below) or, for
 * long filters or STARLOPS_NSCONV_ROWS=1, one thread per sample of R rows; the same semantics as kernel_nsconv.c. */
#include <cuda_pipeline.h>
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

/* Convolution along the last axis, tiled: a block takes S = 32 P consecutive samples and walks groups of RY R
 * rows. The filter taps its samples need (L x (S + L - 1), zero outside the row) are loaded into shared memory
 * once per tile, each group's input rows (with c samples either side, zero outside) once per group, by
 * asynchronous copies, the next group's while the current one is computed (two row buffers). A thread owns P
 * consecutive samples of R rows: at tap m it reads P taps and R new input values (a window of P per row in
 * registers) for R P products, where the row kernel reads one input and 1 / R taps per product. P is odd, so
 * the lanes' shared-memory reads (stride P) hit distinct banks. Outputs go through shared memory (the group's
 * row buffer) to leave as whole rows. Forward: y[k] = sum_m H[(L-1-m) n + k-c+m] x[k-c+m]; adjoint:
 * y[k] = sum_m conj(H[m n + k]) x[k-c+m]. */
template <typename T, typename I>
__device__ inline void tile_rows_load(T *dst, const T *src, I rows, I rows_valid, I n, I j0, I W, I ld, int lane, int g, int RY)
{
  for (I r = g; r < rows; r += RY)
    for (I jl = lane; jl < W; jl += 32) {
      const I j = j0 + jl;
      if (r < rows_valid && j >= 0 && j < n) __pipeline_memcpy_async(dst + r * W + jl, src + r * ld + j, sizeof(T));
      else dst[r * W + jl] = ops<T>::zero();
    }
  __pipeline_commit();
}

template <typename T, typename I, int P, int R, int RY>
__global__ void __launch_bounds__(32 * RY) nsconv_tile_k(int adjoint, I outer, I n, I L, const T *h, const T *x, T *y)
{
  extern __shared__ unsigned char nsconv_smem[];
  const I S = 32 * P, XW = S + L - 1, c = L / 2, G = RY * R;
  T *ws = (T *)nsconv_smem, *xb = ws + (size_t)L * XW; /* taps L x XW; two row buffers G x XW */
  const int lane = threadIdx.x, g = threadIdx.y, k0 = lane * P;
  const T zero = ops<T>::zero();
  const I step = (I)gridDim.y * G;
  for (I b0 = (I)blockIdx.x * S; b0 < n; b0 += (I)gridDim.x * S) {
    __syncthreads(); /* the previous tile's readers are done */
    tile_rows_load(ws, h, L, L, n, b0 - c, XW, n, lane, g, RY);
    I o0 = (I)blockIdx.y * G;
    if (o0 < outer) tile_rows_load(xb, x + (size_t)o0 * n, G, outer - o0, n, b0 - c, XW, n, lane, g, RY);
    for (int buf = 0; o0 < outer; o0 += step, buf ^= 1) {
      T *xs = xb + buf * G * XW;
      const I o1 = o0 + step;
      if (o1 < outer) { /* the next group's rows into the other buffer (its outputs left in the last round) */
        tile_rows_load(xb + (buf ^ 1) * G * XW, x + (size_t)o1 * n, G, outer - o1, n, b0 - c, XW, n, lane, g, RY);
        __pipeline_wait_prior(1);
      } else {
        __pipeline_wait_prior(0);
      }
      __syncthreads();
      T acc[R][P], xv[R][P], w[P];
      const T *xr = xs + (g * R) * XW + k0;
#pragma unroll
      for (int r = 0; r < R; r++) {
#pragma unroll
        for (int p = 0; p < P; p++) acc[r][p] = zero;
#pragma unroll
        for (int p = 0; p < P - 1; p++) xv[r][p] = xr[r * XW + p];
      }
      for (I m0 = 0; m0 < L; m0 += P) {
#pragma unroll
        for (int q = 0; q < P; q++) {
          const I m = m0 + q;
          if (m < L) {
            /* window slot (m + p) % P = (q + p) % P holds input k0 + m + p */
#pragma unroll
            for (int r = 0; r < R; r++) xv[r][(q + P - 1) % P] = xr[r * XW + m + P - 1];
#pragma unroll
            for (int p = 0; p < P; p++)
              w[p] = adjoint ? ops<T>::conj(ws[m * XW + k0 + p + c]) : ws[(L - 1 - m) * XW + k0 + p + m];
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
              for (int p = 0; p < P; p++) acc[r][p] = ops<T>::add(acc[r][p], ops<T>::mul(w[p], xv[r][(q + p) % P]));
          }
        }
      }
      __syncthreads(); /* every thread is done with the rows: the outputs take their place */
#pragma unroll
      for (int r = 0; r < R; r++)
#pragma unroll
        for (int p = 0; p < P; p++) xs[(g * R + r) * S + k0 + p] = acc[r][p];
      __syncthreads();
      for (I r = g; r < G; r += RY)
        for (I kl = lane; kl < S; kl += 32) {
          const I o = o0 + r, k = b0 + kl;
          if (o < outer && k < n) y[(size_t)o * n + k] = xs[r * S + kl];
        }
      __syncthreads(); /* the outputs have left: the buffer takes the group after next */
    }
    __pipeline_wait_prior(0); /* nothing in flight into the next tile's buffers */
  }
}

/* The tiled kernel's shape (float32, complex64): P samples (odd) and R rows per thread, RY warps per block. */
template <typename T> struct tile_shape { enum { P = 5, R = 4, RY = 4 }; };
#define NSCONV_TILE_MAX_SMEM (96 * 1024)

template <typename T> static size_t tile_smem(int64_t L)
{
  typedef tile_shape<T> sh;
  return (size_t)(L + 2 * sh::RY * sh::R) * (size_t)(32 * sh::P + L - 1) * sizeof(T);
}

/* Launches the tiled kernel; cudaErrorNotSupported when its shared memory would exceed the cap (the row kernel
 * then runs). */
template <typename T, typename I>
static int launch_tile(int adjoint, int64_t outer, int64_t n, int64_t L, const T *h, const T *x, T *y, cudaStream_t s)
{
  typedef tile_shape<T> sh;
  size_t smem = tile_smem<T>(L);
  if (smem > NSCONV_TILE_MAX_SMEM) return cudaErrorNotSupported;
  void (*k)(int, I, I, I, const T *, const T *, T *) = nsconv_tile_k<T, I, sh::P, sh::R, sh::RY>;
  int dev = 0, optin = 0;
  int rc = cudaGetDevice(&dev);
  if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  if (rc != cudaSuccess) return rc;
  if (smem > (size_t)optin) return cudaErrorNotSupported; /* a GPU with less shared memory per block */
  /* the same limit whatever the filter, so that workers sharing the device never lower it under each other */
  int limit = NSCONV_TILE_MAX_SMEM < optin ? NSCONV_TILE_MAX_SMEM : optin;
  if ((rc = cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, limit)) != cudaSuccess) return rc;
  /* one wave of blocks: the tiles of samples across, the groups of rows shared out down */
  dim3 grid;
  if ((rc = sl_cuda_wave_grid((const void *)k, 32 * sh::RY, smem, (n + 32 * sh::P - 1) / (32 * sh::P),
                              (outer + sh::RY * sh::R - 1) / (sh::RY * sh::R), &grid)) != cudaSuccess)
    return rc;
  k<<<grid, dim3(32, sh::RY), smem, s>>>(adjoint, (I)outer, (I)n, (I)L, h, x, y);
  return cudaGetLastError();
}

/* 32-bit indices for the kernels along the last axis: the data's and the table's, and the row index plus one
 * grid's step of rows (at most 65535 x 16) */
static int narrow_ok(int64_t total, int64_t outer, int64_t n, int64_t L)
{
  const int64_t lim = (int64_t)1 << 31;
  return total + n + L < lim && n * L < lim && outer + ((int64_t)1 << 21) < lim;
}

extern "C" int kernel_cuda_nsconv(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L,
                                  const void *H, const void *in, void *out, int rows_kernel, void *stream)
{
  int64_t total = outer * n * inner;
  if (total <= 0) return cudaSuccess;
  cudaStream_t s = (cudaStream_t)stream;
  if (inner > 1 || !rows_kernel) { /* float64 and complex128 with short filters on the tensor cores */
    int rc = kernel_cuda_nsconv_dmma(dt, adjoint, outer, n, inner, L, H, in, out, stream);
    if (rc != cudaErrorNotSupported) return rc;
  }
  /* float32 and complex64 along the last axis, tiled, unless the filters are too long for it (float64 and
   * complex128 past the tensor cores' 33 taps would not fit its shared memory either) */
  if (inner == 1 && !rows_kernel && (dt == SL_FLOAT32 || dt == SL_COMPLEX64)) {
    int narrow = narrow_ok(total, outer, n, L);
    int rc;
#define L_(T)                                                                                              \
  (narrow ? launch_tile<T, int32_t>(adjoint, outer, n, L, (const T *)H, (const T *)in, (T *)out, s)       \
          : launch_tile<T, int64_t>(adjoint, outer, n, L, (const T *)H, (const T *)in, (T *)out, s))
    rc = dt == SL_FLOAT32 ? L_(float) : L_(cuFloatComplex);
#undef L_
    if (rc != cudaErrorNotSupported) return rc;
  }
  if (inner == 1) { /* along the last axis: R = 4 rows per thread */
    const int R = 4;
    int64_t groups = (outer + R - 1) / R, bx = (n + SL_CUDA_THREADS - 1) / SL_CUDA_THREADS;
    unsigned gy = (unsigned)(groups < 65535 ? groups : 65535), gx = (unsigned)(bx < 65535 ? bx : 65535);
    int narrow = narrow_ok(total, outer, n, L);
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
