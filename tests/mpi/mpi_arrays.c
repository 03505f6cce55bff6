/* Multi-rank checks of sl_array: layouts, scatter/gather, vector operations and reductions in the four
 * dtypes along every axis, broadcast arrays, masks, user local dims, ghosts and wrapping. Each result is
 * compared with a serial computation on the gathered data. Run with 1 to 4 ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

static const sl_dtype dtypes[SL_NDTYPES] = {SL_FLOAT32, SL_FLOAT64, SL_COMPLEX64, SL_COMPLEX128};

/* Layouts follow the pylops-mpi rule: the first n % P ranks get one more. */
static void test_layout(void)
{
  int P = sl_size(), r = sl_rank();
  int64_t dims[3] = {5, 2, 7};
  for (int axis = 0; axis < 3; axis++) {
    sl_dist d = sl_dist_scatter(axis);
    sl_array *a = NULL;
    CHECK_OK(sl_array_create(&a, 3, dims, SL_FLOAT64, &d));
    if (!a) continue;
    int64_t n = dims[axis], off = 0;
    for (int q = 0; q < P; q++) {
      int64_t expect = n / P + (q < n % P);
      CHECK(sl_array_count_of(a, q) == expect, "axis %d: rank %d count %lld, expected %lld", axis, q,
            (long long)sl_array_count_of(a, q), (long long)expect);
      if (q < r) off += expect;
    }
    CHECK(sl_array_local_offset(a) == off, "axis %d: offset %lld, expected %lld", axis,
          (long long)sl_array_local_offset(a), (long long)off);
    CHECK(sl_array_local_dims(a)[axis] == n / P + (r < n % P), "axis %d: local dim", axis);
    CHECK(sl_array_local_size(a) == 5 * 2 * 7 / dims[axis] * sl_array_local_dims(a)[axis], "local size");
    sl_array_destroy(&a);
  }
}

static void test_scatter_gather(void)
{
  int P = sl_size();
  int64_t dims[3] = {3, 4, 5};
  for (int axis = 0; axis < 3; axis++)
    for (int t = 0; t < SL_NDTYPES; t++) {
      sl_dtype dt = dtypes[t];
      sl_dist d = sl_dist_scatter(axis);
      double complex *g = NULL;
      sl_array *a = mc_array(3, dims, dt, &d, 1, &g);
      if (!a) continue;
      mc_compare(a, g, "scatter(-1)/allgather");
      /* scatter from the last rank, gather to rank 0 */
      size_t bytes = 60 * sl_dtype_size(dt);
      void *buf = calloc(1, bytes), *back = calloc(1, bytes);
      mc_to_dtype(dt, 60, g, buf);
      CHECK_OK(sl_array_fill(a, SL_REAL(0)));
      CHECK_OK(sl_array_scatter(a, P - 1, sl_rank() == P - 1 ? buf : NULL));
      CHECK_OK(sl_array_gather(a, 0, sl_rank() == 0 ? back : NULL));
      if (sl_rank() == 0) CHECK(memcmp(buf, back, bytes) == 0, "scatter(P-1)/gather(0) axis %d %s", axis, sl_dtype_name(dt));
      free(buf);
      free(back);
      free(g);
      sl_array_destroy(&a);
    }
}

