/* The watchdog: the last rank skips a collective call (it returns early, as a rank with a bug would) and
 * the others wait in it. Run with STARLOPS_TIMEOUT set: the waiting ranks must print what they wait for and
 * abort the job. Without a timeout this program hangs, so it is not part of the 1-4 rank runs. */
#include <stdio.h>

#include "starlops.h"

int main(int argc, char **argv)
{
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "sl_init: %s\n", sl_last_error());
    return 2;
  }
  int64_t dims[1] = {100};
  sl_array *x = NULL;
  sl_scalar *s = NULL;
  if (sl_array_create(&x, 1, dims, SL_FLOAT64, NULL) != SL_SUCCESS || sl_scalar_create(&s, SL_FLOAT64) != SL_SUCCESS) return 2;
  if (sl_rank() != sl_size() - 1) { /* the others: a norm, which the last rank never joins */
    sl_array_norm(x, 2.0, s);
    double v;
    sl_scalar_get(s, &v);
  }
  sl_scalar_destroy(&s);
  sl_array_destroy(&x);
  sl_finalize();
  printf("mpi_watchdog: finished (the watchdog should have aborted the job)\n");
  return 0;
}
