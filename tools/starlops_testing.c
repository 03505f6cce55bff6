/* starlops_testing: one driver for every operator and solver, in the manner of Chameleon's testing drivers.
 *   mpirun -n P starlops_testing -o OP [-n N] [-m M] [--nrhs K] [--dtype D] [--niter R] [--check]
 *          [--backend B] [--grid PxQ] [--trace DIR] [--in X.npy] [--out Y.npy]
 * OP: identity, diagonal, matrix, vstack, hstack, csr, restriction, fredholm1, first_derivative,
 * second_derivative, laplacian, gradient, blockdiag (BlockDiag[Laplacian, Identity]) (on an N x M array), the solvers cg, cgls, lsqr, ista, fista, or "all"
 * (every operator) and "solvers" (every solver). N and M are the global row and column counts (split over
 * ranks as pylops-mpi does); D is float32, float64, complex64 or complex128; B sets STARLOPS_COMM; DIR
 * traces the run (STARLOPS_TRACE); --grid checks that P x Q equals the rank count (no operator uses a 2-D
 * grid yet); --in reads x (the operator's domain) from a .npy file, --out writes the forward result y.
 * Prints one table row per operator: forward and adjoint times (median of R, submission to completion),
 * GB/s (x and y bytes), GFLOP/s where counted, and with --check the dot test against the dtype's tolerance.
 * Solver rows: the solve's time (R iterations at most), and with --check the solution against the model
 * that made the data (cg, cgls, lsqr) or a decreasing cost (ista, fista). Exits 1 if a check fails. */
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
  } else if (!strcmp(name, "gradient") || !strcmp(name, "blockdiag")) { /* on an N x M array */
    int64_t dims[2] = {N, M};
    sl_array *like = NULL;
    sl_op *parts[2] = {NULL, NULL};
    rc = sl_array_create(&like, 2, dims, dt, NULL);
    if (rc == SL_SUCCESS && name[0] == 'g') rc = sl_op_gradient(op, like, NULL, SL_DERIV_CENTERED, 1);
    if (rc == SL_SUCCESS && name[0] == 'b') { /* BlockDiag[Laplacian, Identity] */
      rc = sl_op_laplacian(&parts[0], like, 2, NULL, NULL, NULL, SL_DERIV_CENTERED, 0);
      if (rc == SL_SUCCESS) rc = sl_op_identity(&parts[1], like);
      if (rc == SL_SUCCESS) rc = sl_op_block_diag(op, 2, parts);
    }
    sl_op_destroy(&parts[0]);
    sl_op_destroy(&parts[1]);
    sl_array_destroy(&like);
  } else if (!strcmp(name, "first_derivative") || !strcmp(name, "second_derivative") || !strcmp(name, "laplacian")) {
    int64_t dims[2] = {N, M};
    sl_array *like = NULL;
    rc = sl_array_create(&like, 2, dims, dt, NULL);
    double smp[2] = {1.0, 0.5};
    if (rc == SL_SUCCESS)
      rc = name[0] == 'f' ? sl_op_first_derivative(op, like, 0, 1.0, SL_DERIV_CENTERED, 5, 1)
           : name[0] == 's' ? sl_op_second_derivative(op, like, 0, 1.0, SL_DERIV_CENTERED, 1)
                            : sl_op_laplacian(op, like, 2, NULL, NULL, smp, SL_DERIV_CENTERED, 0);
    sl_array_destroy(&like);
    *flops = (double)N * (double)M * (name[0] == 'l' ? 12.0 : 8.0) * (cf > 1 ? 2 : 1);
  } else {
    fprintf(stderr, "starlops_testing: unknown operator '%s'\n", name);
    return SL_E_INVALID;
  }
  return rc;
}

