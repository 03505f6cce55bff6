/* bench_stencil_kernel: the CUDA stencil kernels alone (no task, no StarPU), one apply of the fused 3-D
 * Laplacian on a c^3 block and of the fused 2-D Laplacian on an n^2 block, each in one segment, forward and
 * adjoint, timed with CUDA events beside a device-to-device cudaMemcpy of the same bytes (the operator's time
 * in bench_stencil less this is the task's share). --check also applies the generic kernel (one thread per
 * element, 64-bit indices past 2^30 values) to the same input and prints the largest difference relative to
 * its largest output: the fast kernels against it, e.g. on blocks of 2^30 values or more (--sizes 1100).
 *   bench_stencil_kernel [--sizes c1,c2,...] [--sizes2 n1,n2,...] [--reps R] [--check]
 * Time: the mean of R applies after two warm-ups; bytes counted: the block read once and written once. The
 * input repeats a pattern of 2^24 + 7 values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "codelets/kernel_stencil.h"
#ifdef SL_HAVE_CUDA
#include <cublas_v2.h>
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

#define CB(call)                                                                                                \
  do {                                                                                                          \
    if ((call) != CUBLAS_STATUS_SUCCESS) {                                                                      \
      fprintf(stderr, "bench_stencil_kernel: %s failed\n", #call);                                              \
      exit(1);                                                                                                  \
    }                                                                                                           \
  } while (0)

/* x[0 .. n) from a host pattern of m values */
static void fill(double *x, int64_t n)
{
  const int64_t m = ((int64_t)1 << 24) + 7;
  double *h = malloc(sizeof *h * (size_t)m);
  if (!h) exit(1);
  for (int64_t i = 0; i < m; i++) h[i] = (double)((i * 7919) % 1009) / 1009.0 - 0.5;
  for (int64_t o = 0; o < n; o += m)
    CK(cudaMemcpy(x + o, h, sizeof *h * (size_t)(n - o < m ? n - o : m), cudaMemcpyHostToDevice));
  free(h);
}

/* max |a - b| / max |b| over n values (b is overwritten) */
static double rel_diff(cublasHandle_t cb, const double *a, double *b, int64_t n)
{
  int64_t i = 0;
  double bmax = 0, dmax = 0, minus = -1.0;
  CB(cublasIdamax_64(cb, n, b, 1, &i));
  CK(cudaMemcpy(&bmax, b + i - 1, sizeof bmax, cudaMemcpyDeviceToHost));
  CB(cublasDaxpy_64(cb, n, &minus, a, 1, b, 1));
  CB(cublasIdamax_64(cb, n, b, 1, &i));
  CK(cudaMemcpy(&dmax, b + i - 1, sizeof dmax, cudaMemcpyDeviceToHost));
  return bmax != 0 ? fabs(dmax) / fabs(bmax) : fabs(dmax);
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
  int nsizes[2] = {2, 2}, reps = 10, check = 0;
  int64_t zpl[8] = {0}, zrw[4] = {0};
  int nzpl = 1, nzrw = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) nsizes[0] = bench_parse_list(argv[++i], sizes[0], 16);
    else if (!strcmp(argv[i], "--sizes2") && i + 1 < argc) nsizes[1] = bench_parse_list(argv[++i], sizes[1], 16);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--check")) check = 1;
    else if (!strcmp(argv[i], "--zplanes") && i + 1 < argc) nzpl = bench_parse_list(argv[++i], zpl, 8);
    else if (!strcmp(argv[i], "--zrows") && i + 1 < argc) nzrw = bench_parse_list(argv[++i], zrw, 4);
    else {
      fprintf(stderr, "usage: bench_stencil_kernel [--sizes c1,c2,...] [--sizes2 n1,n2,...] [--reps R] [--check] [--zplanes p1,..] [--zrows r1,..]\n");
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
  {
    int clk = 0, bus = 0, l2 = 0;
    struct cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, 0));
    CK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    printf("# %s: %d SMs, L2 %d MB, memory %d kHz x %d bits (peak %.2f TB/s)\n", pr.name, pr.multiProcessorCount,
           l2 >> 20, clk, bus, 2.0 * 1e3 * clk * (bus / 8) * 1e-12);
  }
  printf("| block | way | time (ms) | GB/s | copy (ms) | ratio to the copy |%s\n|---|---|---|---|---|---|%s\n",
         check ? " against the generic kernel |" : "", check ? "---|" : "");
  cublasHandle_t cb = NULL;
  if (check) CB(cublasCreate(&cb));
  cudaStream_t st;
  cudaEvent_t a, b;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int k = 0; k < 2; k++) /* the 3-D sizes, then the 2-D ones */
    for (int si = 0; si < nsizes[k]; si++) {
      int nd = 3 - k;
      int64_t c = sizes[k][si], n = nd == 3 ? c * c * c : c * c;
      double *x = NULL, *y = NULL, *y2 = NULL;
      CK(cudaMalloc((void **)&x, (size_t)n * sizeof(double)));
      CK(cudaMalloc((void **)&y, (size_t)n * sizeof(double)));
      if (check) CK(cudaMalloc((void **)&y2, (size_t)n * sizeof(double)));
      fill(x, n);
      timing tm = {st, a, b, reps};
      float copy = time_ms(&tm, NULL, x, y, n);
      for (int v = 0; v < (nd == 3 ? nzpl * nzrw : 1); v++)
      for (int adj = 0; adj < 2; adj++) {
        st_plan p = lap(nd, c, adj);
        char way[64];
        p.zmarch = (int)zpl[v / nzrw], p.zby = (int)zrw[v % nzrw];
        if (p.zmarch || p.zby) snprintf(way, sizeof way, "%s, %d planes, %d rows", adj ? "adjoint" : "forward", p.zmarch, p.zby);
        else snprintf(way, sizeof way, "%s", adj ? "adjoint" : "forward");
        float t = time_ms(&tm, &p, x, y, n);
        printf("| %lld^%d | %s | %.3f | %.1f | %.3f | %.2f |", (long long)c, nd, way, t,
               2.0 * 8.0 * (double)n / t * 1e-6, copy, copy / t);
        if (check) { /* y holds the last timed apply */
          p.generic = 1;
          tm.reps = 1;
          float tg = time_ms(&tm, &p, x, y2, n);
          tm.reps = reps;
          CK(cudaDeviceSynchronize());
          printf(" %.1e (generic: %.3f ms, %.2f of the copy) |", rel_diff(cb, y, y2, n), tg, copy / tg);
        }
        printf("\n");
        fflush(stdout);
      }
      CK(cudaFree(x));
      CK(cudaFree(y));
      if (y2) CK(cudaFree(y2));
    }
  if (cb) cublasDestroy(cb);
  return 0;
}
#else
int main(void)
{
  printf("# bench_stencil_kernel: built without CUDA\n");
  return 0;
}
#endif
