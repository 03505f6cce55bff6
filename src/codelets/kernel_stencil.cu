/* CUDA stencil sums (semantics of kernel_stencil.c), as two launches per task.
 *
 * The interior: the box of elements whose rows take the interior weights of every term and whose taps all
 * lie in the input segment that holds the task's output range. There the sum is a fixed list of taps
 * (element offset, weight; taps at the same offset merged, so the 2-D Laplacian reads 5 values), the launch
 * geometry gives the position (x: the last axis, y: the one before, z: the others), every thread sums RPT
 * rows of one column with all loads issued before the sums, and no index is tested.
 *
 * 3-D blocks whose terms along axes 1 and 2 have no ghosts (stencil_zm_k): the box's planes whole, edge rows
 * and columns included (a row's weights: the interior ones, or those of a table of at most four rows at
 * each end, passed with the launch), each thread 4 to 32 consecutive planes of one column: a thread loads its
 * column's values once (NZ + 2 ZR loads where a thread per element makes 3 NZ for the 7-point Laplacian), and
 * the taps along the row come from the neighbouring lanes. Only the planes outside the box
 * are left to the edge launch, as flat ranges.
 *
 * The edges: everything else in the task's range (the box's frame, the rows near the segment's ends, ghost
 * rows, the global edges) as at most 2 + 2 (ndim - 1) pieces, one launch over all of them, each element by
 * the generic code (any segment table, ghosts, edge weights), on a side stream that runs beside the interior
 * launch and that the worker's stream waits for (STARLOPS_STENCIL_EDGE_SERIAL=1: after it, on the worker's
 * stream). With STARLOPS_STENCIL_GENERIC=1 the whole range is one edge piece (the benchmark's reference).
 * The interior launches index in 32 bits from their first element: a block of 2^30 values or more goes in
 * slabs along axis 0 (one launch each); the edge launch indexes in 64 bits for such blocks. */
#include <cuda_runtime.h>
#include <string.h>

#include "codelets/kernel_stencil.h"

#define ST_MAX_TAPS (5 * ST_MAX_TERMS)
#define ST_MAX_PIECES (2 + 2 * (SL_MAX_DIMS - 1))
#define ST_RPT 4 /* rows per thread in the interior kernel */

template <typename R, typename I>
__device__ static R st_load(const st_plan &p, const st_input &in, const st_term &t, I f, I r, int dr, int comp)
{
  I rr = r + dr, nc = (I)p.ncomp;
  if (rr >= 0 && rr < (I)t.nloc) {
    I fe = f + (I)dr * (I)t.stride;
    if (in.nseg == 1) return ((const R *)in.ptr[0])[(fe - (I)in.start[0]) * nc + comp];
    int i = st_seg_find(&in, (int64_t)fe);
    return i < 0 ? R(0) : ((const R *)in.ptr[i])[(fe - (I)in.start[i]) * nc + comp];
  }
  if (!t.ghosts) return R(0);
  I stride = (I)t.stride, od = f / (stride * (I)t.nloc), inn = f % stride;
  if (rr < 0) return ((const R *)in.glo)[((od * p.wlo + (p.wlo + rr)) * stride + inn) * nc + comp];
  return ((const R *)in.ghi)[((od * p.whi + (rr - (I)t.nloc)) * stride + inn) * nc + comp];
}

/* The stencil sum of output element f, component comp: any row, edges and ghosts included. */
template <typename R, typename I>
__device__ static double st_value(const st_plan &p, const st_input &in, I f, int comp)
{
  double acc = 0.0;
  for (int k = 0; k < p.nterms; k++) {
    const st_term &t = p.t[k];
    I r = (f / (I)t.stride) % (I)t.nloc;
    double c[5];
    if (st_interior(&t, (int64_t)r + t.off))
      for (int i = 0; i < 5; i++) c[i] = p.cint[k][i];
    else
      st_coeffs(&t, p.adjoint, (int64_t)r + t.off, c);
    for (int dr = -2; dr <= 2; dr++)
      if (c[dr + 2] != 0.0) acc += c[dr + 2] * (double)st_load<R, I>(p, in, t, f, r, dr, comp);
  }
  return acc;
}

/* ---- the edges ---- */

/* A piece of the task's range: elements org .. org + size - 1 (flat), or the box org + sum_d i_d str_d,
 * 0 <= i_d < ext[d]. */
struct st_piece {
  int64_t org, size;
  int flat;
  int64_t ext[SL_MAX_DIMS];
};
struct st_pieces {
  int n, nd;
  int64_t str[SL_MAX_DIMS];
  int64_t pre[ST_MAX_PIECES + 1]; /* elements before each piece */
  st_piece p[ST_MAX_PIECES];
};

