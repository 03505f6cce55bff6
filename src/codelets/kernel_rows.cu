/* Strided row accumulation on the GPU (the adjoint of a halo: ghost planes summed back to their owner). */
#include <cuda_runtime.h>

#include "codelets/kernel_rows.h"

template <typename R>
__global__ void rows_add_k(R *dst, int64_t ds, const R *src, int64_t ss, int64_t rows, int64_t len)
{
  int64_t total = rows * len;
  for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < total; q += (int64_t)gridDim.x * blockDim.x) {
    int64_t o = q / len, i = q % len;
    dst[o * ds + i] += src[o * ss + i];
  }
}

extern "C" int kernel_rows_add_cuda(void *dst, int64_t dst_stride, const void *src, int64_t src_stride, int64_t rows,
                                    int64_t len, int dbl, void *stream)
{
  int64_t total = rows * len;
  if (total == 0) return 0;
  int threads = 256;
  int64_t blocks = (total + threads - 1) / threads;
  if (blocks > 65535) blocks = 65535;
  cudaStream_t st = (cudaStream_t)stream;
  if (dbl)
    rows_add_k<double><<<(unsigned)blocks, threads, 0, st>>>((double *)dst, dst_stride, (const double *)src, src_stride,
                                                             rows, len);
  else
    rows_add_k<float><<<(unsigned)blocks, threads, 0, st>>>((float *)dst, dst_stride, (const float *)src, src_stride, rows,
                                                            len);
  return (int)cudaGetLastError();
}