/* Every element-wise operation against the same formula applied to the global reference. */
static void test_elementwise(sl_dtype dt, const sl_dist *d, int ndim, const int64_t *dims)
{
  double complex *gx, *gy, *gz;
  sl_array *x = mc_array(ndim, dims, dt, d, 1, &gx);
  sl_array *y = mc_array(ndim, dims, dt, d, 2, &gy);
  sl_array *z = mc_array(ndim, dims, dt, d, 3, &gz);
  if (!x || !y || !z) return;
  int64_t n = sl_array_global_size(x);
  int cplx = sl_dtype_is_complex(dt);
  sl_cscalar a = {1.5, cplx ? -0.5 : 0}, b = {-0.75, cplx ? 0.25 : 0};
  double complex ac = CMPLX(a.re, a.im), bc = CMPLX(b.re, b.im);
  double complex *ref = malloc(sizeof *ref * (size_t)n);

  CHECK_OK(sl_array_axpby(y, a, x, b));
  for (int64_t i = 0; i < n; i++) ref[i] = ac * gx[i] + bc * gy[i];
  mc_compare(y, ref, "axpby");

  CHECK_OK(sl_array_axpby(z, a, x, SL_REAL(0))); /* beta = 0 never reads z */
  for (int64_t i = 0; i < n; i++) ref[i] = ac * gx[i];
  mc_compare(z, ref, "axpby beta=0");

  CHECK_OK(sl_array_scale(x, b));
  for (int64_t i = 0; i < n; i++) gx[i] *= bc;
  mc_compare(x, gx, "scale");

  CHECK_OK(sl_array_multiply(z, x, y)); /* z = x .* y, with y = a x0 + b y0 */
  for (int64_t i = 0; i < n; i++) {
    gy[i] = ac * (gx[i] / bc) + bc * mc_value(dt, i, 2);
    ref[i] = gx[i] * gy[i];
  }
  mc_compare(z, ref, "multiply");
  CHECK_OK(sl_array_multiply(z, z, x)); /* in place: z aliases an input */
  for (int64_t i = 0; i < n; i++) ref[i] *= gx[i];
  mc_compare(z, ref, "multiply in place");

  CHECK_OK(sl_array_conj(y, x));
  for (int64_t i = 0; i < n; i++) ref[i] = conj(gx[i]);
  mc_compare(y, ref, "conj");
  CHECK_OK(sl_array_conj(y, y));
  mc_compare(y, gx, "conj in place");

  CHECK_OK(sl_array_copy(z, x));
  mc_compare(z, gx, "copy");
  CHECK_OK(sl_array_fill(z, (sl_cscalar){2.5, cplx ? -1 : 0}));
  for (int64_t i = 0; i < n; i++) ref[i] = CMPLX(2.5, cplx ? -1 : 0);
  mc_compare(z, ref, "fill");
  CHECK_OK(sl_array_axpby(z, SL_REAL(2), z, SL_REAL(1))); /* x is y: y = 3 y */
  for (int64_t i = 0; i < n; i++) ref[i] *= 3;
  mc_compare(z, ref, "axpby aliased");

  free(ref);
  free(gx);
  free(gy);
  free(gz);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&z);
}

static double complex scalar_value(sl_scalar *s)
{
  sl_cscalar v = {NAN, NAN};
  CHECK_OK(sl_scalar_get_c(s, &v));
  return CMPLX(v.re, v.im);
}

static void check_close(double complex got, double complex want, double tol, const char *what, sl_dtype dt)
{
  CHECK(cabs(got - want) <= tol * fmax(1.0, cabs(want)), "%s (%s): got %.15g%+.15gi, expected %.15g%+.15gi", what,
        sl_dtype_name(dt), creal(got), cimag(got), creal(want), cimag(want));
}

