/* FirstDerivative, SecondDerivative and Laplacian on 1 to 4 ranks: every kind and edge option, along every
 * axis of 3-D and 4-D arrays distributed along axis 0 or axis 1 (uneven blocks, a rank with one plane and,
 * on 4 ranks, one with none), forward and adjoint against dense matrices written here from pylops'
 * definitions, dot tests, the fused Laplacian against its sum of terms, bad input. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;
static int P, R;

/* The dense n x n matrix of a stencil (row-major), from the definitions in docs/operators.md. */
static double *stencil_matrix(int second, sl_deriv_kind kind, int order, int edge, int64_t n, double d)
{
  double *D = calloc((size_t)(n * n), sizeof *D);
#define S(i, j, v) (D[(i) * n + (j)] += (v))
  for (int64_t i = 0; i < n; i++) {
    if (!second) {
      if (kind == SL_DERIV_FORWARD && i < n - 1) S(i, i + 1, 1 / d), S(i, i, -1 / d);
      if (kind == SL_DERIV_BACKWARD && i >= 1) S(i, i, 1 / d), S(i, i - 1, -1 / d);
      if (kind == SL_DERIV_CENTERED && order == 3) {
        if (i >= 1 && i <= n - 2) S(i, i + 1, 0.5 / d), S(i, i - 1, -0.5 / d);
      }
      if (kind == SL_DERIV_CENTERED && order == 5 && i >= 2 && i <= n - 3)
        S(i, i - 2, 1 / (12 * d)), S(i, i - 1, -2 / (3 * d)), S(i, i + 1, 2 / (3 * d)), S(i, i + 2, -1 / (12 * d));
    } else {
      double d2 = d * d;
      if (kind == SL_DERIV_FORWARD && i < n - 2) S(i, i + 2, 1 / d2), S(i, i + 1, -2 / d2), S(i, i, 1 / d2);
      if (kind == SL_DERIV_BACKWARD && i >= 2) S(i, i, 1 / d2), S(i, i - 1, -2 / d2), S(i, i - 2, 1 / d2);
      if (kind == SL_DERIV_CENTERED && i >= 1 && i <= n - 2) S(i, i + 1, 1 / d2), S(i, i, -2 / d2), S(i, i - 1, 1 / d2);
    }
  }
  /* pylops assigns the edge rows after the interior ones: on short axes they overwrite, not add */
#define ROW(i) memset(&D[(i) * n], 0, sizeof *D * (size_t)n)
  if (edge && kind == SL_DERIV_CENTERED) {
    if (!second && order == 3 && n >= 2) {
      ROW(0), S(0, 1, 1 / d), S(0, 0, -1 / d);
      ROW(n - 1), S(n - 1, n - 1, 1 / d), S(n - 1, n - 2, -1 / d);
    }
    if (!second && order == 5 && n >= 3) {
      ROW(0), S(0, 1, 1 / d), S(0, 0, -1 / d);
      ROW(1), S(1, 2, 0.5 / d), S(1, 0, -0.5 / d);
      ROW(n - 2), S(n - 2, n - 1, 0.5 / d), S(n - 2, n - 3, -0.5 / d);
      ROW(n - 1), S(n - 1, n - 1, 1 / d), S(n - 1, n - 2, -1 / d);
    }
    if (second && n >= 3) {
      double d2 = d * d;
      ROW(0), S(0, 0, 1 / d2), S(0, 1, -2 / d2), S(0, 2, 1 / d2);
      ROW(n - 1), S(n - 1, n - 3, 1 / d2), S(n - 1, n - 2, -2 / d2), S(n - 1, n - 1, 1 / d2);
    }
  }
#undef S
#undef ROW
  return D;
}

/* out += w (D or D^T applied along axis) x, for global arrays of dims. */
static void apply_along(int ndim, const int64_t *dims, int axis, const double *D, int transpose, double w, const cplx *x,
                        cplx *out)
{
  int64_t n = dims[axis], inner = 1, outer = 1;
  for (int d = axis + 1; d < ndim; d++) inner *= dims[d];
  for (int d = 0; d < axis; d++) outer *= dims[d];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < inner; k++) {
        cplx s = 0;
        for (int64_t j = 0; j < n; j++) s += (transpose ? D[j * n + i] : D[i * n + j]) * x[(o * n + j) * inner + k];
        out[(o * n + i) * inner + k] += w * s;
      }
}

/* This rank's extent along the distributed axis of length n: uneven, with one plane somewhere and, on 4
 * ranks, a rank that owns nothing. */
