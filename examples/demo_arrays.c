/* demo_arrays: a distributed 2-D field, vector operations as tasks, reductions that stay on the task graph,
 * and a .npy file NumPy can open.
 *   mpirun -n 2 ./demo_arrays [--n NY NX] [--axis A] [--dtype float32|float64|complex64|complex128]
 *                             [--out FILE.npy] [--verbose]
 * It checks the results against closed forms and exits non-zero if they disagree. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"


static void usage(void)
{
  printf("usage: demo_arrays [--n NY NX] [--axis A] [--dtype float32|float64|complex64|complex128] "
         "[--out FILE.npy] [--verbose]\n");
}

int main(int argc, char **argv)
{
  int64_t dims[2] = {1000, 777};
  int axis = 0, verbose = 0;
  sl_dtype dt = SL_FLOAT64;
  const char *out = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage();
      return 0;
    } else if (!strcmp(argv[i], "--n") && i + 2 < argc) {
      dims[0] = atoll(argv[++i]);
      dims[1] = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--axis") && i + 1 < argc) {
      axis = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
      const char *n = argv[++i];
      int found = 0;
      for (int t = 0; t < SL_NDTYPES; t++)
        if (!strcmp(n, sl_dtype_name((sl_dtype)t))) dt = (sl_dtype)t, found = 1;
      if (!found) {
        usage();
        return 2;
      }
    } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
      out = argv[++i];
    } else if (!strcmp(argv[i], "--verbose")) {
      verbose = 1;
    } else {
      usage();
      return 2;
    }
  }
  sl_options o;
  sl_options_default(&o);
  o.verbose = verbose;
  TRY(sl_init(&argc, &argv, &o));

  sl_dist d = sl_dist_scatter(axis);
  sl_array *x, *y;
  TRY(sl_array_create(&x, 2, dims, dt, &d));
  TRY(sl_array_create_like(&y, x));
  printf("[rank %d] holds %lld x %lld of %lld x %lld (%s, axis %d, %d chunks)\n", sl_rank(),
         (long long)sl_array_local_dims(x)[0], (long long)sl_array_local_dims(x)[1], (long long)dims[0],
         (long long)dims[1], sl_dtype_name(dt), axis, sl_array_nchunks(x));

  /* x = 1, y = 2; y = 3 x - y = 1; x = x .* y * 4 = 4 */
  TRY(sl_array_fill(x, SL_REAL(1)));
  TRY(sl_array_fill(y, SL_REAL(2)));
  TRY(sl_array_axpby(y, SL_REAL(3), x, SL_REAL(-1)));
  TRY(sl_array_multiply(x, x, y));
  TRY(sl_array_scale(x, SL_REAL(4)));
  sl_scalar *dot, *nrm, *mx;
  TRY(sl_scalar_create(&dot, dt));
  TRY(sl_scalar_create(&nrm, dt));
  TRY(sl_scalar_create(&mx, dt));
  TRY(sl_array_dot(x, y, dot));
  TRY(sl_array_norm(x, 2, nrm));
  TRY(sl_array_norm(x, INFINITY, mx));
  sl_cscalar vdot, vnrm, vmx;
  TRY(sl_scalar_get_c(dot, &vdot));
  TRY(sl_scalar_get_c(nrm, &vnrm));
  TRY(sl_scalar_get_c(mx, &vmx));
  double n = (double)dims[0] * (double)dims[1];
  double rel = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-5 : 1e-12;
  int ok = fabs(vdot.re - 4 * n) <= rel * 4 * n && fabs(vnrm.re - 4 * sqrt(n)) <= rel * 4 * sqrt(n) && vmx.re == 4;
  if (sl_rank() == 0) {
    printf("dot(x, y) = %.17g (expected %.17g)\n", vdot.re, 4 * n);
    printf("||x||_2   = %.17g (expected %.17g)\n", vnrm.re, 4 * sqrt(n));
    printf("||x||_inf = %.17g (expected 4)\n", vmx.re);
  }
  if (out) {
    TRY(sl_array_save_npy(x, out));
    if (sl_rank() == 0) printf("wrote %s (numpy.load it: every value is 4)\n", out);
  }
  sl_scalar_destroy(&dot);
  sl_scalar_destroy(&nrm);
  sl_scalar_destroy(&mx);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  TRY(sl_finalize());
  if (!ok) fprintf(stderr, "demo_arrays: results disagree with the closed forms\n");
  return ok ? 0 : 1;
}