/* Reductions against serial loops over the global data. replicas: how many copies the data has. */
static void test_reductions(sl_dtype dt, const sl_dist *d, int ndim, const int64_t *dims)
{
  double complex *gx, *gy;
  sl_array *x = mc_array(ndim, dims, dt, d, 4, &gx);
  sl_array *y = mc_array(ndim, dims, dt, d, 5, &gy);
  if (!x || !y) return;
  int64_t n = sl_array_global_size(x);
  double complex dot = 0, vdot = 0, sum = 0;
  double n1 = 0, n2 = 0, n3 = 0, ninf = 0, nminf = INFINITY, n0 = 0;
  for (int64_t i = 0; i < n; i++) {
    dot += gx[i] * gy[i];
    vdot += conj(gx[i]) * gy[i];
    sum += gx[i];
    double ab = cabs(gx[i]);
    n1 += ab;
    n2 += ab * ab;
    n3 += ab * ab * ab;
    ninf = fmax(ninf, ab);
    nminf = fmin(nminf, ab);
    n0 += gx[i] != 0;
  }
  double tol = mc_tol(dt) * 10;
  sl_scalar *s;
  CHECK_OK(sl_scalar_create(&s, dt));
  CHECK_OK(sl_array_dot(x, y, s));
  check_close(scalar_value(s), dot, tol, "dot", dt);
  CHECK_OK(sl_array_vdot(x, y, s));
  check_close(scalar_value(s), vdot, tol, "vdot", dt);
  CHECK_OK(sl_array_sum(x, s));
  check_close(scalar_value(s), sum, tol, "sum", dt);
  CHECK_OK(sl_array_norm(x, 1, s));
  check_close(scalar_value(s), n1, tol, "norm 1", dt);
  CHECK_OK(sl_array_norm(x, 2, s));
  check_close(scalar_value(s), sqrt(n2), tol, "norm 2", dt);
  CHECK(sl_scalar_dtype(s) == (dt == SL_COMPLEX128 ? SL_FLOAT64 : (dt == SL_COMPLEX64 ? SL_FLOAT32 : dt)),
        "norm dtype is real");
  CHECK_OK(sl_array_norm(x, 3, s));
  check_close(scalar_value(s), cbrt(n3), tol, "norm 3", dt);
  CHECK_OK(sl_array_norm(x, INFINITY, s));
  check_close(scalar_value(s), ninf, tol, "norm inf", dt);
  CHECK_OK(sl_array_norm(x, -INFINITY, s));
  check_close(scalar_value(s), nminf, tol, "norm -inf", dt);
  CHECK_OK(sl_array_norm(x, 0, s));
  check_close(scalar_value(s), n0, 0, "norm 0", dt);
  /* Several reductions in flight before one wait: results land in their own scalars. */
  sl_scalar *s2;
  CHECK_OK(sl_scalar_create(&s2, dt));
  CHECK_OK(sl_array_dot(x, x, s));
  CHECK_OK(sl_array_norm(y, 2, s2));
  double complex yy = 0, xx = 0;
  for (int64_t i = 0; i < n; i++) {
    yy += conj(gy[i]) * gy[i];
    xx += gx[i] * gx[i];
  }
  check_close(scalar_value(s2), sqrt(creal(yy)), tol, "norm in flight", dt);
  check_close(scalar_value(s), xx, tol, "dot(x, x) in flight", dt);
  if (dt == SL_FLOAT64) {
    double v = 0;
    CHECK_OK(sl_array_sum(x, s));
    CHECK_OK(sl_scalar_get(s, &v));
    CHECK(fabs(v - creal(sum)) <= tol * fmax(1, fabs(creal(sum))), "sl_scalar_get(double)");
  }
  sl_scalar_destroy(&s);
  sl_scalar_destroy(&s2);
  free(gx);
  free(gy);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
}

static void test_all_dtypes_axes(void)
{
  int64_t dims1[1] = {11};
  int64_t dims3[3] = {4, 3, 5};
  for (int t = 0; t < SL_NDTYPES; t++) {
    sl_dist d0 = sl_dist_default();
    test_elementwise(dtypes[t], &d0, 1, dims1);
    test_reductions(dtypes[t], &d0, 1, dims1);
    for (int axis = 0; axis < 3; axis++) {
      sl_dist d = sl_dist_scatter(axis);
      test_elementwise(dtypes[t], &d, 3, dims3);
      test_reductions(dtypes[t], &d, 3, dims3);
    }
    sl_dist b = sl_dist_broadcast();
    test_elementwise(dtypes[t], &b, 3, dims3);
    test_reductions(dtypes[t], &b, 3, dims3);
  }
}

/* Fewer elements than ranks along the axis: some ranks own nothing and still take part. */
static void test_empty_ranks(void)
{
  int64_t dims[2] = {2, 3};
  sl_dist d = sl_dist_scatter(0);
  test_elementwise(SL_COMPLEX128, &d, 2, dims);
  test_reductions(SL_COMPLEX128, &d, 2, dims);
  /* user local dims: rank 0 owns everything */
  int64_t mine = sl_rank() == 0 ? 2 : 0;
  d.local_n = &mine;
  sl_array *a = NULL;
  CHECK_OK(sl_array_create(&a, 2, dims, SL_FLOAT64, &d));
  if (a) {
    CHECK(sl_array_local_size(a) == (sl_rank() == 0 ? 6 : 0), "user local_n honoured");
    CHECK(sl_rank() == 0 ? sl_array_nchunks(a) >= 1 : sl_array_nchunks(a) == 0, "only the owning rank has chunks");
    sl_array_destroy(&a);
  }
  test_elementwise(SL_FLOAT64, &d, 2, dims);
  test_reductions(SL_FLOAT64, &d, 2, dims);
}

