/* CUDA stencil sums: one thread per real component of the output, the input read through the segment
 * table of the task's chunks (semantics of kernel_stencil.c). Index arithmetic in 32 bits when the block
 * allows it (64-bit divisions dominate the kernel otherwise). */
#include <cuda_runtime.h>

#include "codelets/kernel_stencil.h"

template <typename R, typename I>
__device__ static R st_load(const st_plan &p, const st_input &in, const st_term &t, I f, I r, int dr, int comp)
{
  I rr = r + dr, nc = (I)p.ncomp;
  if (rr >= 0 && rr < (I)t.nloc) {
    I fe = f + (I)dr * (I)t.stride;
    if (in.nseg == 1) return ((const R *)in.ptr[0])[(fe - (I)in.start[0]) * nc + comp];
    for (int i = 0; i < in.nseg; i++)
      if (fe >= (I)in.start[i] && fe < (I)(in.start[i] + in.len[i]))
        return ((const R *)in.ptr[i])[(fe - (I)in.start[i]) * nc + comp];
    return R(0);
  }
  if (!t.ghosts) return R(0);
  I stride = (I)t.stride, od = f / (stride * (I)t.nloc), inn = f % stride;
  if (rr < 0) return ((const R *)in.glo)[((od * p.wlo + (p.wlo + rr)) * stride + inn) * nc + comp];
  return ((const R *)in.ghi)[((od * p.whi + (rr - (I)t.nloc)) * stride + inn) * nc + comp];
}

template <typename R, typename I> __global__ void stencil_k(st_plan p, st_input in, int64_t s, int64_t e, R *y)
{
  I total = (I)((e - s) * p.ncomp);
  for (I q = blockIdx.x * (I)blockDim.x + threadIdx.x; q < total; q += (I)gridDim.x * blockDim.x) {
    I f = (I)s + q / (I)p.ncomp;
    int comp = (int)(q % (I)p.ncomp);
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
    y[q] = (R)acc;
  }
}

template <typename R>
static void launch(const st_plan *p, const st_input *in, int64_t s, int64_t e, R *y, unsigned g, cudaStream_t st)
{
  int64_t n = 1;
  for (int d = 0; d < p->ndim; d++) n *= p->ldims[d];
  if (n * p->ncomp < ((int64_t)1 << 30)) stencil_k<R, int><<<g, 256, 0, st>>>(*p, *in, s, e, y);
  else stencil_k<R, int64_t><<<g, 256, 0, st>>>(*p, *in, s, e, y);
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
