/* bench_ops: MatrixMult (a dense n x n float64 block per rank) through the operator beside a plain CBLAS
 * call on the same data in the same run: gemv (nrhs = 1, forward and adjoint) and gemm (nrhs = 64).
 *   mpirun -n P bench_ops [--sizes n1,n2,...] [--gemm n1,n2,...] [--reps R]
 * --summa: SUMMA on n x n matrices (the most square grid of the ranks) beside each rank's own block product
 * in one CBLAS call, and BlockDiag(MatrixMult) matvec + rmatvec.
 * --csr: sl_op_csr on an n x n float64 band of 2 b + 1 entries per row per rank, forward and adjoint, beside a
 * plain CSR row loop and scatter loop on the same arrays (one thread) in the same run; GB/s counts the entries,
 * their column indices and x and y once per direction.
 * --gemm: MatrixMult with nrhs = n (one square DGEMM per rank) beside cuBLAS DGEMM on device buffers (the
 * GPU ceiling; run with STARLOPS_CODELET_WHERE=cuda).
 * Time: submission to completion (sl_wait), median of R after a warm-up, slowest rank; GFLOP/s counts
 * 2 n^2 nrhs per rank. Ceiling: cblas_dgemv / cblas_dgemm on the same buffers (STARLOPS_CHUNK_BYTES is
 * raised so that x and y are one chunk each, as the ceiling's are). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "starlops.h"
#ifdef SL_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif
#include "bench_util.h"

/* Ceiling of the square products: cuBLAS DGEMM on device buffers (0 when unavailable). */
static double cublas_dgemm_time(int64_t n, int reps)
{
#ifdef SL_HAVE_CUDA
  return bench_time_cublas_dgemm(n, n, n, 1, reps);
#else
  (void)n;
  (void)reps;
  return 0;
#endif
}

/* SUMMA (Y = A X, all n x n, the most square grid) beside this rank's own block product done by one plain
 * CBLAS dgemm (nb x K times K x mb) in the same run: efficiency = that time / SUMMA's time. And the block
 * diagonal MatrixMult's matvec + rmatvec throughput. */