static int64_t my_extent(int64_t n)
{
  int64_t base = n / P, rest = n - base * P, e = base + (R < rest);
  if (P == 4 && n >= 7) { /* 3, 0, 1, rest */
    int64_t c[4] = {3, 0, 1, n - 4};
    return c[R];
  }
  if (P == 3 && n >= 5) {
    int64_t c[3] = {1, n - 3, 2};
    return c[R];
  }
  return e;
}

typedef struct {
  int second;
  sl_deriv_kind kind;
  int order, edge;
  const char *name;
} kind_t;

static void check_op(sl_op *op, int ndim, const int64_t *dims, sl_dtype dt, const sl_dist *dist, double complex *ref_f,
                     double complex *ref_a, const char *what, const cplx *xg, sl_array *x)
{
  sl_array *y = NULL;
  CHECK_OK(sl_op_create_range(op, &y));
  CHECK_OK(sl_array_fill(y, SL_REAL(7.0)));
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  char w[200];
  snprintf(w, sizeof w, "%s forward", what);
  CHECK(mc_compare(y, ref_f, w) == 0, "%s", w);
  CHECK_OK(sl_array_fill(y, SL_REAL(7.0)));
  CHECK_OK(sl_op_apply(op, SL_ADJOINT, x, y));
  snprintf(w, sizeof w, "%s adjoint", what);
  CHECK(mc_compare(y, ref_a, w) == 0, "%s", w);
  double err = 1;
  CHECK_OK(sl_dottest(op, 11, &err));
  double tol = (dt == SL_FLOAT32 || dt == SL_COMPLEX64) ? 1e-4 : 1e-12;
  CHECK(err < tol, "%s: dot test %.3e", what, err);
  sl_array_destroy(&y);
}

static void run_case(int ndim, const int64_t *dims, int dist_axis, sl_dtype dt, int all_kinds)
{
  int64_t ext = my_extent(dims[dist_axis]);
  sl_dist dist = sl_dist_scatter(dist_axis);
  dist.local_n = &ext;
  cplx *xg = NULL;
  sl_array *x = mc_array(ndim, dims, dt, &dist, 3, &xg);
  int64_t n = sl_array_global_size(x);
  cplx *rf = malloc(sizeof *rf * (size_t)n), *ra = malloc(sizeof *ra * (size_t)n);
  kind_t kinds[] = {{0, SL_DERIV_FORWARD, 3, 0, "first forward"},   {0, SL_DERIV_BACKWARD, 3, 0, "first backward"},
                    {0, SL_DERIV_CENTERED, 3, 0, "first centered 3"}, {0, SL_DERIV_CENTERED, 3, 1, "first centered 3 edge"},
                    {0, SL_DERIV_CENTERED, 5, 0, "first centered 5"}, {0, SL_DERIV_CENTERED, 5, 1, "first centered 5 edge"},
                    {1, SL_DERIV_FORWARD, 0, 0, "second forward"},  {1, SL_DERIV_BACKWARD, 0, 0, "second backward"},
                    {1, SL_DERIV_CENTERED, 0, 0, "second centered"}, {1, SL_DERIV_CENTERED, 0, 1, "second centered edge"}};
  int nk = all_kinds ? 10 : 2;
  int pick[2] = {5, 9};
  for (int axis = 0; axis < ndim; axis++)
    for (int q = 0; q < nk; q++) {
      const kind_t *k = &kinds[all_kinds ? q : pick[q]];
      double d = 0.5 + 0.25 * axis;
      sl_op *op = NULL;
      if (k->second) CHECK_OK(sl_op_second_derivative(&op, x, axis, d, k->kind, k->edge));
      else CHECK_OK(sl_op_first_derivative(&op, x, axis, d, k->kind, k->order, k->edge));
      if (!op) continue;
      double *D = stencil_matrix(k->second, k->kind, k->order, k->edge, dims[axis], d);
      memset(rf, 0, sizeof *rf * (size_t)n);
      memset(ra, 0, sizeof *ra * (size_t)n);
      apply_along(ndim, dims, axis, D, 0, 1.0, xg, rf);
      apply_along(ndim, dims, axis, D, 1, 1.0, xg, ra);
      char what[160];
      snprintf(what, sizeof what, "%s along axis %d of %d-D (distributed axis %d, %s)", k->name, axis, ndim, dist_axis,
               sl_dtype_name(dt));
      check_op(op, ndim, dims, dt, &dist, rf, ra, what, xg, x);
      free(D);
      sl_op_destroy(&op);
    }
  /* the fused Laplacian over two axes (one of them distributed) and over all axes, weights and samplings */
  for (int all = 0; all < 2; all++)
    for (int edge = 0; edge < 2; edge++) {
      int axes[SL_MAX_DIMS], na = 0;
      double w[SL_MAX_DIMS], smp[SL_MAX_DIMS];
      for (int a = 0; a < ndim; a++)
        if (all || a == dist_axis || a == ndim - 1) {
          axes[na] = a;
          w[na] = 1.0 + 0.5 * a;
          smp[na] = 0.75 + 0.5 * a;
          na++;
        }
      sl_op *L = NULL;
      CHECK_OK(sl_op_laplacian(&L, x, na, axes, w, smp, SL_DERIV_CENTERED, edge));
      memset(rf, 0, sizeof *rf * (size_t)n);
      memset(ra, 0, sizeof *ra * (size_t)n);
      for (int i = 0; i < na; i++) {
        double *D = stencil_matrix(1, SL_DERIV_CENTERED, 0, edge, dims[axes[i]], smp[i]);
        apply_along(ndim, dims, axes[i], D, 0, w[i], xg, rf);
        apply_along(ndim, dims, axes[i], D, 1, w[i], xg, ra);
        free(D);
      }
      char what[160];
      snprintf(what, sizeof what, "Laplacian over %d axes%s of %d-D (distributed axis %d, %s)", na, edge ? " (edge)" : "",
               ndim, dist_axis, sl_dtype_name(dt));
      if (L) check_op(L, ndim, dims, dt, &dist, rf, ra, what, xg, x);
      sl_op_destroy(&L);
    }
  free(rf);
  free(ra);
  free(xg);
  sl_array_destroy(&x);
}

