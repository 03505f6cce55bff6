/* CUDA element-wise and reduction kernels: one template per operation serves the four dtypes
 * (R = float or double, C = 1 real or 2 complex components), with the semantics of kernel_vec.c.
 * Reductions are deterministic: a fixed grid writes one partial per block, one block combines them. */
#include <cuda_runtime.h>
#include <math.h>

#include "kernel_vec.h"

#define SL_THREADS 256
#define SL_RED_BLOCKS (SL_CUDA_REDUCE_SCRATCH_DOUBLES / 2)

static unsigned grid_for(int64_t n)
{
  int64_t b = (n + SL_THREADS - 1) / SL_THREADS;
  return (unsigned)(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

#define GRID_STRIDE(i, n) for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); \
                               i += (int64_t)gridDim.x * blockDim.x)

template <typename R, int C> __global__ void fill_k(int64_t n, R *x, R ar, R ai)
{
  GRID_STRIDE(i, n)
  {
    if (C == 2) {
      x[2 * i] = ar;
      x[2 * i + 1] = ai;
    } else {
      x[i] = ar;
    }
  }
}

template <typename R, int C> __global__ void random_k(int64_t n, R *x, uint64_t key, int64_t off)
{
  GRID_STRIDE(j, n * C) x[j] = (R)kernel_random_value(key, off + j);
}

template <typename R, int C> __global__ void scale_k(int64_t n, R *x, R ar, R ai)
{
  GRID_STRIDE(i, n)
  {
    if (C == 2) {
      R xr = x[2 * i], xi = x[2 * i + 1];
      x[2 * i] = ar * xr - ai * xi;
      x[2 * i + 1] = ar * xi + ai * xr;
    } else {
      x[i] *= ar;
    }
  }
}

template <typename R, int C>
__global__ void axpby_k(int64_t n, R *y, const R *x, R ar, R ai, R br, R bi, int read_y)
{
  GRID_STRIDE(i, n)
  {
    if (C == 2) {
      R xr = x[2 * i], xi = x[2 * i + 1];
      R yr = read_y ? y[2 * i] : R(0), yi = read_y ? y[2 * i + 1] : R(0);
      y[2 * i] = ar * xr - ai * xi + br * yr - bi * yi;
      y[2 * i + 1] = ar * xi + ai * xr + br * yi + bi * yr;
    } else {
      y[i] = ar * x[i] + (read_y ? br * y[i] : R(0));
    }
  }
}

/* The coefficients come from device memory: a sa and b sb, computed by every thread (two loads). */
template <typename R, int C>
__global__ void axpbys_k(int64_t n, R *y, const R *x, double ar, double ai, double br, double bi, const double *sa,
                         const double *sb)
{
  double a[2] = {ar, ai}, b[2] = {br, bi}, ca[2] = {ar, ai}, cb[2] = {br, bi};
  if (sa) sl_cmul2(a, sa, ca); /* no pointer: the coefficient alone */
  if (sb) sl_cmul2(b, sb, cb);
  const R car = (R)ca[0], cai = (R)ca[1], cbr = (R)cb[0], cbi = (R)cb[1];
  GRID_STRIDE(i, n)
  {
    if (C == 2) {
      R xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
      y[2 * i] = car * xr - cai * xi + cbr * yr - cbi * yi;
      y[2 * i + 1] = car * xi + cai * xr + cbr * yi + cbi * yr;
    } else {
      y[i] = car * x[i] + cbr * y[i];
    }
  }
}

template <typename R, int C> __global__ void scales_k(int64_t n, R *x, double ar, double ai, const double *sa)
{
  double a[2] = {ar, ai}, ca[2];
  sl_cmul2(a, sa, ca);
  const R car = (R)ca[0], cai = (R)ca[1];
  GRID_STRIDE(i, n)
  {
    if (C == 2) {
      R xr = x[2 * i], xi = x[2 * i + 1];
      x[2 * i] = car * xr - cai * xi;
      x[2 * i + 1] = car * xi + cai * xr;
    } else {
      x[i] *= car;
    }
  }
}

template <typename R, int C> __global__ void thresh_k(int64_t n, R *y, const R *x, int kind, double t)
{
  GRID_STRIDE(i, n)
  {
    if (C == 2) {
      double f = sl_thresh_factor(kind, hypot((double)x[2 * i], (double)x[2 * i + 1]), t);
      y[2 * i] = (R)(f * x[2 * i]);
      y[2 * i + 1] = (R)(f * x[2 * i + 1]);
    } else {
      y[i] = (R)(sl_thresh_factor(kind, fabs((double)x[i]), t) * x[i]);
    }
  }
}

template <typename R, int C> __global__ void mul_k(int64_t n, R *z, const R *x, const R *y)
{
  GRID_STRIDE(i, n)
  {
    if (C == 2) {
      R xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
      z[2 * i] = xr * yr - xi * yi;
      z[2 * i + 1] = xr * yi + xi * yr;
    } else {
      z[i] = x[i] * y[i];
    }
  }
}

template <typename R, int C> __global__ void conj_k(int64_t n, R *y, const R *x)
{
  GRID_STRIDE(i, n)
  {
    if (C == 2) {
      y[2 * i] = x[2 * i];
      y[2 * i + 1] = -x[2 * i + 1];
    } else {
      y[i] = x[i];
    }
  }
}

template <typename R, int C>
__global__ void clip_k(int64_t n, R *y, const R *x, int kind, double lo, double hi, double t)
{
  GRID_STRIDE(i, n)
  {
    if (kind == SL_KCLIP_BOX) {
      for (int k = 0; k < C; k++) y[C * i + k] = (R)sl_clip1((double)x[C * i + k], lo, hi);
    } else {
      double m = C == 2 ? hypot((double)x[2 * i], (double)x[2 * i + 1]) : fabs((double)x[i]);
      double f = m > t ? t / m : 1.0;
      for (int k = 0; k < C; k++) y[C * i + k] = (R)(f * x[C * i + k]);
    }
  }
}

template <typename R, int C> __global__ void abs2_k(int64_t n, R *s, const R *x, int acc)
{
  GRID_STRIDE(i, n)
  {
    R v = C == 2 ? x[2 * i] * x[2 * i] + x[2 * i + 1] * x[2 * i + 1] : x[i] * x[i];
    s[C * i] = acc ? s[C * i] + v : v;
    if (C == 2) s[2 * i + 1] = 0;
  }
}

template <typename R, int C> __global__ void group_k(int64_t n, R *y, const R *x, const R *s, int kind, double t)
{
  GRID_STRIDE(i, n)
  {
    double f = sl_group_factor(kind, (double)s[C * i], t);
    for (int k = 0; k < C; k++) y[C * i + k] = (R)(f * x[C * i + k]);
  }
}

__device__ static void red_combine(int k, double &a0, double &a1, double b0, double b1)
{
  if (k == SL_RED_MAXABS) a0 = fmax(a0, b0);
  else if (k == SL_RED_MINABS) a0 = fmin(a0, b0);
  else {
    a0 += b0;
    a1 += b1;
  }
}

/* Reduces (v0, v1) over the block into thread 0's return value. */
__device__ static void block_reduce(int k, double &v0, double &v1)
{
  __shared__ double s0[SL_THREADS], s1[SL_THREADS];
  s0[threadIdx.x] = v0;
  s1[threadIdx.x] = v1;
  __syncthreads();
  for (int w = SL_THREADS / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) {
      double a0 = s0[threadIdx.x], a1 = s1[threadIdx.x];
      red_combine(k, a0, a1, s0[threadIdx.x + w], s1[threadIdx.x + w]);
      s0[threadIdx.x] = a0;
      s1[threadIdx.x] = a1;
    }
    __syncthreads();
  }
  v0 = s0[0];
  v1 = s1[0];
}

