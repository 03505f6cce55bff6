/* sl_init again after sl_finalize, MPI started by the program: a scalar of the first session is refused by
 * sl_scalar_destroy (its home was released at sl_finalize) and the second session's scalars and reductions work,
 * their values in fresh slots. Run with 1 to 3 ranks. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "starlops.h"

static sl_scalar *stale; /* the first session's scalar: refused later, kept reachable to the end (valgrind) */

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
      ok = ok && sl_scalar_create(&stale, SL_FLOAT64) == SL_SUCCESS;
    } else {
      int rc = sl_scalar_destroy(&stale);
      if (rc != SL_E_STATE || !stale || !strstr(sl_last_error(), "before the last sl_finalize")) {
        fprintf(stderr, "rank %d: destroying the first session's scalar gave %d (%s)\n", rank, rc, sl_last_error());
        ok = 0;
      }
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