/* Runs solver name on a problem with a known answer; prints its row; returns 1 if --check fails. */
static int run_solver(const char *name, int64_t N, int64_t M, sl_dtype dt, const char *dtn, int niter, int check)
{
  int P = sl_size(), me = sl_rank(), single = dt == SL_FLOAT32 || dt == SL_COMPLEX64;
  int64_t rows = share(N > M ? N : M + 1, P, me);
  void *a = random_block(dt, rows * M, 17u + (unsigned)me);
  /* a strong diagonal keeps the problem well conditioned: A[i][i mod M] += 3 */
  for (int64_t i = 0; i < rows; i++) {
    int64_t j = (i + me * rows) % M, k = i * M + j;
    if (single) ((float *)a)[(dt == SL_COMPLEX64 ? 2 : 1) * k] += 3.0f;
    else ((double *)a)[(dt == SL_COMPLEX128 ? 2 : 1) * k] += 3.0;
  }
  sl_op *V = NULL, *Vh = NULL, *VhV = NULL, *I = NULL, *A = NULL;
  sl_array *xt = NULL, *x = NULL, *y = NULL, *r = NULL;
  sl_scalar *s1 = NULL, *s2 = NULL;
  int cg = !strcmp(name, "cg"), sparse = name[0] == 'i' || name[0] == 'f';
  int rc = sl_op_vstack_matrix(&V, a, rows, M, 1, dt);
  free(a);
  if (rc == SL_SUCCESS && cg) { /* CG needs SPD: A = V^H V + I */
    rc = sl_op_adjoint(&Vh, V);
    if (rc == SL_SUCCESS) rc = sl_op_product(&VhV, Vh, V);
    if (rc == SL_SUCCESS) rc = sl_op_create_domain(V, &x);
    if (rc == SL_SUCCESS) rc = sl_op_identity(&I, x);
    if (rc == SL_SUCCESS) rc = sl_op_sum(&A, VhV, I);
    sl_array_destroy(&x);
  } else if (rc == SL_SUCCESS) {
    A = V;
    V = NULL;
  }
  if (rc == SL_SUCCESS) rc = sl_op_create_domain(A, &xt);
  if (rc == SL_SUCCESS) rc = sl_op_create_domain(A, &x);
  if (rc == SL_SUCCESS) rc = sl_op_create_range(A, &y);
  if (rc == SL_SUCCESS) rc = sl_op_create_range(A, &r);
  if (rc == SL_SUCCESS) rc = sl_array_fill_random(xt, 5);
  if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_FORWARD, xt, y);
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&s1, dt);
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&s2, dt);
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = niter;
  o.tol = single ? 1e-6 : 1e-12;
  o.atol = o.btol = single ? 1e-7 : 1e-14;
  o.eps = 0.01;
  double *cost = calloc((size_t)niter + 1, sizeof *cost);
  o.cost = sparse ? cost : NULL;
  sl_solver_info info;
  memset(&info, 0, sizeof info);
  if (rc == SL_SUCCESS) {
    int (*f)(sl_op *, const sl_array *, sl_array *, const sl_solver_options *, sl_solver_info *) =
      cg ? sl_solve_cg : !strcmp(name, "cgls") ? sl_solve_cgls : !strcmp(name, "lsqr") ? sl_solve_lsqr
      : !strcmp(name, "ista") ? sl_solve_ista : sl_solve_fista;
    rc = f(A, y, x, &o, &info);
  }
  char chk[96] = "-";
  int failed = rc != SL_SUCCESS;
  if (rc == SL_SUCCESS && check) {
    double e = 0, n = 1;
    if (sparse) { /* the cost went down */
      e = cost[info.iterations], n = cost[1];
      int ok = e < n;
      snprintf(chk, sizeof chk, "%s (cost %.2e -> %.2e, %d it)", ok ? "ok" : "FAILED", n, e, info.iterations);
      failed = !ok;
    } else { /* ||x - x_true|| / ||x_true|| */
      rc = sl_array_axpby(x, SL_REAL(-1), xt, SL_REAL(1));
      if (rc == SL_SUCCESS) rc = sl_array_norm(x, 2, s1);
      if (rc == SL_SUCCESS) rc = sl_array_norm(xt, 2, s2);
      sl_cscalar c1 = {0, 0}, c2 = {1, 0};
      if (rc == SL_SUCCESS) rc = sl_scalar_get_c(s1, &c1);
      if (rc == SL_SUCCESS) rc = sl_scalar_get_c(s2, &c2);
      double tol = single ? 1e-3 : 1e-6, err = c1.re / c2.re;
      int ok = rc == SL_SUCCESS && err <= tol;
      snprintf(chk, sizeof chk, "%s (error %.1e, %d it)", ok ? "ok" : "FAILED", err, info.iterations);
      failed = !ok;
    }
  }
  if (me == 0) {
    if (rc != SL_SUCCESS) printf("| %s | - | %s | %d | %d | - | - | - | - | FAILED: %s |\n", name, dtn, P, sl_ncpu_workers() + sl_ncuda_workers(), sl_last_error());
    else
      printf("| %s | %lld x %lld | %s | %d | %d | %.3f | - | - | - | %s |\n", name, (long long)sl_op_nrows(A),
             (long long)sl_op_ncols(A), dtn, P, sl_ncpu_workers() + sl_ncuda_workers(), 1e3 * info.seconds, chk);
  }
  free(cost);
  sl_scalar_destroy(&s1);
  sl_scalar_destroy(&s2);
  sl_array *arr[4] = {xt, x, y, r};
  for (int i = 0; i < 4; i++) sl_array_destroy(&arr[i]);
  sl_op *ops[5] = {V, Vh, VhV, I, A};
  for (int i = 0; i < 5; i++) sl_op_destroy(&ops[i]);
  return failed;
}

