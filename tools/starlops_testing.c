/* starlops_testing: one driver for every operator, in the manner of Chameleon's testing drivers.
 *   mpirun -n P starlops_testing -o OP [-n N] [-m M] [--nrhs K] [--dtype D] [--niter R] [--check] [--backend B]
 * OP: identity, diagonal, matrix, vstack, hstack, csr, restriction, fredholm1 (or "all"). N and M are the
 * global row and column counts (split over ranks as pylops-mpi does); D is float32, float64, complex64 or
 * complex128; B sets STARLOPS_COMM. Prints one table row per operator: time of forward and adjoint
 * applications (median of R, submission to completion), GFLOP/s where the operator has a flop count, and
 * with --check the dot test's relative error against the dtype's tolerance. Exits 1 if a check fails. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starlops.h"
#include "../bench/bench_util.h"

static int64_t share(int64_t n, int P, int r) { return n / P + (r < n % P); }

/* A block of n elements of dt with values in [-1, 1) from a fixed seed. */
static void *random_block(sl_dtype dt, int64_t n, unsigned seed)
{
  int c = (dt == SL_COMPLEX64 || dt == SL_COMPLEX128) ? 2 : 1, single = dt == SL_FLOAT32 || dt == SL_COMPLEX64;
  void *p = malloc(sl_dtype_size(dt) * (size_t)(n > 0 ? n : 1));
  uint64_t s = 0x2545f4914f6cdd1dULL ^ seed;
  for (int64_t i = 0; p && i < n * c; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    double v = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    if (single) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
  }
  return p;
}

/* Builds operator name; *flops: per forward application, summed over ranks (0 if not counted). */
static int build(const char *name, int64_t N, int64_t M, int64_t K, sl_dtype dt, sl_op **op, double *flops)
{
  int P = sl_size(), me = sl_rank();
  int64_t nr = share(N, P, me), nc = share(M, P, me);
  int cf = (dt == SL_COMPLEX64 || dt == SL_COMPLEX128) ? 4 : 1;
  int rc = SL_SUCCESS;
  *flops = 0;
  if (!strcmp(name, "identity") || !strcmp(name, "diagonal")) {
    int64_t dims[1] = {N};
    sl_array *d = NULL;
    rc = sl_array_create(&d, 1, dims, dt, NULL);
    if (rc == SL_SUCCESS) rc = sl_array_fill(d, (sl_cscalar){0.5, dt >= SL_COMPLEX64 ? 0.25 : 0});
    if (rc == SL_SUCCESS) rc = !strcmp(name, "identity") ? sl_op_identity(op, d) : sl_op_diagonal(op, d);
    sl_array_destroy(&d);
    *flops = (double)N * cf;
  } else if (!strcmp(name, "matrix") || !strcmp(name, "vstack") || !strcmp(name, "hstack")) {
    int64_t r = nr, c = nc;
    if (!strcmp(name, "vstack")) c = M;
    if (!strcmp(name, "hstack")) r = N;
    void *a = random_block(dt, r * c, 7u + (unsigned)me);
    rc = !strcmp(name, "matrix") ? sl_op_matrix(op, a, r, c, K, dt)
         : !strcmp(name, "vstack") ? sl_op_vstack_matrix(op, a, r, c, K, dt) : sl_op_hstack_matrix(op, a, r, c, K, dt);
    free(a);
    double tot = 0, mine = 2.0 * (double)r * (double)c * (double)K * cf;
    MPI_Allreduce(&mine, &tot, 1, MPI_DOUBLE, MPI_SUM, sl_comm());
    *flops = tot;
  } else if (!strcmp(name, "csr")) { /* a local tridiagonal-like block: entries j = i - 1, i, i + 1 inside nc */
    int64_t *rp = malloc(sizeof(int64_t) * (size_t)(nr + 1)), *ci = malloc(sizeof(int64_t) * (size_t)(3 * nr + 1));
    rp[0] = 0;
    for (int64_t i = 0; i < nr; i++) {
      rp[i + 1] = rp[i];
      for (int64_t j = i - 1; j <= i + 1; j++)
        if (j >= 0 && j < nc) ci[rp[i + 1]++] = j;
    }
    void *v = random_block(dt, rp[nr], 11u + (unsigned)me);
    rc = sl_op_csr(op, nr, nc, rp, ci, v, dt);
    double mine = 2.0 * (double)rp[nr] * cf, tot = 0;
    MPI_Allreduce(&mine, &tot, 1, MPI_DOUBLE, MPI_SUM, sl_comm());
    *flops = tot;
    free(rp);
    free(ci);
    free(v);
  } else if (!strcmp(name, "restriction")) { /* every other element of each rank's block */
    int64_t dims[1] = {M};
    sl_array *like = NULL;
    rc = sl_array_create(&like, 1, dims, dt, NULL);
    int64_t nl = sl_array_local_size(like), m = (nl + 1) / 2;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(m + 1));
    for (int64_t k = 0; k < m; k++) idx[k] = 2 * k;
    if (rc == SL_SUCCESS) rc = sl_op_restriction(op, like, idx, m);
    free(idx);
    sl_array_destroy(&like);
  } else if (!strcmp(name, "fredholm1")) { /* slices of K x K matrices; N slices in all */
    int64_t nsl = share(N, P, me);
    void *g = random_block(dt, nsl * K * K, 13u + (unsigned)me);
    rc = sl_op_fredholm1(op, g, nsl, K, K, K, dt);
    free(g);
    *flops = 2.0 * (double)N * (double)K * (double)K * (double)K * cf;
  } else {
    fprintf(stderr, "starlops_testing: unknown operator '%s'\n", name);
    return SL_E_INVALID;
  }
  return rc;
}