/* The sum of squares, the 2-norm's reduction: SL_RED_ABSPOW with p = 2 as a kind of its own, so that its
 * kernel carries no pow() (46 registers against 32 on sm_90, and fewer blocks resident). */
#define RED_ABS2 (SL_RED_NNZ + 1)

/* One element's term (t0, t1) of reduction K from its values; K is a template argument so that the loops
 * have no branch on it. */
template <int K>
__device__ static inline void red_term(double xr, double xi, double yr, double yi, double p, double &t0, double &t1)
{
  t0 = t1 = 0.0;
  switch (K) {
  case SL_RED_DOT:
  case SL_RED_VDOT:
    if (K == SL_RED_VDOT) xi = -xi;
    t0 = xr * yr - xi * yi;
    t1 = xr * yi + xi * yr;
    break;
  case SL_RED_SUM: t0 = xr; t1 = xi; break;
  case RED_ABS2: t0 = xr * xr + xi * xi; break;
  case SL_RED_ABSPOW: t0 = p == 2.0 ? xr * xr + xi * xi : (p == 1.0 ? hypot(xr, xi) : pow(hypot(xr, xi), p)); break;
  case SL_RED_MAXABS:
  case SL_RED_MINABS: t0 = hypot(xr, xi); break;
  case SL_RED_NNZ: t0 = (xr != 0.0 || xi != 0.0) ? 1.0 : 0.0; break;
  }
}

