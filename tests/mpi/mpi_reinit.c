/* sl_init again after sl_finalize, MPI started by the program: a scalar, an array, an operator and a proximal
 * operator of the first session are refused (SL_E_STATE) by the calls given them in the second (their handles,
 * slots and groups went with the first session), and the second session's own scalars, arrays, operators and
 * reductions work. Run with 1 to 3 ranks. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "starlops.h"

/* the first session's objects: refused later, kept reachable to the end (valgrind) */
static sl_scalar *stale;
static sl_array *stale_a, *stale_m; /* stale_m: masked (its group freed at sl_finalize) */
static sl_op *stale_op;
static sl_prox *stale_prox;

/* rc must be SL_E_STATE with the message naming the session's end and `what` */
static int refused(int rank, const char *call, int rc, const char *what)
{
  const char *m = sl_last_error();
  if (rc == SL_E_STATE && strstr(m, "before the last sl_finalize") && strstr(m, what)) return 1;
  fprintf(stderr, "rank %d: %s on the first session's object gave %d (%s)\n", rank, call, rc, m);
  return 0;
}

/* every call given the first session's array or operator refuses it; the second session's objects still work */
static int stale_refused(int rank)
{
  int ok = 1;
  int64_t dims[1] = {1001};
  sl_array *x = NULL, *y = NULL, *t = NULL;
  sl_op *op = NULL;
  sl_scalar *s = NULL;
  double err = 0, buf[1001];
  sl_solver_info info;
  ok = ok && sl_array_create(&x, 1, dims, SL_FLOAT64, NULL) == SL_SUCCESS;
  ok = ok && sl_array_create(&y, 1, dims, SL_FLOAT64, NULL) == SL_SUCCESS;
  ok = ok && sl_scalar_create(&s, SL_FLOAT64) == SL_SUCCESS;
  ok = ok && sl_array_fill(x, SL_REAL(1.0)) == SL_SUCCESS && sl_array_fill(y, SL_REAL(1.0)) == SL_SUCCESS;
  if (!ok) return 0;
  ok &= refused(rank, "sl_array_fill", sl_array_fill(stale_a, SL_REAL(1.0)), "argument 1");
  ok &= refused(rank, "sl_array_fill_random", sl_array_fill_random(stale_a, 1), "argument 1");
  ok &= refused(rank, "sl_array_fill_random (masked)", sl_array_fill_random(stale_m, 1), "argument 1");
  ok &= refused(rank, "sl_array_copy", sl_array_copy(x, stale_a), "sl_array_copy: argument 2 (src)");
  ok &= refused(rank, "sl_array_axpby", sl_array_axpby(stale_a, SL_REAL(1.0), x, SL_REAL(1.0)), "argument 1");
  ok &= refused(rank, "sl_array_dot", sl_array_dot(x, stale_a, s), "argument 2 (y)");
  ok &= refused(rank, "sl_array_norm", sl_array_norm(stale_a, 2.0, s), "argument 1 (x)");
  ok &= refused(rank, "sl_array_gather", sl_array_gather(stale_a, -1, buf), "argument 1 (a)");
  ok &= refused(rank, "sl_array_sync", sl_array_sync(stale_a), "argument 1 (a)");
  void *p = NULL;
  ok &= refused(rank, "sl_array_acquire", sl_array_acquire(stale_a, SL_READ, &p), "argument 1 (a)");
  ok &= refused(rank, "sl_array_create_like", sl_array_create_like(&t, stale_a), "argument 2 (like)");
  ok &= t == NULL;
  ok &= refused(rank, "sl_op_identity", sl_op_identity(&op, stale_a), "argument 2 (like)");
  ok &= refused(rank, "sl_op_first_derivative",
                sl_op_first_derivative(&op, stale_a, 0, 1.0, SL_DERIV_CENTERED, 3, 0), "argument 2 (like)");
  ok &= op == NULL;
  ok &= refused(rank, "sl_op_apply", sl_op_apply(stale_op, SL_FORWARD, x, y), "argument 1 (op)");
  ok &= refused(rank, "sl_op_sum", sl_op_sum(&op, stale_op, stale_op), "argument 2 (a)");
  ok &= refused(rank, "sl_op_adjoint", sl_op_adjoint(&op, stale_op), "argument 2 (a)");
  ok &= refused(rank, "sl_dottest", sl_dottest(stale_op, 1, &err), "argument 1 (op)");
  ok &= refused(rank, "sl_solve_cg", sl_solve_cg(stale_op, y, x, NULL, &info), "argument 1 (A)");
  double sv = 0;
  ok &= refused(rank, "sl_scalar_get", sl_scalar_get(stale, &sv), "argument 1 (s)");
  ok &= refused(rank, "sl_scalar_set", sl_scalar_set(stale, SL_REAL(2.0)), "argument 1 (s)");
  ok &= refused(rank, "sl_scalar_op", sl_scalar_op(s, SL_SOP_ADD, s, stale), "argument 4 (b)");
  ok &= refused(rank, "sl_array_dot (the result)", sl_array_dot(x, y, stale), "argument 3 (s)");
  ok &= refused(rank, "sl_array_norm (the result)", sl_array_norm(x, 2.0, stale), "argument 3 (s)");
  ok &= refused(rank, "sl_array_axpby_s", sl_array_axpby_s(y, SL_REAL(1.0), stale, x, SL_REAL(1.0), NULL), "argument 3 (sa)");
  ok &= refused(rank, "sl_op_free_workspace", sl_op_free_workspace(stale_op), "argument 1 (op)");
  ok &= refused(rank, "sl_prox_apply", sl_prox_apply(stale_prox, 1.0, x, y), "L1");
  ok &= refused(rank, "sl_prox_apply (x)", sl_prox_apply(stale_prox, 1.0, stale_a, y), "sl_prox_apply: argument 3 (x)");
  sl_prox *g = NULL;
  ok &= refused(rank, "sl_prox_postcompose", sl_prox_postcompose(&g, stale_prox, 1.0, 0.0), "argument 2 (f");
  ok &= g == NULL;
  ok &= refused(rank, "sl_prox_destroy", sl_prox_destroy(&stale_prox), "argument 1");
  ok &= stale_prox != NULL;
  ok &= refused(rank, "sl_op_destroy", sl_op_destroy(&stale_op), "argument 1");
  ok &= stale_op != NULL;
  ok &= refused(rank, "sl_array_destroy", sl_array_destroy(&stale_a), "argument 1");
  ok &= stale_a != NULL;
  /* the second session's own objects were left as they were */
  double v = 0;
  ok = ok && sl_array_dot(x, y, s) == SL_SUCCESS && sl_scalar_get(s, &v) == SL_SUCCESS && v == 1001.0;
  sl_scalar_destroy(&s);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  return ok;
}

