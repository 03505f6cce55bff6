/* CUDA Patch2D with a dense matrix per patch, the same semantics as kernel_patch.c: the patches' model
 * coefficients (or tapered data, adjoint) gathered as the columns of one matrix, one cuBLAS GEMM with M (M^H),
 * then the data summed over the patches covering each sample (one thread per output, written once) or the
 * model scattered back. Windows along the last axis skip the model-side gather (the model block is the
 * columns' matrix); windows along another axis with 16 or more trailing elements skip it too: one strided
 * batched GEMM over the windows on the model in place. With M the identity (ident) the model holds the
 * patches: the forward sums them straight from it and the adjoint cuts them straight into it, with no GEMM and
 * no work space. Patches over the last two axes (B = C = 1) take row kernels on either side of the GEMM (a thread
 * divides only along its row, PR_ROWS rows per thread): the model moved to and from the columns a model row at a
 * time, the data cut into the columns and summed from them a data row at a time. */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cublas_gemm.h"
#include "kernel_cuda_ops.cuh"
#include "kernel_patch.h"

/* The dims in the kernels' index type I: 32-bit when every index of the call fits (integer division and
 * multiplication are several times cheaper than in 64 bits), else 64-bit. */
template <typename I> struct pdims {
  I A, n0, B, n1, C, nw0, nop0, nwin0, s0, nw1, nop1, nwin1, s1, r0, p0, nwtot;
  I tap; /* where T0 starts in the tables: after M (Q K elements), or at 0 when M is the identity */
};
template <typename I> __device__ static pdims<I> in_type(const sl_patch_dims &d)
{
  return pdims<I>{(I)d.A,   (I)d.n0,    (I)d.B,  (I)d.n1,  (I)d.C,    (I)d.nw0, (I)d.nop0, (I)d.nwin0,
                  (I)d.s0,  (I)d.nw1,   (I)d.nop1, (I)d.nwin1, (I)d.s1, (I)d.r0,  (I)d.p0,   (I)d.nwtot,
                  d.ident ? (I)0 : (I)(d.nop0 * d.nop1 * d.nwin0 * d.nwin1)};
}

/* The reciprocals of the uniform divisors, computed once on the host: a thread divides an index by them through
 * a double product corrected by one (udiv), several times cheaper than an integer division, which would make
 * these gathers and scatters bound by instructions rather than by memory. */
struct prcp {
  double C, n1, B, n0, nwin1, nop1, nw1, nop0, nw0, nwin0, Q, s0, s1;
};
static prcp reciprocals(const sl_patch_dims *d)
{
  const double Q = (double)(d->nwin0 * d->nwin1);
  return prcp{1.0 / (double)d->C,     1.0 / (double)d->n1,   1.0 / (double)d->B,    1.0 / (double)d->n0, 1.0 / (double)d->nwin1,
              1.0 / (double)d->nop1,  1.0 / (double)d->nw1,  1.0 / (double)d->nop0, 1.0 / (double)d->nw0, 1.0 / (double)d->nwin0,
              1.0 / Q,                1.0 / (double)d->s0,   1.0 / (double)d->s1};
}

/* n / d for 0 <= n (below 2^52) and d > 0, inv = 1 / d; in 32 bits n + d must stay below 2^31 ((q + 1) d is formed) */
template <typename I> __device__ static I udiv(I n, I d, double inv)
{
  I q = (I)((double)n * inv);
  if (q * d > n) q--;
  else if ((q + 1) * d <= n) q++;
  return q;
}

/* n % d, and n becomes n / d */
template <typename I> __device__ static I divmod(I &n, I d, double inv)
{
  I q = udiv<I>(n, d, inv), r = n - q * d;
  n = q;
  return r;
}

/* the first window along an axis whose span [w s, w s + nwin) holds row r, and the last, clipped to [0, nw) */
template <typename I> __device__ static void covering(I r, I nwin, I s, I nw, double inv_s, I *w0, I *w1)
{
  I w = udiv<I>(r, s, inv_s); /* the last window starting at or before r; the first is the lowest still holding it */
  *w1 = w > nw - 1 ? nw - 1 : w;
  *w0 = r - nwin + 1 <= 0 ? 0 : udiv<I>(r - nwin + s, s, inv_s);
}

/* The batched form: P = A B nw0 nw1 C columns p = (((a B + b) nw0 + w0) nw1 + w1) C + c, X (K x P) the patches'
 * model coefficients, Y (Q x P) their data, both column-major (a patch's values contiguous: X[p K + k],
 * Y[p Q + q]), so that the gathers run along a patch's rows; Y = M X by cuBLAS. The adjoint X = M^H Y is taken
 * as conj(X) = M^T conj(Y) (cuBLAS has no conjugate without transpose): the gather conjugates the tapered data,
 * the scatter back conjugates the result. */
template <typename I> __device__ static I column(const pdims<I> &d, I a, I b, I w0, I w1, I c)
{
  return (((a * d.B + b) * d.nw0 + w0) * d.nw1 + w1) * d.C + c;
}