/* The reductions of one vector (a norm, a sum, ...) read 8 or 16 bytes per element: each thread loads RED_AHEAD
 * elements before reducing them, so that enough loads are in flight to keep the memory busy (a dot's two
 * vectors give two loads per element already). */
#define RED_AHEAD 4
template <typename R, int C, int K>
__global__ void reduce_k(int64_t n, const R *x, const R *y, double p, double *partials)
{
  const int k = K;
  double v0 = k == SL_RED_MINABS ? INFINITY : 0.0, v1 = 0.0, t0, t1;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (K != SL_RED_DOT && K != SL_RED_VDOT)
    for (; i + (RED_AHEAD - 1) * stride < n; i += RED_AHEAD * stride) {
      R v[RED_AHEAD][C];
#pragma unroll
      for (int u = 0; u < RED_AHEAD; u++)
#pragma unroll
        for (int c = 0; c < C; c++) v[u][c] = x[C * (i + u * stride) + c];
#pragma unroll
      for (int u = 0; u < RED_AHEAD; u++) {
        red_term<K>((double)v[u][0], C == 2 ? (double)v[u][C - 1] : 0.0, 0.0, 0.0, p, t0, t1);
        red_combine(k, v0, v1, t0, t1);
      }
    }
  for (; i < n; i += stride) {
    double xr = C == 2 ? (double)x[2 * i] : (double)x[i], xi = C == 2 ? (double)x[2 * i + 1] : 0.0, yr = 0.0, yi = 0.0;
    if (K == SL_RED_DOT || K == SL_RED_VDOT) {
      yr = C == 2 ? (double)y[2 * i] : (double)y[i];
      yi = C == 2 ? (double)y[2 * i + 1] : 0.0;
    }
    red_term<K>(xr, xi, yr, yi, p, t0, t1);
    red_combine(k, v0, v1, t0, t1);
  }
  block_reduce(k, v0, v1);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = v0;
    partials[2 * blockIdx.x + 1] = v1;
  }
}

/* The blocks' partials combined into out, and the root of a p-norm taken (root_p other than 0 and 1). */
__global__ void reduce_final_k(int k, int nparts, const double *partials, double root_p, double *out)
{
  double v0 = k == SL_RED_MINABS ? INFINITY : 0.0, v1 = 0.0;
  for (int i = threadIdx.x; i < nparts; i += blockDim.x) red_combine(k, v0, v1, partials[2 * i], partials[2 * i + 1]);
  block_reduce(k, v0, v1);
  if (threadIdx.x == 0) {
    if (root_p != 0.0 && root_p != 1.0) v0 = root_p == 2.0 ? sqrt(v0) : pow(v0, 1.0 / root_p);
    out[0] = v0;
    out[1] = v1;
  }
}

/* Calls LAUNCH(R, C) with the template arguments of dt. */
#define DISPATCH(dt, LAUNCH)                                                                          \
  switch (dt) {                                                                                       \
  case SL_FLOAT32: LAUNCH(float, 1); break;                                                           \
  case SL_FLOAT64: LAUNCH(double, 1); break;                                                          \
  case SL_COMPLEX64: LAUNCH(float, 2); break;                                                         \
  default: LAUNCH(double, 2); break;                                                                  \
  }

