/* bench_setup: what a user meets first, run with whatever settings the environment has (none: the
 * defaults). Two tables:
 *   set-up: CG on L^H L (L the 2-D Laplacian, n x n, rows over the ranks) from x0 = 0 on a new operator,
 *     whole-solve time / niter for niter = 20 and 100, the first solve and a second one on the same
 *     operator; the ratio of the niter = 20 figure to the niter = 100 one shows the set-up a solve pays;
 *   operations: FirstDerivative (centered, axis 0) and the Laplacian, forward + adjoint, at the given sizes;
 *     a dot of 1M elements; CG on L^H L per iteration at --cg n (second solve / niter);
 *   memory (--memory MIB): host resident set and free device memory (cudaMemGetInfo, where a GPU is visible)
 *     around building ten views of an Identity on a float64 vector of MIB MiB, their first applies, and 100
 *     solves (CG, 3 iterations) on the same operator.
 *   mpirun -n P bench_setup [--setup N] [--sizes n1,n2] [--cg N] [--memory MIB] [--reps R]
 * Times: median of R after a warm-up, slowest rank, each job submitted then waited for. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starlops.h"
#include "bench_normal.h"
#include "bench_util.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <unistd.h>

static int reps = 5;

#define TRY(call)                                                                                     \
  do {                                                                                                \
    int rc_ = (call);                                                                                 \
    if (rc_ != SL_SUCCESS) {                                                                          \
      fprintf(stderr, "bench_setup: %s: %s\n", #call, sl_last_error());                              \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

static double slowest(double t)
{
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, sl_comm());
  return t;
}


/* wall time of one CG solve of niter iterations from x0 = 0 */
static double solve_time(sl_op *A, const sl_array *y, sl_array *x, int niter)
{
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = niter;
  o.tol = 0;
  o.check_every = niter;
  TRY(sl_wait());
  MPI_Barrier(sl_comm());
  double t0 = bench_now();
  TRY(sl_solve_cg(A, y, x, &o, NULL));
  TRY(sl_wait());
  return slowest(bench_now() - t0);
}

static void setup_table(int64_t n)
{
  if (sl_rank() == 0)
    printf("\n## Set-up: CG on L^H L, %lld^2 float64, x0 = 0, a new operator per row\n"
           "| niter | first solve (ms) | per iteration (ms) | second solve per iteration (ms) |\n|---|---|---|---|\n",
           (long long)n);
  double per[2] = {0};
  int niters[2] = {20, 100};
  { /* warm-up: codelets, kernels, allocation caches */
    normal_t m;
    TRY(bench_normal_make(n, &m));
    solve_time(m.A, m.y, m.x, 5);
    bench_normal_free(&m);
  }
  for (int k = 0; k < 2; k++) {
    normal_t m;
    TRY(bench_normal_make(n, &m));
    TRY(sl_wait());
    double t1 = solve_time(m.A, m.y, m.x, niters[k]), t2 = solve_time(m.A, m.y, m.x, niters[k]);
    per[k] = t1 / niters[k];
    if (sl_rank() == 0)
      printf("| %d | %.1f | %.3f | %.3f |\n", niters[k], 1e3 * t1, 1e3 * per[k], 1e3 * t2 / niters[k]);
    bench_normal_free(&m);
  }
  if (sl_rank() == 0) printf("per iteration at niter 20 / at niter 100: %.2f (target <= 1.15)\n", per[0] / per[1]);
}

typedef int (*job_fn)(void *);
typedef struct {
  sl_op *op;
  sl_array *x, *y;
  sl_scalar *s;
} job_t;

static int job_fwd_adj(void *p)
{
  job_t *j = p;
  int rc = sl_op_apply(j->op, SL_FORWARD, j->x, j->y);
  return rc ? rc : sl_op_apply(j->op, SL_ADJOINT, j->y, j->x);
}
static int job_dot(void *p)
{
  job_t *j = p;
  return sl_array_dot(j->x, j->y, j->s);
}