/* the coordinates (a, w0, j0, b, w1, j1, c) of the model's element e */
template <typename I> struct mcoord {
  I a, w0, j0, b, w1, j1, c;
};
template <typename I> __device__ static mcoord<I> model_coords(const pdims<I> &d, const prcp &v, I e)
{
  mcoord<I> m;
  m.c = divmod<I>(e, d.C, v.C);
  m.j1 = divmod<I>(e, d.nop1, v.nop1);
  m.w1 = divmod<I>(e, d.nw1, v.nw1);
  m.b = divmod<I>(e, d.B, v.B);
  m.j0 = divmod<I>(e, d.nop0, v.nop0);
  m.w0 = divmod<I>(e, d.nw0, v.nw0);
  m.a = e;
  return m;
}

/* X[p K + k] = x[a, w0, j0, b, w1, j1, c] (forward), or the model = conj(X) (adjoint, back = 1) */
template <typename T, typename I> __global__ void patch_columns(sl_patch_dims dd, prcp v, int back, T *model, T *X)
{
  const pdims<I> d = in_type<I>(dd);
  const I total = d.A * d.nw0 * d.nop0 * d.B * d.nw1 * d.nop1 * d.C, K = d.nop0 * d.nop1;
  for (I e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
    const mcoord<I> m = model_coords(d, v, e);
    I k = m.j0 * d.nop1 + m.j1, p = column(d, m.a, m.b, m.w0, m.w1, m.c);
    if (back) model[e] = ops<T>::conj(X[p * K + k]);
    else X[p * K + k] = model[e];
  }
}

/* the model's index of patch sample (q0, q1) when M is the identity: x[a, w0, q0, b, w1, q1, c] */
template <typename I> __device__ static I model_sample(const pdims<I> &d, I a, I b, I w0, I w1, I q0, I q1, I c)
{
  return (((((a * d.nw0 + w0) * d.nop0 + q0) * d.B + b) * d.nw1 + w1) * d.nop1 + q1) * d.C + c;
}

/* forward: y = the tapered patch data of Y summed over the patches covering each sample; DIRECT: Y is the model
 * itself (M the identity) */
template <typename T, typename I, bool DIRECT> __global__ void patch_overlap_add(sl_patch_dims dd, prcp v, const T *tab, const T *Y, T *y)
{
  const pdims<I> d = in_type<I>(dd);
  const I total = d.A * d.n0 * d.B * d.n1 * d.C, Q = d.nwin0 * d.nwin1;
  const T *t0 = tab + d.tap, *t1 = t0 + d.nwtot * d.nwin0;
  for (I e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
    I f = e, c = divmod<I>(f, d.C, v.C), r1 = divmod<I>(f, d.n1, v.n1), b = divmod<I>(f, d.B, v.B), r0 = divmod<I>(f, d.n0, v.n0);
    I a = f, Wa, Wb, wa1, wb1, R = r0 + d.r0;
    covering<I>(R, d.nwin0, d.s0, d.nwtot, v.s0, &Wa, &Wb); /* global patches, then the buffer's */
    if (Wa < d.p0) Wa = d.p0;
    if (Wb > d.p0 + d.nw0 - 1) Wb = d.p0 + d.nw0 - 1;
    covering<I>(r1, d.nwin1, d.s1, d.nw1, v.s1, &wa1, &wb1);
    T acc = ops<T>::zero();
    for (I W = Wa; W <= Wb; W++)
      for (I w1 = wa1; w1 <= wb1; w1++) {
        I q0 = R - W * d.s0, q1 = r1 - w1 * d.s1;
        I at = DIRECT ? model_sample(d, a, b, W - d.p0, w1, q0, q1, c) : column(d, a, b, W - d.p0, w1, c) * Q + q0 * d.nwin1 + q1;
        acc = ops<T>::add(acc, ops<T>::mul(ops<T>::mul(t0[W * d.nwin0 + q0], t1[w1 * d.nwin1 + q1]), Y[at]));
      }
    if (dd.acc) y[e] = ops<T>::add(y[e], acc);
    else y[e] = acc;
  }
}

/* Rows per thread in the row-batched kernels (the windows', patch_rows_add2, patch_rows_cut): a thread's work on
 * one row is a short chain of dependent steps (the row's patch or window, its taper weight, then the sample), so a
 * thread walking one row at a time waited on that chain (the patch kernels ran at 0.43-0.53 of peak DRAM
 * throughput, Nsight Compute on an H100); with the loads of PR_ROWS rows issued before any of their values is
 * used, the chains overlap. */
#define PR_ROWS 4

/* Windows along one axis (nwin1 = nw1 = B = 1) with M the identity, the model (a, w, q, c) holding them: the
 * forward sums the tapered windows covering each data sample (a, r, c), the adjoint cuts each window out. A
 * block row of the grid (blockIdx.y) walks the outer index a, PR_ROWS values of it per thread (the windows of a
 * sample do not depend on a: their loads for the PR_ROWS rows are issued together, the rows' chains overlapping),
 * so that a thread divides only by C (when C > 1) and the hop s0 or the window length (udiv). */