template <typename R, typename I> __global__ void stencil_edge_k(st_plan p, st_input in, st_pieces pc, int64_t s, R *y)
{
  I total = (I)pc.pre[pc.n];
  for (I q = blockIdx.x * (I)blockDim.x + threadIdx.x; q < total; q += (I)gridDim.x * blockDim.x) {
    int k = 0;
    while (q >= (I)pc.pre[k + 1]) k++;
    const st_piece &pk = pc.p[k];
    I loc = q - (I)pc.pre[k], f = (I)pk.org;
    if (pk.flat) {
      f += loc;
    } else {
      for (int d = pc.nd - 1; d >= 0; d--) {
        I e = (I)pk.ext[d];
        f += (loc % e) * (I)pc.str[d];
        loc /= e;
      }
    }
    for (int comp = 0; comp < p.ncomp; comp++) y[(int64_t)(f - (I)s) * p.ncomp + comp] = (R)st_value<R, I>(p, in, f, comp);
  }
}

/* ---- the interior ---- */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

template <typename R> struct st_taps {
  int n;
  int off[ST_MAX_TAPS]; /* element offsets */
  R w[ST_MAX_TAPS];
};

/* The interior box (of one launch): x along the last axis (ex columns, contiguous), y the axis before it (ey
 * rows, stride sy), z the nz leading axes (zext, zstr). Offsets count elements from the box's first element,
 * where the launch's input and output pointers start. */
struct st_fbox {
  int ex, ey, sy, ez, nz;
  int zext[SL_MAX_DIMS], zstr[SL_MAX_DIMS];
};

template <typename R, int NC> struct st_vec;
template <> struct st_vec<double, 1> { typedef double T; };
template <> struct st_vec<double, 2> { typedef double2 T; };
template <> struct st_vec<float, 1> { typedef float T; };
template <> struct st_vec<float, 2> { typedef float2 T; };
__device__ static inline void st_zero(double &a) { a = 0.0; }
__device__ static inline void st_zero(float &a) { a = 0.0f; }
__device__ static inline void st_zero(double2 &a) { a.x = a.y = 0.0; }
__device__ static inline void st_zero(float2 &a) { a.x = a.y = 0.0f; }
__device__ static inline void st_axpy(double &a, double w, double x) { a += w * x; }
__device__ static inline void st_axpy(float &a, float w, float x) { a += w * x; }
__device__ static inline void st_axpy(double2 &a, double w, double2 x) { a.x += w * x.x, a.y += w * x.y; }
__device__ static inline void st_axpy(float2 &a, float w, float2 x) { a.x += w * x.x, a.y += w * x.y; }

/* NT > 0: exactly NT taps (unrolled); NT = 0: tp.n taps. */
template <typename R, int NC, int NT>
__global__ void __launch_bounds__(256) stencil_fast_k(st_taps<R> tp, const R *__restrict__ xr, R *__restrict__ yr, st_fbox b)
{
  typedef typename st_vec<R, NC>::T V;
  const V *__restrict__ x = (const V *)xr;
  V *__restrict__ y = (V *)yr;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= b.ex) return;
  const int nt = NT > 0 ? NT : tp.n;
  for (int z = blockIdx.z; z < b.ez; z += gridDim.z) {
    int base = col, rem = z;
    for (int l = b.nz - 1; l >= 0; l--) {
      base += (rem % b.zext[l]) * b.zstr[l];
      rem /= b.zext[l];
    }
    for (int r0 = blockIdx.y * blockDim.y * ST_RPT + threadIdx.y; r0 < b.ey; r0 += gridDim.y * blockDim.y * ST_RPT) {
      int f[ST_RPT];
      V acc[ST_RPT];
#pragma unroll
      for (int j = 0; j < ST_RPT; j++) {
        int r = r0 + j * (int)blockDim.y;
        f[j] = base + (r < b.ey ? r : b.ey - 1) * b.sy;
        st_zero(acc[j]);
      }
#pragma unroll
      for (int t = 0; t < (NT > 0 ? NT : ST_MAX_TAPS); t++) {
        if (NT == 0 && t >= nt) break;
        V v[ST_RPT];
#pragma unroll
        for (int j = 0; j < ST_RPT; j++) v[j] = __ldg(&x[f[j] + tp.off[t]]);
#pragma unroll
        for (int j = 0; j < ST_RPT; j++) st_axpy(acc[j], tp.w[t], v[j]);
      }
#pragma unroll
      for (int j = 0; j < ST_RPT; j++)
        if (r0 + j * (int)blockDim.y < b.ey) y[f[j]] = acc[j];
    }
  }
}

