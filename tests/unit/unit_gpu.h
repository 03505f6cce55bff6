/* What the unit tests share about the GPU: whether one is present (tests that need it skip otherwise). */
#ifndef SL_UNIT_GPU_H
#define SL_UNIT_GPU_H
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>

static inline int have_gpu(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n > 0;
}
#endif
#endif