/* the dot of an array of ones with one of twos (2 n), read back on the host */
static int dot_check(int64_t n, double *got)
{
  sl_array *x = NULL, *y = NULL;
  sl_scalar *s = NULL;
  int64_t dims[1] = {n};
  int rc = sl_array_create(&x, 1, dims, SL_FLOAT64, NULL);
  if (rc == SL_SUCCESS) rc = sl_array_create(&y, 1, dims, SL_FLOAT64, NULL);
  if (rc == SL_SUCCESS) rc = sl_array_fill(x, (sl_cscalar){1.0, 0.0});
  if (rc == SL_SUCCESS) rc = sl_array_fill(y, (sl_cscalar){2.0, 0.0});
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&s, SL_FLOAT64);
  if (rc == SL_SUCCESS) rc = sl_array_dot(x, y, s);
  if (rc == SL_SUCCESS) rc = sl_scalar_get(s, got);
  sl_scalar_destroy(&s);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  return rc;
}

int main(int argc, char **argv)
{
  int provided, rank = 0, size = 1, ok = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t n = 1001;
  const double want = 2.0 * (double)n;
  for (int session = 0; session < 2; session++) {
    if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
      fprintf(stderr, "rank %d: sl_init (session %d): %s\n", rank, session, sl_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (session == 0) {
      int64_t dims[1] = {1001};
      ok = ok && sl_scalar_create(&stale, SL_FLOAT64) == SL_SUCCESS;
      ok = ok && sl_array_create(&stale_a, 1, dims, SL_FLOAT64, NULL) == SL_SUCCESS;
      static int zeros[64]; /* one group of every rank: a masked array */
      sl_dist md = sl_dist_scatter(0);
      md.mask = zeros;
      ok = ok && size <= 64 && sl_array_create(&stale_m, 1, dims, SL_FLOAT64, &md) == SL_SUCCESS;
      ok = ok && sl_op_second_derivative(&stale_op, stale_a, 0, 1.0, SL_DERIV_CENTERED, 0) == SL_SUCCESS;
      ok = ok && sl_prox_l1(&stale_prox, 0.5) == SL_SUCCESS;
    } else {
      int rc = sl_scalar_destroy(&stale);
      if (rc != SL_E_STATE || !stale || !strstr(sl_last_error(), "before the last sl_finalize")) {
        fprintf(stderr, "rank %d: destroying the first session's scalar gave %d (%s)\n", rank, rc, sl_last_error());
        ok = 0;
      }
      ok &= stale_refused(rank);
    }
    double got = NAN;
    int rc = dot_check(n, &got);
    if (rc != SL_SUCCESS || got != want) {
      fprintf(stderr, "rank %d: session %d: dot gave %d, %.17g (want %.17g)\n", rank, session, rc, got, want);
      ok = 0;
    }
    sl_finalize();
  }
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_reinit on %d ranks: %s\n", size, all ? "passed" : "FAILED");
  MPI_Finalize();
  return all ? 0 : 1;
}
