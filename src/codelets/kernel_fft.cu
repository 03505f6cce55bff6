/* Bin weights of the FFT codelet on the GPU (kernel_fft.h): one thread per bin of the block. */
#include <cuda_runtime.h>

#include "codelets/kernel_fft.h"

template <typename R>
__global__ void weights_k(fft_shape s, R *z, int64_t nb, int c2r_input)
{
  int64_t total = s.outer * nb * s.inner;
  for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < total; q += (int64_t)gridDim.x * blockDim.x) {
    int64_t k = (q / s.inner) % nb;
    int inner_bin = s.real && k >= 1 && k <= (s.n - 1) / 2;
    R w = (R)(s.scale * (inner_bin ? s.interior : 1.0));
    z[2 * q] *= w;
    z[2 * q + 1] = c2r_input && s.real && !inner_bin ? R(0) : z[2 * q + 1] * w;
  }
}

extern "C" int kernel_fft_weights_cuda(const fft_shape *s, void *z, int c2r_input, void *stream)
{
  if (s->scale == 1.0 && (!s->real || (s->interior == 1.0 && !c2r_input))) return 0;
  int64_t nb = s->real ? s->n / 2 + 1 : s->n, total = s->outer * nb * s->inner;
  if (total == 0) return 0;
  int threads = 256;
  int64_t blocks = (total + threads - 1) / threads;
  if (blocks > 65535) blocks = 65535;
  cudaStream_t st = (cudaStream_t)stream;
  if (s->dbl) weights_k<double><<<(unsigned)blocks, threads, 0, st>>>(*s, (double *)z, nb, c2r_input);
  else weights_k<float><<<(unsigned)blocks, threads, 0, st>>>(*s, (float *)z, nb, c2r_input);
  return (int)cudaGetLastError();
}