template <typename T, typename I>
__global__ void window_add(sl_patch_dims dd, prcp v, const T *__restrict__ tab, const T *__restrict__ x, T *__restrict__ y)
{
  const pdims<I> d = in_type<I>(dd);
  /* the buffer's windows that exist globally: [max(p0, 0), min(p0 + nw0, nwtot)) (p0 < 0 on the first rank of a
   * distributed axis, whose ghost windows before the axis start are zeros) */
  const I inner = d.n0 * d.C, wlast = d.p0 + d.nw0 - 1 < d.nwtot - 1 ? d.p0 + d.nw0 - 1 : d.nwtot - 1;
  const I wfirst = d.p0 > 0 ? d.p0 : 0, xrow = d.nw0 * d.nwin0 * d.C;
  const T *t0 = tab + d.tap, t1 = t0[d.nwtot * d.nwin0];
  const bool c1 = d.C == 1;
  for (I a0 = blockIdx.y * PR_ROWS; a0 < d.A; a0 += gridDim.y * PR_ROWS) {
    for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < inner; i += gridDim.x * blockDim.x) {
      I r = c1 ? i : udiv<I>(i, d.C, v.C), c = i - r * d.C, R = r + d.r0;
      T acc[PR_ROWS];
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++) acc[j] = ops<T>::zero();
      if (R >= 0) { /* the windows W <= R / s0 whose span [W s0, W s0 + nwin0) still holds R, the last first */
        I W = udiv<I>(R, d.s0, v.s0);
        if (W > wlast) W = wlast;
        for (; W >= wfirst && W * d.s0 + d.nwin0 > R; W--) {
          const I q = R - W * d.s0, at = ((W - d.p0) * d.nwin0 + q) * d.C + c;
          const T tw = t0[W * d.nwin0 + q];
          T val[PR_ROWS];
#pragma unroll
          for (int j = 0; j < PR_ROWS; j++) val[j] = a0 + j < d.A ? x[(a0 + j) * xrow + at] : ops<T>::zero();
#pragma unroll
          for (int j = 0; j < PR_ROWS; j++) acc[j] = ops<T>::add(acc[j], ops<T>::mul(tw, val[j]));
        }
      }
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++) {
        if (a0 + j >= d.A) break;
        T *ya = y + (a0 + j) * inner;
        if (dd.acc) ya[i] = ops<T>::add(ya[i], ops<T>::mul(t1, acc[j]));
        else ya[i] = ops<T>::mul(t1, acc[j]);
      }
    }
  }
}

template <typename T, typename I>
__global__ void window_cut(sl_patch_dims dd, prcp v, const T *__restrict__ tab, const T *__restrict__ y, T *__restrict__ x)
{
  const pdims<I> d = in_type<I>(dd);
  const I inner = d.nw0 * d.nwin0 * d.C, yrow = d.n0 * d.C;
  const T *t0 = tab + d.tap, t1 = t0[d.nwtot * d.nwin0];
  const bool c1 = d.C == 1;
  for (I a0 = blockIdx.y * PR_ROWS; a0 < d.A; a0 += gridDim.y * PR_ROWS) {
    for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < inner; i += gridDim.x * blockDim.x) {
      I wq = c1 ? i : udiv<I>(i, d.C, v.C), c = i - wq * d.C, w = udiv<I>(wq, d.nwin0, v.nwin0), q = wq - w * d.nwin0;
      I W = d.p0 + w, r = W * d.s0 - d.r0 + q;
      const bool in = !(W < 0 || W >= d.nwtot || r < 0 || r >= d.n0);
      const T tw = in ? ops<T>::mul(t0[W * d.nwin0 + q], t1) : ops<T>::zero();
      const I at = in ? r * d.C + c : 0;
      T val[PR_ROWS];
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++) val[j] = in && a0 + j < d.A ? y[(a0 + j) * yrow + at] : ops<T>::zero();
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++)
        if (a0 + j < d.A) x[(a0 + j) * inner + i] = in ? ops<T>::mul(tw, val[j]) : ops<T>::zero();
    }
  }
}

/* adjoint: Y[p Q + q] = conj(the tapered data of patch p at sample q) */
template <typename T, typename I> __global__ void patch_windows(sl_patch_dims dd, prcp v, const T *tab, const T *y, T *Y)
{
  const pdims<I> d = in_type<I>(dd);
  const I Q = d.nwin0 * d.nwin1, P = d.A * d.B * d.nw0 * d.nw1 * d.C, total = Q * P;
  const T *t0 = tab + d.tap, *t1 = t0 + d.nwtot * d.nwin0;
  const I dr1 = d.C, db = d.n1 * d.C, dr0 = d.B * db, da = d.n0 * dr0;
  for (I e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
    I p = e, q0 = divmod<I>(p, Q, v.Q), q1 = divmod<I>(q0, d.nwin1, v.nwin1);
    I c = divmod<I>(p, d.C, v.C), w1 = divmod<I>(p, d.nw1, v.nw1), w0 = divmod<I>(p, d.nw0, v.nw0), b = divmod<I>(p, d.B, v.B);
    I a = p, W = d.p0 + w0, r = W * d.s0 - d.r0 + q0;
    Y[e] = W < 0 || W >= d.nwtot || r < 0 || r >= d.n0
             ? ops<T>::zero()
             : ops<T>::conj(ops<T>::mul(ops<T>::mul(t0[W * d.nwin0 + q0], t1[w1 * d.nwin1 + q1]),
                                        y[a * da + r * dr0 + b * db + (w1 * d.s1 + q1) * dr1 + c]));
  }
}

