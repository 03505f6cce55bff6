/* .npy round trips across rank counts. Usage:
 *   mpi_npy write PATH DTYPE AXIS   writes the test array (dims 4 x 3 x 5) scattered along AXIS
 *   mpi_npy read PATH DTYPE         reads it along every axis and as a broadcast array, and checks values
 * DTYPE is 0..3 (float32, float64, complex64, complex128). Values are mc_value(dt, g, 9). */
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  if (argc < 4) {
    CHECK(0, "usage: mpi_npy write|read PATH DTYPE [AXIS]");
    return mc_finish("mpi_npy");
  }
  const char *path = argv[2];
  sl_dtype dt = (sl_dtype)atoi(argv[3]);
  int64_t dims[3] = {4, 3, 5};
  if (strcmp(argv[1], "write") == 0) {
    sl_dist d = sl_dist_scatter(argc > 4 ? atoi(argv[4]) : 0);
    sl_array *a = mc_array(3, dims, dt, &d, 9, NULL);
    if (a) CHECK_OK(sl_array_save_npy(a, path));
    sl_array_destroy(&a);
  } else {
    double complex ref[60];
    for (int i = 0; i < 60; i++) ref[i] = mc_value(dt, i, 9);
    /* round through the dtype so the reference holds what the file holds */
    char tmp[60 * 16];
    mc_to_dtype(dt, 60, ref, tmp);
    mc_from_dtype(dt, 60, tmp, ref);
    sl_dist dists[4] = {sl_dist_scatter(0), sl_dist_scatter(1), sl_dist_scatter(2), sl_dist_broadcast()};
    for (int k = 0; k < 4; k++) {
      sl_array *a = NULL;
      CHECK_OK(sl_array_load_npy(&a, path, &dists[k]));
      if (!a) continue;
      CHECK(sl_array_dtype(a) == dt && sl_array_ndim(a) == 3 && sl_array_dims(a)[2] == 5, "header read back");
      mc_compare(a, ref, "npy read");
      sl_array_destroy(&a);
    }
  }
  return mc_finish("mpi_npy");
}
