/* Non-stationary convolution of float64 and complex128 on the tensor cores (DMMA, m8n8k4, sm_80 and later), for
 * filters of up to 33 taps, along the last axis or along any other axis with at least 8 values after it.
 *
 * 8 consecutive output samples k take their inputs j = k - c ... k + 7 + c through the band of weights
 * W[k][j] (tap m = j - k + c of sample k's filter where 0 <= m < L, zero elsewhere; forward H[(L - 1 - m) n + j],
 * adjoint conj(H[m n + k]), H tap-major), in NS steps of 4 inputs (4 NS >= L + 7, the rest zero): per step an
 * 8 x 4 block of W and 4 inputs of 8 lines. Along the last axis the lines are 8 rows and the product is
 * X (8 x 4) W^T (4 x 8); along a middle axis they are 8 consecutive values of the inner axis and it is
 * W (8 x 4) X (4 x 8). Lane l holds the same weights either way (sample 8 kb + l / 4, input 4 s + l % 4 of its
 * band): a warp keeps the weights of its KB blocks of 8 samples in registers (KB NS values a lane and part) for
 * its whole walk over the lines, since the filters vary along the convolution axis only. complex128 is three real
 * products per step (Re x Re w, Im x Im w and (Re x + Im x)(Re w + Im w), from which the cross terms follow),
 * with KB halved.
 *
 * A block of 4 warps copies each group of lines' inputs (its samples' inputs with c either side, zero outside the
 * array) asynchronously into shared memory, the next group's during the current one's products, in rows of 4 mod 16
 * values so that the fragments' loads are free of bank conflicts; each lane's two outputs per 8 x 8 block go
 * straight to y. The zero weights multiply inputs too: a non-finite input spreads to the outputs of its 8-sample
 * blocks' whole band (about c + 8 samples either side) where the other kernels keep it within c. */
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "kernel_cuda_ops.cuh"
#include "kernel_nsconv.h"

enum { DMMA_WARPS = 4, DMMA_KB = 4 /* blocks of 8 samples a warp, real */ };

/* Lane's weights for its warp's KB blocks of 8 samples from kw: W[k][k - c + 4 s + q], k = kw + 8 kb + r (real,
 * then imaginary part, conjugated for the adjoint). */
template <typename I, int NS, int C, int KB>
__device__ inline void dmma_weights(double (&wb)[C][KB][NS], const double *h, I kw, I n, I L, int adjoint)
{
  const int lane = (int)threadIdx.x & 31, q = lane & 3, r = lane >> 2;
  const I c = L / 2;
#pragma unroll
  for (int kb = 0; kb < KB; kb++) {
    const I k = kw + 8 * kb + r;
#pragma unroll
    for (int s = 0; s < NS; s++) {
      const int m = 4 * s + q - r;
      const I j = k - c + m;
      const bool valid = m >= 0 && m < L && j >= 0 && j < n && k < n;
      const double *hv = h + (adjoint ? (size_t)m * n + k : (size_t)(L - 1 - m) * n + j) * C;
      wb[0][kb][s] = valid ? hv[0] : 0.0;
      if (C == 2) wb[C - 1][kb][s] = valid ? (adjoint ? -hv[1] : hv[1]) : 0.0;
    }
  }
}

/* One step into the sums: real data acc[0] += x w; complex128 three real products (Gauss's): acc[0] += xr wr,
 * acc[1] += xi wi, acc[2] += (xr + xi)(wr + wi), whose cross terms are acc[2] - acc[0] - acc[1] (dmma_cross).
 * WA: the weights are the product's A operand (middle axis), else its B. */
template <int C, bool WA>
__device__ inline void dmma_step(double (&acc)[2 * C - 1][2], double xr, double xi, double wr, double wi)
{
  if (WA) sl_dmma(acc[0], wr, xr);
  else sl_dmma(acc[0], xr, wr);
  if (C == 2) {
    /* the weights' sum made here, not kept: three weights a step in registers spill at 33 taps */
    const double xs = xr + xi, ws = wr + wi;
    if (WA) sl_dmma(acc[C - 1], wi, xi), sl_dmma(acc[2 * C - 2], ws, xs);
    else sl_dmma(acc[C - 1], xi, wi), sl_dmma(acc[2 * C - 2], xs, ws);
  }
}

