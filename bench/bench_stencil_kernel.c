/* bench_stencil_kernel: the CUDA stencil kernels alone (no task, no StarPU), one apply of the fused 3-D
 * Laplacian on a c^3 block and of the fused 2-D Laplacian on an n^2 block, each in one segment, forward and
 * adjoint, timed with CUDA events beside a device-to-device cudaMemcpy of the same bytes (the operator's time
 * in bench_stencil less this is the task's share).
 *   bench_stencil_kernel [--sizes c1,c2,...] [--sizes2 n1,n2,...] [--reps R]
 * Time: the mean of R applies after two warm-ups; bytes counted: the block read once and written once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "codelets/kernel_stencil.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime.h>

#define CK(call)                                                                                                \
  do {                                                                                                          \
    cudaError_t e_ = (call);                                                                                    \
    if (e_ != cudaSuccess) {                                                                                    \
      fprintf(stderr, "bench_stencil_kernel: %s: %s\n", #call, cudaGetErrorString(e_));                         \
      exit(1);                                                                                                  \
    }                                                                                                           \
  } while (0)

/* The fused Laplacian of centred second derivatives over every axis of a c^nd block. */
static st_plan lap(int nd, int64_t c, int adjoint)
{
  st_plan p;
  memset(&p, 0, sizeof p);
  p.ndim = nd, p.ncomp = 1, p.adjoint = adjoint;
  for (int d = 0; d < nd; d++) p.ldims[d] = c;
  for (int a = 0; a < nd; a++) {
    int64_t st = 1;
    for (int d = a + 1; d < nd; d++) st *= c;
    p.t[p.nterms++] = (st_term){.kind = ST_D2_C, .axis = a, .n = c, .nloc = c, .stride = st, .scale = 1.0};
  }
  st_plan_finish(&p);
  return p;
}

typedef struct {
  cudaStream_t st;
  cudaEvent_t a, b;
  int reps;
} timing;

/* The mean time (ms) of reps applies after two warm-ups: the plan's stencil on x into y, or (p NULL) a copy. */
static float time_ms(const timing *tm, const st_plan *p, double *x, double *y, int64_t n)
{
  st_input in;
  memset(&in, 0, sizeof in);
  in.nseg = 1, in.start[0] = 0, in.len[0] = n, in.ptr[0] = x;
  float sum = 0, ms = 0;
  for (int r = 0; r < tm->reps + 2; r++) {
    CK(cudaEventRecord(tm->a, tm->st));
    if (p) CK((cudaError_t)kernel_cuda_stencil(p, 0, &in, 0, n, y, tm->st));
    else CK(cudaMemcpyAsync(y, x, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice, tm->st));
    CK(cudaEventRecord(tm->b, tm->st));
    CK(cudaEventSynchronize(tm->b));
    CK(cudaEventElapsedTime(&ms, tm->a, tm->b));
    if (r >= 2) sum += ms;
  }
  return sum / (float)tm->reps;
}

int main(int argc, char **argv)
{
  int64_t sizes[2][16] = {{400, 524}, {8000, 12000}};
  int nsizes[2] = {2, 2}, reps = 10;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) nsizes[0] = bench_parse_list(argv[++i], sizes[0], 16);
    else if (!strcmp(argv[i], "--sizes2") && i + 1 < argc) nsizes[1] = bench_parse_list(argv[++i], sizes[1], 16);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_stencil_kernel [--sizes c1,c2,...] [--sizes2 n1,n2,...] [--reps R]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("# bench_stencil_kernel: no GPU\n");
    return 0;
  }
  printf("# bench_stencil_kernel: fused 3-D and 2-D Laplacians, float64, one block, mean of %d applies; "
         "ceiling: cudaMemcpy D2D\n", reps);
  printf("| block | way | time (ms) | GB/s | copy (ms) | ratio to the copy |\n|---|---|---|---|---|---|\n");
  cudaStream_t st;
  cudaEvent_t a, b;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int k = 0; k < 2; k++) /* the 3-D sizes, then the 2-D ones */
    for (int si = 0; si < nsizes[k]; si++) {
      int nd = 3 - k;
      int64_t c = sizes[k][si], n = nd == 3 ? c * c * c : c * c;
      double *x = NULL, *y = NULL;
      CK(cudaMalloc((void **)&x, (size_t)n * sizeof(double)));
      CK(cudaMalloc((void **)&y, (size_t)n * sizeof(double)));
      CK(cudaMemset(x, 0, (size_t)n * sizeof(double)));
      timing tm = {st, a, b, reps};
      float copy = time_ms(&tm, NULL, x, y, n);
      for (int adj = 0; adj < 2; adj++) {
        st_plan p = lap(nd, c, adj);
        float t = time_ms(&tm, &p, x, y, n);
        printf("| %lld^%d | %s | %.3f | %.1f | %.3f | %.2f |\n", (long long)c, nd, adj ? "adjoint" : "forward", t,
               2.0 * 8.0 * (double)n / t * 1e-6, copy, copy / t);
      }
      CK(cudaFree(x));
      CK(cudaFree(y));
    }
  return 0;
}
#else
int main(void)
{
  printf("# bench_stencil_kernel: built without CUDA\n");
  return 0;
}
#endif