/* adjoint with M the identity (nop = nwin): the model x[a, w0, q0, b, w1, q1, c] = the tapered data of patch
 * (w0, w1) at sample (q0, q1), one thread per model element, in the model's order */
template <typename T, typename I> __global__ void patch_cut(sl_patch_dims dd, prcp v, const T *tab, const T *y, T *x)
{
  const pdims<I> d = in_type<I>(dd);
  const I total = d.A * d.nw0 * d.nop0 * d.B * d.nw1 * d.nop1 * d.C;
  const T *t0 = tab + d.tap, *t1 = t0 + d.nwtot * d.nwin0;
  const I dr1 = d.C, db = d.n1 * d.C, dr0 = d.B * db, da = d.n0 * dr0;
  for (I e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
    const mcoord<I> m = model_coords(d, v, e); /* j0, j1: the samples q0, q1 */
    I W = d.p0 + m.w0, r = W * d.s0 - d.r0 + m.j0;
    x[e] = W < 0 || W >= d.nwtot || r < 0 || r >= d.n0
             ? ops<T>::zero()
             : ops<T>::mul(ops<T>::mul(t0[W * d.nwin0 + m.j0], t1[m.w1 * d.nwin1 + m.j1]),
                           y[m.a * da + r * dr0 + m.b * db + (m.w1 * d.s1 + m.j1) * dr1 + m.c]);
  }
}

/* The patches over the last two axes (B = C = 1) in a patch-major buffer: sample (q0, q1) of patch (w0, w1) of
 * outer index a at (a nw0 + w0) W + q0 q0s + w1 w1s + q1. The model with M the identity (patch_model_strides: rows
 * (a, w0, q0) of nw1 nop1 values) or the GEMM path's columns (patch_column_strides: a patch's Q values
 * contiguous, Y or the adjoint's conj(Y)). */
struct pstride {
  int64_t W, q0s, w1s;
};
static pstride patch_model_strides(const sl_patch_dims *d)
{
  return pstride{d->nop0 * d->nw1 * d->nop1, d->nw1 * d->nop1, d->nop1};
}
static pstride patch_column_strides(const sl_patch_dims *d)
{
  return pstride{d->nw1 * d->nwin0 * d->nwin1, d->nwin1, d->nwin0 * d->nwin1};
}

/* Patches over the last two axes (B = C = 1) in a patch-major buffer x (pstride): grids whose block rows walk
 * rows, so that a thread divides only along its row. Forward: block row (a, r0) of the data, a thread per sample
 * r1 summing the tapered patches (W, w1) covering (r0, r1) straight from x (the model with M the identity, or the
 * product's columns). */
template <typename T, typename I>
__global__ void patch_rows_add(sl_patch_dims dd, prcp v, pstride st, const T *tab, const T *x, T *y)
{
  const pdims<I> d = in_type<I>(dd);
  const I sW = (I)st.W, sq0 = (I)st.q0s, sw1 = (I)st.w1s;
  const T *t0 = tab + d.tap, *t1 = t0 + d.nwtot * d.nwin0;
  for (I row = blockIdx.y; row < d.A * d.n0; row += gridDim.y) {
    const I a = udiv<I>(row, d.n0, v.n0), R = row - a * d.n0 + d.r0;
    I Wa, Wb;
    covering<I>(R, d.nwin0, d.s0, d.nwtot, v.s0, &Wa, &Wb); /* global patches, then the buffer's */
    if (Wa < d.p0) Wa = d.p0;
    if (Wb > d.p0 + d.nw0 - 1) Wb = d.p0 + d.nw0 - 1;
    const T *xa = x + a * d.nw0 * sW;
    T *yr = y + row * d.n1;
    for (I r1 = blockIdx.x * blockDim.x + threadIdx.x; r1 < d.n1; r1 += gridDim.x * blockDim.x) {
      I wa1, wb1;
      covering<I>(r1, d.nwin1, d.s1, d.nw1, v.s1, &wa1, &wb1);
      T acc = ops<T>::zero();
      for (I W = Wa; W <= Wb; W++) {
        const I q0 = R - W * d.s0;
        const T *xr = xa + (W - d.p0) * sW + q0 * sq0 + r1; /* sample (q0, q1) of (W, w1) at w1 sw1 + q1 */
        const T tw = t0[W * d.nwin0 + q0];
        for (I w1 = wa1; w1 <= wb1; w1++) /* q1 = r1 - w1 s1, at w1 sw1 + q1 = r1 + w1 (sw1 - s1) */
          acc = ops<T>::add(acc, ops<T>::mul(ops<T>::mul(tw, t1[w1 * d.nwin1 + r1 - w1 * d.s1]), xr[w1 * (sw1 - d.s1)]));
      }
      if (dd.acc) yr[r1] = ops<T>::add(yr[r1], acc);
      else yr[r1] = acc;
    }
  }
}

