/* Backend selection: run with STARLOPS_COMM set. Usage: mpi_comm_select EXPECTED_CODE [TEXT]
 * EXPECTED_CODE 0: sl_init must succeed and report backend TEXT; otherwise sl_init must fail with that
 * code on every rank, with the same message, containing TEXT. MPI is started here so that the verdict can
 * be agreed after a failed sl_init. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starlops.h"

int main(int argc, char **argv)
{
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int expected = argc > 1 ? atoi(argv[1]) : 0;
  const char *text = argc > 2 ? argv[2] : "";
  int rc = sl_init(&argc, &argv, NULL);
  int ok = 1, rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (expected == 0) {
    ok = rc == SL_SUCCESS && strcmp(sl_comm_backend_name(), text) == 0;
    if (!ok) fprintf(stderr, "rank %d: rc %d (%s), backend %s, expected %s\n", rank, rc, sl_last_error(),
                     rc == SL_SUCCESS ? sl_comm_backend_name() : "-", text);
    if (rc == SL_SUCCESS) sl_finalize();
  } else {
    ok = rc == expected && strstr(sl_last_error(), text) != NULL && !sl_initialized();
    /* the same message everywhere: compare its hash */
    unsigned long h = 5381, hmin, hmax;
    for (const char *s = sl_last_error(); *s; s++) h = h * 33 + (unsigned char)*s;
    MPI_Allreduce(&h, &hmin, 1, MPI_UNSIGNED_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hmax, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
    ok = ok && hmin == hmax;
    if (rank == 0 || !ok) fprintf(stderr, "rank %d: rc %d, message '%s' (%s)\n", rank, rc, sl_last_error(), ok ? "as expected" : "NOT as expected");
  }
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_comm_select (STARLOPS_COMM=%s): %s\n", getenv("STARLOPS_COMM") ? getenv("STARLOPS_COMM") : "", all ? "ok" : "FAILED");
  MPI_Finalize();
  return all ? 0 : 1;
}
