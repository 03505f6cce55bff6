/* CUDA Patch2D with a dense matrix per patch in one kernel per way, for patches over the last two axes (B = C = 1)
 * with M small enough to stay in shared memory (nwin0 nwin1 <= 64, nop0 nop1 <= 64): the same semantics as
 * kernel_patch.h, without the work space and the passes over it of kernel_patch.cu's gather, GEMM and
 * overlap-add. A block takes tiles of TP patches side by side along the second patch axis (one outer index a,
 * one patch row w0), M (its conjugate for the adjoint) loaded once per block for all its tiles, the next
 * tile's input copied into shared memory (cp.async) while the block writes out this one's results:
 *   forward: the tile's model coefficients (nop0 runs of np nop1 elements), the TP patches' data (Q x TP)
 *     computed, each value tapered and added into the data with an atomic add (the data is zeroed first unless
 *     acc; a sample covered by several patches gets their sum in no set order, so its last bits may differ from
 *     run to run);
 *   adjoint: the tile's data (nwin0 rows of np runs of nwin1 samples) tapered in place, the model coefficients
 *     (K x TP) computed the same way and written once.
 * The products run on the tensor cores for float64 (DMMA m8n8k4: each warp 16 rows of the product by the tile's
 * patches) and on the CUDA cores for the other dtypes (an 8 x RP block per thread). A bigger M keeps the GEMM
 * path. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "kernel_cuda_ops.cuh"
#include "kernel_patch.h"

#define FUSED_QG 8                          /* threads per block: FUSED_QG row groups x FUSED_PG patch groups */
#define FUSED_PG 16
#define FUSED_THREADS (FUSED_QG * FUSED_PG)
#define FUSED_RQ 8                          /* rows of M per thread: FUSED_QG FUSED_RQ = 64 rows at most */
#define FUSED_ROWS (FUSED_QG * FUSED_RQ)    /* M's rows (columns, adjoint) padded to this in shared memory */
/* The float64 forward runs 256 threads a block (eight warps: four blocks of 16 rows of the product by two halves
 * of the tile's patches, at most 3 blocks per SM), the rest FUSED_THREADS (H100, 64 traces of 512^2 / one
 * 4096^2 image, nwin 8: forward 312 against 358 us, the adjoint 393 against 346 us with 256) */
template <typename T, bool ADJ> __host__ __device__ constexpr int fused_threads()
{
  return std::is_same<T, double>::value && !ADJ ? 2 * FUSED_THREADS : FUSED_THREADS;
}

__device__ static void atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ static void atomic_add(double *p, double v) { atomicAdd(p, v); }
__device__ static void atomic_add(cuFloatComplex *p, cuFloatComplex v)
{
  atomicAdd(&p->x, v.x);
  atomicAdd(&p->y, v.y);
}
__device__ static void atomic_add(cuDoubleComplex *p, cuDoubleComplex v)
{
  atomicAdd(&p->x, v.x);
  atomicAdd(&p->y, v.y);
}

/* Patches per thread along a tile (RP; TP = FUSED_PG RP patches per tile): the most of 4, 3 and 2 that pads the
 * second axis by no more than a tenth over the least padding of the three (more patches per thread, fewer loads
 * from shared memory per product). */
static int fused_rp(const sl_patch_dims *d)
{
  int64_t pad[5] = {0}, least = INT64_MAX;
  for (int rp = 2; rp <= 4; rp++) {
    const int64_t tp = FUSED_PG * rp;
    pad[rp] = (d->nw1 + tp - 1) / tp * tp;
    if (pad[rp] < least) least = pad[rp];
  }
  for (int rp = 4; rp > 2; rp--)
    if ((double)pad[rp] <= 1.1 * (double)least) return rp;
  return 2;
}

/* Elements after a tile row's TP patches (the CUDA cores' layout): 16 bytes, against bank conflicts while the
 * tile is filled. */
__host__ __device__ static constexpr int fused_pad(size_t el) { return el >= 16 ? 1 : (int)(16 / el); }