static double time_job(job_fn f, void *ctx)
{
  double t[64];
  int r_n = reps > 64 ? 64 : reps;
  for (int r = -1; r < r_n; r++) {
    TRY(sl_wait());
    MPI_Barrier(sl_comm());
    double t0 = bench_now();
    TRY(f(ctx));
    TRY(sl_wait());
    if (r >= 0) t[r] = slowest(bench_now() - t0);
  }
  return bench_median(t, r_n);
}

static void ops_table(const int64_t *sizes, int nsizes, int64_t cg_n)
{
  if (sl_rank() == 0) printf("\n## Operations\n| problem | time (ms) |\n|---|---|\n");
  for (int i = 0; i < nsizes; i++) {
    int64_t dims[2] = {sizes[i], sizes[i]};
    job_t j = {0};
    TRY(sl_array_create(&j.x, 2, dims, SL_FLOAT64, NULL));
    TRY(sl_array_create_like(&j.y, j.x));
    TRY(sl_array_fill_random(j.x, 2));
    for (int k = 0; k < 2; k++) {
      if (k == 0) TRY(sl_op_first_derivative(&j.op, j.x, 0, 1.0, SL_DERIV_CENTERED, 3, 0));
      else TRY(sl_op_laplacian(&j.op, j.x, 2, NULL, NULL, NULL, SL_DERIV_CENTERED, 0));
      double t = time_job(job_fwd_adj, &j);
      if (sl_rank() == 0)
        printf("| %s %lld^2, forward + adjoint | %.3f |\n", k ? "Laplacian" : "FirstDerivative", (long long)sizes[i], 1e3 * t);
      sl_op_destroy(&j.op);
    }
    sl_array_destroy(&j.x);
    sl_array_destroy(&j.y);
  }
  {
    int64_t n = 1 << 20;
    job_t j = {0};
    TRY(sl_array_create(&j.x, 1, &n, SL_FLOAT64, NULL));
    TRY(sl_array_create_like(&j.y, j.x));
    TRY(sl_scalar_create(&j.s, SL_FLOAT64));
    TRY(sl_array_fill_random(j.x, 3));
    TRY(sl_array_fill_random(j.y, 4));
    double t = time_job(job_dot, &j);
    if (sl_rank() == 0) printf("| dot, 1M float64 | %.3f |\n", 1e3 * t);
    sl_scalar_destroy(&j.s);
    sl_array_destroy(&j.x);
    sl_array_destroy(&j.y);
  }
  {
    normal_t m;
    TRY(bench_normal_make(cg_n, &m));
    solve_time(m.A, m.y, m.x, 20);
    double t[64];
    int r_n = reps > 64 ? 64 : reps;
    for (int r = 0; r < r_n; r++) t[r] = solve_time(m.A, m.y, m.x, 20) / 20;
    if (sl_rank() == 0) printf("| CG on L^H L %lld^2, per iteration (niter 20) | %.3f |\n", (long long)cg_n, 1e3 * bench_median(t, r_n));
    bench_normal_free(&m);
  }
}

