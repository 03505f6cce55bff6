/* starlops_info: prints the version, ranks, workers per rank, comm backend and build options.
 * Run it as `mpirun -n P starlops_info` to see what a launch gets. */
#include <stdio.h>

#include "starlops.h"

int main(int argc, char **argv)
{
  int rc = sl_init(&argc, &argv, NULL);
  if (rc != SL_SUCCESS) {
    fprintf(stderr, "starlops_info: %s: %s\n", sl_strerror(rc), sl_last_error());
    return 1;
  }
  rc = sl_info_print(stdout);
  if (rc != SL_SUCCESS) fprintf(stderr, "starlops_info: %s\n", sl_last_error());
  int fin = sl_finalize();
  return rc != SL_SUCCESS || fin != SL_SUCCESS;
}
