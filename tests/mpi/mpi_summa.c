/* SUMMA and block MatrixMult on every process grid of 1 to 4 ranks (1x1; 1x2, 2x1; 1x3, 3x1; 1x4, 2x2, 4x1), sizes
 * that do not divide evenly (and a grid with more rows than N, so some blocks are empty), float64,
 * complex128 and float32: each rank's block of Y = A X and of X = A^H Y against sums computed here from
 * the formulas of A, X and Y, dot tests, and a grid that does not fit the rank count. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;

static cplx aval(sl_dtype dt, int64_t r, int64_t c)
{
  return sin(0.7 * (double)r + 1.3 * (double)c + 0.2) + (sl_dtype_is_complex(dt) ? I * cos(0.4 * (double)r - 0.9 * (double)c) : 0);
}
static cplx xval(sl_dtype dt, int64_t r, int64_t c)
{
  return cos(0.3 * (double)r - 0.8 * (double)c) + (sl_dtype_is_complex(dt) ? I * sin(1.1 * (double)r + 0.5 * (double)c) : 0);
}

/* Fills this rank's local block of a (rows x cols starting at r0, c0) from f. */
static void fill_block(sl_array *a, sl_dtype dt, cplx (*f)(sl_dtype, int64_t, int64_t), int64_t r0, int64_t rows, int64_t c0,
                       int64_t cols)
{
  void *p = NULL;
  CHECK_OK(sl_array_acquire(a, SL_WRITE, &p));
  cplx *z = malloc(sizeof *z * (size_t)(rows * cols + 1));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) z[r * cols + c] = f(dt, r0 + r, c0 + c);
  if (p) mc_to_dtype(dt, rows * cols, z, p);
  free(z);
  CHECK_OK(sl_array_release(a));
}

static int compare_block(sl_array *a, sl_dtype dt, const cplx *ref, int64_t n, const char *what)
{
  void *p = NULL;
  int bad = 0;
  CHECK_OK(sl_array_acquire(a, SL_READ, &p));
  cplx *z = malloc(sizeof *z * (size_t)(n + 1));
  if (p) mc_from_dtype(dt, n, p, z);
  double tol = mc_tol(dt) * 10;
  for (int64_t k = 0; k < n; k++)
    if (cabs(z[k] - ref[k]) > tol * fmax(1.0, cabs(ref[k]))) {
      if (bad++ < 2) CHECK(0, "%s: element %lld is %g%+gi, expected %g%+gi", what, (long long)k, creal(z[k]), cimag(z[k]), creal(ref[k]), cimag(ref[k]));
    }
  free(z);
  CHECK_OK(sl_array_release(a));
  return bad;
}

static void run(int64_t N, int64_t K, int64_t M, int pr, int pc, sl_dtype dt, int block)
{
  int me = sl_rank();
  int64_t e[8];
  CHECK_OK(sl_op_summa_block(N, K, M, pr, pc, me, e));
  int64_t n0 = e[0], nb = e[1], ka0 = e[2], ka = e[3], kx0 = e[4], kx = e[5], m0 = e[6], mb = e[7];
  if (block) ka0 = 0, ka = K, kx0 = 0, kx = K; /* the block kind: A's whole rows, X's whole columns */
  cplx *ab = malloc(sizeof *ab * (size_t)(nb * ka + 1));
  for (int64_t r = 0; r < nb; r++)
    for (int64_t c = 0; c < ka; c++) ab[r * ka + c] = aval(dt, n0 + r, ka0 + c);
  void *A = malloc(sl_dtype_size(dt) * (size_t)(nb * ka + 1));
  mc_to_dtype(dt, nb * ka, ab, A);
  sl_op *op = NULL;
  CHECK_OK((block ? sl_op_matmul_block : sl_op_matmul_summa)(&op, A, N, K, M, pr, pc, dt));
  free(A);
  free(ab);
  if (!op) return;
  char what[128];
  snprintf(what, sizeof what, "%s %lldx%lldx%lld on %dx%d (%s)", block ? "block" : "SUMMA", (long long)N, (long long)K, (long long)M, pr,
           pc, sl_dtype_name(dt));
  sl_array *x = NULL, *y = NULL, *x2 = NULL;
  CHECK_OK(sl_op_create_domain(op, &x));
  CHECK_OK(sl_op_create_range(op, &y));
  CHECK_OK(sl_op_create_domain(op, &x2));
  CHECK(sl_array_local_size(x) == kx * mb && sl_array_local_size(y) == nb * mb, "%s: local sizes", what);
  fill_block(x, dt, xval, kx0, kx, m0, mb);
  CHECK_OK(sl_array_fill(y, SL_REAL(9)));
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  cplx *ref = malloc(sizeof *ref * (size_t)(nb * mb + kx * mb + 1));
  for (int64_t r = 0; r < nb; r++)
    for (int64_t c = 0; c < mb; c++) {
      cplx s = 0;
      for (int64_t k = 0; k < K; k++) s += aval(dt, n0 + r, k) * xval(dt, k, m0 + c);
      ref[r * mb + c] = s;
    }
  char w2[160];
  snprintf(w2, sizeof w2, "%s forward", what);
  CHECK(compare_block(y, dt, ref, nb * mb, w2) == 0, "%s", w2);
  /* adjoint on Y = xval(row, col) as an N x M matrix */
  fill_block(y, dt, xval, n0, nb, m0, mb);
  CHECK_OK(sl_array_fill(x2, SL_REAL(9)));
  CHECK_OK(sl_op_apply(op, SL_ADJOINT, y, x2));
  for (int64_t r = 0; r < kx; r++)
    for (int64_t c = 0; c < mb; c++) {
      cplx s = 0;
      for (int64_t n = 0; n < N; n++) s += conj(aval(dt, n, kx0 + r)) * xval(dt, n, m0 + c);
      ref[r * mb + c] = s;
    }
  snprintf(w2, sizeof w2, "%s adjoint", what);
  CHECK(compare_block(x2, dt, ref, kx * mb, w2) == 0, "%s", w2);
  double err = 1;
  CHECK_OK(sl_dottest(op, 3, &err));
  CHECK(err < (dt == SL_FLOAT32 ? 1e-4 : 1e-12), "%s: dot test %.2e", what, err);
  free(ref);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&x2);
  sl_op_destroy(&op);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  int P = sl_size();
  for (int pr = 1; pr <= P; pr++) {
    if (P % pr) continue;
    int pc = P / pr;
    for (int block = 0; block < 2; block++) {
      run(7, 5, 6, pr, pc, SL_FLOAT64, block);
      run(9, 4, 3, pr, pc, SL_COMPLEX128, block);
      run(2, 11, 5, pr, pc, SL_FLOAT64, block); /* N = 2 < pr on 3 and 4 rows: empty blocks */
      run(6, 7, 8, pr, pc, SL_FLOAT32, block);
    }
  }
  sl_op *op = NULL;
  double a[64] = {0};
  CHECK(mc_same_error_everywhere(sl_op_matmul_summa(&op, a, 4, 4, 4, P + 1, 1, SL_FLOAT64), SL_E_INVALID), "a grid that does not fit");
  CHECK(strstr(sl_last_error(), "grid") != NULL, "the message names the grid: %s", sl_last_error());
  CHECK(mc_same_error_everywhere(sl_op_matmul_block(&op, a, 4, 4, 4, 1, P + 1, SL_FLOAT64), SL_E_INVALID), "block: a grid that does not fit");
  return mc_finish("mpi_summa");
}
