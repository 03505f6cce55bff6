/* bench_ops: MatrixMult (a dense n x n float64 block per rank) through the operator beside a plain CBLAS
 * call on the same data in the same run: gemv (nrhs = 1, forward and adjoint) and gemm (nrhs = 64).
 *   mpirun -n P bench_ops [--sizes n1,n2,...] [--reps R]
 * Time: submission to completion (sl_wait), median of R after a warm-up, slowest rank; GFLOP/s counts
 * 2 n^2 nrhs per rank. Ceiling: cblas_dgemv / cblas_dgemm on the same buffers (STARLOPS_CHUNK_BYTES is
 * raised so that x and y are one chunk each, as the ceiling's are). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "starlops.h"
#include "bench_util.h"

int main(int argc, char **argv)
{
  int64_t sizes[16] = {1000, 2000, 4000, 8000};
  int nsizes = 4, reps = 7;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *p = strtok(argv[++i], ","); p && nsizes < 16; p = strtok(NULL, ",")) sizes[nsizes++] = atoll(p);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_ops [--sizes n1,n2,...] [--reps R]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (reps > 32) reps = 32;
  setenv("STARLOPS_CHUNK_BYTES", "17179869184", 0);
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "bench_ops: sl_init: %s\n", sl_last_error());
    return 1;
  }
  int me = sl_rank();
  if (me == 0) {
    printf("# bench_ops: %d ranks, %d CPU + %d CUDA workers on rank 0, float64, median of %d; ceiling = CBLAS on the same data\n",
           sl_size(), sl_ncpu_workers(), sl_ncuda_workers(), reps);
    printf("| op | n | nrhs | time (ms) | GFLOP/s | ceiling GFLOP/s | ratio |\n|---|---|---|---|---|---|---|\n");
  }
  for (int si = 0; si < nsizes; si++) {
    int64_t n = sizes[si];
    double *A = malloc(sizeof(double) * (size_t)(n * n));
    for (int64_t i = 0; i < n * n; i++) A[i] = (double)((i * 7) % 13) * 0.1 - 0.6;
    for (int variant = 0; variant < 3; variant++) {
      int64_t nrhs = variant == 2 ? 64 : 1;
      int adjoint = variant == 1;
      sl_op *M = NULL;
      if (sl_op_matrix(&M, A, n, n, nrhs, SL_FLOAT64) != SL_SUCCESS) {
        fprintf(stderr, "bench_ops: %s\n", sl_last_error());
        return 1;
      }
      sl_array *x = NULL, *y = NULL;
      sl_op_create_domain(M, &x);
      sl_op_create_range(M, &y);
      sl_array_fill(x, SL_REAL(1.0));
      double *hx = malloc(sizeof(double) * (size_t)(n * nrhs)), *hy = malloc(sizeof(double) * (size_t)(n * nrhs));
      for (int64_t i = 0; i < n * nrhs; i++) hx[i] = 1.0;
      double ts[32], tc[32];
      sl_op_apply(M, adjoint ? SL_ADJOINT : SL_FORWARD, x, y); /* warm-up */
      sl_wait();
      for (int r = 0; r < reps; r++) {
        MPI_Barrier(sl_comm());
        double t0 = bench_now();
        sl_op_apply(M, adjoint ? SL_ADJOINT : SL_FORWARD, x, y);
        sl_wait();
        ts[r] = bench_now() - t0;
        t0 = bench_now();
        if (nrhs == 1)
          cblas_dgemv(CblasRowMajor, adjoint ? CblasTrans : CblasNoTrans, (int)n, (int)n, 1.0, A, (int)n, hx, 1, 0.0, hy, 1);
        else
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)nrhs, (int)n, 1.0, A, (int)n, hx,
                      (int)nrhs, 0.0, hy, (int)nrhs);
        tc[r] = bench_now() - t0;
      }
      double t[2] = {bench_median(ts, reps), bench_median(tc, reps)}, tm[2];
      MPI_Reduce(t, tm, 2, MPI_DOUBLE, MPI_MAX, 0, sl_comm());
      double flops = 2.0 * (double)n * (double)n * (double)nrhs;
      if (me == 0)
        printf("| %s | %lld | %lld | %.3f | %.2f | %.2f | %.2f |\n", nrhs > 1 ? "gemm" : (adjoint ? "gemv adjoint" : "gemv"),
               (long long)n, (long long)nrhs, 1e3 * tm[0], flops / tm[0] / 1e9, flops / tm[1] / 1e9, tm[1] / tm[0]);
      free(hx);
      free(hy);
      sl_array_destroy(&x);
      sl_array_destroy(&y);
      sl_op_destroy(&M);
    }
    free(A);
  }
  fflush(stdout);
  sl_finalize();
  return 0;
}