/* Shared memory of a block: M (its conjugate, adjoint) padded to FUSED_ROWS along the rows a thread block
 * computes, and the tile: one row of TP patches and the pad per model coefficient (data sample, adjoint). */
static size_t fused_smem(const sl_patch_dims *d, int adjoint, size_t el)
{
  const int64_t inner = adjoint ? d->nwin0 * d->nwin1 : d->nop0 * d->nop1;
  return (size_t)(inner * (FUSED_ROWS + FUSED_PG * fused_rp(d) + fused_pad(el))) * el;
}

/* M at most FUSED_ROWS x FUSED_ROWS and a block's shared memory at most FUSED_SMEM_MAX, what every device the
 * library is built for allows (sm_86 and sm_89 99 KB): complex128 with M above 48 x 48 or so keeps the GEMM path.
 * (The float64 layout, fused_smem_of, takes at most 68 KB.) */
#define FUSED_SMEM_MAX (96 * 1024)
extern "C" int kernel_cuda_patch_fused_fits(const sl_patch_dims *d, size_t el)
{
  return !d->ident && d->B == 1 && d->C == 1 && !sl_patch_one_axis(d) && d->nw1 >= 8 && d->nwin0 * d->nwin1 <= FUSED_ROWS &&
         d->nop0 * d->nop1 <= FUSED_ROWS && fused_smem(d, 0, el) <= FUSED_SMEM_MAX && fused_smem(d, 1, el) <= FUSED_SMEM_MAX;
}

/* n / d for 0 <= n < 2^20 and 0 < d < 2^10 through a float product (inv = 1 / d): exact in that range */
__device__ static int small_div(int n, float inv) { return (int)(((float)n + 0.5f) * inv); }

/* Asynchronous copies from global to shared memory (sm_80 and later), so that a tile's loads run while the
 * block writes out the results of the one before: N bytes (one element, or two float64), then the group of a
 * tile's copies closed, then waiting until at most n groups are in flight. */
template <int N> __device__ static void copy_bytes_async(void *dst, const void *src)
{
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  if (N == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"(N) : "memory");
}
__device__ static void copy_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/* (a memory clobber: the compiler keeps this thread's reads of its own copies after the wait) */
template <int n> __device__ static void copy_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(n) : "memory"); }

/* The threads of a block as FUSED_QG x FUSED_PG (row group tr, patch group tc): a warp 8 row groups x 4 patch
 * groups, whose loads of M and of the tile each read consecutive values (one shared-memory wavefront). */
__device__ static int group_row(int tid) { return tid % FUSED_QG; }
__device__ static int group_col(int tid) { return tid / FUSED_QG; }

/* acc[i][j] = sum_k A[k][tr + FUSED_QG i] B[k][tc + FUSED_PG j], A with rows of FUSED_ROWS, B of ldb */
template <typename T, int RP>
__device__ static void tile_product(const T *A, const T *B, int n, int ldb, int tr, int tc, T (&acc)[FUSED_RQ][RP])
{
#pragma unroll
  for (int i = 0; i < FUSED_RQ; i++)
#pragma unroll
    for (int j = 0; j < RP; j++) acc[i][j] = ops<T>::zero();
  A += tr;
  B += tc;
#pragma unroll 2
  for (int k = 0; k < n; k++, A += FUSED_ROWS, B += ldb) {
    T m[FUSED_RQ], v[RP];
#pragma unroll
    for (int i = 0; i < FUSED_RQ; i++) m[i] = A[FUSED_QG * i];
#pragma unroll
    for (int j = 0; j < RP; j++) v[j] = B[FUSED_PG * j];
#pragma unroll
    for (int i = 0; i < FUSED_RQ; i++)
#pragma unroll
      for (int j = 0; j < RP; j++) acc[i][j] = ops<T>::add(acc[i][j], ops<T>::mul(m[i], v[j]));
  }
}

/* What both kernels read from the dims and the tables: M's rows Q and columns K, the tapers T0 and T1 after M,
 * and this thread's row group tr and patch group tc. */
