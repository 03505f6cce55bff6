/* Bad input: every rank returns the same error code and message, nothing aborts or hangs, and the
 * library keeps working afterwards. Run with 1 to 4 ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"

#define EXPECT(call, code) CHECK(mc_same_error_everywhere((call), (code)), "%s", #call)

static void bad_creation(void)
{
  sl_array *a = NULL;
  int64_t dims[2] = {6, 4}, zero[2] = {6, 0};
  EXPECT(sl_array_create(&a, 2, zero, SL_FLOAT64, NULL), SL_E_DIMS);
  EXPECT(sl_array_create(&a, 0, dims, SL_FLOAT64, NULL), SL_E_INVALID);
  EXPECT(sl_array_create(&a, 2, NULL, SL_FLOAT64, NULL), SL_E_INVALID);
  EXPECT(sl_array_create(NULL, 2, dims, SL_FLOAT64, NULL), SL_E_INVALID);
  EXPECT(sl_array_create(&a, 2, dims, (sl_dtype)7, NULL), SL_E_DTYPE);
  /* sl_array_wrap_device: its own arguments agreed with the layout (one gather): a device without a CUDA worker
   * here, NULL a, ghosts, a bad layout; and a different refusal on each rank (rank 0's ghosts, the others' device):
   * rank 0's everywhere */
  EXPECT(sl_array_wrap_device(&a, NULL, 99, 2, dims, SL_FLOAT64, NULL), SL_E_BACKEND);
  CHECK(a == NULL && strstr(sl_last_error(), "argument 3 (device = 99)"), "wrap_device without a worker: %s", sl_last_error());
  EXPECT(sl_array_wrap_device(NULL, NULL, 0, 2, dims, SL_FLOAT64, NULL), SL_E_INVALID);
  EXPECT(sl_array_wrap_device(&a, NULL, 99, 2, zero, SL_FLOAT64, NULL), SL_E_BACKEND);
  sl_dist gh = sl_dist_default();
  gh.ghost_lo = 1;
  EXPECT(sl_array_wrap_device(&a, NULL, 99, 2, dims, SL_FLOAT64, sl_rank() == 0 ? &gh : NULL), SL_E_INVALID);
  CHECK(a == NULL && strstr(sl_last_error(), "argument 7 (dist)"), "wrap_device, refusals differing between ranks: %s",
        sl_last_error());
  sl_dist d = sl_dist_scatter(2);
  EXPECT(sl_array_create(&a, 2, dims, SL_FLOAT64, &d), SL_E_DIST);
  d = sl_dist_scatter(0);
  d.ghost_lo = -1;
  EXPECT(sl_array_create(&a, 2, dims, SL_FLOAT64, &d), SL_E_DIST);
  /* local dims that do not tile the axis */
  d = sl_dist_scatter(0);
  int64_t n = 1;
  d.local_n = &n;
  EXPECT(sl_array_create(&a, 2, dims, SL_FLOAT64, &d), sl_size() == 6 ? SL_SUCCESS : SL_E_DIST);
  /* local dims given on rank 0 only */
  if (sl_size() > 1) {
    int64_t all = sl_rank() == 0 ? 6 : 0;
    d.local_n = sl_rank() == 0 ? &all : NULL;
    EXPECT(sl_array_create(&a, 2, dims, SL_FLOAT64, &d), SL_E_DIST);
    /* arguments that differ between ranks: one rank's dims */
    int64_t mine[2] = {6, sl_rank() == 1 ? 5 : 4};
    EXPECT(sl_array_create(&a, 2, mine, SL_FLOAT64, NULL), SL_E_INVALID);
    /* a rank-dependent mask */
    int *mask = calloc((size_t)sl_size(), sizeof(int));
    mask[0] = sl_rank() == 0;
    d = sl_dist_scatter(0);
    d.mask = mask;
    EXPECT(sl_array_create(&a, 2, dims, SL_FLOAT64, &d), SL_E_DIST);
    free(mask);
    /* only rank 1 fails a local check: the others report its message */
    sl_dtype dt = sl_rank() == 1 ? (sl_dtype)-3 : SL_FLOAT64;
    EXPECT(sl_array_create(&a, 2, dims, dt, NULL), SL_E_DTYPE);
  }
  sl_dist b = sl_dist_broadcast();
  b.ghost_hi = 1;
  EXPECT(sl_array_create(&a, 2, dims, SL_FLOAT64, &b), SL_E_DIST);
  CHECK(a == NULL, "no array is returned on failure");
}