static void summa_section(const int64_t *sizes, int nsizes, int reps)
{
  int P = sl_size(), pr = 1;
  for (int q = 1; q * q <= P; q++)
    if (P % q == 0) pr = q;
  int pc = P / pr;
  if (sl_rank() == 0)
    printf("\n| op | n | grid | time (ms) | GFLOP/s (all ranks) | local dgemm ms | efficiency |\n|---|---|---|---|---|---|---|\n");
  for (int si = 0; si < nsizes; si++) {
    int64_t n = sizes[si], e[8];
    sl_op_summa_block(n, n, n, pr, pc, sl_rank(), e);
    int64_t nb = e[1], ka = e[3], kx = e[5], mb = e[7];
    double *A = malloc(sizeof(double) * (size_t)(nb * ka + 1)), t[32], tl[32];
    for (int64_t i = 0; i < nb * ka; i++) A[i] = (double)((i * 7) % 13) * 0.1 - 0.6;
    sl_op *S = NULL;
    sl_array *x = NULL, *y = NULL;
    if (sl_op_matmul_summa(&S, A, n, n, n, pr, pc, SL_FLOAT64) || sl_op_create_domain(S, &x) || sl_op_create_range(S, &y)) {
      fprintf(stderr, "bench_ops: %s\n", sl_last_error());
      return;
    }
    free(A);
    sl_array_fill(x, SL_REAL(1.0));
    for (int r = -1; r < reps; r++) {
      sl_wait();
      MPI_Barrier(sl_comm());
      double t0 = bench_now();
      sl_op_apply(S, SL_FORWARD, x, y);
      sl_wait();
      if (r >= 0) t[r] = bench_now() - t0;
    }
    /* the ceiling: this rank's block product (nb x n times n x mb) in one CBLAS call */
    double *a = calloc((size_t)(nb * n + 1), sizeof *a), *b = calloc((size_t)(n * mb + 1), sizeof *b), *c = calloc((size_t)(nb * mb + 1), sizeof *c);
    for (int r = 0; r < reps; r++) {
      double t0 = bench_now();
      if (nb * mb > 0) cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, (int)mb, (int)n, 1.0, a, (int)n, b, (int)mb, 0.0, c, (int)mb);
      tl[r] = bench_now() - t0;
    }
    free(a), free(b), free(c);
    (void)kx;
    double tt[2] = {bench_median(t, reps), bench_median(tl, reps)}, tm[2];
    MPI_Allreduce(tt, tm, 2, MPI_DOUBLE, MPI_MAX, sl_comm());
    double flops = 2.0 * (double)n * (double)n * (double)n;
    if (sl_rank() == 0)
      printf("| SUMMA | %lld | %d x %d | %.3f | %.2f | %.3f | %.2f |\n", (long long)n, pr, pc, 1e3 * tm[0], flops / tm[0] / 1e9,
             1e3 * tm[1], tm[1] / tm[0]);
    sl_array_destroy(&x);
    sl_array_destroy(&y);
    sl_op_destroy(&S);
    /* BlockDiag(MatrixMult): one n/P x n block... per rank, matvec + rmatvec */
    int64_t nr = n / P > 0 ? n / P : 1;
    double *B = malloc(sizeof(double) * (size_t)(nr * n));
    for (int64_t i = 0; i < nr * n; i++) B[i] = (double)((i * 5) % 11) * 0.1 - 0.5;
    sl_op *M = NULL;
    if (sl_op_matrix(&M, B, nr, n, 1, SL_FLOAT64) || sl_op_create_domain(M, &x) || sl_op_create_range(M, &y)) return;
    free(B);
    sl_array_fill(x, SL_REAL(1.0));
    for (int r = -1; r < reps; r++) {
      sl_wait();
      MPI_Barrier(sl_comm());
      double t0 = bench_now();
      sl_op_apply(M, SL_FORWARD, x, y);
      sl_op_apply(M, SL_ADJOINT, y, x);
      sl_wait();
      if (r >= 0) t[r] = bench_now() - t0;
    }
    double tb = bench_median(t, reps), tbm;
    MPI_Allreduce(&tb, &tbm, 1, MPI_DOUBLE, MPI_MAX, sl_comm());
    double fb = 4.0 * (double)nr * (double)n * P, bytes = 2.0 * 8.0 * (double)nr * (double)n * P;
    if (sl_rank() == 0)
      printf("| BlockDiag(MatrixMult) matvec + rmatvec, %lld x %lld per rank | %lld | %d ranks | %.3f | %.2f | %.1f GB/s (matrix read twice) | - |\n",
             (long long)nr, (long long)n, (long long)n, P, 1e3 * tbm, fb / tbm / 1e9, bytes / tbm / 1e9);
    sl_array_destroy(&x);
    sl_array_destroy(&y);
    sl_op_destroy(&M);
  }
}

/* MatrixMult with nrhs = n (a square DGEMM) through the operator, beside cuBLAS DGEMM on the GPU. */
static void gemm_section(const int64_t *sizes, int nsizes, int reps)
{
  if (sl_rank() == 0)
    printf("\n| op | n | time (ms) | GFLOP/s | cuBLAS DGEMM GFLOP/s | ratio |\n|---|---|---|---|---|---|\n");
  (void)0;
  for (int si = 0; si < nsizes; si++) {
    int64_t n = sizes[si];
    double *A = malloc(sizeof(double) * (size_t)(n * n)), t[32];
    for (int64_t i = 0; i < n * n; i++) A[i] = (double)((i * 7) % 13) * 0.1 - 0.6;
    sl_op *M = NULL;
    sl_array *x = NULL, *y = NULL;
    if (sl_op_matrix(&M, A, n, n, n, SL_FLOAT64) || sl_op_create_domain(M, &x) || sl_op_create_range(M, &y)) {
      fprintf(stderr, "bench_ops: %s\n", sl_last_error());
      return;
    }
    free(A);
    sl_array_fill(x, SL_REAL(1.0));
    for (int r = -1; r < reps; r++) {
      sl_wait();
      double t0 = bench_now();
      sl_op_apply(M, SL_FORWARD, x, y);
      sl_wait();
      if (r >= 0) t[r] = bench_now() - t0;
    }
    double ts = bench_median(t, reps), tc = cublas_dgemm_time(n, reps), flops = 2.0 * (double)n * (double)n * (double)n;
    if (sl_rank() == 0)
      printf("| gemm (MatrixMult, nrhs = n) | %lld | %.3f | %.1f | %.1f | %.2f |\n", (long long)n, 1e3 * ts, flops / ts / 1e9,
             tc > 0 ? flops / tc / 1e9 : 0.0, tc > 0 ? tc / ts : 0.0);
    sl_array_destroy(&x);
    sl_array_destroy(&y);
    sl_op_destroy(&M);
  }
}