template <typename T> struct fused_view {
  int Q, K, tr, tc;
  const T *t0, *t1;
};
template <typename T> __device__ static fused_view<T> view_of(const sl_patch_dims &d, const T *tab)
{
  fused_view<T> v;
  v.Q = (int)(d.nwin0 * d.nwin1);
  v.K = (int)(d.nop0 * d.nop1);
  v.tr = group_row((int)threadIdx.x);
  v.tc = group_col((int)threadIdx.x);
  v.t0 = tab + v.Q * v.K;
  v.t1 = v.t0 + d.nwtot * d.nwin0;
  return v;
}

/* M into shared memory in rows of FUSED_ROWS, zeros after each row's values: transposed for the forward
 * (dst[k][q] = M[q][k]), conjugated for the adjoint (dst[q][k] = conj(M[q][k])) */
template <typename T> __device__ static void load_m(T *dst, const T *M, int Q, int K, bool adjoint)
{
  const int rows = adjoint ? Q : K, cols = adjoint ? K : Q;
  for (int e = (int)threadIdx.x; e < rows * FUSED_ROWS; e += (int)blockDim.x) {
    const int r = e / FUSED_ROWS, c = e - r * FUSED_ROWS;
    dst[e] = c >= cols ? ops<T>::zero() : adjoint ? ops<T>::conj(M[r * K + c]) : M[c * K + r];
  }
}

/* The tile t of a grid-stride loop: its outer index a, patch row w0, first patch w1b along the second axis and
 * how many patches it holds (np <= TP). */
struct tile {
  int64_t a, w0, w1b;
  int np;
};
__device__ static tile tile_of(const sl_patch_dims &d, int64_t t, int TP)
{
  const int64_t per = (d.nw1 + TP - 1) / TP, aw = t / per;
  tile r;
  r.w1b = (t - aw * per) * TP;
  r.a = aw / d.nw0;
  r.w0 = aw - r.a * d.nw0;
  r.np = (int)(d.nw1 - r.w1b < TP ? d.nw1 - r.w1b : TP);
  return r;
}

/* Where the tile holds inner index k (model coefficient, forward; data sample, adjoint) of patch p: [k][p] in rows
 * of ld for the CUDA cores, [p][k] in rows of ld for DMMA (a patch's values contiguous, as in the model) */
struct tile_at {
  int ld;
  bool pk;
  __device__ int operator()(int k, int p) const { return pk ? p * ld + k : k * ld + p; }
};

/* V consecutive values of a tile row (V = 2: one patch's pair, copied as 16 bytes) into the tile, or zeros */
template <typename T, int V> __device__ static void fetch_values(T *to, const T *from, bool live)
{
  if (live) copy_bytes_async<V * (int)sizeof(T)>(to, from);
  else
#pragma unroll
    for (int c = 0; c < V; c++) to[c] = ops<T>::zero();
}

/* forward: tile t's model coefficients into the tile, read as nop0 runs of np nop1, zeros after them, V values
 * at a time (pairs in 16-byte copies where the layout is [p][k], nop1 is even and the runs are 16-byte aligned) */
template <typename T, int TP, int V>
__device__ static void fetch_model_by(const sl_patch_dims &d, const T *xp, int np, T *S, tile_at at)
{
  const int nop0 = (int)d.nop0, nop1 = (int)d.nop1, run = np * nop1;
  const float inv1 = 1.0f / (float)nop1;
  const int64_t L = d.nw1 * d.nop1;
  for (int j0 = 0; j0 < nop0; j0++)
    for (int r = V * (int)threadIdx.x; r < TP * nop1; r += V * (int)blockDim.x) {
      const int p = small_div(r, inv1), j1 = r - p * nop1; /* V = 2: j1 even, the pair is one patch's */
      fetch_values<T, V>(S + at(j0 * nop1 + j1, p), xp + j0 * L + r, r < run);
    }
}
template <typename T, int TP>
__device__ static void fetch_model(const sl_patch_dims &d, const T *x, T *S, tile_at at, int64_t t)
{
  const tile g = tile_of(d, t, TP);
  const T *xp = x + (g.a * d.nw0 + g.w0) * d.nop0 * d.nw1 * d.nop1 + g.w1b * d.nop1;
  if constexpr (sizeof(T) == 8)
    if (at.pk && d.nop1 % 2 == 0 && ((uintptr_t)xp & 15) == 0) return fetch_model_by<T, TP, 2>(d, xp, g.np, S, at);
  fetch_model_by<T, TP, 1>(d, xp, g.np, S, at);
}