/* Gauss's products to the sums dmma_value reads: acc[2] -= acc[0] + acc[1]. */
template <int C>
__device__ inline void dmma_cross(double (&acc)[2 * C - 1][2])
{
  if (C == 2)
#pragma unroll
    for (int i = 0; i < 2; i++) acc[2 * C - 2][i] -= acc[0][i] + acc[C - 1][i];
}

/* Output i (0, 1) of the lane's pair: real and imaginary parts. */
template <int C>
__device__ inline double2 dmma_value(const double (&acc)[2 * C - 1][2], int i)
{
  return C == 2 ? make_double2(acc[0][i] - acc[C - 1][i], acc[2 * C - 2][i]) : make_double2(acc[0][i], 0.0);
}

/* The lane's two outputs at yo (consecutive values; only the first when !two), as one 16-byte store when vec. */
template <int C>
__device__ inline void dmma_store(double *yo, const double (&acc)[2 * C - 1][2], bool two, int vec)
{
  const double2 v0 = dmma_value<C>(acc, 0), v1 = dmma_value<C>(acc, 1);
  if (C == 1) {
    if (vec && two) *(double2 *)yo = make_double2(v0.x, v1.x);
    else {
      yo[0] = v0.x;
      if (two) yo[1] = v1.x;
    }
  } else if (vec) {
    *(double2 *)yo = v0;
    if (two) *(double2 *)(yo + 2) = v1;
  } else {
    yo[0] = v0.x, yo[1] = v0.y;
    if (two) yo[2] = v1.x, yo[3] = v1.y;
  }
}

/* The walk of a block: for its tile of S samples (each warp KB blocks of 8 from first(w)), the groups of lines g =
 * blockIdx.y, + gridDim.y, ... below groups(), each copied by load() into shared memory (planes of PL values, rows
 * of LD), its products read at frag() + at(kb, s) and its outputs written by store(). WA: the weights are the
 * products' A operand. */

/* ---- along the last axis: a group is 8 rows; a block 4 KB 8 samples (warp w: the w-th KB blocks of 8) ---- */
template <typename I, int NS, int C> struct last_geo {
  enum { KB = DMMA_KB / C, S = 8 * KB * DMMA_WARPS, /* samples a block */
         W = S - 8 + 4 * NS,                         /* inputs a row: the last block of 8 reads up to S - 8 + 4 NS */
         LD = (W + 15) / 16 * 16 + 4, PL = 8 * LD };
  static constexpr bool WA = false;
  I outer, n;
  __device__ I groups() const { return (outer + 7) / 8; }
  __device__ static int first(int w) { return 8 * KB * w; }
  __device__ void load(double *dst, const double *x, I g, I j0) const
  {
    for (int e = (int)threadIdx.x; e < 8 * W; e += 32 * DMMA_WARPS) {
      const int r = e / W, jl = e - r * W;
      const I o = 8 * g + r, j = j0 + jl;
      const bool in = o < outer && j >= 0 && j < n;
#pragma unroll
      for (int p = 0; p < C; p++) {
        double *d = dst + p * PL + r * LD + jl;
        if (in) __pipeline_memcpy_async(d, x + ((size_t)o * n + j) * C + p, sizeof(double));
        else *d = 0.0;
      }
    }
    __pipeline_commit();
  }
  /* A: X[row r][input 4 s + q of block kb] */
  __device__ static const double *frag(const double *xs, int w, int q, int r) { return xs + r * LD + 8 * KB * w + q; }
  __device__ static int at(int kb, int s) { return 8 * kb + 4 * s; }
  /* C[row r][samples 2 q, 2 q + 1 of block kb] */
  __device__ void store(double *y, const double (&acc)[KB][2 * C - 1][2], I g, I kw, int w, int q, int r, int vec) const
  {
    const I o = 8 * g + r;
    if (o < outer)
#pragma unroll
      for (int kb = 0; kb < KB; kb++) {
        const I k = kw + 8 * kb + 2 * q;
        if (k < n) dmma_store<C>(y + ((size_t)o * n + k) * C, acc[kb], k + 1 < n, vec);
      }
  }
};

/* ---- along a middle axis: a group is 16 consecutive inner values of one outer index; a block 2 KB 8 samples by
 * the 16 values (warp w: samples part w / 2, values part w % 2) ---- */