template <typename R, int NC>
static void launch_fast(const st_taps<R> &tp, const R *x, R *y, const st_fbox &b, cudaStream_t st)
{
  /* 2-D: 256 x 1 blocks; 3-D and more: 64 x 2 (the fastest shapes measured on the H200); 1-D: 256 */
  int bx, by;
  if (b.ey == 1) bx = 256, by = 1;
  else if (b.nz == 0) bx = b.ex >= 256 ? 256 : b.ex >= 128 ? 128 : b.ex >= 64 ? 64 : 32, by = 256 / bx;
  else bx = b.ex >= 64 ? 64 : 32, by = 128 / bx;
  int64_t gy = (b.ey + (int64_t)by * ST_RPT - 1) / ((int64_t)by * ST_RPT);
  dim3 block(bx, by), grid((unsigned)((b.ex + bx - 1) / bx), (unsigned)(gy > 65535 ? 65535 : gy),
                           (unsigned)(b.ez > 65535 ? 65535 : b.ez));
  switch (tp.n) {
  case 1: stencil_fast_k<R, NC, 1><<<grid, block, 0, st>>>(tp, x, y, b); break;
  case 2: stencil_fast_k<R, NC, 2><<<grid, block, 0, st>>>(tp, x, y, b); break;
  case 3: stencil_fast_k<R, NC, 3><<<grid, block, 0, st>>>(tp, x, y, b); break;
  case 4: stencil_fast_k<R, NC, 4><<<grid, block, 0, st>>>(tp, x, y, b); break;
  case 5: stencil_fast_k<R, NC, 5><<<grid, block, 0, st>>>(tp, x, y, b); break;
  case 7: stencil_fast_k<R, NC, 7><<<grid, block, 0, st>>>(tp, x, y, b); break;
  case 9: stencil_fast_k<R, NC, 9><<<grid, block, 0, st>>>(tp, x, y, b); break;
  default: stencil_fast_k<R, NC, 0><<<grid, block, 0, st>>>(tp, x, y, b); break;
  }
}

/* ---- 3-D blocks: whole planes, 4 to 32 planes a thread in groups of ST_ZB ---- */

#define ST_ZB 4 /* planes per group in the 3-D kernel (and per thread in its one-group form) */

/* A 3-D block's sum for the kernel that takes whole planes: the axis-0 term's interior weights (the planes'
 * range keeps every axis-0 tap inside the segment and off the global ends), and the terms along axes 1 and 2
 * (whole in the block, without ghosts), at most one per axis: their interior weights cint for the rows in
 * [ilo, ihi), and in ew those of the other rows (at most four at each end; every row of an axis of at most 8
 * without interior rows), zero where a tap leaves the axis. An axis without a term: [ilo, ihi) holds every
 * row, cint zero. Passed with the launch (no shared memory, no barrier). mask[a]: bit dr + 2 set when some
 * row of the axis has a weight at dr. */
template <typename R> struct st_zplan {
  R wz[5];
  int has[2], mask[2], ilo[2], ihi[2];
  double cint[2][5], ew[2][8][5];
  int row0; /* launch_z: the launch's first row */
};

__device__ static inline double st_shfl(double v, int d)
{
  return d > 0 ? __shfl_down_sync(0xffffffffu, v, d) : __shfl_up_sync(0xffffffffu, v, -d);
}
__device__ static inline float st_shfl(float v, int d)
{
  return d > 0 ? __shfl_down_sync(0xffffffffu, v, d) : __shfl_up_sync(0xffffffffu, v, -d);
}
__device__ static inline double2 st_shfl(double2 v, int d) { return make_double2(st_shfl(v.x, d), st_shfl(v.y, d)); }
__device__ static inline float2 st_shfl(float2 v, int d) { return make_float2(st_shfl(v.x, d), st_shfl(v.y, d)); }

/* Every thread sums NZ consecutive planes of one column in groups of ST_ZB: the column's values on a group's
 * planes and the ZR planes either side are loaded once, the 2 ZR planes two groups share kept in registers
 * (NZ + 2 ZR loads for NZ outputs where the per-element kernel makes 3 NZ); the taps along the row come from
 * the neighbouring lanes (a warp is 32 columns of one row, a block 32 columns by BY rows), those along axis 1
 * from memory (the rows above and below a block are loaded twice, 2 / BY of a plane). The planes cover the
 * rows and columns whole, edges included, so that the edge launch has only the planes outside the range (flat
 * and coalesced). MB: the blocks per SM the registers must allow. */