/* Ranks with equal mask values hold one full replica each; reductions stay inside the group. */
static void test_masks(void)
{
  int P = sl_size();
  int *mask = malloc(sizeof(int) * (size_t)P);
  for (int r = 0; r < P; r++) mask[r] = r % 2;
  int64_t dims[2] = {5, 3};
  sl_dist d = sl_dist_scatter(0);
  d.mask = mask;
  double complex *g;
  sl_array *x = mc_array(2, dims, SL_COMPLEX128, &d, 7, &g);
  if (x) {
    int gsize = (P + 1 - sl_rank() % 2) / 2;
    int grank = sl_rank() / 2;
    CHECK(sl_array_local_dims(x)[0] == 5 / gsize + (grank < 5 % gsize), "mask: group-local split");
    mc_compare(x, g, "mask gather");
    sl_scalar *s;
    CHECK_OK(sl_scalar_create(&s, SL_COMPLEX128));
    CHECK_OK(sl_array_vdot(x, x, s));
    double want = 0;
    for (int i = 0; i < 15; i++) want += creal(conj(g[i]) * g[i]);
    check_close(scalar_value(s), want, 1e-12, "mask vdot within the group", SL_COMPLEX128);
    sl_scalar_destroy(&s);
    /* a second array with the same mask shares the group */
    test_elementwise(SL_FLOAT32, &d, 2, dims);
    free(g);
    sl_array_destroy(&x);
  }
  free(mask);
}

/* Ghost layers hold the neighbouring planes, whoever owns them, and zeros beyond the edges. */
static void test_ghosts(void)
{
  int64_t dims[3] = {3, 5, 2};
  for (int axis = 0; axis < 3; axis++) {
    sl_dist d = sl_dist_scatter(axis);
    d.ghost_lo = 2;
    d.ghost_hi = 1;
    double complex *g;
    sl_array *a = mc_array(3, dims, SL_FLOAT64, &d, 3, &g);
    if (!a) continue;
    CHECK_OK(sl_array_exchange_ghosts(a));
    void *lo, *hi;
    CHECK_OK(sl_array_acquire_ghosts(a, &lo, &hi));
    int64_t outer = 1, inner = 1, N = dims[axis], off = sl_array_local_offset(a), n = sl_array_local_dims(a)[axis];
    for (int i = 0; i < axis; i++) outer *= dims[i];
    for (int i = axis + 1; i < 3; i++) inner *= dims[i];
    int wid[2] = {2, 1};
    double *gh[2] = {lo, hi};
    for (int s = 0; s < 2; s++)
      for (int64_t o = 0; o < outer; o++)
        for (int64_t p = 0; p < wid[s]; p++)
          for (int64_t k = 0; k < inner; k++) {
            int64_t gp = s == 0 ? off - wid[0] + p : off + n + p;
            double want = gp < 0 || gp >= N ? 0.0 : creal(g[(o * N + gp) * inner + k]);
            double got = gh[s][(o * wid[s] + p) * inner + k];
            CHECK(got == want, "ghost axis %d side %d plane %lld: got %g expected %g", axis, s, (long long)gp, got, want);
          }
    CHECK_OK(sl_array_release_ghosts(a));
    free(g);
    sl_array_destroy(&a);
  }
}

/* A wrapped buffer is the local block: no copy either way. */
static void test_wrap(void)
{
  int64_t dims[1] = {9};
  int P = sl_size(), r = sl_rank();
  int64_t n = 9 / P + (r < 9 % P);
  double *buf = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
  sl_array *a = NULL;
  CHECK_OK(sl_array_wrap(&a, buf, 1, dims, SL_FLOAT64, NULL));
  if (!a) return;
  CHECK_OK(sl_array_fill(a, SL_REAL(4.0)));
  void *p;
  CHECK_OK(sl_array_acquire(a, SL_READ, &p));
  CHECK(n == 0 || p == buf, "acquire gives the wrapped buffer");
  for (int64_t i = 0; i < n; i++) CHECK(buf[i] == 4.0, "wrapped buffer sees the fill");
  CHECK_OK(sl_array_release(a));
  sl_array_destroy(&a);
  free(buf);
}

static void test_tags(void)
{
  int64_t t1, t2;
  CHECK_OK(sl_tag_alloc(10, &t1));
  CHECK_OK(sl_tag_alloc(1, &t2));
  CHECK(t2 == t1 + 10, "tags are consecutive");
  int64_t lo, hi;
  MPI_Allreduce(&t1, &lo, 1, MPI_INT64_T, MPI_MIN, sl_comm());
  MPI_Allreduce(&t1, &hi, 1, MPI_INT64_T, MPI_MAX, sl_comm());
  CHECK(lo == hi, "tags agree across ranks");
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  test_layout();
  test_scatter_gather();
  test_all_dtypes_axes();
  test_empty_ranks();
  test_masks();
  test_ghosts();
  test_wrap();
  test_tags();
  return mc_finish("mpi_arrays");
}
