/* The solvers' scalar steps on the GPU: one thread runs the step of solvers/solver_prog.h (the same source as
 * the host's) on the device copies of the state and of the reduction results. */
#include <cuda_runtime.h>

#include "solvers/solver_prog.h"

struct prog_bufs {
  double *v[SL_PROG_MAXBUF];
};

__global__ void prog_k(int p, prog_bufs b, sl_prog_arg a) { sl_prog_run(p, b.v, a); }

extern "C" int kernel_cuda_prog(int p, double *const *v, int n, sl_prog_arg a, void *s)
{
  prog_bufs b = {};
  for (int i = 0; i < n && i < SL_PROG_MAXBUF; i++) b.v[i] = v[i];
  prog_k<<<1, 1, 0, (cudaStream_t)s>>>(p, b, a);
  return (int)cudaGetLastError();
}