template <typename R, int NC, int ZR, int NZ, int BY, int MB>
__global__ void __launch_bounds__(32 * BY, MB)
    stencil_zm_k(st_zplan<R> zp, const R *__restrict__ xr, R *__restrict__ yr, st_fbox b)
{
  typedef typename st_vec<R, NC>::T V;
  const V *__restrict__ x = (const V *)xr;
  V *__restrict__ y = (V *)yr;
  const int row = zp.row0 + blockIdx.y * BY + threadIdx.y;
  const int col = blockIdx.x * 32 + threadIdx.x, lane = threadIdx.x & 31, z0 = blockIdx.z * NZ;
  const int sz = b.zstr[0], act = col < b.ex, c = act ? col : b.ex - 1;
  if (row >= b.ey) return; /* whole warps */
  const int f = z0 * sz + row * b.sy + c;
  const int yin = row >= zp.ilo[0] && row < zp.ihi[0], xin = c >= zp.ilo[1] && c < zp.ihi[1];
  const int yi = row < zp.ilo[0] ? row : zp.ilo[0] + row - zp.ihi[0];
  const int xi = c < zp.ilo[1] ? c : zp.ilo[1] + c - zp.ihi[1];
  const double *wy = yin ? zp.cint[0] : zp.ew[0][yi], *wx = xin ? zp.cint[1] : zp.ew[1][xi];
  const R wc = zp.wz[2] + (R)wy[2] + (R)wx[2];
  const int nz = b.ez - z0 < NZ ? b.ez - z0 : NZ; /* the block's planes (uniform over the block) */
  V cz[ST_ZB + 2 * ZR];
#pragma unroll
  for (int j = 0; j < 2 * ZR; j++) cz[j + ST_ZB] = __ldg(&x[f + (j - ZR) * sz]);
#pragma unroll
  for (int q = 0; q < NZ; q += ST_ZB) {
    if (q >= nz) break;
    /* the group's planes q .. q + ST_ZB - 1 (the last group's clamped to the last plane + ZR, which lies in
     * the segment); the shared planes move down */
#pragma unroll
    for (int j = 0; j < 2 * ZR; j++) cz[j] = cz[j + ST_ZB];
    int g[ST_ZB];
#pragma unroll
    for (int j = 0; j < ST_ZB; j++) {
      int zz = q + j + ZR;
      zz = zz < nz - 1 + ZR ? zz : nz - 1 + ZR;
      cz[j + 2 * ZR] = __ldg(&x[f + zz * sz]);
      g[j] = f + (q + j < nz ? q + j : nz - 1) * sz;
    }
    V acc[ST_ZB];
#pragma unroll
    for (int j = 0; j < ST_ZB; j++) {
      st_zero(acc[j]);
      st_axpy(acc[j], wc, cz[j + ZR]);
#pragma unroll
      for (int d = -ZR; d <= ZR; d++)
        if (d != 0) st_axpy(acc[j], zp.wz[d + 2], cz[j + ZR + d]);
    }
#pragma unroll
    for (int d = -2; d <= 2; d++) {
      if (d == 0 || !(zp.mask[0] >> (d + 2) & 1)) continue;
      const R w = (R)wy[d + 2];
      if (w == R(0)) continue; /* uniform over the warp: also where the tap leaves the plane */
      V v[ST_ZB];
#pragma unroll
      for (int j = 0; j < ST_ZB; j++) v[j] = __ldg(&x[g[j] + d * b.sy]);
#pragma unroll
      for (int j = 0; j < ST_ZB; j++) st_axpy(acc[j], w, v[j]);
    }
#pragma unroll
    for (int d = -2; d <= 2; d++) {
      if (d == 0 || !(zp.mask[1] >> (d + 2) & 1)) continue;
      V v[ST_ZB];
#pragma unroll
      for (int j = 0; j < ST_ZB; j++) v[j] = st_shfl(cz[j + ZR], d);
      const R w = (R)wx[d + 2];
      if (w == R(0)) continue; /* also where the tap leaves the row */
      if (lane + d < 0 || lane + d > 31 || (d > 0 && col + d >= b.ex))
#pragma unroll
        for (int j = 0; j < ST_ZB; j++) v[j] = __ldg(&x[g[j] + d]);
#pragma unroll
      for (int j = 0; j < ST_ZB; j++) st_axpy(acc[j], w, v[j]);
    }
    if (act)
#pragma unroll
      for (int j = 0; j < ST_ZB; j++)
        if (q + j < nz) y[f + (q + j) * sz] = acc[j];
  }
}

/* The plan of the whole-plane kernel, or 0 when the block does not fit it: three axes, the terms along axes 1
 * and 2 at most one per axis and without ghosts. zr: the axis-0 reach. */