static double rss_mib(void)
{
  long pages = 0, res = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = -1;
  fclose(f);
  return (double)res * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

/* used device memory in MiB (the first device), -1 without one */
static double device_used_mib(void)
{
#ifdef SL_HAVE_CUDA
  size_t fr = 0, total = 0;
  if (sl_ncuda_workers() > 0 && cudaMemGetInfo(&fr, &total) == cudaSuccess) return (double)(total - fr) / 1048576.0;
  (void)cudaGetLastError();
#endif
  return -1;
}

static void memory_row(const char *what, double r0, double d0)
{
  TRY(sl_wait());
  double r = rss_mib(), d = device_used_mib();
  if (sl_rank() == 0) printf("| %s | %+.1f | %+.1f |\n", what, r - r0, d < 0 ? 0.0 : d - d0);
}

static void memory_table(int64_t mib)
{
  int64_t n = mib * 131072; /* float64 elements */
  sl_array *x = NULL, *y = NULL;
  TRY(sl_array_create(&x, 1, &n, SL_FLOAT64, NULL));
  TRY(sl_array_create_like(&y, x));
  TRY(sl_array_fill(x, SL_REAL(1.0)));
  sl_op *id = NULL, *v[10] = {NULL};
  TRY(sl_op_identity(&id, x));
  TRY(sl_op_apply(id, SL_FORWARD, x, y)); /* both vectors where the compute runs */
  TRY(sl_wait());
  double r0 = rss_mib(), d0 = device_used_mib();
  if (sl_rank() == 0)
    printf("\n## Memory: growth from a float64 vector of %lld MiB per rank and its Identity (MiB; device: cudaMemGetInfo)\n"
           "| step | host RSS | device |\n|---|---|---|\n", (long long)(mib / sl_size()));
  TRY(sl_op_adjoint(&v[0], id));
  TRY(sl_op_scaled(&v[1], id, SL_REAL(3.0)));
  TRY(sl_op_transpose(&v[2], v[1]));
  TRY(sl_op_sum(&v[3], v[2], id));
  TRY(sl_op_product(&v[4], v[3], v[1]));
  TRY(sl_op_conj(&v[5], v[4]));
  TRY(sl_op_diff(&v[6], v[5], v[0]));
  TRY(sl_op_adjoint(&v[7], v[6]));
  TRY(sl_op_scaled(&v[8], v[7], SL_REAL(0.5)));
  TRY(sl_op_product(&v[9], v[8], v[8]));
  memory_row("ten views built", r0, d0);
  for (int i = 0; i < 10; i++) TRY(sl_op_apply(v[i], SL_FORWARD, x, y));
  memory_row("each view applied once (temporaries made)", r0, d0);
  for (int i = 9; i >= 0; i--) sl_op_destroy(&v[i]);
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 3;
  o.tol = 0;
  o.check_every = 3;
  double r1 = 0, d1 = 0;
  for (int k = 1; k <= 100; k++) {
    TRY(sl_solve_cg(id, y, x, &o, NULL));
    if (k == 1) {
      TRY(sl_wait());
      r1 = rss_mib(), d1 = device_used_mib();
      memory_row("views destroyed, 1 solve", r0, d0);
    }
    if (k == 10) memory_row("10 solves", r0, d0);
  }
  memory_row("100 solves", r0, d0);
  TRY(sl_wait());
  double r100 = rss_mib(), d100 = device_used_mib();
  if (sl_rank() == 0)
    printf("solves 2-100: host RSS %+.1f MiB, device %+.1f MiB\n", r100 - r1, d100 < 0 ? 0.0 : d100 - d1);
  sl_op_destroy(&id);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
}

int main(int argc, char **argv)
{
  int64_t setup_n = 1000, sizes[8] = {1000, 2000}, cg_n = 1000, memory = 0;
  int nsizes = 2;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--setup") && i + 1 < argc) {
      setup_n = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *p = strtok(argv[++i], ","); p && nsizes < 8; p = strtok(NULL, ",")) sizes[nsizes++] = atoll(p);
    } else if (!strcmp(argv[i], "--memory") && i + 1 < argc) {
      memory = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--cg") && i + 1 < argc) {
      cg_n = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_setup [--setup N] [--sizes n1,n2] [--cg N] [--memory MIB] [--reps R]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "bench_setup: sl_init: %s\n", sl_last_error());
    return 1;
  }
  TRY(sl_info_print(stdout));
  if (memory > 0) memory_table(memory);
  if (setup_n > 0) setup_table(setup_n);
  if (nsizes > 0 && sizes[0] > 0) ops_table(sizes, nsizes, cg_n);
  return sl_finalize() == SL_SUCCESS ? 0 : 1;
}
