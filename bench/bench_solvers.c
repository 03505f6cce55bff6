/* bench_solvers: time per iteration of CG on the 2-D Dirichlet Laplacian (poisson_cg's operator, n x n,
 * rows over the ranks) and of CGLS on a VStack of dense blocks, beside the sum of the same iteration's
 * operator applications and vector operations each timed alone (submitted, then waited for); overhead =
 * iteration / sum - 1 (the target is <= 10%). Also the host waits per iteration, with the convergence test
 * every iteration and every 10.
 *   mpirun -n P bench_solvers [--sizes n1,n2] [--ls ROWS,COLS] [--niter K] [--reps R]
 * Iteration time: (solve of K iterations - solve of 0 iterations) / K, median of R, slowest rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starlops.h"
#include "bench_util.h"

static int reps = 5;

static double slowest(double t)
{
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, sl_comm());
  return t;
}

typedef int (*job_fn)(void *ctx);

/* median wall time of job, submitted then waited for */
static double time_job(job_fn job, void *ctx)
{
  double t[64];
  for (int r = -1; r < reps; r++) {
    sl_wait();
    MPI_Barrier(sl_comm());
    double t0 = bench_now();
    job(ctx);
    sl_wait();
    if (r >= 0) t[r] = slowest(bench_now() - t0);
  }
  return bench_median(t, reps);
}

typedef struct {
  sl_op *A;
  sl_array *x, *y, *d1, *d2, *r1, *r2;
  sl_scalar *s, *s2;
  sl_solver_options o;
  int solver; /* 0 CG, 1 CGLS, 2 LSQR */
  sl_solver_info info;
} ctx_t;

static int job_solve(void *p)
{
  ctx_t *c = p;
  if (c->solver == 2) return sl_solve_lsqr(c->A, c->y, c->x, &c->o, &c->info);
  return c->solver ? sl_solve_cgls(c->A, c->y, c->x, &c->o, &c->info) : sl_solve_cg(c->A, c->y, c->x, &c->o, &c->info);
}
static int job_fwd(void *p)
{
  ctx_t *c = p;
  return sl_op_apply(c->A, SL_FORWARD, c->d1, c->r1);
}
static int job_adj(void *p)
{
  ctx_t *c = p;
  return sl_op_apply(c->A, SL_ADJOINT, c->r1, c->d1);
}
static int job_dot_d(void *p)
{
  ctx_t *c = p;
  return sl_array_vdot(c->d1, c->d2, c->s);
}
static int job_dot_r(void *p)
{
  ctx_t *c = p;
  return sl_array_vdot(c->r1, c->r2, c->s);
}
static int job_axpby_d(void *p)
{
  ctx_t *c = p;
  return sl_array_axpby_s(c->d1, SL_REAL(1e-3), c->s, c->d2, SL_REAL(1), NULL);
}
static int job_axpby_r(void *p)
{
  ctx_t *c = p;
  return sl_array_axpby_s(c->r1, SL_REAL(1e-3), c->s, c->r2, SL_REAL(1), NULL);
}
static int job_scalar(void *p)
{
  ctx_t *c = p;
  return sl_scalar_op(c->s2, SL_SOP_DIV, c->s, c->s);
}

/* Iteration time and host waits per iteration for check_every = every. */
static double iter_time(ctx_t *c, int niter, int every, double *waits)
{
  c->o.niter = 0;
  double t0 = time_job(job_solve, c);
  c->o.niter = niter;
  c->o.check_every = every;
  double t1 = time_job(job_solve, c);
  *waits = (double)c->info.host_syncs / (double)(c->info.iterations ? c->info.iterations : 1);
  return (t1 - t0) / niter;
}

static void report(const char *what, ctx_t *c, int niter, double parts)
{
  double w1 = 0, w10 = 0;
  double t1 = iter_time(c, niter, 1, &w1), t10 = iter_time(c, niter, 10, &w10);
  if (sl_rank() == 0)
    printf("| %s | %d | %.3f | %.3f | %.3f | %+.0f%% | %.2f | %.2f |\n", what, sl_size(), 1e3 * t1, 1e3 * t10, 1e3 * parts,
           100 * (t10 / parts - 1), w1, w10);
}