template <typename R> static int z_plan(const st_plan *p, st_zplan<R> *zp, int *zr)
{
  if (p->ndim != 3) return 0;
  memset(zp, 0, sizeof *zp);
  *zr = 0;
  for (int k = 0; k < p->nterms; k++) {
    const st_term *t = &p->t[k];
    if (t->axis == 0) {
      for (int i = 0; i < 5; i++) {
        zp->wz[i] += (R)p->cint[k][i];
        if (p->cint[k][i] != 0.0 && (i > 2 ? i - 2 : 2 - i) > *zr) *zr = i > 2 ? i - 2 : 2 - i;
      }
      continue;
    }
    int a = t->axis - 1;
    if (t->ghosts || zp->has[a] || t->nloc != t->n || t->off != 0) return 0;
    zp->has[a] = 1;
    /* the rows outside [ilo, ihi) must fit the table (st_plan_finish's interior leaves at most four) */
    int64_t n = t->n, ilo = t->ihi > t->ilo ? t->ilo : n, ihi = t->ihi > t->ilo ? t->ihi : n;
    if (ilo > 4 || n - ihi > 4 || (ilo == n && n > 8)) return 0;
    zp->ilo[a] = (int)ilo, zp->ihi[a] = (int)ihi;
    for (int i = 0; i < 5; i++) {
      zp->cint[a][i] = p->cint[k][i];
      if (p->cint[k][i] != 0.0) zp->mask[a] |= 1 << i;
    }
    for (int64_t g = 0; g < n; g++) {
      if (g == ilo) g = ihi;
      if (g >= n) break;
      double *w = zp->ew[a][g < ilo ? g : ilo + g - ihi];
      st_coeffs(t, p->adjoint, g, w);
      for (int i = 0; i < 5; i++) {
        if (g + i - 2 < 0 || g + i - 2 >= n) w[i] = 0.0;
        if (w[i] != 0.0) zp->mask[a] |= 1 << i;
      }
    }
  }
  for (int a = 0; a < 2; a++)
    if (!zp->has[a]) zp->ilo[a] = 0, zp->ihi[a] = 1 << 30;
  /* the grid (launch_z): at least 8 rows a block, at least ST_ZB planes a thread */
  return p->ldims[1] <= 8 * (int64_t)65535 && p->ldims[0] <= ST_ZB * (int64_t)65535;
}

/* The calling worker's L2 cache size in bytes (0 if unknown), asked once (a CUDA worker is one thread on one device). */
static int64_t l2_bytes(void)
{
  static thread_local int64_t l2 = -1;
  if (l2 < 0) {
    int dev = 0, v = 0;
    l2 = cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, dev) == cudaSuccess ? v : 0;
    if (l2 == 0) cudaGetLastError(); /* not known: whole planes, and no error left behind for the launches' check */
  }
  return l2;
}

/* One launch of the whole-plane kernel with ZR planes either side: NZ planes a thread (ST_ZB: one group, 32 x 8
 * threads, at most 6 blocks per SM for 8-byte elements, 40 registers a thread: on an H100 the fastest of 64 x 4
 * and 32 x 8 with 8 or 6 blocks per SM, by 1-4%; more: marching, 32 x BY threads) */
template <typename R, int NC, int ZR>
static void launch_zr(int nz, int by16, dim3 grid, dim3 block, const st_zplan<R> &zb, const R *x, R *y, const st_fbox &b,
                      cudaStream_t st)
{
  /* MB: the blocks per SM that the registers must allow (16-byte elements need more registers) */
  const int MB = sizeof(typename st_vec<R, NC>::T) > 8 ? 4 : 6;
  if (nz == ST_ZB) stencil_zm_k<R, NC, ZR, ST_ZB, 8, MB><<<grid, block, 0, st>>>(zb, x, y, b);
  else if (nz == 8 && by16) stencil_zm_k<R, NC, ZR, 8, 16, 1><<<grid, block, 0, st>>>(zb, x, y, b);
  else if (nz == 8) stencil_zm_k<R, NC, ZR, 8, 8, 1><<<grid, block, 0, st>>>(zb, x, y, b);
  else if (nz == 16 && by16) stencil_zm_k<R, NC, ZR, 16, 16, 1><<<grid, block, 0, st>>>(zb, x, y, b);
  else if (nz == 16) stencil_zm_k<R, NC, ZR, 16, 8, 1><<<grid, block, 0, st>>>(zb, x, y, b);
  else if (by16) stencil_zm_k<R, NC, ZR, 32, 16, 1><<<grid, block, 0, st>>>(zb, x, y, b);
  else stencil_zm_k<R, NC, ZR, 32, 8, 1><<<grid, block, 0, st>>>(zb, x, y, b);
}

/* The 3-D kernel's form: planes a thread and rows a block, from the settings (STARLOPS_STENCIL_ZPLANES and
 * _ZROWS) or by default four planes in blocks of 8 rows. On an H100 (float64 Laplacian, kernel time, ratio to a
 * copy, 400^3 / 524^3 / 700^3): four planes 0.89-0.91 / 0.86-0.88 / 0.86-0.87; marching over 8, 16 or 32 planes
 * in blocks of 8 or 16 rows 0.81-0.87 / 0.78-0.82 / 0.77-0.81. */
static void z_form(int set_planes, int set_rows, int *planes, int *rows16)
{
  *planes = set_planes == 8 || set_planes == 16 || set_planes == 32 ? set_planes : ST_ZB; /* the forms compiled */
  *rows16 = set_rows == 16;
}

