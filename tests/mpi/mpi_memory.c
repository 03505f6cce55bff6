/* Memory an operator and a solve take, from this process's resident set (/proc/self/statm): building views
 * of an operator (adjoint, transpose, conjugate, scaling, sums with Identity, products) allocates nothing of
 * vector size; once the first applies have made each temporary (and the runtime's per-thread records have
 * settled), further applies allocate nothing; a sequence of
 * solves on one operator keeps its memory flat (the work vectors are kept on the operator and reused, and
 * sl_op_free_workspace drops them, into the host allocation cache, from which the next solve's come without
 * new pages, as does an array made again at the same size); the results stay right (CG on a diagonal system against the
 * formula). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mpi_check.h"

static double rss_bytes(void)
{
  long pages = 0, res = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = -1;
  fclose(f);
  return (double)res * (double)sysconf(_SC_PAGESIZE);
}

/* This process's minor page faults so far (each new page's first touch). */
static long minor_faults(void)
{
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : 0;
}

/* Whether valgrind runs this process (its preloaded library). */
static int under_valgrind(void)
{
  const char *pre = getenv("LD_PRELOAD");
  return pre && strstr(pre, "vgpreload");
}

/* The largest growth over the ranks; 0 under valgrind, whose own shadow memory grows the resident set with
 * every allocation the program makes and frees (the checks of results still run there). */