static int make_ctx(ctx_t *c, sl_op *A, int solver)
{
  memset(c, 0, sizeof *c);
  c->A = A;
  c->solver = solver;
  sl_solver_options_default(&c->o);
  c->o.tol = 0;
  int rc = sl_op_create_domain(A, &c->x);
  if (!rc) rc = sl_op_create_range(A, &c->y);
  if (!rc) rc = sl_op_create_domain(A, &c->d1);
  if (!rc) rc = sl_op_create_domain(A, &c->d2);
  if (!rc) rc = sl_op_create_range(A, &c->r1);
  if (!rc) rc = sl_op_create_range(A, &c->r2);
  if (!rc) rc = sl_scalar_create(&c->s, SL_FLOAT64);
  if (!rc) rc = sl_scalar_create(&c->s2, SL_FLOAT64);
  if (!rc) rc = sl_array_fill_random(c->y, 3);
  if (!rc) rc = sl_array_fill_random(c->d1, 4);
  if (!rc) rc = sl_array_fill_random(c->d2, 5);
  if (!rc) rc = sl_array_fill_random(c->r1, 6);
  if (!rc) rc = sl_array_fill_random(c->r2, 7);
  return rc;
}

static void free_ctx(ctx_t *c)
{
  sl_array *a[6] = {c->x, c->y, c->d1, c->d2, c->r1, c->r2};
  for (int i = 0; i < 6; i++) sl_array_destroy(&a[i]);
  sl_scalar_destroy(&c->s);
  sl_scalar_destroy(&c->s2);
}

/* poisson_cg's operator: (I - P) - P L P */
static int dirichlet_laplacian(int64_t n, sl_op **out, sl_op **keep)
{
  int64_t dims[2] = {n, n};
  sl_array *m = NULL, *b = NULL;
  int rc = sl_array_create(&m, 2, dims, SL_FLOAT64, NULL);
  if (!rc) rc = sl_array_create_like(&b, m);
  double *pm = NULL, *pb = NULL;
  if (!rc) rc = sl_array_acquire(m, SL_WRITE, (void **)&pm);
  if (!rc) rc = sl_array_acquire(b, SL_WRITE, (void **)&pb);
  if (rc) return rc;
  int64_t r0 = sl_array_local_offset(m), rows = sl_array_local_dims(m)[0];
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < n; j++) {
      int in = r0 + i > 0 && r0 + i < n - 1 && j > 0 && j < n - 1;
      pm[i * n + j] = in;
      pb[i * n + j] = !in;
    }
  sl_array_release(m);
  sl_array_release(b);
  rc = sl_op_laplacian(&keep[0], m, 2, NULL, NULL, NULL, SL_DERIV_CENTERED, 0);
  if (!rc) rc = sl_op_diagonal(&keep[1], m);
  if (!rc) rc = sl_op_diagonal(&keep[2], b);
  if (!rc) rc = sl_op_product(&keep[3], keep[0], keep[1]);
  if (!rc) rc = sl_op_product(&keep[4], keep[1], keep[3]);
  if (!rc) rc = sl_op_scaled(&keep[5], keep[4], SL_REAL(-1));
  if (!rc) rc = sl_op_sum(out, keep[5], keep[2]);
  sl_array_destroy(&m);
  sl_array_destroy(&b);
  return rc;
}