/* Products of stencil operators (one task for both parts where the blocks are one chunk and no part needs ghost
 * planes, STARLOPS_MAX_CHUNKS=1 runs): S F and F^H F along the last axis, and L^H L over every axis, against the
 * dense matrices applied one after the other. */
static void run_products(int ndim, const int64_t *dims, int dist_axis, sl_dtype dt)
{
  int64_t ext = my_extent(dims[dist_axis]);
  sl_dist dist = sl_dist_scatter(dist_axis);
  dist.local_n = &ext;
  cplx *xg = NULL;
  sl_array *x = mc_array(ndim, dims, dt, &dist, 5, &xg);
  int64_t n = sl_array_global_size(x);
  int last = ndim - 1;
  cplx *t = calloc((size_t)n, sizeof *t), *rf = calloc((size_t)n, sizeof *rf), *ra = calloc((size_t)n, sizeof *ra);
  double *F = stencil_matrix(0, SL_DERIV_CENTERED, 5, 1, dims[last], 0.5);
  double *S = stencil_matrix(1, SL_DERIV_CENTERED, 0, 0, dims[last], 0.75);
  sl_op *Fo = NULL, *So = NULL, *Fh = NULL, *SF = NULL, *FhF = NULL, *L = NULL, *Lh = NULL, *LhL = NULL;
  CHECK_OK(sl_op_first_derivative(&Fo, x, last, 0.5, SL_DERIV_CENTERED, 5, 1));
  CHECK_OK(sl_op_second_derivative(&So, x, last, 0.75, SL_DERIV_CENTERED, 0));
  CHECK_OK(sl_op_adjoint(&Fh, Fo));
  CHECK_OK(sl_op_product(&SF, So, Fo));
  CHECK_OK(sl_op_product(&FhF, Fh, Fo));
  char what[160];
  /* S F: forward S (F x), adjoint F^T (S^T x) */
  apply_along(ndim, dims, last, F, 0, 1.0, xg, t);
  apply_along(ndim, dims, last, S, 0, 1.0, t, rf);
  memset(t, 0, sizeof *t * (size_t)n);
  apply_along(ndim, dims, last, S, 1, 1.0, xg, t);
  apply_along(ndim, dims, last, F, 1, 1.0, t, ra);
  snprintf(what, sizeof what, "SecondDerivative FirstDerivative along the last axis of %d-D (%s)", ndim, sl_dtype_name(dt));
  if (SF) check_op(SF, ndim, dims, dt, &dist, rf, ra, what, xg, x);
  /* F^H F: self-adjoint */
  memset(t, 0, sizeof *t * (size_t)n);
  memset(rf, 0, sizeof *rf * (size_t)n);
  apply_along(ndim, dims, last, F, 0, 1.0, xg, t);
  apply_along(ndim, dims, last, F, 1, 1.0, t, rf);
  snprintf(what, sizeof what, "FirstDerivative^H FirstDerivative along the last axis of %d-D (%s)", ndim, sl_dtype_name(dt));
  if (FhF) check_op(FhF, ndim, dims, dt, &dist, rf, rf, what, xg, x);
  /* L^H L over every axis (ghost planes along the distributed axis on several ranks: two tasks there) */
  int axes[SL_MAX_DIMS];
  double w[SL_MAX_DIMS], smp[SL_MAX_DIMS];
  for (int a = 0; a < ndim; a++) axes[a] = a, w[a] = 1.0 + 0.5 * a, smp[a] = 0.75 + 0.25 * a;
  CHECK_OK(sl_op_laplacian(&L, x, ndim, axes, w, smp, SL_DERIV_CENTERED, 1));
  CHECK_OK(sl_op_adjoint(&Lh, L));
  CHECK_OK(sl_op_product(&LhL, Lh, L));
  memset(t, 0, sizeof *t * (size_t)n);
  memset(rf, 0, sizeof *rf * (size_t)n);
  for (int a = 0; a < ndim; a++) {
    double *D = stencil_matrix(1, SL_DERIV_CENTERED, 0, 1, dims[a], smp[a]);
    apply_along(ndim, dims, a, D, 0, w[a], xg, t);
    free(D);
  }
  for (int a = 0; a < ndim; a++) {
    double *D = stencil_matrix(1, SL_DERIV_CENTERED, 0, 1, dims[a], smp[a]);
    apply_along(ndim, dims, a, D, 1, w[a], t, rf);
    free(D);
  }
  snprintf(what, sizeof what, "Laplacian^H Laplacian over %d axes (%s)", ndim, sl_dtype_name(dt));
  if (LhL) check_op(LhL, ndim, dims, dt, &dist, rf, rf, what, xg, x);
  sl_op *all[] = {LhL, Lh, L, FhF, SF, Fh, So, Fo};
  for (int i = 0; i < 8; i++) sl_op_destroy(&all[i]);
  free(F);
  free(S);
  free(t);
  free(rf);
  free(ra);
  free(xg);
  sl_array_destroy(&x);
}