/* adjoint: tile t's data into the tile (taper = 0), or tapered in place once this thread's copies landed (taper
 * = 1, the same walk, so that each thread tapers what it copied): nwin0 rows of np runs of nwin1 samples s1 apart,
 * zeros for rows outside the buffer and patches outside [0, nwtot); V samples at a time (V = 2: nwin1 and s1
 * even, a pair is one patch's and stays aligned; 16-byte copies) */
template <typename T, int TP, int V>
__device__ static void fetch_data_by(const sl_patch_dims &d, const fused_view<T> &v, const T *y, const tile &g, T *S,
                                     tile_at at, bool taper)
{
  const int nwin0 = (int)d.nwin0, nwin1 = (int)d.nwin1, run = g.np * nwin1;
  const float inv1 = 1.0f / (float)nwin1;
  const int64_t W = d.p0 + g.w0;
  const bool live = W >= 0 && W < d.nwtot;
  for (int q0 = 0; q0 < nwin0; q0++) {
    const int64_t row = W * d.s0 - d.r0 + q0;
    const bool in = live && row >= 0 && row < d.n0;
    const T *yr = y + (g.a * d.n0 + (in ? row : 0)) * d.n1 + g.w1b * d.s1;
    const T *tt = v.t1 + g.w1b * nwin1;
    const T tw = in ? v.t0[W * d.nwin0 + q0] : ops<T>::zero();
    for (int r = V * (int)threadIdx.x; r < TP * nwin1; r += V * (int)blockDim.x) {
      const int p = small_div(r, inv1), q1 = r - p * nwin1;
      T *to = S + at(q0 * nwin1 + q1, p);
      if (!taper) fetch_values<T, V>(to, yr + p * d.s1 + q1, in && r < run);
      else if (in && r < run)
#pragma unroll
        for (int c = 0; c < V; c++) to[c] = ops<T>::mul(ops<T>::mul(tw, tt[r + c]), to[c]);
    }
  }
}
template <typename T, int TP>
__device__ static void fetch_data(const sl_patch_dims &d, const fused_view<T> &v, const T *y, T *S, tile_at at, int64_t t,
                                  bool taper)
{
  const tile g = tile_of(d, t, TP);
  /* pairs: every row's start has the buffer's alignment (n1 even; the tile's first sample w1b s1 even) */
  if constexpr (sizeof(T) == 8)
    if (at.pk && d.nwin1 % 2 == 0 && d.s1 % 2 == 0 && d.n1 % 2 == 0 && ((uintptr_t)y & 15) == 0)
      return fetch_data_by<T, TP, 2>(d, v, y, g, S, at, taper);
  fetch_data_by<T, TP, 1>(d, v, y, g, S, at, taper);
}

/* forward: y[a, W s0 - r0 + q0, w1 s1 + q1] += T0[W][q0] T1[w1][q1] val[c], row q (q0 nwin1 + q1) of the tile's
 * patches p = p0 + c pstep (c < NC, those below np), none for patches outside [0, nwtot) */