/* patch_rows_add where at most two patches cover a sample along either axis (2 s >= nwin, every taper's rule):
 * PR_ROWS rows per thread, the up to four model values of each row loaded (predicated) before the sums. The
 * sums are the same products in the same order as patch_rows_add's. */
template <typename T, typename I>
__global__ void patch_rows_add2(sl_patch_dims dd, prcp v, pstride st, const T *__restrict__ tab, const T *__restrict__ x,
                                T *__restrict__ y)
{
  const pdims<I> d = in_type<I>(dd);
  const I sW = (I)st.W, sq0 = (I)st.q0s, sw1 = (I)st.w1s;
  const T *t0 = tab + d.tap, *t1 = t0 + d.nwtot * d.nwin0;
  const I nrows = d.A * d.n0;
  for (I row0 = blockIdx.y * PR_ROWS; row0 < nrows; row0 += gridDim.y * PR_ROWS) {
    I Wa[PR_ROWS], nW[PR_ROWS], q0[PR_ROWS];
    const T *xa[PR_ROWS];
    T tw0[PR_ROWS], tw1[PR_ROWS];
#pragma unroll
    for (int j = 0; j < PR_ROWS; j++) {
      const I row = row0 + j < nrows ? row0 + j : nrows - 1;
      const I a = udiv<I>(row, d.n0, v.n0), R = row - a * d.n0 + d.r0;
      I wa, wb;
      covering<I>(R, d.nwin0, d.s0, d.nwtot, v.s0, &wa, &wb); /* global patches, then the buffer's */
      if (wa < d.p0) wa = d.p0;
      if (wb > d.p0 + d.nw0 - 1) wb = d.p0 + d.nw0 - 1;
      Wa[j] = wa;
      nW[j] = wb - wa + 1; /* 0, 1 or 2 */
      q0[j] = R - wa * d.s0;
      xa[j] = x + (a * d.nw0 + wa - d.p0) * sW + q0[j] * sq0;
      tw0[j] = nW[j] > 0 ? t0[wa * d.nwin0 + q0[j]] : ops<T>::zero();
      tw1[j] = nW[j] > 1 ? t0[(wa + 1) * d.nwin0 + q0[j] - d.s0] : ops<T>::zero();
    }
    for (I r1 = blockIdx.x * blockDim.x + threadIdx.x; r1 < d.n1; r1 += gridDim.x * blockDim.x) {
      I wa1, wb1;
      covering<I>(r1, d.nwin1, d.s1, d.nw1, v.s1, &wa1, &wb1);
      const bool c0 = wa1 <= wb1, c1 = wa1 < wb1;
      const T u0 = c0 ? t1[wa1 * d.nwin1 + r1 - wa1 * d.s1] : ops<T>::zero();
      const T u1 = c1 ? t1[(wa1 + 1) * d.nwin1 + r1 - (wa1 + 1) * d.s1] : ops<T>::zero();
      const I o0 = r1 + wa1 * (sw1 - d.s1), o1 = o0 + (sw1 - d.s1); /* sample (q0, q1) of (W, w1) at w1 sw1 + q1 */
      /* the loads of every row first */
      T v00[PR_ROWS], v01[PR_ROWS], v10[PR_ROWS], v11[PR_ROWS];
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++) {
        const T *p0 = xa[j], *p1 = xa[j] + sW - d.s0 * sq0; /* patch Wa + 1, its row q0 - s0 */
        v00[j] = nW[j] > 0 && c0 ? p0[o0] : ops<T>::zero();
        v01[j] = nW[j] > 0 && c1 ? p0[o1] : ops<T>::zero();
        v10[j] = nW[j] > 1 && c0 ? p1[o0] : ops<T>::zero();
        v11[j] = nW[j] > 1 && c1 ? p1[o1] : ops<T>::zero();
      }
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++) {
        if (row0 + j >= nrows) break;
        T acc = ops<T>::zero();
        if (nW[j] > 0) {
          if (c0) acc = ops<T>::add(acc, ops<T>::mul(ops<T>::mul(tw0[j], u0), v00[j]));
          if (c1) acc = ops<T>::add(acc, ops<T>::mul(ops<T>::mul(tw0[j], u1), v01[j]));
        }
        if (nW[j] > 1) {
          if (c0) acc = ops<T>::add(acc, ops<T>::mul(ops<T>::mul(tw1[j], u0), v10[j]));
          if (c1) acc = ops<T>::add(acc, ops<T>::mul(ops<T>::mul(tw1[j], u1), v11[j]));
        }
        T *yr = y + (row0 + j) * d.n1;
        if (dd.acc) yr[r1] = ops<T>::add(yr[r1], acc);
        else yr[r1] = acc;
      }
    }
  }
}

/* Adjoint: block row (a, w0, q0) of the patch-major buffer x (pstride), a thread per (w1, q1) of it cutting the
 * tapered sample out of data row W s0 - r0 + q0 (zeros for patches outside [0, nwtot) and rows outside the
 * buffer), conjugated when cj (the GEMM path's conj(Y)); PR_ROWS rows per thread, their samples loaded before
 * any is stored */