int main(int argc, char **argv)
{
  const char *opname = "all", *dtn = "float64";
  int64_t N = 1000, M = 800, K = 1;
  int niter = 5, check = 0, niter_set = 0;
  const char *grid = NULL, *in = NULL, *out = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc) opname = argv[++i];
    else if (!strcmp(argv[i], "-n") && i + 1 < argc) N = atoll(argv[++i]);
    else if (!strcmp(argv[i], "-m") && i + 1 < argc) M = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--nrhs") && i + 1 < argc) K = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) dtn = argv[++i];
    else if (!strcmp(argv[i], "--niter") && i + 1 < argc) niter = atoi(argv[++i]), niter_set = 1;
    else if (!strcmp(argv[i], "--grid") && i + 1 < argc) grid = argv[++i];
    else if (!strcmp(argv[i], "--trace") && i + 1 < argc) setenv("STARLOPS_TRACE", argv[++i], 1);
    else if (!strcmp(argv[i], "--in") && i + 1 < argc) in = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) setenv("STARLOPS_COMM", argv[++i], 1);
    else if (!strcmp(argv[i], "--check")) check = 1;
    else {
      printf("usage: starlops_testing -o OP|all|solvers [-n N] [-m M] [--nrhs K] [--dtype D] [--niter R] [--check]\n"
             "                        [--backend B] [--grid PxQ] [--trace DIR] [--in X.npy] [--out Y.npy]\n");
      return !strcmp(argv[i], "--help") ? 0 : 2;
    }
  }
  sl_dtype dt = !strcmp(dtn, "float32") ? SL_FLOAT32 : !strcmp(dtn, "complex64") ? SL_COMPLEX64
              : !strcmp(dtn, "complex128") ? SL_COMPLEX128 : SL_FLOAT64;
  const char *solvers[] = {"cg", "cgls", "lsqr", "ista", "fista"};
  int is_solver = !strcmp(opname, "solvers");
  for (int k = 0; k < 5; k++) is_solver |= !strcmp(opname, solvers[k]);
  if (is_solver && !niter_set) niter = 200;
  if (niter < 1) niter = 1;
  if (!is_solver && niter > 64) niter = 64;
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "starlops_testing: sl_init: %s\n", sl_last_error());
    return 1;
  }
  const char *all[] = {"identity", "diagonal", "matrix", "vstack", "hstack", "csr", "restriction", "fredholm1",
                       "first_derivative", "second_derivative", "laplacian", "gradient", "blockdiag"};
  int nops = strcmp(opname, "all") ? 1 : 13, failed = 0;
  if (grid) {
    int gp = 0, gq = 0;
    if (sscanf(grid, "%dx%d", &gp, &gq) != 2 || gp * gq != sl_size()) {
      if (sl_rank() == 0) fprintf(stderr, "starlops_testing: --grid %s does not fit %d ranks (P x Q must equal it)\n", grid, sl_size());
      sl_finalize();
      return 2;
    }
  }
  if (sl_rank() == 0) {
    printf("# starlops_testing: %d ranks, %d CPU + %d CUDA workers on rank 0, backend %s%s%s\n", sl_size(),
           sl_ncpu_workers(), sl_ncuda_workers(), sl_comm_backend_name(), grid ? ", grid " : "", grid ? grid : "");
    printf("| op | rows x cols | dtype | ranks | workers | fwd ms (solve ms) | adj ms | GB/s | GFLOP/s | check |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
  }
  if (is_solver) {
    int ns = !strcmp(opname, "solvers") ? 5 : 1;
    for (int k = 0; k < ns; k++) failed |= run_solver(ns == 1 ? opname : solvers[k], N, M, dt, dtn, niter, check);
    nops = 0;
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
    if (in && sl_array_stack_nparts(x)) {
      if (sl_rank() == 0) printf("| %s | - | %s | - | - | - | - | - | - | --in: the domain is stacked |\n", name, dtn);
      failed = 1;
    } else if (in) { /* x from a file: any distribution on disk, read into the domain's layout */
      sl_array *xin = NULL;
      int rc = sl_array_load_npy(&xin, in, NULL);
      if (rc == SL_SUCCESS) rc = sl_array_copy(x, xin);
      sl_array_destroy(&xin);
      if (rc != SL_SUCCESS) {
        if (sl_rank() == 0) printf("| %s | - | %s | - | - | - | - | - | - | --in FAILED: %s |\n", name, dtn, sl_last_error());
        failed = 1;
      }
    }
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
    if (out && !sl_array_stack_nparts(y)) { /* the forward result */
      sl_op_apply(op, SL_FORWARD, x, y);
      if (sl_array_save_npy(y, out) != SL_SUCCESS) {
        if (sl_rank() == 0) fprintf(stderr, "starlops_testing: --out: %s\n", sl_last_error());
        failed = 1;
      }
    }
    double bytes = (double)(sl_op_nrows(op) + sl_op_ncols(op)) * (double)sl_dtype_size(dt);
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
      printf("| %s | %lld x %lld | %s | %d | %d | %.3f | %.3f | %.2f | %s | %s |\n", name, (long long)sl_op_nrows(op),
             (long long)sl_op_ncols(op), dtn, sl_size(), sl_ncpu_workers() + sl_ncuda_workers(), 1e3 * tm[0], 1e3 * tm[1],
             bytes / tm[0] / 1e9, gf, chk);
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