static void bad_operations(void)
{
  int64_t d1[2] = {5, 3}, d2[2] = {5, 4};
  sl_array *x = NULL, *y = NULL, *z = NULL, *w = NULL, *f = NULL;
  sl_dist ax1 = sl_dist_scatter(1);
  CHECK_OK(sl_array_create(&x, 2, d1, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_create(&y, 2, d2, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_create(&z, 2, d1, SL_COMPLEX128, NULL));
  CHECK_OK(sl_array_create(&w, 2, d1, SL_FLOAT64, &ax1));
  CHECK_OK(sl_array_create(&f, 2, d1, SL_FLOAT32, NULL));
  if (!x || !y || !z || !w || !f) return;
  EXPECT(sl_array_axpby(x, SL_REAL(1), y, SL_REAL(1)), SL_E_DIMS);
  EXPECT(sl_array_axpby(x, SL_REAL(1), z, SL_REAL(1)), SL_E_DTYPE);
  EXPECT(sl_array_axpby(x, SL_REAL(1), w, SL_REAL(1)), SL_E_DIST);
  EXPECT(sl_array_axpby(x, SL_REAL(1), NULL, SL_REAL(1)), SL_E_INVALID);
  EXPECT(sl_array_copy(x, f), SL_E_DTYPE);
  EXPECT(sl_array_multiply(x, x, y), SL_E_DIMS);
  EXPECT(sl_array_fill(NULL, SL_REAL(0)), SL_E_INVALID);
  sl_scalar *s = NULL;
  CHECK_OK(sl_scalar_create(&s, SL_FLOAT64));
  EXPECT(sl_array_dot(x, y, s), SL_E_DIMS);
  EXPECT(sl_array_vdot(x, NULL, s), SL_E_INVALID);
  EXPECT(sl_array_dot(x, x, NULL), SL_E_INVALID);
  EXPECT(sl_array_norm(x, -1, s), SL_E_INVALID);
  EXPECT(sl_array_norm(x, NAN, s), SL_E_INVALID);
  EXPECT(sl_scalar_create(NULL, SL_FLOAT64), SL_E_INVALID);
  EXPECT(sl_array_gather(x, sl_size(), NULL), SL_E_INVALID);
  EXPECT(sl_array_gather(x, -1, NULL), SL_E_INVALID);
  EXPECT(sl_array_scatter(x, 0, NULL), SL_E_INVALID);
  void *p;
  EXPECT(sl_array_acquire(x, (sl_access)9, &p), SL_E_INVALID);
  EXPECT(sl_array_release(x), SL_E_STATE);
  EXPECT(sl_array_exchange_ghosts(NULL), SL_E_INVALID);
  int64_t t;
  EXPECT(sl_tag_alloc(0, &t), SL_E_INVALID);
  EXPECT(sl_init(NULL, NULL, NULL), SL_E_STATE);
  /* after all that, the arrays still work */
  CHECK_OK(sl_array_fill(x, SL_REAL(2)));
  CHECK_OK(sl_array_norm(x, 1, s));
  double v = 0;
  CHECK_OK(sl_scalar_get(s, &v));
  CHECK(v == 30.0, "arrays work after errors: norm 1 = %g", v);
  sl_scalar_destroy(&s);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&z);
  sl_array_destroy(&w);
  sl_array_destroy(&f);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
  if (sl_rank() == 0) {
    FILE *f = fopen(path, "wb");
    fwrite(p, 1, n, f);
    fclose(f);
  }
  MPI_Barrier(sl_comm());
}

static void bad_files(const char *dir)
{
  char path[512];
  sl_array *a = NULL;
  snprintf(path, sizeof path, "%s/does-not-exist.npy", dir);
  EXPECT(sl_array_load_npy(&a, path, NULL), SL_E_IO);
  EXPECT(sl_array_load_npy(&a, NULL, NULL), SL_E_INVALID);
  /* a valid file, then truncated */
  int64_t dims[1] = {10};
  CHECK_OK(sl_array_create(&a, 1, dims, SL_FLOAT64, NULL));
  snprintf(path, sizeof path, "%s/trunc.npy", dir);
  CHECK_OK(sl_array_save_npy(a, path));
  sl_array_destroy(&a);
  if (sl_rank() == 0) CHECK(truncate(path, 128 + 40) == 0, "truncate");
  MPI_Barrier(sl_comm());
  EXPECT(sl_array_load_npy(&a, path, NULL), SL_E_FORMAT);
  /* an int32 file, a big-endian file, a Fortran-ordered file, a text file */
  char hdr[128];
  const char *dicts[3] = {"{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }",
                          "{'descr': '>f8', 'fortran_order': False, 'shape': (4,), }",
                          "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }"};
  int codes[3] = {SL_E_DTYPE, SL_E_DTYPE, SL_E_FORMAT};
  for (int i = 0; i < 3; i++) {
    memset(hdr, ' ', sizeof hdr);
    memcpy(hdr, "\x93NUMPY\x01\x00\x76\x00", 10);
    memcpy(hdr + 10, dicts[i], strlen(dicts[i]));
    hdr[127] = '\n';
    char file[160];
    memcpy(file, hdr, 128);
    memset(file + 128, 0, 32);
    snprintf(path, sizeof path, "%s/bad%d.npy", dir, i);
    write_bytes(path, file, sizeof file);
    EXPECT(sl_array_load_npy(&a, path, NULL), codes[i]);
  }
  snprintf(path, sizeof path, "%s/text.npy", dir);
  write_bytes(path, "hello, this is not numpy\n", 25);
  EXPECT(sl_array_load_npy(&a, path, NULL), SL_E_FORMAT);
  CHECK(a == NULL, "no array is returned on failure");
  snprintf(path, sizeof path, "%s/no-such-dir/x.npy", dir);
  CHECK_OK(sl_array_create(&a, 1, dims, SL_FLOAT64, NULL));
  EXPECT(sl_array_save_npy(a, path), SL_E_IO);
  sl_array_destroy(&a);
}

int main(int argc, char **argv)
{
  /* before sl_init: a clear state error, no crash */
  sl_array *a = NULL;
  int64_t dims[1] = {3};
  int rc = sl_array_create(&a, 1, dims, SL_FLOAT64, NULL);
  mc_init(&argc, &argv);
  CHECK(rc == SL_E_STATE, "create before init gives SL_E_STATE, got %d", rc);
  bad_creation();
  bad_operations();
  bad_files(argc > 1 ? argv[1] : "/tmp");
  return mc_finish("mpi_errors");
}
