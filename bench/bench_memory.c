/* bench_memory: the host resident set over long loops, to show that repeated work does not grow memory.
 * Three loops of R rounds each (default 10 000), on a 2-D float64 array of n x n (default 64):
 *   create/apply/destroy: create an array, a FirstDerivative and its adjoint, apply both, destroy all;
 *   solves on one operator: CG (5 iterations) on L^H L (L the 2-D Laplacian) from x0 = 0;
 *   solves on new operators: build L^H L, solve (5 iterations), destroy it.
 * Each row prints the resident set (largest over the ranks) after the first tenth of the rounds (the
 * runtime's own pools are warm by then) and at the end, the growth, and the growth per round.
 *   mpirun -n P bench_memory [--rounds R] [--n N]
 * Exits 1 when a loop grew the resident set by more than 1 MiB after its first tenth. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "starlops.h"
#include "bench_normal.h"

#define TRY(call)                                                                                     \
  do {                                                                                                \
    int rc_ = (call);                                                                                 \
    if (rc_ != SL_SUCCESS) {                                                                          \
      fprintf(stderr, "bench_memory: %s: %s\n", #call, sl_last_error());                             \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

static double rss_mib(void)
{
  long pages = 0, res = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = -1;
  fclose(f);
  double r = (double)res * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
  MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_DOUBLE, MPI_MAX, sl_comm());
  return r;
}

static int64_t n = 64;

static void round_apply(void)
{
  int64_t dims[2] = {n, n};
  sl_array *x = NULL, *y = NULL;
  sl_op *D = NULL, *DH = NULL;
  TRY(sl_array_create(&x, 2, dims, SL_FLOAT64, NULL));
  TRY(sl_array_fill(x, SL_REAL(1.0)));
  TRY(sl_op_first_derivative(&D, x, 0, 1.0, SL_DERIV_CENTERED, 3, 0));
  TRY(sl_op_adjoint(&DH, D));
  TRY(sl_op_create_range(D, &y));
  TRY(sl_op_apply(D, SL_FORWARD, x, y));
  TRY(sl_op_apply(DH, SL_FORWARD, y, x));
  TRY(sl_wait());
  sl_op_destroy(&DH);
  sl_op_destroy(&D);
  sl_array_destroy(&y);
  sl_array_destroy(&x);
}


static void solve(normal_t *m)
{
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 5;
  o.tol = 0;
  sl_solver_info info;
  TRY(sl_array_fill(m->x, SL_REAL(0.0)));
  TRY(sl_solve_cg(m->A, m->y, m->x, &o, &info));
}

static normal_t kept;
static void round_solve(void) { solve(&kept); }
static void round_new_solve(void)
{
  normal_t m;
  TRY(bench_normal_make(n, &m));
  solve(&m);
  bench_normal_free(&m);
}

int main(int argc, char **argv)
{
  long rounds = 10000;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atol(argv[++i]);
    else if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atol(argv[++i]);
  }
  if (rounds < 10 || n < 4) {
    fprintf(stderr, "usage: bench_memory [--rounds R >= 10] [--n N >= 4]\n");
    return 2;
  }
  TRY(sl_init(&argc, &argv, NULL));
  TRY(bench_normal_make(n, &kept));
  struct {
    const char *name;
    void (*round)(void);
  } loops[] = {{"create/apply/destroy", round_apply}, {"solves on one operator", round_solve},
               {"solves on new operators", round_new_solve}};
  int bad = 0;
  if (sl_rank() == 0) {
    printf("bench_memory: %d rank(s), %ld rounds per loop, %lld x %lld float64\n", sl_size(), rounds, (long long)n,
           (long long)n);
    printf("%-26s %12s %12s %12s %14s\n", "loop", "RSS@R/10 MiB", "RSS@R MiB", "growth MiB", "bytes/round");
  }
  for (size_t l = 0; l < sizeof loops / sizeof loops[0]; l++) {
    long warm = rounds / 10;
    for (long r = 0; r < warm; r++) loops[l].round();
    double r0 = rss_mib();
    for (long r = warm; r < rounds; r++) loops[l].round();
    double r1 = rss_mib();
    double g = r1 - r0;
    if (g > 1.0) bad = 1;
    if (sl_rank() == 0)
      printf("%-26s %12.1f %12.1f %12.2f %14.1f\n", loops[l].name, r0, r1, g, g * 1048576.0 / (double)(rounds - warm));
  }
  bench_normal_free(&kept);
  TRY(sl_finalize());
  return bad;
}
