/* CUDA index kernels of Restriction (kernel_select.h): one thread per selected element; scatter-add with
 * atomicAdd per real component. */
#include <cuda_runtime.h>

#include "kernel_select.h"

#define SL_THREADS 256

static unsigned grid_for(int64_t n)
{
  int64_t b = (n + SL_THREADS - 1) / SL_THREADS;
  return (unsigned)(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

template <typename W> __global__ void gather_k(int64_t n, const int64_t *idx, const W *x, W *y)
{
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
    y[k] = x[idx[k]];
}

template <typename R, int C> __global__ void scatter_add_k(int64_t n, const int64_t *idx, const R *y, R *x)
{
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
    for (int j = 0; j < C; j++) atomicAdd(&x[idx[k] * C + j], y[k * C + j]);
}

extern "C" int kernel_cuda_gather(size_t elsize, int64_t n, const int64_t *idx, const void *x, void *y, void *stream)
{
  if (n <= 0) return cudaSuccess;
  cudaStream_t s = (cudaStream_t)stream;
  if (elsize == 4) gather_k<float><<<grid_for(n), SL_THREADS, 0, s>>>(n, idx, (const float *)x, (float *)y);
  else if (elsize == 8) gather_k<double><<<grid_for(n), SL_THREADS, 0, s>>>(n, idx, (const double *)x, (double *)y);
  else gather_k<double2><<<grid_for(n), SL_THREADS, 0, s>>>(n, idx, (const double2 *)x, (double2 *)y);
  return cudaGetLastError();
}

extern "C" int kernel_cuda_scatter_add(sl_dtype dt, int64_t n, const int64_t *idx, const void *y, void *x, void *stream)
{
  if (n <= 0) return cudaSuccess;
  cudaStream_t s = (cudaStream_t)stream;
  switch (dt) {
  case SL_FLOAT32: scatter_add_k<float, 1><<<grid_for(n), SL_THREADS, 0, s>>>(n, idx, (const float *)y, (float *)x); break;
  case SL_FLOAT64: scatter_add_k<double, 1><<<grid_for(n), SL_THREADS, 0, s>>>(n, idx, (const double *)y, (double *)x); break;
  case SL_COMPLEX64: scatter_add_k<float, 2><<<grid_for(n), SL_THREADS, 0, s>>>(n, idx, (const float *)y, (float *)x); break;
  default: scatter_add_k<double, 2><<<grid_for(n), SL_THREADS, 0, s>>>(n, idx, (const double *)y, (double *)x); break;
  }
  return cudaGetLastError();
}
