/* CUDA stencil sums (semantics of kernel_stencil.c). When a task reads one input segment (the usual case
 * on a GPU, where blocks are large chunks) a tiled kernel takes the row indices from the launch geometry and
 * sums the interior weights on direct loads, leaving only edge rows to the generic code; otherwise the
 * generic kernel runs one thread per real component of the output, reading the input through the segment
 * table of the task's chunks. Index arithmetic in 32 bits when the block allows it. */
#include <cuda_runtime.h>

#include "codelets/kernel_stencil.h"

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

/* Generic: one thread per output component, any segment table. */
template <typename R, typename I> __global__ void stencil_k(st_plan p, st_input in, int64_t s, int64_t e, R *y)
{
  I total = (I)((e - s) * p.ncomp);
  for (I q = blockIdx.x * (I)blockDim.x + threadIdx.x; q < total; q += (I)gridDim.x * blockDim.x) {
    I f = (I)s + q / (I)p.ncomp;
    int comp = (int)(q % (I)p.ncomp);
    y[q] = (R)st_value<R, I>(p, in, f, comp);
  }
}

/* Tiled, one input segment: the block seen as rows x L (L the last axis); the launch geometry gives the
 * column (the row index of a last-axis term) and the row (a term along axis k reads row / (stride / L),
 * modulo its extent unless it is the first axis). A thread whose rows are interior for every term (two rows
 * from its block's ends, four from the global ends) sums the interior weights on direct loads; the others,
 * the edges, take the generic path. NC reals per element. */
template <typename R, int NC>
__global__ void stencil_tiled_k(st_plan p, st_input in, int64_t s, int64_t e, R *y, int L, int row0, int nrows)
{
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= L) return;
  const R *x = (const R *)in.ptr[0];
  int start = (int)in.start[0];
  for (int rr = blockIdx.y * blockDim.y + threadIdx.y; rr < nrows; rr += gridDim.y * blockDim.y) {
    int row = row0 + rr, f = row * L + col;
    if (f < s || f >= e) continue;
    int fast = 1;
#pragma unroll
    for (int k = 0; k < ST_MAX_TERMS; k++) {
      if (k >= p.nterms) break;
      const st_term &t = p.t[k];
      int r = t.stride == 1 ? col : (t.stride == L ? row : row / (int)(t.stride / L));
      if (r >= (int)t.nloc) r %= (int)t.nloc; /* not the first axis */
      if (r < 2 || r >= (int)t.nloc - 2 || !st_interior(&t, (int64_t)r + t.off)) fast = 0;
    }
#pragma unroll
    for (int comp = 0; comp < NC; comp++) {
      double acc = 0.0;
      if (fast) {
#pragma unroll
        for (int k = 0; k < ST_MAX_TERMS; k++) {
          if (k >= p.nterms) break;
          int st = (int)p.t[k].stride;
#pragma unroll
          for (int i = 0; i < 5; i++)
            if (p.cint[k][i] != 0.0) acc += p.cint[k][i] * (double)x[(f + (i - 2) * st - start) * NC + comp];
        }
      } else {
        acc = st_value<R, int>(p, in, f, comp);
      }
      y[(int64_t)(f - s) * NC + comp] = (R)acc;
    }
  }
}

template <typename R>
static void launch(const st_plan *p, const st_input *in, int64_t s, int64_t e, R *y, unsigned g, cudaStream_t st)
{
  int64_t n = 1;
  for (int d = 0; d < p->ndim; d++) n *= p->ldims[d];
  int64_t L = p->ldims[p->ndim - 1];
  if (in->nseg == 1 && n * p->ncomp < ((int64_t)1 << 30) && !p->generic) {
    int row0 = (int)(s / L), nrows = (int)((e - 1) / L + 1 - row0);
    dim3 block(32, 8), grid((unsigned)((L + 31) / 32), (unsigned)((nrows + 7) / 8 > 65535 ? 65535 : (nrows + 7) / 8));
    if (p->ncomp == 1) stencil_tiled_k<R, 1><<<grid, block, 0, st>>>(*p, *in, s, e, y, (int)L, row0, nrows);
    else stencil_tiled_k<R, 2><<<grid, block, 0, st>>>(*p, *in, s, e, y, (int)L, row0, nrows);
  } else if (n * p->ncomp < ((int64_t)1 << 30)) {
    stencil_k<R, int><<<g, 256, 0, st>>>(*p, *in, s, e, y);
  } else {
    stencil_k<R, int64_t><<<g, 256, 0, st>>>(*p, *in, s, e, y);
  }
}

extern "C" int kernel_cuda_stencil(const st_plan *p, int single, const st_input *in, int64_t s, int64_t e, void *y,
                                   void *stream)
{
  int64_t total = (e - s) * p->ncomp;
  if (total <= 0) return cudaSuccess;
  int64_t blocks = (total + 255) / 256;
  unsigned g = (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
  if (single) launch<float>(p, in, s, e, (float *)y, g, (cudaStream_t)stream);
  else launch<double>(p, in, s, e, (double *)y, g, (cudaStream_t)stream);
  return cudaGetLastError();
}
