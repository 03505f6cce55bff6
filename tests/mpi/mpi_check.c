#include "mpi_check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lapacke.h>

int mc_failures;

void mc_report(const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[rank %d] FAIL %s:%d: ", sl_rank(), file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void mc_init(int *argc, char ***argv)
{
  sl_options o;
  sl_options_default(&o);
  /* several chunks even for small blocks, with uneven chunk sizes; $STARLOPS_CHUNK_BYTES overrides (the GPU
   * check runs the suite with one chunk per block, the case the chunked CUDA codelets take) */
  const char *env = getenv("STARLOPS_CHUNK_BYTES");
  o.chunk_bytes = env && *env ? 0 : 100;
  int rc = sl_init(argc, argv, &o);
  if (rc != SL_SUCCESS) {
    fprintf(stderr, "sl_init failed: %s: %s\n", sl_strerror(rc), sl_last_error());
    exit(2);
  }
}

int mc_finish(const char *name)
{
  int total = 0;
  MPI_Allreduce(&mc_failures, &total, 1, MPI_INT, MPI_SUM, sl_comm());
  if (sl_rank() == 0) printf("%s on %d ranks: %s (%d failed checks)\n", name, sl_size(), total ? "FAILED" : "passed", total);
  int rc = sl_finalize();
  if (rc != SL_SUCCESS) {
    fprintf(stderr, "sl_finalize: %s\n", sl_last_error());
    return 1;
  }
  return total ? 1 : 0;
}

double complex mc_value(sl_dtype dt, int64_t g, int seed)
{
  double re = sin(0.37 * (double)g + 0.1 * seed) + 0.25 * seed;
  double im = sl_dtype_is_complex(dt) ? cos(0.21 * (double)g - 0.3 * seed) : 0.0;
  return CMPLX(re, im);
}

void mc_to_dtype(sl_dtype dt, int64_t n, const double complex *src, void *dst)
{
  for (int64_t i = 0; i < n; i++) {
    switch (dt) {
    case SL_FLOAT32: ((float *)dst)[i] = (float)creal(src[i]); break;
    case SL_FLOAT64: ((double *)dst)[i] = creal(src[i]); break;
    case SL_COMPLEX64: ((float complex *)dst)[i] = (float complex)src[i]; break;
    case SL_COMPLEX128: ((double complex *)dst)[i] = src[i]; break;
    }
  }
}

void mc_from_dtype(sl_dtype dt, int64_t n, const void *src, double complex *dst)
{
  for (int64_t i = 0; i < n; i++) {
    switch (dt) {
    case SL_FLOAT32: dst[i] = ((const float *)src)[i]; break;
    case SL_FLOAT64: dst[i] = ((const double *)src)[i]; break;
    case SL_COMPLEX64: dst[i] = ((const float complex *)src)[i]; break;
    case SL_COMPLEX128: dst[i] = ((const double complex *)src)[i]; break;
    }
  }
}

const sl_dtype mc_dtypes[4] = {SL_FLOAT64, SL_COMPLEX128, SL_FLOAT32, SL_COMPLEX64};

double mc_tol(sl_dtype dt) { return dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 2e-5 : 1e-12; }

int mc_compare(sl_array *a, const double complex *ref, const char *what)
{
  return mc_compare_mag(a, ref, NULL, what, mc_tol(sl_array_dtype(a)));
}

int mc_compare_mag(sl_array *a, const double complex *ref, const double *mag, const char *what, double tol)
{
  sl_dtype dt = sl_array_dtype(a);
  int64_t n = sl_array_global_size(a);
  void *buf = malloc((size_t)n * sl_dtype_size(dt));
  double complex *got = malloc(sizeof *got * (size_t)n);
  CHECK_OK(sl_array_gather(a, -1, buf));
  mc_from_dtype(dt, n, buf, got);
  int bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (cabs(got[i] - ref[i]) > tol * fmax(1.0, mag ? mag[i] : cabs(ref[i]))) {
      if (bad++ < 3)
        CHECK(0, "%s (%s): element %lld is %g%+gi, expected %g%+gi", what, sl_dtype_name(dt), (long long)i,
              creal(got[i]), cimag(got[i]), creal(ref[i]), cimag(ref[i]));
    }
  free(buf);
  free(got);
  return bad;
}

sl_array *mc_array(int ndim, const int64_t *dims, sl_dtype dt, const sl_dist *dist, int seed, double complex **global)
{
  sl_array *a = NULL;
  CHECK_OK(sl_array_create(&a, ndim, dims, dt, dist));
  if (!a) return NULL;
  /* $STARLOPS_TEST_MIN_CHUNKS: the many-chunk runs of the suite check that blocks really are cut that finely */
  const char *minc = getenv("STARLOPS_TEST_MIN_CHUNKS");
  if (minc && sl_array_local_size(a) >= atoi(minc))
    CHECK(sl_array_nchunks(a) >= atoi(minc), "a block of %lld elements has %d chunks, fewer than STARLOPS_TEST_MIN_CHUNKS=%s",
          (long long)sl_array_local_size(a), sl_array_nchunks(a), minc);
  int64_t n = sl_array_global_size(a);
  double complex *g = malloc(sizeof *g * (size_t)n);
  void *buf = malloc((size_t)n * sl_dtype_size(dt));
  for (int64_t i = 0; i < n; i++) g[i] = mc_value(dt, i, seed);
  mc_to_dtype(dt, n, g, buf);
  CHECK_OK(sl_array_scatter(a, -1, buf));
  mc_from_dtype(dt, n, buf, g); /* the reference holds exactly what the array holds */
  free(buf);
  if (global) *global = g;
  else free(g);
  return a;
}

int mc_same_error_everywhere(int rc, int expected)
{
  const char *msg = sl_last_error();
  unsigned long h = 5381;
  for (const char *p = msg; *p; p++) h = h * 33 + (unsigned char)*p;
  long mine[2] = {rc, (long)(h & 0x7fffffff)}, lo[2], hi[2];
  MPI_Allreduce(mine, lo, 2, MPI_LONG, MPI_MIN, sl_comm());
  MPI_Allreduce(mine, hi, 2, MPI_LONG, MPI_MAX, sl_comm());
  int ok = rc == expected && lo[0] == hi[0] && lo[1] == hi[1] && msg[0] != '\0';
  if (!ok)
    mc_report(__FILE__, __LINE__, "expected %s everywhere, got %s (%s); codes/messages agree: %d/%d", sl_strerror(expected),
              sl_strerror(rc), msg, lo[0] == hi[0], lo[1] == hi[1]);
  return ok;
}

double complex *mc_gather(sl_array *a)
{
  int64_t n = sl_array_global_size(a);
  void *buf = malloc(sl_dtype_size(sl_array_dtype(a)) * (size_t)(n ? n : 1));
  double complex *z = malloc(sizeof *z * (size_t)(n ? n : 1));
  CHECK_OK(sl_array_gather(a, -1, buf));
  mc_from_dtype(sl_array_dtype(a), n, buf, z);
  free(buf);
  return z;
}

int64_t mc_share(int64_t n)
{
  int p = sl_size(), r = sl_rank(), users = p == 4 ? 3 : p;
  return r < users ? n / users + (r < n % users) : 0;
}

double mc_host_cache_default_bytes(void)
{
  double mem = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  const char *files[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(files[i], "r");
    unsigned long long v = 0;
    if (!f) continue;
    int got = fscanf(f, "%llu", &v);
    fclose(f);
    if (got == 1 && v > 0) {
      if ((double)v < mem) mem = (double)v;
      break;
    }
  }
  MPI_Comm node;
  int k = 1;
  MPI_Comm_split_type(sl_comm(), MPI_COMM_TYPE_SHARED, sl_rank(), MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &k);
  MPI_Comm_free(&node);
  return floor(mem / 8.0 / k);
}

void mc_solve_dense(int64_t n, const double complex *M, const double complex *b, double complex *x)
{
  /* OpenBLAS's complex gemv kernels (inside its triangular solves) may read a vector past its end: the matrix
   * and the right-hand side get a few spare elements */
  double complex *A = calloc((size_t)(n * n + 4), sizeof *A), *xb = calloc((size_t)(n + 4), sizeof *xb);
  lapack_int *ipiv = malloc(sizeof *ipiv * (size_t)n);
  CHECK(A && xb && ipiv, "mc_solve_dense: out of memory");
  if (A && xb && ipiv) {
    memcpy(A, M, sizeof *A * (size_t)(n * n));
    memcpy(xb, b, sizeof *xb * (size_t)n);
    int info = LAPACKE_zgesv(LAPACK_COL_MAJOR, (lapack_int)n, 1, (lapack_complex_double *)A, (lapack_int)n, ipiv,
                             (lapack_complex_double *)xb, (lapack_int)n);
    CHECK(info == 0, "LAPACKE_zgesv failed (%d)", info);
    memcpy(x, xb, sizeof *x * (size_t)n);
  }
  free(A);
  free(xb);
  free(ipiv);
}
