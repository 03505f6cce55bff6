/* CUDA stencil sums: one thread per real component of the output, the input read through the segment
 * table of the task's chunks (semantics of kernel_stencil.c). */
#include <cuda_runtime.h>

#include "codelets/kernel_stencil.h"

template <typename R>
__device__ static R st_load(const st_plan &p, const st_input &in, const st_term &t, int64_t f, int64_t r, int dr, int comp)
{
  int64_t rr = r + dr, nc = p.ncomp;
  if (rr >= 0 && rr < t.nloc) {
    int64_t fe = f + dr * t.stride;
    for (int i = 0; i < in.nseg; i++)
      if (fe >= in.start[i] && fe < in.start[i] + in.len[i]) return ((const R *)in.ptr[i])[(fe - in.start[i]) * nc + comp];
    return R(0);
  }
  if (!t.ghosts) return R(0);
  int64_t od = f / (t.stride * t.nloc), inn = f % t.stride;
  if (rr < 0) return ((const R *)in.glo)[((od * p.wlo + (p.wlo + rr)) * t.stride + inn) * nc + comp];
  return ((const R *)in.ghi)[((od * p.whi + (rr - t.nloc)) * t.stride + inn) * nc + comp];
}

template <typename R> __global__ void stencil_k(st_plan p, st_input in, int64_t s, int64_t e, R *y)
{
  int64_t total = (e - s) * p.ncomp;
  for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < total; q += (int64_t)gridDim.x * blockDim.x) {
    int64_t f = s + q / p.ncomp;
    int comp = (int)(q % p.ncomp);
    double acc = 0.0;
    for (int k = 0; k < p.nterms; k++) {
      const st_term &t = p.t[k];
      int64_t r = (f / t.stride) % t.nloc;
      double c[5];
      if (st_interior(&t, r + t.off))
        for (int i = 0; i < 5; i++) c[i] = p.cint[k][i];
      else
        st_coeffs(&t, p.adjoint, r + t.off, c);
      for (int dr = -2; dr <= 2; dr++)
        if (c[dr + 2] != 0.0) acc += c[dr + 2] * (double)st_load<R>(p, in, t, f, r, dr, comp);
    }
    y[q] = (R)acc;
  }
}

extern "C" int kernel_cuda_stencil(const st_plan *p, int single, const st_input *in, int64_t s, int64_t e, void *y,
                                   void *stream)
{
  int64_t total = (e - s) * p->ncomp;
  if (total <= 0) return cudaSuccess;
  int64_t blocks = (total + 255) / 256;
  unsigned g = (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
  if (single) stencil_k<float><<<g, 256, 0, (cudaStream_t)stream>>>(*p, *in, s, e, (float *)y);
  else stencil_k<double><<<g, 256, 0, (cudaStream_t)stream>>>(*p, *in, s, e, (double *)y);
  return cudaGetLastError();
}