template <typename I, int NS, int C> struct mid_geo {
  enum { KB = DMMA_KB / C, S = 16 * KB, /* samples a block */
         R = S - 8 + 4 * NS,             /* input rows */
         CW = 16, LD = CW + 4, PL = R * LD };
  static constexpr bool WA = true;
  I outer, n, inner, gpo; /* gpo: groups an outer index */
  __device__ I groups() const { return outer * gpo; }
  __device__ static int first(int w) { return 8 * KB * (w >> 1); }
  __device__ void load(double *dst, const double *x, I g, I j0) const
  {
    const I o = g / gpo, i0 = g % gpo * CW;
    for (int e = (int)threadIdx.x; e < R * CW; e += 32 * DMMA_WARPS) {
      const int jl = e / CW, il = e - jl * CW;
      const I j = j0 + jl, i = i0 + il;
      const bool in = j >= 0 && j < n && i < inner;
#pragma unroll
      for (int p = 0; p < C; p++) {
        double *d = dst + p * PL + jl * LD + il;
        if (in) __pipeline_memcpy_async(d, x + (((size_t)o * n + j) * inner + i) * C + p, sizeof(double));
        else *d = 0.0;
      }
    }
    __pipeline_commit();
  }
  /* B: X[input 4 s + q of block kb][value r] */
  __device__ static const double *frag(const double *xs, int w, int q, int r)
  {
    return xs + (8 * KB * (w >> 1) + q) * LD + 8 * (w & 1) + r;
  }
  __device__ static int at(int kb, int s) { return (8 * kb + 4 * s) * LD; }
  /* C[sample r of block kb][values 2 q, 2 q + 1] */
  __device__ void store(double *y, const double (&acc)[KB][2 * C - 1][2], I g, I kw, int w, int q, int r, int vec) const
  {
    const I o = g / gpo, i = g % gpo * CW + 8 * (w & 1) + 2 * q;
    if (i < inner)
#pragma unroll
      for (int kb = 0; kb < KB; kb++) {
        const I k = kw + 8 * kb + r;
        if (k < n) dmma_store<C>(y + (((size_t)o * n + k) * inner + i) * C, acc[kb], i + 1 < inner, vec);
      }
  }
};

/* Each block walks its tiles of samples (the warps' weights loaded once a tile) and, per tile, its groups of lines:
 * the next group's copy in flight during the current group's products. */
template <typename I, int NS, int C, template <typename, int, int> class G>
__global__ void __launch_bounds__(32 * DMMA_WARPS, NS > 6 ? 3 : 4)
nsconv_dmma_k(int adjoint, G<I, NS, C> geo, I L, const double *h, const double *x, double *y, int vec)
{
  typedef G<I, NS, C> t;
  constexpr int KB = t::KB, NA = 2 * C - 1;
  __shared__ __align__(16) double xs[2][C * t::PL];
  const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5, q = lane & 3, r = lane >> 2;
  const I c = L / 2, n = geo.n, groups = geo.groups();
  for (I b0 = (I)blockIdx.x * t::S; b0 < n; b0 += (I)gridDim.x * t::S) {
    const I kw = b0 + t::first(w); /* this warp's first sample */
    double wb[C][KB][NS];
    dmma_weights<I, NS, C, KB>(wb, h, kw, n, L, adjoint);
    __syncthreads(); /* the previous tile's readers are done with both buffers */
    I g = (I)blockIdx.y;
    if (g < groups) geo.load(xs[0], x, g, b0 - c);
    for (int buf = 0; g < groups; g += (I)gridDim.y, buf ^= 1) {
      const I g1 = g + (I)gridDim.y;
      if (g1 < groups) {
        geo.load(xs[buf ^ 1], x, g1, b0 - c);
        __pipeline_wait_prior(1);
      } else {
        __pipeline_wait_prior(0);
      }
      __syncthreads();
      double acc[KB][NA][2] = {};
      const double *f = t::frag(xs[buf], w, q, r);
#pragma unroll
      for (int s = 0; s < NS; s++)
#pragma unroll
        for (int kb = 0; kb < KB; kb++) {
          const int at = t::at(kb, s);
          dmma_step<C, t::WA>(acc[kb], f[at], C == 2 ? f[t::PL + at] : 0.0, wb[0][kb][s], wb[C - 1][kb][s]);
        }
#pragma unroll
      for (int kb = 0; kb < KB; kb++) dmma_cross<C>(acc[kb]);
      geo.store(y, acc, g, kw, w, q, r, vec);
      __syncthreads(); /* every warp is done with this buffer: it takes the group after next */
    }
  }
}