template <typename T, int NC>
__device__ static void add_row(const sl_patch_dims &d, const fused_view<T> &v, const tile &g, int q, int p0, int pstep,
                               const T (&val)[NC], T *y)
{
  const int nwin1 = (int)d.nwin1, q0 = small_div(q, 1.0f / (float)nwin1), q1 = q - q0 * nwin1;
  const int64_t W = d.p0 + g.w0, r = W * d.s0 - d.r0 + q0;
  if (W < 0 || W >= d.nwtot || q >= v.Q || r < 0 || r >= d.n0) return;
  const T tw = v.t0[W * d.nwin0 + q0];
  T *yr = y + (g.a * d.n0 + r) * d.n1 + g.w1b * d.s1 + q1;
  const T *tt = v.t1 + g.w1b * nwin1 + q1;
#pragma unroll
  for (int c = 0; c < NC; c++) {
    const int p = p0 + c * pstep;
    if (p < g.np) atomic_add(yr + p * d.s1, ops<T>::mul(ops<T>::mul(tw, tt[p * nwin1]), val[c]));
  }
}

/* adjoint: x[a, w0, j0, w1, j1] = val[c], coefficient k (j0 nop1 + j1) of the tile's patches p = p0 + c pstep */
template <typename T, int NC>
__device__ static void store_row(const sl_patch_dims &d, const fused_view<T> &v, const tile &g, int k, int p0, int pstep,
                                 const T (&val)[NC], T *x)
{
  const int nop1 = (int)d.nop1, j0 = small_div(k, 1.0f / (float)nop1);
  if (k >= v.K) return;
  const int64_t L = d.nw1 * d.nop1;
  T *xk = x + (g.a * d.nw0 + g.w0) * d.nop0 * L + j0 * L + g.w1b * nop1 + (k - j0 * nop1);
#pragma unroll
  for (int c = 0; c < NC; c++) {
    const int p = p0 + c * pstep;
    if (p < g.np) xk[p * nop1] = val[c];
  }
}

/* The results of one row of the tile's product (q forward, k adjoint) out: added into the data or stored */
template <bool ADJ, typename T, int NC>
__device__ static void row_out(const sl_patch_dims &d, const fused_view<T> &v, const tile &g, int m, int p0, int pstep,
                               const T (&val)[NC], T *out)
{
  if (ADJ) store_row<T, NC>(d, v, g, m, p0, pstep, val, out);
  else add_row<T, NC>(d, v, g, m, p0, pstep, val, out);
}

/* Float64 products on the tensor cores (DMMA, m8n8k4: A 8 x 4 by rows, B 4 x 8 by columns, one value of each per
 * lane, C 8 x 8 two values per lane): warp w takes rows [16 (w mod 4), + 16) of the product and, with H parts of the
 * tile's patches (H = 2: 256 threads), the patch columns of part w / 4. A is
 * M (its conjugate transpose, adjoint) as [m][k] and B the tile as [p][k], both in rows of ld = 4 mod 16
 * (conflict-free fragment loads) with zeros from n up to n4, a multiple of 4. */
template <int TP, int H> struct dmma_acc {
  double c[2][TP / 8 / H][2];
};
template <int TP, int H>
__device__ static void dmma_product(const double *A, const double *B, int n4, int ld, int rows, dmma_acc<TP, H> &acc)
{
  constexpr int NT = TP / 8 / H; /* columns of 8 patches per warp: warp w takes the patch part w / 4 */
  const int lane = (int)threadIdx.x & 31, w = ((int)threadIdx.x >> 5) & 3, h = (int)threadIdx.x >> 7;
#pragma unroll
  for (int mt = 0; mt < 2; mt++)
#pragma unroll
    for (int nt = 0; nt < NT; nt++) acc.c[mt][nt][0] = acc.c[mt][nt][1] = 0.0;
  if (16 * w >= rows) return; /* this warp's rows are padding */
  const double *a = A + (16 * w + (lane >> 2)) * ld + (lane & 3), *b = B + (8 * NT * h + (lane >> 2)) * ld + (lane & 3);
  for (int k0 = 0; k0 < n4; k0 += 4, a += 4, b += 4) {
    const double a0 = a[0], a1 = a[8 * ld];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
      const double bv = b[8 * nt * ld];
      sl_dmma(acc.c[0][nt], a0, bv);
      sl_dmma(acc.c[1][nt], a1, bv);
    }
  }
}