int main(int argc, char **argv)
{
  int64_t sizes[4] = {1000, 2000}, ls_rows = 2000, ls_cols = 500;
  int nsizes = 2, niter = 20;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *p = strtok(argv[++i], ","); p && nsizes < 4; p = strtok(NULL, ",")) sizes[nsizes++] = atoll(p);
    } else if (!strcmp(argv[i], "--ls") && i + 1 < argc) {
      if (sscanf(argv[++i], "%lld,%lld", (long long *)&ls_rows, (long long *)&ls_cols) != 2) return 2;
    } else if (!strcmp(argv[i], "--niter") && i + 1 < argc) {
      niter = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_solvers [--sizes n1,n2] [--ls ROWS,COLS] [--niter K] [--reps R]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (reps > 64) reps = 64;
  if (niter < 1) niter = 1;
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "bench_solvers: sl_init: %s\n", sl_last_error());
    return 1;
  }
  if (sl_rank() == 0) {
    printf("# bench_solvers: %d ranks, %d CPU + %d CUDA workers on rank 0, float64, %d iterations, median of %d\n",
           sl_size(), sl_ncpu_workers(), sl_ncuda_workers(), niter, reps);
    printf("# parts: CG = apply + 2 vdot + 3 axpby + 2 scalar tasks; CGLS = forward + adjoint + 5 norms + 3 axpby "
           "+ 2 scalar tasks; LSQR = forward + adjoint + 3 norms + 6 axpby + 2 scalar tasks, each timed alone\n");
    printf("| solver, problem | ranks | iteration (ms), test every 1 | iteration (ms), every 10 | sum of parts (ms) | "
           "overhead (every 10) | host waits / it (every 1) | (every 10) |\n|---|---|---|---|---|---|---|---|\n");
  }
  for (int si = 0; si < nsizes; si++) {
    sl_op *keep[6] = {NULL}, *A = NULL;
    if (dirichlet_laplacian(sizes[si], &A, keep)) {
      fprintf(stderr, "bench_solvers: %s\n", sl_last_error());
      return 1;
    }
    ctx_t c;
    if (make_ctx(&c, A, 0)) return 1;
    double parts = time_job(job_fwd, &c) + 2 * time_job(job_dot_d, &c) + 3 * time_job(job_axpby_d, &c) +
                   2 * time_job(job_scalar, &c);
    char what[96];
    snprintf(what, sizeof what, "CG, 2-D Laplacian %lld x %lld", (long long)sizes[si], (long long)sizes[si]);
    report(what, &c, niter, parts);
    c.o.pipelined = 1;
    snprintf(what, sizeof what, "CG pipelined, 2-D Laplacian %lld x %lld", (long long)sizes[si], (long long)sizes[si]);
    report(what, &c, niter, parts);
    free_ctx(&c);
    sl_op_destroy(&A);
    for (int i = 0; i < 6; i++) sl_op_destroy(&keep[i]);
  }
  /* CGLS on VStack(MatrixMult): ls_rows x ls_cols per rank */
  double *a = malloc(sizeof(double) * (size_t)(ls_rows * ls_cols));
  /* full rank (a smooth sin(i) table would be of rank 2, and LSQR would stop after two iterations) */
  for (int64_t i = 0; i < ls_rows * ls_cols; i++) a[i] = fmod(sin(12.9898 * (double)i + sl_rank()) * 43758.5453, 1.0);
  sl_op *V = NULL;
  if (sl_op_vstack_matrix(&V, a, ls_rows, ls_cols, 1, SL_FLOAT64)) return 1;
  free(a);
  ctx_t c;
  if (make_ctx(&c, V, 1)) return 1;
  double parts = time_job(job_fwd, &c) + time_job(job_adj, &c) + 2 * time_job(job_dot_r, &c) + 3 * time_job(job_dot_d, &c) +
                 2 * time_job(job_axpby_d, &c) + time_job(job_axpby_r, &c) + 2 * time_job(job_scalar, &c);
  char what[96];
  snprintf(what, sizeof what, "CGLS, VStack(MatrixMult) %lld x %lld per rank", (long long)ls_rows, (long long)ls_cols);
  report(what, &c, niter, parts);
  /* LSQR on the same problem, its own stopping rules off (atol = btol = 0) so that it runs niter iterations */
  c.solver = 2;
  c.o.atol = c.o.btol = 0;
  parts = time_job(job_fwd, &c) + time_job(job_adj, &c) + time_job(job_dot_r, &c) + 2 * time_job(job_dot_d, &c) +
          4 * time_job(job_axpby_d, &c) + 2 * time_job(job_axpby_r, &c) + 2 * time_job(job_scalar, &c);
  snprintf(what, sizeof what, "LSQR, VStack(MatrixMult) %lld x %lld per rank", (long long)ls_rows, (long long)ls_cols);
  report(what, &c, niter, parts);
  free_ctx(&c);
  sl_op_destroy(&V);
  sl_finalize();
  return 0;
}