/* The whole-plane kernel over the box b, nz planes a thread (4, 8, 16 or 32), blocks of 8 or (by16) 16 rows. In
 * one group of planes (nz 4), a thread's planes and the ZR planes either side are read again by the neighbouring
 * groups; when the planes one group reads take more than a third of the L2 cache, a sweep over whole planes
 * evicts them before that, so the rows go in bands (one launch each, every group of planes of the band) of
 * about a 32nd of the L2 a plane. On an H100 (50 MB L2; float64 Laplacian, ratio to a copy): 1100^3 0.85-0.87
 * in bands of 23 row tiles against 0.75-0.76 in whole planes, 700^3 0.86-0.87 against 0.78; 524^3 (13 MB a
 * group) 0.83-0.85 in bands against 0.86-0.88, so it keeps whole planes. Marching threads (nz > 4) keep the
 * planes between their groups in registers: whole planes, no bands. */
template <typename R, int NC>
static void launch_z(const st_zplan<R> &zp, int zr, int band, int nz, int by16, const R *x, R *y, const st_fbox &b,
                     cudaStream_t st)
{
  if (nz == ST_ZB) by16 = 0;
  const int by = by16 ? 16 : 8, nyt = (b.ey + by - 1) / by;
  const int64_t row_bytes = (int64_t)b.sy * sizeof(typename st_vec<R, NC>::T), l2 = l2_bytes();
  int bt = nyt; /* row tiles per band */
  if (nz == ST_ZB && band > 0) bt = band < nyt ? band : nyt;
  else if (nz == ST_ZB && l2 > 0 && 3 * (ST_ZB + 2 * zr) * row_bytes * b.ey > l2) {
    const int64_t t = l2 / 32 / (by * row_bytes);
    bt = t < 1 ? 1 : t < nyt ? (int)t : nyt;
  }
  st_zplan<R> zb = zp;
  for (int t0 = 0; t0 < nyt; t0 += bt) {
    const int nt = nyt - t0 < bt ? nyt - t0 : bt;
    dim3 block(32, by), grid((unsigned)((b.ex + 31) / 32), (unsigned)nt, (unsigned)((b.ez + nz - 1) / nz));
    zb.row0 = t0 * by;
    if (zr == 0) launch_zr<R, NC, 0>(nz, by16, grid, block, zb, x, y, b, st);
    else if (zr == 1) launch_zr<R, NC, 1>(nz, by16, grid, block, zb, x, y, b, st);
    else launch_zr<R, NC, 2>(nz, by16, grid, block, zb, x, y, b, st);
  }
}

/* ---- the split of a task's range ---- */


/* The interior box of the task's range [s, e) (lo[d] <= i_d < hi[d] on every axis), its reach (the largest
 * element offset of a tap) and the segment holding [s, e). 0 when there is none. */
static int interior_box(const st_plan *p, const st_input *in, int64_t s, int64_t e, const int64_t *str, int64_t *lo,
                        int64_t *hi, int *seg)
{
  const int nd = p->ndim;
  if (p->generic || nd < 1) return 0;
  int64_t reach = 0;
  for (int d = 0; d < nd; d++) lo[d] = 0, hi[d] = p->ldims[d];
  for (int k = 0; k < p->nterms; k++) {
    const st_term *t = &p->t[k];
    if (t->axis < 0 || t->axis >= nd || t->stride != str[t->axis] || t->nloc != p->ldims[t->axis]) return 0;
    /* the rows [glo, ghi) of the global axis that take the interior weights: [4, n - 4) and the rows next
     * to it whose weights are the same (a second derivative's edge is one row, a first derivative's two) */
    int64_t rows = 0, glo = 4, ghi = t->n - 4;
    for (int i = 0; i < 5; i++)
      if (p->cint[k][i] != 0.0) rows = max64(rows, i > 2 ? i - 2 : 2 - i);
    if (ghi <= glo) return 0;
    for (double c[5]; glo > 0; glo--) {
      st_coeffs(t, p->adjoint, glo - 1, c);
      if (memcmp(c, p->cint[k], sizeof c) != 0) break;
    }
    for (double c[5]; ghi < t->n; ghi++) {
      st_coeffs(t, p->adjoint, ghi, c);
      if (memcmp(c, p->cint[k], sizeof c) != 0) break;
    }
    /* and whose taps lie in the block (no ghost rows) */
    lo[t->axis] = max64(lo[t->axis], max64(glo - t->off, rows));
    hi[t->axis] = min64(hi[t->axis], min64(ghi - t->off, t->nloc - rows));
    reach = max64(reach, rows * t->stride);
  }
  *seg = -1;
  for (int i = 0; i < in->nseg; i++)
    if (in->start[i] <= s && e <= in->start[i] + in->len[i]) *seg = i;
  if (*seg < 0) return 0;
  int64_t fs = max64(s, in->start[*seg] + reach), fe = min64(e, in->start[*seg] + in->len[*seg] - reach);
  if (fs >= fe) return 0;
  lo[0] = max64(lo[0], (fs + str[0] - 1) / str[0]);
  hi[0] = min64(hi[0], fe / str[0]);
  for (int d = 0; d < nd; d++)
    if (lo[d] >= hi[d]) return 0;
  return 1;
}