/* M (its conjugate transpose, adjoint) as DMMA's A: [m][k] in rows of lda, zeros past rows x n */
template <typename T>
__device__ static void load_a(T *dst, const T *M, int Q, int K, bool adjoint, int lda)
{
  const int rows = adjoint ? K : Q, n = adjoint ? Q : K;
  for (int e = (int)threadIdx.x; e < FUSED_ROWS * lda; e += (int)blockDim.x) {
    const int m = e / lda, c = e - m * lda;
    dst[e] = m >= rows || c >= n ? ops<T>::zero() : adjoint ? ops<T>::conj(M[c * K + m]) : M[m * K + c];
  }
}

/* The shared memory of a block for elements of type T: the CUDA cores' layout (M in rows of FUSED_ROWS, the tile
 * in rows of TP and a pad), or with DMMA (float64) M as [m][k] in 64 rows of dmma_ld(n) and the tile as [p][k] in
 * TP rows of dmma_ld(n). */
__host__ __device__ static int dmma_ld(int n) { return (n + 15) / 16 * 16 + 4; }
template <typename T> static size_t fused_smem_of(const sl_patch_dims *d, int adjoint)
{
  const int64_t n = adjoint ? d->nwin0 * d->nwin1 : d->nop0 * d->nop1, tp = FUSED_PG * fused_rp(d);
  if (std::is_same<T, double>::value) return (size_t)((FUSED_ROWS + tp) * dmma_ld((int)n)) * sizeof(T);
  return fused_smem(d, adjoint, sizeof(T));
}

/* One way (ADJ: the adjoint) over the tiles of a grid-stride loop:
 *   forward y[a, W s0 - r0 + q0, w1 s1 + q1] += T0[W][q0] T1[w1][q1] (M x_patch)[q0 nwin1 + q1], the tile S the
 *     patches' model coefficients;
 *   adjoint x[a, w0, j0, w1, j1] = sum_q conj(M[q][j0 nop1 + j1]) T0[W][q0] T1[w1][q1] y[a, W s0 - r0 + q0, w1 s1 + q1],
 *     the tile S the patches' tapered data.
 * Float64 runs the products on the tensor cores (Ms = M as [m][k], S as [p][k]), the other types on the CUDA
 * cores (Ms[k][m], S[k][p], each thread an FUSED_RQ x RP block). Called only with patches (P > 0). */
template <typename T, int RP, bool ADJ>
__global__ void __launch_bounds__(fused_threads<T, ADJ>(), fused_threads<T, ADJ>() > FUSED_THREADS ? 3 : sizeof(T) > 8 ? 2 : 4)
    patch_fused(sl_patch_dims d, const T *tab, const T *in, T *out)
{
  extern __shared__ __align__(16) unsigned char fused_smem_raw[];
  constexpr bool TC = std::is_same<T, double>::value;
  constexpr int TP = FUSED_PG * RP;
  const fused_view<T> v = view_of(d, tab);
  const int n = ADJ ? v.Q : v.K, rows = ADJ ? v.K : v.Q, n4 = (n + 3) / 4 * 4, lda = TC ? dmma_ld(n) : FUSED_ROWS;
  const tile_at at = {TC ? lda : TP + fused_pad(sizeof(T)), TC};
  T *Ms = (T *)fused_smem_raw, *S = Ms + (TC ? FUSED_ROWS * lda : n * FUSED_ROWS);
  if (TC) {
    load_a(Ms, tab, v.Q, v.K, ADJ, lda);
    for (int e = (int)threadIdx.x; e < TP * (n4 - n); e += (int)blockDim.x) /* each patch's values n..n4 */
      S[at(n + e % (n4 - n), e / (n4 - n))] = ops<T>::zero();
  } else {
    load_m(Ms, tab, v.Q, v.K, ADJ);
  }
  const int64_t tiles = d.A * d.nw0 * ((d.nw1 + TP - 1) / TP);
  auto fetch = [&](int64_t t) {
    if (ADJ) fetch_data<T, TP>(d, v, in, S, at, t, false);
    else fetch_model<T, TP>(d, in, S, at, t);
    copy_commit();
  };
  if (blockIdx.x < tiles) fetch(blockIdx.x);
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const tile g = tile_of(d, t, TP);
    copy_wait<0>();
    if (ADJ) fetch_data<T, TP>(d, v, in, S, at, t, true); /* this thread's own copies landed: tapered in place */
    __syncthreads(); /* tile t (every thread's copies) and M in shared memory */
    if constexpr (TC) {
      constexpr int H = fused_threads<T, ADJ>() / FUSED_THREADS, NT = TP / 8 / H;
      static_assert(TP % (8 * H) == 0, "the tile's patch columns split evenly over the warps' parts");
      dmma_acc<TP, H> acc;
      dmma_product<TP, H>(Ms, S, n4, lda, rows, acc);
      __syncthreads();                                  /* the tile read: */
      if (t + gridDim.x < tiles) fetch(t + gridDim.x); /* the next one's copies run beside this one's results */
      const int lane = (int)threadIdx.x & 31, m = 16 * (((int)threadIdx.x >> 5) & 3) + (lane >> 2);
      const int pb = 8 * NT * ((int)threadIdx.x >> 7) + 2 * (lane & 3);
#pragma unroll
      for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++) row_out<ADJ>(d, v, g, m + 8 * mt, pb + 8 * nt, 1, acc.c[mt][nt], out);
    } else {
      T acc[FUSED_RQ][RP];
      tile_product<T, RP>(Ms, S, n, at.ld, v.tr, v.tc, acc);
      __syncthreads();
      if (t + gridDim.x < tiles) fetch(t + gridDim.x);
#pragma unroll
      for (int i = 0; i < FUSED_RQ; i++) row_out<ADJ>(d, v, g, v.tr + FUSED_QG * i, v.tc, FUSED_PG, acc[i], out);
    }
  }
}