/* CSR: a band of 2 b + 1 entries per row, forward + adjoint through the operator beside the plain loops. */
static void csr_section(const int64_t *sizes, int nsizes, int64_t b, int reps)
{
  if (sl_rank() == 0)
    printf("\n| op | n | entries per row | time (ms) | GB/s | plain loop GB/s | ratio |\n|---|---|---|---|---|---|---|\n");
  for (int si = 0; si < nsizes; si++) {
    int64_t n = sizes[si], nnz = 0;
    int64_t *rp = malloc(sizeof(int64_t) * (size_t)(n + 1)), *ci = malloc(sizeof(int64_t) * (size_t)(n * (2 * b + 1)));
    double *v = malloc(sizeof(double) * (size_t)(n * (2 * b + 1))), *hx = malloc(sizeof(double) * (size_t)n),
           *hy = malloc(sizeof(double) * (size_t)n);
    rp[0] = 0;
    for (int64_t i = 0; i < n; i++) {
      for (int64_t j = i - b; j <= i + b; j++)
        if (j >= 0 && j < n) ci[nnz] = j, v[nnz++] = 1.0 / (double)(1 + (i + 2 * j) % 7);
      rp[i + 1] = nnz;
      hx[i] = 1.0;
    }
    sl_op *C = NULL;
    sl_array *x = NULL, *y = NULL;
    if (sl_op_csr(&C, n, n, rp, ci, v, SL_FLOAT64) || sl_op_create_domain(C, &x) || sl_op_create_range(C, &y)) {
      fprintf(stderr, "bench_ops: %s\n", sl_last_error());
      return;
    }
    sl_array_fill(x, SL_REAL(1.0));
    double ts = bench_time_fwd_adj(C, x, y, reps), t[32];
    for (int r = -1; r < reps; r++) {
      double t0 = bench_now();
      for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) s += v[p] * hx[ci[p]];
        hy[i] = s;
      }
      memset(hx, 0, sizeof(double) * (size_t)n);
      for (int64_t i = 0; i < n; i++)
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) hx[ci[p]] += v[p] * hy[i];
      if (r >= 0) t[r] = bench_now() - t0;
    }
    double tc = bench_slowest(bench_median(t, reps)), bytes = 2.0 * ((double)nnz * 16.0 + 2.0 * 8.0 * (double)n);
    if (sl_rank() == 0)
      printf("| CSR forward + adjoint | %lld | %lld | %.3f | %.2f | %.2f | %.2f |\n", (long long)n, (long long)(2 * b + 1),
             1e3 * ts, bytes / ts / 1e9, bytes / tc / 1e9, tc / ts);
    free(rp), free(ci), free(v), free(hx), free(hy);
    sl_array_destroy(&x);
    sl_array_destroy(&y);
    sl_op_destroy(&C);
  }
}

int main(int argc, char **argv)
{
  int64_t sizes[16] = {1000, 2000, 4000, 8000};
  int nsizes = 4, reps = 7, ngemm = 0, nsumma = 0;
  int64_t gemm[8], summa[8], csr[8], ncsr = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *p = strtok(argv[++i], ","); p && nsizes < 16; p = strtok(NULL, ",")) sizes[nsizes++] = atoll(p);
    } else if (!strcmp(argv[i], "--gemm") && i + 1 < argc) {
      for (char *p = strtok(argv[++i], ","); p && ngemm < 8; p = strtok(NULL, ",")) gemm[ngemm++] = atoll(p);
    } else if (!strcmp(argv[i], "--summa") && i + 1 < argc) {
      for (char *p = strtok(argv[++i], ","); p && nsumma < 8; p = strtok(NULL, ",")) summa[nsumma++] = atoll(p);
    } else if (!strcmp(argv[i], "--csr") && i + 1 < argc) {
      ncsr = bench_parse_list(argv[++i], csr, 8);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_ops [--sizes n1,n2,...] [--gemm n1,n2,...] [--summa n1,n2,...] [--csr n1,n2,...] [--reps R]\n");
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
  if (ngemm > 0) gemm_section(gemm, ngemm, reps);
  if (ncsr > 0) csr_section(csr, (int)ncsr, 8, reps);
  if (nsumma > 0) summa_section(summa, nsumma, reps);
  fflush(stdout);
  sl_finalize();
  return 0;
}