template <typename T, typename I>
__global__ void patch_rows_cut(sl_patch_dims dd, prcp v, pstride st, int cj, const T *__restrict__ tab,
                               const T *__restrict__ y, T *__restrict__ x)
{
  const pdims<I> d = in_type<I>(dd);
  const I sW = (I)st.W, sq0 = (I)st.q0s, sw1 = (I)st.w1s;
  const T *t0 = tab + d.tap, *t1 = t0 + d.nwtot * d.nwin0;
  const I len = d.nw1 * d.nwin1, nrows = d.A * d.nw0 * d.nwin0;
  for (I row0 = blockIdx.y * PR_ROWS; row0 < nrows; row0 += gridDim.y * PR_ROWS) {
    bool in[PR_ROWS];
    T tw[PR_ROWS];
    const T *yr[PR_ROWS];
    T *xr[PR_ROWS];
#pragma unroll
    for (int j = 0; j < PR_ROWS; j++) {
      I f = row0 + j < nrows ? row0 + j : nrows - 1;
      const I q0 = divmod<I>(f, d.nwin0, v.nwin0), w0 = divmod<I>(f, d.nw0, v.nw0), a = f;
      const I W = d.p0 + w0, r = W * d.s0 - d.r0 + q0;
      in[j] = W >= 0 && W < d.nwtot && r >= 0 && r < d.n0;
      tw[j] = in[j] ? t0[W * d.nwin0 + q0] : ops<T>::zero();
      yr[j] = y + (a * d.n0 + (in[j] ? r : 0)) * d.n1;
      xr[j] = x + (a * d.nw0 + w0) * sW + q0 * sq0;
    }
    for (I e = blockIdx.x * blockDim.x + threadIdx.x; e < len; e += gridDim.x * blockDim.x) {
      const I w1 = udiv<I>(e, d.nwin1, v.nwin1), q1 = e - w1 * d.nwin1, at = w1 * d.s1 + q1, to = w1 * sw1 + q1;
      const T t = t1[w1 * d.nwin1 + q1];
      T val[PR_ROWS];
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++) val[j] = in[j] ? yr[j][at] : ops<T>::zero();
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++)
        if (row0 + j < nrows) {
          const T u = in[j] ? ops<T>::mul(ops<T>::mul(tw[j], t), val[j]) : ops<T>::zero();
          xr[j][to] = cj ? ops<T>::conj(u) : u;
        }
    }
  }
}

/* The GEMM path's model side over the last two axes (B = C = 1): block row (a, w0, j0) of the model, a thread per
 * (w1, j1) of it, PR_ROWS rows per thread: X[((a nw0 + w0) nw1 + w1) K + j0 nop1 + j1] = the model's value
 * (forward), or the model = conj(X) there (adjoint, back = 1) */
template <typename T, typename I>
__global__ void patch_rows_move(sl_patch_dims dd, prcp v, int back, T *__restrict__ model, T *__restrict__ X)
{
  const pdims<I> d = in_type<I>(dd);
  const I len = d.nw1 * d.nop1, nrows = d.A * d.nw0 * d.nop0, K = d.nop0 * d.nop1;
  for (I row0 = blockIdx.y * PR_ROWS; row0 < nrows; row0 += gridDim.y * PR_ROWS) {
    I xo[PR_ROWS];
#pragma unroll
    for (int j = 0; j < PR_ROWS; j++) {
      I f = row0 + j < nrows ? row0 + j : nrows - 1;
      const I j0 = divmod<I>(f, d.nop0, v.nop0); /* f: the patch row a nw0 + w0 */
      xo[j] = f * d.nw1 * K + j0 * d.nop1;
    }
    for (I e = blockIdx.x * blockDim.x + threadIdx.x; e < len; e += gridDim.x * blockDim.x) {
      const I w1 = udiv<I>(e, d.nop1, v.nop1), at = w1 * K + e - w1 * d.nop1;
      T val[PR_ROWS];
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++)
        val[j] = row0 + j < nrows ? (back ? X[xo[j] + at] : model[(row0 + j) * len + e]) : ops<T>::zero();
#pragma unroll
      for (int j = 0; j < PR_ROWS; j++)
        if (row0 + j < nrows) {
          if (back) model[(row0 + j) * len + e] = ops<T>::conj(val[j]);
          else X[xo[j] + at] = val[j];
        }
    }
  }
}

/* A grid of block rows over rows (at most 65535) and blocks along a row of n, about the usual block count */
static dim3 row_grid(int64_t rows, int64_t n)
{
  const unsigned gy = (unsigned)(rows < 1 ? 1 : rows < 65535 ? rows : 65535), gx0 = sl_cuda_grid(n);
  return dim3((int64_t)gx0 * gy > 65535 * 8 ? (65535u * 8 + gy - 1) / gy : gx0, gy);
}