extern "C" int kernel_cuda_fill(sl_dtype dt, int64_t n, void *x, const double a[2], void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) fill_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)x, (R)a[0], (R)a[1])
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_random(sl_dtype dt, int64_t n, void *x, uint64_t key, int64_t off, void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) random_k<R, C><<<grid_for(n * C), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)x, key, off)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_scale(sl_dtype dt, int64_t n, void *x, const double a[2], void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) scale_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)x, (R)a[0], (R)a[1])
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_axpby(sl_dtype dt, int64_t n, void *y, const void *x, const double a[2],
                                 const double b[2], void *stream)
{
  if (n <= 0) return cudaSuccess;
  int read_y = b[0] != 0.0 || b[1] != 0.0;
#define L(R, C)                                                                                       \
  axpby_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)y, (const R *)x, (R)a[0], \
                                                                      (R)a[1], (R)b[0], (R)b[1], read_y)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_axpbys(sl_dtype dt, int64_t n, void *y, const void *x, const double a[2],
                                  const double b[2], const double *sa, const double *sb, void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C)                                                                                       \
  axpbys_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)y, (const R *)x, a[0], a[1], b[0], \
                                                                       b[1], sa, sb)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_scales(sl_dtype dt, int64_t n, void *x, const double a[2], const double *sa, void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) scales_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)x, a[0], a[1], sa)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_threshold(sl_dtype dt, int64_t n, void *y, const void *x, int kind, double t, void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) thresh_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)y, (const R *)x, kind, t)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_clip(sl_dtype dt, int64_t n, void *y, const void *x, int kind, double lo, double hi,
                                double t, void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) clip_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)y, (const R *)x, kind, lo, hi, t)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_abs2(sl_dtype dt, int64_t n, void *s, const void *x, int acc, void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) abs2_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)s, (const R *)x, acc)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_group(sl_dtype dt, int64_t n, void *y, const void *x, const void *s, int kind, double t,
                                 void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) group_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)y, (const R *)x, (const R *)s, kind, t)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_mul(sl_dtype dt, int64_t n, void *z, const void *x, const void *y, void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) mul_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)z, (const R *)x, (const R *)y)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

extern "C" int kernel_cuda_conj(sl_dtype dt, int64_t n, void *y, const void *x, void *stream)
{
  if (n <= 0) return cudaSuccess;
#define L(R, C) conj_k<R, C><<<grid_for(n), SL_THREADS, 0, (cudaStream_t)stream>>>(n, (R *)y, (const R *)x)
  DISPATCH(dt, L)
#undef L
  return cudaGetLastError();
}

template <typename R, int C>
static void launch_reduce(int k, unsigned blocks, cudaStream_t s, int64_t n, const R *x, const R *y, double p,
                          double *scratch)
{
#define K(kind) reduce_k<R, C, kind><<<blocks, SL_THREADS, 0, s>>>(n, x, y, p, scratch)
  switch (k) {
  case SL_RED_DOT: K(SL_RED_DOT); break;
  case SL_RED_VDOT: K(SL_RED_VDOT); break;
  case SL_RED_SUM: K(SL_RED_SUM); break;
  case SL_RED_ABSPOW:
    if (p == 2.0) K(RED_ABS2);
    else K(SL_RED_ABSPOW);
    break;
  case SL_RED_MAXABS: K(SL_RED_MAXABS); break;
  case SL_RED_MINABS: K(SL_RED_MINABS); break;
  default: K(SL_RED_NNZ); break;
  }
#undef K
}

extern "C" int kernel_cuda_reduce(sl_dtype dt, sl_red_kind k, int64_t n, const void *x, const void *y, double p,
                                  double root_p, double *scratch, double *out, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int64_t want = (n + SL_THREADS - 1) / SL_THREADS;
  unsigned blocks = (unsigned)(want < 1 ? 1 : (want > SL_RED_BLOCKS ? SL_RED_BLOCKS : want));
#define L(R, C) launch_reduce<R, C>((int)k, blocks, s, n, (const R *)x, (const R *)y, p, scratch)
  DISPATCH(dt, L)
#undef L
  reduce_final_k<<<1, SL_THREADS, 0, s>>>((int)k, (int)blocks, scratch, root_p, out);
  return cudaGetLastError();
}
