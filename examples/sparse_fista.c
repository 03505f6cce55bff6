/* sparse_fista: sparse recovery. A short, wide operator (a VStack of dense blocks, rows over the ranks)
 * observes a model with a few spikes; FISTA with soft thresholding (step from power iteration) recovers it,
 * and ISTA runs the same number of iterations for comparison. Checks the support and the error.
 *   mpirun -n 2 ./sparse_fista [--rows R] [--cols C] [--spikes K] [--eps E] [--niter N] [--quiet]
 * R rows per rank (default 60), C model size (default 256), K spikes (default 6). Exits non-zero if FISTA
 * misses the model by more than 5%. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"

static void usage(void) { printf("usage: sparse_fista [--rows R] [--cols C] [--spikes K] [--eps E] [--niter N] [--quiet]\n"); }

int main(int argc, char **argv)
{
  int64_t rows = 60, cols = 256, spikes = 6;
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 1000;
  o.eps = 1e-2;
  o.tol = 1e-10;
  o.tol_rule = SL_TOL_ABSOLUTE;
  o.check_every = 25;
  o.show = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--cols") && i + 1 < argc) cols = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--spikes") && i + 1 < argc) spikes = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--eps") && i + 1 < argc) o.eps = atof(argv[++i]);
    else if (!strcmp(argv[i], "--niter") && i + 1 < argc) o.niter = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--quiet")) o.show = 0;
    else {
      usage();
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (rows < 1 || cols < 1 || spikes < 1 || spikes > cols) {
    usage();
    return 2;
  }
  TRY(sl_init(&argc, &argv, NULL));
  int me = sl_rank();
  double *a = malloc(sizeof(double) * (size_t)(rows * cols));
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      double gi = (double)(me * rows + i);
      a[i * cols + j] = sin(0.37 * gi * gi + 1.3 * gi * (double)j + 0.71 * (double)j) / sqrt((double)(rows * sl_size()));
    }
  sl_op *A;
  TRY(sl_op_vstack_matrix(&A, a, rows, cols, 1, SL_FLOAT64));
  free(a);
  sl_array *xt, *y, *x, *xi;
  TRY(sl_op_create_domain(A, &xt));
  TRY(sl_op_create_range(A, &y));
  TRY(sl_op_create_domain(A, &x));
  TRY(sl_op_create_domain(A, &xi));
  double *p;
  TRY(sl_array_acquire(xt, SL_WRITE, (void **)&p)); /* replicated: every rank writes the same spikes */
  for (int64_t j = 0; j < cols; j++) p[j] = 0;
  for (int64_t k = 0; k < spikes; k++) p[(k * 37 + 11) % cols] = (k % 2 ? -1.0 : 1.0) * (1.0 + 0.25 * (double)k);
  TRY(sl_array_release(xt));
  TRY(sl_op_apply(A, SL_FORWARD, xt, y));
  sl_solver_info fi, ii;
  TRY(sl_solve_fista(A, y, x, &o, &fi));
  o.show = 0;
  o.alpha = fi.alpha;
  o.niter = fi.iterations;
  o.tol = 0;
  TRY(sl_solve_ista(A, y, xi, &o, &ii));
  double *px, *pi, *pt, d = 0, di = 0, nt = 0;
  int64_t missed = 0;
  TRY(sl_array_acquire(x, SL_READ, (void **)&px));
  TRY(sl_array_acquire(xi, SL_READ, (void **)&pi));
  TRY(sl_array_acquire(xt, SL_READ, (void **)&pt));
  for (int64_t j = 0; j < cols; j++) {
    d += (px[j] - pt[j]) * (px[j] - pt[j]);
    di += (pi[j] - pt[j]) * (pi[j] - pt[j]);
    nt += pt[j] * pt[j];
    missed += (pt[j] != 0) != (fabs(px[j]) > 0.1);
  }
  TRY(sl_array_release(x));
  TRY(sl_array_release(xi));
  TRY(sl_array_release(xt));
  double ef = sqrt(d / nt), ei = sqrt(di / nt);
  int ok = ef < 0.05 && missed == 0;
  if (me == 0) {
    printf("sparse_fista: %lld observations of %lld unknowns with %lld spikes on %d ranks, eps %g, step %.4e\n",
           (long long)(rows * sl_size()), (long long)cols, (long long)spikes, sl_size(), o.eps, fi.alpha);
    printf("  FISTA: %d iterations, %.3f s, relative error %.2e, support %s\n", fi.iterations, fi.seconds, ef,
           missed ? "wrong" : "recovered");
    printf("  ISTA : %d iterations, %.3f s, relative error %.2e\n", ii.iterations, ii.seconds, ei);
    printf("sparse_fista: %s\n", ok ? "PASSED" : "FAILED");
  }
  sl_array *arr[4] = {xt, y, x, xi};
  for (int i = 0; i < 4; i++) sl_array_destroy(&arr[i]);
  sl_op_destroy(&A);
  TRY(sl_finalize());
  return ok ? 0 : 1;
}