extern "C" int64_t kernel_cuda_patch_work(const sl_patch_dims *d, size_t el)
{
  if (d->ident || kernel_cuda_patch_fused_fits(d, el)) return 0;
  return (d->nop0 * d->nop1 + d->nwin0 * d->nwin1) * d->A * d->B * d->nw0 * d->nw1 * d->C;
}

/* M's product on the gathered columns: forward Y (Q x P) = M X, adjoint conj(X) (K x P) = M^T conj(Y). M
 * row-major (Q x K) is column-major K x Q (ld K), hence op_T forward and op_N adjoint. */
static cublasStatus_t patch_product(sl_dtype dt, int adjoint, int64_t K, int64_t Q, int64_t P, const void *tables, void *X,
                                    void *Y, cublasHandle_t h)
{
  const int64_t m = adjoint ? K : Q, k = adjoint ? Q : K;
  return sl_cublas_gemms(h, dt, adjoint ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, m, P, k, tables, K, 0,
                         adjoint ? Y : X, k, 0, adjoint ? X : Y, m, 0, 1);
}

/* Windows along one axis with C trailing elements (traces), M dense: window w's model block (K x C, row-major)
 * and its data (Q x C) are column-major C x K and C x Q matrices, so one strided batched GEMM over the windows
 * (a, w) reads (forward: Y_w^T = X_w^T M^T) or writes (adjoint: X_w^T = Y_w^T conj(M)) the model in place; the
 * windows' data Y (a, w, q, c) is what window_add sums and window_cut cuts out. (M row-major Q x K is
 * column-major K x Q: op N forward, op C, the conjugate transpose of that, adjoint.) */
static cublasStatus_t window_products(sl_dtype dt, int adjoint, int64_t K, int64_t Q, int64_t C, int64_t nb, const void *M,
                                      void *model, void *Y, cublasHandle_t h)
{
  const int64_t n = adjoint ? K : Q, k = adjoint ? Q : K;
  return sl_cublas_gemms(h, dt, CUBLAS_OP_N, adjoint ? CUBLAS_OP_C : CUBLAS_OP_N, C, n, k, adjoint ? Y : model, C,
                         k * C, M, K, 0, adjoint ? model : Y, C, n * C, nb);
}

/* The batched window products pay from 16 traces (on the H100, against the gather and one GEMM: 0.8 of their
 * time at 16 traces, 0.5 from 32; 1.1-2.3x their time at 4-8) */
static bool window_gemms(const sl_patch_dims *d)
{
  return !d->ident && sl_patch_one_axis(d) && d->C >= 16;
}

/* The launches of one call in the element type T and the index type I: the windows along one axis or the
 * patches with M the identity in one pass; otherwise the gather into X (Y, adjoint), the product, and the
 * overlap-add from Y (the scatter from X). */
