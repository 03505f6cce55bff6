/* The read-only ceiling of bench_vec on a GPU: a kernel that only reads (a sum of a float64 vector with four
 * independent accumulators per thread, one partial per block), timed with CUDA events. Reductions read
 * and write nothing else, so their bytes per second compare with this, not with a copy. */
#include <cuda_runtime.h>

__global__ static void read_k(long long n, const double *__restrict__ x, double *partials)
{
  __shared__ double s[256];
  long long stride = (long long)gridDim.x * blockDim.x, i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    a0 += x[i];
    a1 += x[i + stride];
    a2 += x[i + 2 * stride];
    a3 += x[i + 3 * stride];
  }
  for (; i < n; i += stride) a0 += x[i];
  s[threadIdx.x] = (a0 + a1) + (a2 + a3);
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = s[0];
}

/* Seconds of each of reps read-only passes over the first bytes of the device buffer x (after a warm-up)
 * into t; 0, or -1 when a device call fails. The caller owns x: it is allocated once for the whole run,
 * since freeing and allocating gigabytes between measurements lets the driver's work on that memory run
 * under the next measurement. */
extern "C" int bench_read_times(const void *x, size_t bytes, int reps, double *t)
{
  long long n = (long long)(bytes / sizeof(double));
  static double *p;
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return -1;
  unsigned blocks = (unsigned)(sms * 8);
  if (!p && cudaMalloc(&p, blocks * sizeof *p) != cudaSuccess) return -1;
  const double *xd = (const double *)x;
  cudaEvent_t a, b;
  if (cudaEventCreate(&a) != cudaSuccess) return -1;
  if (cudaEventCreate(&b) != cudaSuccess) {
    cudaEventDestroy(a);
    return -1;
  }
  read_k<<<blocks, 256>>>(n, xd, p); /* warm-up */
  for (int r = 0; r < reps; r++) {
    float ms = 0;
    cudaEventRecord(a);
    read_k<<<blocks, 256>>>(n, xd, p);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b);
    t[r] = 1e-3 * ms;
  }
  int rc = cudaGetLastError() == cudaSuccess ? 0 : -1;
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return rc;
}