static void test_bad_input(void)
{
  int64_t dims[2] = {6, 5};
  sl_array *x = NULL;
  CHECK_OK(sl_array_create(&x, 2, dims, SL_FLOAT64, NULL));
  sl_op *op = NULL;
  CHECK(mc_same_error_everywhere(sl_op_first_derivative(&op, x, 2, 1.0, SL_DERIV_CENTERED, 3, 0), SL_E_INVALID), "axis 2 of 2-D");
  CHECK(strstr(sl_last_error(), "axis") != NULL, "names the axis: %s", sl_last_error());
  CHECK(mc_same_error_everywhere(sl_op_first_derivative(&op, x, 0, 1.0, SL_DERIV_CENTERED, 4, 0), SL_E_INVALID), "order 4");
  CHECK(mc_same_error_everywhere(sl_op_second_derivative(&op, x, 0, 0.0, SL_DERIV_CENTERED, 0), SL_E_INVALID), "sampling 0");
  CHECK(mc_same_error_everywhere(sl_op_laplacian(&op, x, 2, (int[]){1, 1}, NULL, NULL, SL_DERIV_CENTERED, 0), SL_E_INVALID),
        "axis twice");
  CHECK(mc_same_error_everywhere(sl_op_laplacian(&op, x, 3, NULL, NULL, NULL, SL_DERIV_CENTERED, 0), SL_E_INVALID), "3 axes of 2-D");
  CHECK(op == NULL, "no operator on failure");
  sl_array_destroy(&x);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  P = sl_size();
  R = sl_rank();
  int64_t d3[3] = {7, 5, 6}, d4[4] = {7, 3, 4, 5}, d3b[3] = {4, 9, 3};
  run_case(3, d3, 0, SL_FLOAT64, 1);
  run_case(3, d3, 0, SL_COMPLEX128, 1);
  run_case(3, d3b, 1, SL_FLOAT64, 1);
  run_case(3, d3b, 1, SL_COMPLEX128, 0);
  run_case(4, d4, 0, SL_FLOAT64, 0);
  run_case(4, d4, 0, SL_COMPLEX64, 0);
  run_case(3, d3, 0, SL_FLOAT32, 0);
  int64_t d1[1] = {13};
  run_case(1, d1, 0, SL_FLOAT64, 1);
  int64_t d2[2] = {9, 11};
  run_products(2, d2, 0, SL_FLOAT64);
  run_products(2, d2, 0, SL_COMPLEX128);
  run_products(3, d3, 0, SL_FLOAT32);
  run_products(1, d1, 0, SL_COMPLEX64);
  test_bad_input();
  return mc_finish("mpi_stencils");
}