int main(int argc, char **argv)
{
  const char *opname = "all", *dtn = "float64";
  int64_t N = 1000, M = 800, K = 1;
  int niter = 5, check = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc) opname = argv[++i];
    else if (!strcmp(argv[i], "-n") && i + 1 < argc) N = atoll(argv[++i]);
    else if (!strcmp(argv[i], "-m") && i + 1 < argc) M = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--nrhs") && i + 1 < argc) K = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) dtn = argv[++i];
    else if (!strcmp(argv[i], "--niter") && i + 1 < argc) niter = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) setenv("STARLOPS_COMM", argv[++i], 1);
    else if (!strcmp(argv[i], "--check")) check = 1;
    else {
      printf("usage: starlops_testing -o OP|all [-n N] [-m M] [--nrhs K] [--dtype D] [--niter R] [--check] [--backend B]\n");
      return !strcmp(argv[i], "--help") ? 0 : 2;
    }
  }
  sl_dtype dt = !strcmp(dtn, "float32") ? SL_FLOAT32 : !strcmp(dtn, "complex64") ? SL_COMPLEX64
              : !strcmp(dtn, "complex128") ? SL_COMPLEX128 : SL_FLOAT64;
  if (niter < 1) niter = 1;
  if (niter > 64) niter = 64;
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "starlops_testing: sl_init: %s\n", sl_last_error());
    return 1;
  }
  const char *all[] = {"identity", "diagonal", "matrix", "vstack", "hstack", "csr", "restriction", "fredholm1"};
  int nops = strcmp(opname, "all") ? 1 : 8, failed = 0;
  if (sl_rank() == 0) {
    printf("# starlops_testing: %d ranks, %d CPU + %d CUDA workers on rank 0, backend %s\n", sl_size(),
           sl_ncpu_workers(), sl_ncuda_workers(), sl_comm_backend_name());
    printf("| op | rows x cols | dtype | fwd ms | adj ms | GFLOP/s | check |\n|---|---|---|---|---|---|---|\n");
  }
  double tol = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-12;
  for (int k = 0; k < nops; k++) {
    const char *name = nops == 1 ? opname : all[k];
    sl_op *op = NULL;
    double flops = 0;
    if (build(name, N, M, K, dt, &op, &flops) != SL_SUCCESS || !op) {
      if (sl_rank() == 0) printf("| %s | - | %s | - | - | - | BUILD FAILED: %s |\n", name, dtn, sl_last_error());
      failed = 1;
      continue;
    }
    sl_array *x = NULL, *y = NULL;
    sl_op_create_domain(op, &x);
    sl_op_create_range(op, &y);
    sl_array_fill(x, SL_REAL(1.0));
    sl_array_fill(y, SL_REAL(1.0));
    double tf[64], ta[64];
    for (int r = 0; r < niter; r++) {
      MPI_Barrier(sl_comm());
      double t0 = bench_now();
      sl_op_apply(op, SL_FORWARD, x, y);
      sl_wait();
      tf[r] = bench_now() - t0;
      MPI_Barrier(sl_comm());
      t0 = bench_now();
      sl_op_apply(op, SL_ADJOINT, y, x);
      sl_wait();
      ta[r] = bench_now() - t0;
    }
    double t[2] = {bench_median(tf, niter), bench_median(ta, niter)}, tm[2];
    MPI_Allreduce(t, tm, 2, MPI_DOUBLE, MPI_MAX, sl_comm());
    char chk[64] = "-";
    if (check) {
      double err = -1;
      int rc = sl_dottest(op, 3, &err);
      int ok = rc == SL_SUCCESS && err >= 0 && err <= tol;
      snprintf(chk, sizeof chk, "%s (dot test %.1e)", ok ? "ok" : "FAILED", err);
      if (!ok) failed = 1;
    }
    char gf[32] = "-";
    if (flops > 0) snprintf(gf, sizeof gf, "%.2f", flops / tm[0] / 1e9);
    if (sl_rank() == 0)
      printf("| %s | %lld x %lld | %s | %.3f | %.3f | %s | %s |\n", name, (long long)sl_op_nrows(op),
             (long long)sl_op_ncols(op), dtn, 1e3 * tm[0], 1e3 * tm[1], gf, chk);
    sl_array_destroy(&x);
    sl_array_destroy(&y);
    sl_op_destroy(&op);
  }
  fflush(stdout);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, sl_comm());
  sl_finalize();
  return any ? 1 : 0;
}