/* One wave of blocks: the tiles of samples across, the groups of lines shared out down. */
template <typename I, int NS, int C, template <typename, int, int> class G>
static int launch_geo(int adjoint, G<I, NS, C> geo, int64_t groups, int64_t L, const double *h, const double *x,
                      double *y, int vec, cudaStream_t s)
{
  void (*k)(int, G<I, NS, C>, I, const double *, const double *, double *, int) = nsconv_dmma_k<I, NS, C, G>;
  dim3 grid;
  int rc = sl_cuda_wave_grid((const void *)k, 32 * DMMA_WARPS, 0, ((int64_t)geo.n + G<I, NS, C>::S - 1) / G<I, NS, C>::S,
                             groups, &grid);
  if (rc != cudaSuccess) return rc;
  k<<<grid, 32 * DMMA_WARPS, 0, s>>>(adjoint, geo, (I)L, h, x, y, vec);
  return cudaGetLastError();
}

template <typename I, int NS, int C>
static int launch_ns(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const double *h, const double *x,
                     double *y, cudaStream_t s)
{
  if (inner == 1) {
    int vec = (uintptr_t)y % 16 == 0 && (C == 2 || n % 2 == 0); /* every output pair 16-byte aligned */
    last_geo<I, NS, C> geo = {(I)outer, (I)n};
    return launch_geo(adjoint, geo, (outer + 7) / 8, L, h, x, y, vec, s);
  }
  int vec = (uintptr_t)y % 16 == 0 && (C == 2 || inner % 2 == 0);
  const int64_t gpo = (inner + mid_geo<I, NS, C>::CW - 1) / mid_geo<I, NS, C>::CW;
  mid_geo<I, NS, C> geo = {(I)outer, (I)n, (I)inner, (I)gpo};
  return launch_geo(adjoint, geo, outer * gpo, L, h, x, y, vec, s);
}

template <typename I, int C>
static int launch(int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const double *h, const double *x,
                  double *y, cudaStream_t s)
{
  const int64_t ns = (L + 7 + 3) / 4; /* steps of 4 inputs a block of 8 samples needs (run as an even count) */
  if (ns <= 2) return launch_ns<I, 2, C>(adjoint, outer, n, inner, L, h, x, y, s);
  if (ns <= 4) return launch_ns<I, 4, C>(adjoint, outer, n, inner, L, h, x, y, s);
  if (ns <= 6) return launch_ns<I, 6, C>(adjoint, outer, n, inner, L, h, x, y, s);
  if (ns <= 8) return launch_ns<I, 8, C>(adjoint, outer, n, inner, L, h, x, y, s);
  return launch_ns<I, 10, C>(adjoint, outer, n, inner, L, h, x, y, s);
}

extern "C" int kernel_cuda_nsconv_dmma(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L,
                                       const void *H, const void *in, void *out, void *stream)
{
  if ((dt != SL_FLOAT64 && dt != SL_COMPLEX128) || L > 33 || (inner > 1 && inner < 8)) return cudaErrorNotSupported;
  /* 32-bit indices when every element offset, table offset and grid step fits */
  const int64_t total = outer * n * inner, lim = (int64_t)1 << 31;
  const int narrow = total + n * inner + L < lim && n * L < lim && n + ((int64_t)1 << 24) < lim &&
                     outer * ((inner + 15) / 16) + ((int64_t)1 << 16) < lim && outer + ((int64_t)1 << 21) < lim;
  const double *h = (const double *)H, *x = (const double *)in;
  double *y = (double *)out;
  cudaStream_t s = (cudaStream_t)stream;
  if (dt == SL_FLOAT64)
    return narrow ? launch<int32_t, 1>(adjoint, outer, n, inner, L, h, x, y, s) : launch<int64_t, 1>(adjoint, outer, n, inner, L, h, x, y, s);
  return narrow ? launch<int32_t, 2>(adjoint, outer, n, inner, L, h, x, y, s) : launch<int64_t, 2>(adjoint, outer, n, inner, L, h, x, y, s);
}
