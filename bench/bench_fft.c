/* bench_fft: the distributed 2-D FFT (sl_op_fft over both axes of an n x n complex128 array split along
 * axis 0), forward + adjoint, with the range split like the domain (two all-to-alls per apply) and along
 * axis 1 (one), beside the library's own 2-D transform of the same n x n array in one process measured in
 * the same run (FFTW, one thread, on the CPU; cuFFT on the GPU when the rank has a CUDA worker; the other ranks
 * wait asleep meanwhile). Rates in
 * GFLOP/s with pylops' count 5 N log2 N per transform; time: median of R after a warm-up, slowest rank. On
 * several ranks a last line per size gives the two all-to-alls of the axis-1 transform alone (sl_op_redistribute
 * from axis 0 to axis 1 and back, the same bytes) and their share of that transform's time.
 *   mpirun -n P bench_fft [--sizes 1024,2048] [--reps 5] */
#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <cufft.h>
#endif

#include "starlops.h"
#include "bench_util.h"

/* Every rank: an MPI_Ibarrier polled with 0.2 ms sleeps, so that the ranks waiting for rank 0's one-core ceiling
 * leave the node's cores and memory to it instead of spinning in a blocking call. */
static void wait_quietly(void)
{
  MPI_Request rq;
  int done = 0;
  if (MPI_Ibarrier(sl_comm(), &rq) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
  while (!done) {
    if (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    if (!done) nanosleep(&(struct timespec){0, 200000}, NULL);
  }
}

static double slowest(double t)
{
  double m = t;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, sl_comm());
  return m;
}

static double time_op(sl_op *op, sl_array *x, sl_array *y, int reps)
{
  double *t = calloc((size_t)reps, sizeof *t);
  for (int r = -1; r < reps; r++) {
    sl_wait();
    MPI_Barrier(sl_comm());
    double t0 = bench_now();
    if (sl_op_apply(op, SL_FORWARD, x, y) != SL_SUCCESS || sl_op_apply(op, SL_ADJOINT, y, x) != SL_SUCCESS) {
      fprintf(stderr, "bench_fft: %s\n", sl_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    sl_wait();
    double dt = slowest(bench_now() - t0);
    if (r >= 0) t[r] = dt;
  }
  double m = bench_median(t, reps);
  free(t);
  return m;
}

/* The library's 2-D transform of n x n in one process, forward + backward, median of reps. */
static double time_raw(int64_t n, int gpu, int reps)
{
  double *t = calloc((size_t)reps, sizeof *t);
  double med = 0;
#ifdef SL_HAVE_CUDA
  if (gpu) {
    cufftDoubleComplex *d = NULL;
    cufftHandle plan;
    cudaEvent_t a, b;
    if (cudaMalloc((void **)&d, sizeof *d * (size_t)(n * n)) != cudaSuccess || cufftPlan2d(&plan, (int)n, (int)n, CUFFT_Z2Z) != CUFFT_SUCCESS) {
      fprintf(stderr, "bench_fft: cuFFT setup failed\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    cudaMemset(d, 0, sizeof *d * (size_t)(n * n));
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int r = -1; r < reps; r++) {
      cudaEventRecord(a, 0);
      cufftExecZ2Z(plan, d, d, CUFFT_FORWARD);
      cufftExecZ2Z(plan, d, d, CUFFT_INVERSE);
      cudaEventRecord(b, 0);
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      if (r >= 0) t[r] = ms * 1e-3;
    }
    cufftDestroy(plan);
    cudaFree(d);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    med = bench_median(t, reps);
    free(t);
    return med;
  }
#endif
  (void)gpu;
  fftw_complex *d = fftw_malloc(sizeof *d * (size_t)(n * n));
  memset(d, 0, sizeof *d * (size_t)(n * n));
  fftw_plan f = fftw_plan_dft_2d((int)n, (int)n, d, d, FFTW_FORWARD, FFTW_MEASURE);
  fftw_plan g = fftw_plan_dft_2d((int)n, (int)n, d, d, FFTW_BACKWARD, FFTW_MEASURE);
  memset(d, 0, sizeof *d * (size_t)(n * n));
  for (int r = -1; r < reps; r++) {
    double t0 = bench_now();
    fftw_execute(f);
    fftw_execute(g);
    if (r >= 0) t[r] = bench_now() - t0;
  }
  fftw_destroy_plan(f);
  fftw_destroy_plan(g);
  fftw_free(d);
  med = bench_median(t, reps);
  free(t);
  return med;
}

int main(int argc, char **argv)
{
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "bench_fft: %s\n", sl_last_error());
    return 1;
  }
  char sizes[256] = "512,1024";
  int reps = 5;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) snprintf(sizes, sizeof sizes, "%s", argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--help")) {
      if (sl_rank() == 0) printf("usage: mpirun -n P bench_fft [--sizes 512,1024] [--reps 5]\n");
      sl_finalize();
      return 0;
    }
  }
  if (reps < 1) reps = 1;
  int me = sl_rank(), gpu = sl_ncuda_workers() > 0;
  if (me == 0) {
    printf("# bench_fft: %d ranks, %d CPU + %d CUDA workers on rank 0, complex128 n x n split along axis 0, forward + adjoint, median of %d\n",
           sl_size(), sl_ncpu_workers(), sl_ncuda_workers(), reps);
    printf("# ceiling: %s 2-D transform of the whole n x n array in one process, forward + backward\n",
           gpu ? "cuFFT" : "FFTW (one thread, FFTW_MEASURE plan)");
    printf("| transform | n | time (ms) | GFLOP/s | ceiling GFLOP/s | ratio |\n|---|---|---|---|---|---|\n");
  }
  for (char *tok = strtok(sizes, ","); tok; tok = strtok(NULL, ",")) {
    int64_t n = atoll(tok), dims[2] = {n, n};
    double flops = 2 * 5.0 * (double)(n * n) * log2((double)(n * n));
    double raw = me == 0 ? time_raw(n, gpu, reps) : 0;
    wait_quietly();
    MPI_Bcast(&raw, 1, MPI_DOUBLE, 0, sl_comm());
    double t_axis1 = 0;
    for (int out = -1; out <= 1; out += 2) {
      sl_array *x = NULL, *y = NULL;
      sl_op *op = NULL;
      if (sl_array_create(&x, 2, dims, SL_COMPLEX128, NULL) != SL_SUCCESS || sl_op_fft(&op, x, 2, NULL, SL_FFT_ORTHO, 0, out) != SL_SUCCESS ||
          sl_op_create_range(op, &y) != SL_SUCCESS || sl_array_fill_random(x, 1) != SL_SUCCESS) {
        fprintf(stderr, "bench_fft: %s\n", sl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      double t = time_op(op, x, y, reps);
      if (out == 1) t_axis1 = t;
      if (me == 0)
        printf("| FFT2D, range split along axis %d | %lld | %.3f | %.2f | %.2f | %.2f |\n", out < 0 ? 0 : out, (long long)n, t * 1e3,
               flops / t * 1e-9, flops / raw * 1e-9, raw / t);
      sl_array_destroy(&x);
      sl_array_destroy(&y);
      sl_op_destroy(&op);
    }
    if (sl_size() > 1) { /* the all-to-alls alone: axis 0 to axis 1 (forward) and back (adjoint) */
      sl_array *x = NULL, *z = NULL;
      sl_op *op = NULL;
      sl_dist d1 = sl_dist_scatter(1);
      if (sl_array_create(&x, 2, dims, SL_COMPLEX128, NULL) != SL_SUCCESS ||
          sl_array_create(&z, 2, dims, SL_COMPLEX128, &d1) != SL_SUCCESS || sl_op_redistribute(&op, x, z) != SL_SUCCESS ||
          sl_array_fill_random(x, 1) != SL_SUCCESS) {
        fprintf(stderr, "bench_fft: %s\n", sl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      double t = time_op(op, x, z, reps);
      if (me == 0)
        printf("# n = %lld: the axis-1 transform's two all-to-alls alone (sl_op_redistribute forward + adjoint): %.3f ms, "
               "%.2f of its time\n", (long long)n, t * 1e3, t / t_axis1);
      sl_array_destroy(&x);
      sl_array_destroy(&z);
      sl_op_destroy(&op);
    }
  }
  sl_finalize();
  return 0;
}