/* One launch in the element type T with RP patches per thread: a grid of resident blocks (each loads M once). */
template <typename T, int RP>
static cudaError_t fused_launch(int adjoint, const sl_patch_dims *d, const T *tab, const T *in, T *out, cudaStream_t s)
{
  const size_t smem = fused_smem_of<T>(d, adjoint);
  const int64_t tiles = d->A * d->nw0 * ((d->nw1 + FUSED_PG * RP - 1) / (FUSED_PG * RP));
  int dev = 0, sms = 0, per = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess) return e;
  void (*k)(sl_patch_dims, const T *, const T *, T *) = adjoint ? patch_fused<T, RP, true> : patch_fused<T, RP, false>;
  const int threads = adjoint ? fused_threads<T, true>() : fused_threads<T, false>();
  /* the same bound for every call, so that calls from several host threads cannot undo each other's */
  e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, FUSED_SMEM_MAX);
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, threads, smem);
  if (e != cudaSuccess) return e;
  if (per < 1) return cudaErrorInvalidConfiguration;
  const int64_t most = (int64_t)sms * per;
  const unsigned grid = (unsigned)(tiles < most ? tiles : most);
  if (!adjoint && !d->acc && (e = cudaMemsetAsync(out, 0, (size_t)sl_patch_data_size(d) * sizeof(T), s)) != cudaSuccess)
    return e; /* the forward adds into zeros */
  k<<<grid, threads, smem, s>>>(*d, tab, in, out);
  return cudaGetLastError();
}

extern "C" int kernel_cuda_patch_fused(sl_dtype dt, int adjoint, const sl_patch_dims *d, const void *tables, const void *in,
                                       void *out, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int rc = cudaSuccess;
  const int rp = fused_rp(d);
#define L_(U)                                                                                                       \
  rc = rp == 4   ? fused_launch<U, 4>(adjoint, d, (const U *)tables, (const U *)in, (U *)out, s)                      \
       : rp == 3 ? fused_launch<U, 3>(adjoint, d, (const U *)tables, (const U *)in, (U *)out, s)                      \
                 : fused_launch<U, 2>(adjoint, d, (const U *)tables, (const U *)in, (U *)out, s)
  SL_CUDA_DISPATCH(dt, L_);
#undef L_
  return rc;
}