template <typename R>
static void launch_edges(const st_plan *p, const st_input *in, const st_pieces &pc, int64_t s, R *y, int small,
                         cudaStream_t st)
{
  int64_t total = pc.pre[pc.n];
  if (total <= 0) return;
  int64_t blocks = (total + 255) / 256;
  unsigned g = (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
  if (small) stencil_edge_k<R, int><<<g, 256, 0, st>>>(*p, *in, pc, s, y);
  else stencil_edge_k<R, int64_t><<<g, 256, 0, st>>>(*p, *in, pc, s, y);
}

/* The calling worker's side stream and its two events, made on first use (a CUDA worker is one thread on one
 * device; they live as long as the process's CUDA context). */
static thread_local struct {
  cudaStream_t stream;
  cudaEvent_t ready, done;
  int made;
} side_ev;

/* The side stream, made to wait for everything queued so far on the worker's stream st. */
static int side_stream(cudaStream_t st, cudaStream_t *out)
{
  int rc;
  if (!side_ev.made) {
    if ((rc = cudaStreamCreateWithFlags(&side_ev.stream, cudaStreamNonBlocking)) != cudaSuccess) return rc;
    if ((rc = cudaEventCreateWithFlags(&side_ev.ready, cudaEventDisableTiming)) != cudaSuccess) {
      cudaStreamDestroy(side_ev.stream); /* nothing kept half made: the next call tries again */
      return rc;
    }
    if ((rc = cudaEventCreateWithFlags(&side_ev.done, cudaEventDisableTiming)) != cudaSuccess) {
      cudaEventDestroy(side_ev.ready);
      cudaStreamDestroy(side_ev.stream);
      return rc;
    }
    side_ev.made = 1;
  }
  if ((rc = cudaEventRecord(side_ev.ready, st)) != cudaSuccess ||
      (rc = cudaStreamWaitEvent(side_ev.stream, side_ev.ready, 0)) != cudaSuccess)
    return rc;
  *out = side_ev.stream;
  return cudaSuccess;
}

template <typename R>
static int launch(const st_plan *p, const st_input *in, int64_t s, int64_t e, R *y, cudaStream_t st)
{
  const int nd = p->ndim, nc = p->ncomp;
  int64_t str[SL_MAX_DIMS], n = 1, lo[SL_MAX_DIMS], hi[SL_MAX_DIMS];
  for (int d = nd - 1; d >= 0; d--) str[d] = n, n *= p->ldims[d];
  /* 32-bit indices with room for a grid-stride step (at most 65535 * 8 * 256) past the last element: the
   * edge launch's when the block is small, the interior launches' always (a small block's interior is one
   * launch, a larger one's goes in slabs along axis 0 of at most `per` rows, each launch's indices from its
   * slab's first element) */
  const int64_t lim = (int64_t)1 << 30;
  int small = n * nc < lim, seg = -1;
  int fast = interior_box(p, in, s, e, str, lo, hi, &seg);
  int64_t per = !fast ? 0 : small ? INT64_MAX : lim / (nc * str[0]) - 8;
  if (per < 1) fast = 0;
  if (p->slab > 0 && p->slab < per) per = p->slab;
  /* 3-D: the planes in the box's range whole (their rows' and columns' edges in the kernel) */
  st_zplan<R> zp;
  int zr = 0, wide = fast && z_plan<R>(p, &zp, &zr);
  if (wide)
    for (int d = 1; d < 3; d++) lo[d] = 0, hi[d] = p->ldims[d];
  int zm, zby16;
  z_form(p->zmarch, p->zby, &zm, &zby16);

  st_pieces pc;
  pc.n = 0;
  pc.nd = nd;
  for (int d = 0; d < nd; d++) pc.str[d] = str[d];
  pc.pre[0] = 0;
  auto add_flat = [&](int64_t a, int64_t b) {
    if (a >= b) return;
    st_piece &q = pc.p[pc.n];
    q.org = a, q.size = b - a, q.flat = 1;
    pc.pre[pc.n + 1] = pc.pre[pc.n] + q.size;
    pc.n++;
  };
  if (!fast) {
    add_flat(s, e);
  } else {
    /* the box's axis-0 slabs hold whole rows of every other axis: before and after them, flat ranges; inside
     * them, for each axis j >= 1, the elements inside the box on the axes before j and outside it on j */
    add_flat(s, lo[0] * str[0]);
    add_flat(hi[0] * str[0], e);
    for (int j = 1; j < nd; j++)
      for (int side = 0; side < 2; side++) {
        int64_t a = side ? hi[j] : 0, b = side ? p->ldims[j] : lo[j];
        if (a >= b) continue;
        st_piece &q = pc.p[pc.n];
        q.flat = 0;
        q.org = 0;
        q.size = 1;
        for (int d = 0; d < nd; d++) {
          int64_t from = d < j ? lo[d] : d == j ? a : 0, to = d < j ? hi[d] : d == j ? b : p->ldims[d];
          q.org += from * str[d];
          q.ext[d] = to - from;
          q.size *= to - from;
        }
        if (q.size == 0) continue;
        pc.pre[pc.n + 1] = pc.pre[pc.n] + q.size;
        pc.n++;
      }

    st_taps<R> tp; /* the per-element kernel's taps (the whole-plane kernel takes zp) */
    tp.n = 0;
    for (int k = 0; k < p->nterms && !wide; k++)
      for (int i = 0; i < 5; i++) {
        if (p->cint[k][i] == 0.0) continue;
        int off = (int)((i - 2) * p->t[k].stride), m = 0;
        while (m < tp.n && tp.off[m] != off) m++;
        if (m == tp.n) tp.off[tp.n] = off, tp.w[tp.n++] = R(0);
        tp.w[m] += (R)p->cint[k][i];
      }
    /* the box; each slab's launch takes pointers to its first element */
    st_fbox b;
    int64_t org = 0;
    for (int d = 0; d < nd; d++) org += lo[d] * str[d];
    b.ex = (int)(hi[nd - 1] - lo[nd - 1]);
    b.ey = nd >= 2 ? (int)(hi[nd - 2] - lo[nd - 2]) : 1;
    b.sy = nd >= 2 ? (int)str[nd - 2] : 0;
    b.nz = nd >= 2 ? nd - 2 : 0;
    /* axis 0's extent (zext[0], ez; ex or ey below 3-D) is each slab's; rest: the box's planes per row of axis 0 */
    b.ez = 1;
    int64_t rest = 1;
    for (int d = 0; d < b.nz; d++) {
      b.zext[d] = (int)(hi[d] - lo[d]);
      b.zstr[d] = (int)str[d];
      if (d > 0) rest *= hi[d] - lo[d];
    }
    const R *x = (const R *)in->ptr[seg];
    /* the edges on the side stream, beside the interior (both read x, write disjoint parts of y); measured on
     * an H100, the edge launch's time adds to the interior's rather than overlapping it */
    cudaStream_t side = NULL;
    int rc = pc.pre[pc.n] > 0 && !p->edge_serial ? side_stream(st, &side) : cudaSuccess;
    if (rc != cudaSuccess) return rc;
    if (side) {
      launch_edges<R>(p, in, pc, s, y, small, side);
      if ((rc = cudaEventRecord(side_ev.done, side)) != cudaSuccess) return rc;
    }
    const int64_t ext0 = hi[0] - lo[0];
    for (int64_t a = 0; a < ext0; a += per) {
      const int64_t cnt = min64(per, ext0 - a), f0 = org + a * str[0];
      st_fbox bs = b; /* the slab: rows [a, a + cnt) of the box's axis 0 */
      if (nd == 1) bs.ex = (int)cnt;
      else if (nd == 2) bs.ey = (int)cnt;
      else bs.zext[0] = (int)cnt, bs.ez = (int)(rest * cnt); /* at most cnt str[0] < 2^30 */
      const R *xs = x + (f0 - in->start[seg]) * nc;
      R *ys = y + (f0 - s) * nc;
      if (wide && nc == 1) launch_z<R, 1>(zp, zr, p->band, zm, zby16, xs, ys, bs, st);
      else if (wide) launch_z<R, 2>(zp, zr, p->band, zm, zby16, xs, ys, bs, st);
      else if (nc == 1) launch_fast<R, 1>(tp, xs, ys, bs, st);
      else launch_fast<R, 2>(tp, xs, ys, bs, st);
    }
    if (side) return cudaStreamWaitEvent(st, side_ev.done, 0);
  }
  launch_edges<R>(p, in, pc, s, y, small, st);
  return cudaSuccess;
}

extern "C" int kernel_cuda_stencil(const st_plan *p, int single, const st_input *in, int64_t s, int64_t e, void *y,
                                   void *stream)
{
  if (e <= s) return cudaSuccess;
  int rc = single ? launch<float>(p, in, s, e, (float *)y, (cudaStream_t)stream)
                  : launch<double>(p, in, s, e, (double *)y, (cudaStream_t)stream);
  return rc != cudaSuccess ? rc : cudaGetLastError();
}