template <typename T, typename I>
static int patch_run(sl_dtype dt, int adjoint, const sl_patch_dims *d, const T *tab, T *in, T *out, T *X, T *Y,
                     cublasHandle_t h, cudaStream_t s)
{
  const int64_t K = d->nop0 * d->nop1, Q = d->nwin0 * d->nwin1, P = d->A * d->B * d->nw0 * d->nw1 * d->C;
  const unsigned gm = sl_cuda_grid(sl_patch_model_size(d)), gd = sl_cuda_grid(sl_patch_data_size(d)), gw = sl_cuda_grid(Q * P);
  const int T_ = SL_CUDA_THREADS;
  const prcp v = reciprocals(d);
  const bool wg = window_gemms(d);
  if (wg || (d->ident && sl_patch_one_axis(d))) { /* windows along one axis: rows of the grid over a */
    const int64_t inner = adjoint ? d->nw0 * d->nwin0 * d->C : d->n0 * d->C;
    const int64_t arows = (d->A + PR_ROWS - 1) / PR_ROWS; /* PR_ROWS values of a per thread */
    const unsigned gy = (unsigned)(arows < 65535 ? arows : 65535), gx0 = sl_cuda_grid(inner);
    const unsigned gx = (int64_t)gx0 * gy > 65535 * 8 ? (65535u * 8 + gy - 1) / gy : gx0; /* about the usual block count */
    /* with M dense: the windows' products into Y, then summed into the data; the adjoint cuts the windows into Y
     * first and writes the model from them */
    if (wg && !adjoint && window_products(dt, 0, K, Q, d->C, d->A * d->nw0, tab, in, Y, h) != CUBLAS_STATUS_SUCCESS)
      return cudaErrorUnknown;
    if (!adjoint) window_add<T, I><<<dim3(gx, gy), T_, 0, s>>>(*d, v, tab, wg ? Y : in, out);
    else window_cut<T, I><<<dim3(gx, gy), T_, 0, s>>>(*d, v, tab, in, wg ? Y : out);
    if (wg && adjoint && window_products(dt, 1, K, Q, d->C, d->A * d->nw0, tab, out, Y, h) != CUBLAS_STATUS_SUCCESS)
      return cudaErrorUnknown;
  } else if (d->B == 1 && d->C == 1 && !sl_patch_one_axis(d)) { /* patches over the last two axes: by rows */
    /* (the row-batched kernels: a block row per PR_ROWS rows) with M the identity on the model itself; with M
     * dense the model gathered as X (the adjoint: scattered back from it) and the data cut into Y (the forward:
     * summed from it) around the product */
    const pstride st = d->ident ? patch_model_strides(d) : patch_column_strides(d);
    const dim3 gm_ = row_grid((d->A * d->nw0 * d->nop0 + PR_ROWS - 1) / PR_ROWS, d->nw1 * d->nop1);
    if (adjoint) {
      const dim3 g = row_grid((d->A * d->nw0 * d->nwin0 + PR_ROWS - 1) / PR_ROWS, d->nw1 * d->nwin1);
      patch_rows_cut<T, I><<<g, T_, 0, s>>>(*d, v, st, !d->ident, tab, in, d->ident ? out : Y);
      if (!d->ident) {
        if (patch_product(dt, 1, K, Q, P, tab, X, Y, h) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
        patch_rows_move<T, I><<<gm_, T_, 0, s>>>(*d, v, 1, out, X);
      }
    } else {
      if (!d->ident) {
        patch_rows_move<T, I><<<gm_, T_, 0, s>>>(*d, v, 0, in, X);
        if (patch_product(dt, 0, K, Q, P, tab, X, Y, h) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
      }
      const T *src = d->ident ? in : Y;
      if (2 * d->s0 >= d->nwin0 && 2 * d->s1 >= d->nwin1)
        patch_rows_add2<T, I><<<row_grid((d->A * d->n0 + PR_ROWS - 1) / PR_ROWS, d->n1), T_, 0, s>>>(*d, v, st, tab, src, out);
      else patch_rows_add<T, I><<<row_grid(d->A * d->n0, d->n1), T_, 0, s>>>(*d, v, st, tab, src, out);
    }
  } else if (d->ident) { /* the patches are the model: one pass, no GEMM */
    if (!adjoint) patch_overlap_add<T, I, true><<<gd, T_, 0, s>>>(*d, v, tab, in, out);
    else patch_cut<T, I><<<gm, T_, 0, s>>>(*d, v, tab, in, out);
  } else {
    /* windows along the last axis (C = 1): the model block is X itself (window p's coefficients at p K), so the
     * product reads (forward) or writes (adjoint) the model in place and only the adjoint's conjugation remains */
    const bool direct = sl_patch_one_axis(d) && d->C == 1;
    if (direct) X = adjoint ? out : in;
    if (!adjoint && !direct) patch_columns<T, I><<<gm, T_, 0, s>>>(*d, v, 0, in, X);
    else if (adjoint) patch_windows<T, I><<<gw, T_, 0, s>>>(*d, v, tab, in, Y);
    if (patch_product(dt, adjoint, K, Q, P, tab, X, Y, h) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
    if (!adjoint) patch_overlap_add<T, I, false><<<gd, T_, 0, s>>>(*d, v, tab, Y, out);
    else if (!direct || sl_dtype_is_complex(dt)) patch_columns<T, I><<<gm, T_, 0, s>>>(*d, v, 1, out, X); /* in place when direct */
  }
  return cudaGetLastError();
}

extern "C" int kernel_cuda_patch_gemm(sl_dtype dt, int adjoint, const sl_patch_dims *d, const void *tables, const void *in,
                                      void *out, void *work, void *handle, void *stream)
{
  const int64_t K = d->nop0 * d->nop1, Q = d->nwin0 * d->nwin1, P = d->A * d->B * d->nw0 * d->nw1 * d->C;
  cudaStream_t s = (cudaStream_t)stream;
  cublasHandle_t h = (cublasHandle_t)handle;
  const size_t el = sl_dtype_size(dt);
  if (P == 0) /* no patch: the data is zeros, as on the CPUs */
    return adjoint || d->acc ? cudaSuccess : cudaMemsetAsync(out, 0, (size_t)sl_patch_data_size(d) * el, s);
  if (kernel_cuda_patch_fused_fits(d, el)) return kernel_cuda_patch_fused(dt, adjoint, d, tables, in, out, stream);
  if (cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  char *X = (char *)work, *Y = X ? X + (size_t)(K * P) * el : NULL; /* no work space: M the identity */
  /* 32-bit indices when every index (and a grid stride past it) stays below 2^31 */
  int64_t most = sl_patch_model_size(d) > sl_patch_data_size(d) ? sl_patch_model_size(d) : sl_patch_data_size(d);
  if (Q * P > most) most = Q * P;
  if (K * P > most) most = K * P;
  int narrow = most + (d->r0 > 0 ? d->r0 : 0) + d->nwtot * d->nwin0 < ((int64_t)1 << 30), rc = cudaSuccess;
#define L_(U)                                                                                                    \
  rc = narrow ? patch_run<U, int32_t>(dt, adjoint, d, (const U *)tables, (U *)in, (U *)out, (U *)X, (U *)Y, h, s)    \
              : patch_run<U, int64_t>(dt, adjoint, d, (const U *)tables, (U *)in, (U *)out, (U *)X, (U *)Y, h, s)
  SL_CUDA_DISPATCH(dt, L_);
#undef L_
  return rc;
}