static double max_growth(double before, double after)
{
  double g = under_valgrind() ? 0 : after - before, m = 0;
  MPI_Allreduce(&g, &m, 1, MPI_DOUBLE, MPI_MAX, sl_comm());
  return m;
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  int P = sl_size();
  /* 16M float64 (128 MiB) over the ranks, uneven: 1% of a local block stays above the noise of the runtime's
   * own small allocations */
  int64_t n = ((int64_t)16 << 20) + 3;
  sl_array *x = NULL, *y = NULL;
  CHECK_OK(sl_array_create(&x, 1, &n, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_fill(x, SL_REAL(2.0)));
  CHECK_OK(sl_array_create_like(&y, x));
  double local_bytes = (double)(n / P) * 8.0, budget = 0.01 * local_bytes;
  sl_op *Id = NULL;
  CHECK_OK(sl_op_identity(&Id, x));
  CHECK_OK(sl_wait());

  /* ten views */
  double r0 = rss_bytes();
  sl_op *v[10] = {NULL};
  CHECK_OK(sl_op_adjoint(&v[0], Id));
  CHECK_OK(sl_op_scaled(&v[1], Id, SL_REAL(3.0)));
  CHECK_OK(sl_op_transpose(&v[2], v[1]));
  CHECK_OK(sl_op_sum(&v[3], v[2], Id));
  CHECK_OK(sl_op_product(&v[4], v[3], v[1]));
  CHECK_OK(sl_op_conj(&v[5], v[4]));
  CHECK_OK(sl_op_diff(&v[6], v[5], v[0]));
  CHECK_OK(sl_op_adjoint(&v[7], v[6]));
  CHECK_OK(sl_op_scaled(&v[8], v[7], SL_REAL(0.5)));
  CHECK_OK(sl_op_product(&v[9], v[8], v[8]));
  double grow = max_growth(r0, rss_bytes());
  CHECK(grow <= budget, "ten views grew the resident set by %.0f bytes, more than 1%% of a local vector (%.0f bytes)", grow,
        local_bytes);

  /* v[9] = (0.5 ((3 I + I)(3 I) - I))^2 = (0.5 (12 - 1))^2 I = 30.25 I, the same adjoint */
  for (int mode = 0; mode < 2; mode++) {
    CHECK_OK(sl_op_apply(v[9], (sl_op_mode)mode, x, y));
    double got = 0;
    sl_scalar *s = NULL;
    CHECK_OK(sl_scalar_create(&s, SL_FLOAT64));
    CHECK_OK(sl_array_norm(y, INFINITY, s));
    CHECK_OK(sl_scalar_get(s, &got));
    CHECK(fabs(got - 60.5) < 1e-12, "v[9] %s x = %.17g, expected 60.5", mode ? "adjoint" : "forward", got);
    sl_scalar_destroy(&s);
  }
  /* a few more applies first: with many workers, the runtime's own per-thread allocations (task records,
   * malloc arenas of workers that had not run a task yet) settle over them, and are no vector-size memory */
  for (int k = 0; k < 10; k++) CHECK_OK(sl_op_apply(v[9], SL_FORWARD, x, y));
  CHECK_OK(sl_wait());
  double r1 = rss_bytes();
  for (int k = 0; k < 5; k++) CHECK_OK(sl_op_apply(v[9], SL_FORWARD, x, y));
  CHECK_OK(sl_wait());
  grow = max_growth(r1, rss_bytes());
  CHECK(grow <= budget, "applies after the first eleven grew the resident set by %.0f bytes", grow);
  for (int i = 9; i >= 0; i--) CHECK_OK(sl_op_destroy(&v[i]));

  /* solves: CG on D = diag(1 + g % 7) with y = D ones, from x0 = 0 */
  sl_array *d = NULL, *ones = NULL;
  CHECK_OK(sl_array_create_like(&d, x));
  CHECK_OK(sl_array_create_like(&ones, x));
  double *pd = NULL;
  CHECK_OK(sl_array_acquire(d, SL_WRITE, (void **)&pd));
  int64_t off = sl_array_local_offset(d), nl = sl_array_local_size(d);
  for (int64_t i = 0; i < nl; i++) pd[i] = 1.0 + (double)((off + i) % 7);
  CHECK_OK(sl_array_release(d));
  CHECK_OK(sl_array_fill(ones, SL_REAL(1.0)));
  sl_op *D = NULL;
  CHECK_OK(sl_op_diagonal(&D, d));
  CHECK_OK(sl_op_apply(D, SL_FORWARD, ones, y));
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 20;
  o.tol = 1e-13;
  double after[4] = {0};
  for (int k = 0; k < 4; k++) {
    sl_solver_info info;
    CHECK_OK(sl_solve_cg(D, y, x, &o, &info));
    CHECK_OK(sl_array_axpby(x, SL_REAL(-1.0), ones, SL_REAL(1.0)));
    sl_scalar *s = NULL;
    double err = 1;
    CHECK_OK(sl_scalar_create(&s, SL_FLOAT64));
    CHECK_OK(sl_array_norm(x, INFINITY, s));
    CHECK_OK(sl_scalar_get(s, &err));
    sl_scalar_destroy(&s);
    CHECK(err < 1e-10, "solve %d: max |x - 1| = %.3e", k, err);
    after[k] = rss_bytes();
  }
  grow = max_growth(after[1], after[3]);
  CHECK(grow <= budget, "solves 2-4 on one operator grew the resident set by %.0f bytes", grow);
  /* the work vectors go back on request, and a solve after that makes new ones */
  CHECK_OK(sl_op_free_workspace(D));
  CHECK(sl_op_free_workspace(NULL) == SL_E_INVALID, "sl_op_free_workspace(NULL) is an error");
  sl_solver_info info;
  long f0 = minor_faults();
  CHECK_OK(sl_solve_cg(D, y, x, &o, &info));
  CHECK_OK(sl_wait());
  long faults = minor_faults() - f0;
  CHECK(info.iterations <= o.niter && info.iterations >= 1, "a solve after sl_op_free_workspace ran %d iterations", info.iterations);
  /* On a rank without a CUDA worker the dropped work vectors wait in the host allocation cache and the new
   * ones are made from them: the solve touches no new pages (checked where the cap holds them all). (With the cache off, STARLOPS_HOST_CACHE_MB=0,
   * the C library may or may not hand the same pages back: one rank here took a vector's pages and more.) */
  const char *cache = getenv("STARLOPS_HOST_CACHE_MB");
  long vector_pages = (long)(local_bytes / (double)sysconf(_SC_PAGESIZE));
  double cap = mc_host_cache_default_bytes(); /* collective: every rank */
  if (cache && *cache) cap = atof(cache) * 1048576.0;
  int check_faults = sl_ncuda_workers() == 0 && cap >= 8 * local_bytes && !under_valgrind();
  if (check_faults)
    CHECK(faults < vector_pages / 4, "new work vectors from the host cache took %ld page faults (one vector: %ld pages)",
          faults, vector_pages);
  /* an array's host block, destroyed and made again at the same size, comes from the cache too */
  sl_array_destroy(&d);
  f0 = minor_faults();
  CHECK_OK(sl_array_create(&d, 1, &n, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_fill(d, SL_REAL(3.0)));
  CHECK_OK(sl_wait());
  faults = minor_faults() - f0;
  if (check_faults)
    CHECK(faults < vector_pages / 4, "an array made again from the host cache took %ld page faults (its block: %ld pages)",
          faults, vector_pages);
  sl_op_destroy(&D);
  sl_op_destroy(&Id);
  sl_array_destroy(&d);
  sl_array_destroy(&ones);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  return mc_finish("mpi_memory");
}
