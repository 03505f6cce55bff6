/* Arithmetic on the four element types for CUDA kernels written once as templates: T is float, double,
 * cuFloatComplex or cuDoubleComplex. */
#ifndef SL_KERNEL_CUDA_OPS_CUH
#define SL_KERNEL_CUDA_OPS_CUH

#include <cuComplex.h>

template <typename T> struct ops;
template <> struct ops<float> {
  __device__ static float mul(float a, float b) { return a * b; }
  __device__ static float conj(float a) { return a; }
  __device__ static float zero() { return 0.0f; }
  __device__ static float add(float a, float b) { return a + b; }
};
template <> struct ops<double> {
  __device__ static double mul(double a, double b) { return a * b; }
  __device__ static double conj(double a) { return a; }
  __device__ static double zero() { return 0.0; }
  __device__ static double add(double a, double b) { return a + b; }
};
template <> struct ops<cuFloatComplex> {
  __device__ static cuFloatComplex mul(cuFloatComplex a, cuFloatComplex b) { return cuCmulf(a, b); }
  __device__ static cuFloatComplex conj(cuFloatComplex a) { return cuConjf(a); }
  __device__ static cuFloatComplex zero() { return make_cuFloatComplex(0.0f, 0.0f); }
  __device__ static cuFloatComplex add(cuFloatComplex a, cuFloatComplex b) { return cuCaddf(a, b); }
};
template <> struct ops<cuDoubleComplex> {
  __device__ static cuDoubleComplex mul(cuDoubleComplex a, cuDoubleComplex b) { return cuCmul(a, b); }
  __device__ static cuDoubleComplex conj(cuDoubleComplex a) { return cuConj(a); }
  __device__ static cuDoubleComplex zero() { return make_cuDoubleComplex(0.0, 0.0); }
  __device__ static cuDoubleComplex add(cuDoubleComplex a, cuDoubleComplex b) { return cuCadd(a, b); }
};

/** Float64 tensor-core product (DMMA, m8n8k4, sm_80 and later), c += a b: A is 8 x 4 by rows and B 4 x 8 by
 *  columns, one value of each per lane (lane l holds A[l / 4][l % 4] and B[l % 4][l / 4]), C 8 x 8 with two values
 *  per lane (C[l / 4][2 (l % 4) + i]). */
__device__ static inline void sl_dmma(double (&c)[2], double a, double b)
{
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
               : "+d"(c[0]), "+d"(c[1])
               : "d"(a), "d"(b));
}

/** Threads per block and the grid of a grid-stride kernel over total elements (capped). */
#define SL_CUDA_THREADS 256
static inline unsigned sl_cuda_grid(int64_t total)
{
  int64_t want = (total + SL_CUDA_THREADS - 1) / SL_CUDA_THREADS;
  return (unsigned)(want < 1 ? 1 : (want > 65535 * 8 ? 65535 * 8 : want));
}

/** A grid of one wave of kernel k's blocks (`threads` threads, `smem` bytes of dynamic shared memory) on the
 *  current device: `tiles` across (at most 65535) and, down, as many of `groups` as the device holds at once beside
 *  them (1 to 65535; the kernel walks the rest); cudaErrorNotSupported when no block fits on an SM. */
static inline int sl_cuda_wave_grid(const void *k, int threads, size_t smem, int64_t tiles, int64_t groups, dim3 *grid)
{
  int dev = 0, sms = 0, per_sm = 0;
  int rc = cudaGetDevice(&dev);
  if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (rc == cudaSuccess) rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem);
  if (rc != cudaSuccess) return rc;
  if (per_sm < 1) return cudaErrorNotSupported;
  int64_t gx = tiles < 65535 ? tiles : 65535, want = (int64_t)sms * per_sm / gx;
  int64_t gy = groups < want ? groups : want;
  if (gy < 1) gy = 1;
  if (gy > 65535) gy = 65535;
  *grid = dim3((unsigned)gx, (unsigned)gy);
  return cudaSuccess;
}

/** LAUNCH(T) with T the element type of dt. */
#define SL_CUDA_DISPATCH(dt, LAUNCH)                                                                  \
  switch (dt) {                                                                                       \
  case SL_FLOAT32: LAUNCH(float); break;                                                              \
  case SL_FLOAT64: LAUNCH(double); break;                                                             \
  case SL_COMPLEX64: LAUNCH(cuFloatComplex); break;                                                   \
  default: LAUNCH(cuDoubleComplex); break;                                                            \
  }

#endif
