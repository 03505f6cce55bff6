/* The operator model on 1 to 4 ranks: Identity, Zero, Diagonal and every algebra construct, forward and
 * adjoint, in the four dtypes, on sizes that do not divide evenly and with a rank that owns nothing; each
 * result against a reference computed here from the gathered inputs (every operator built here is
 * diagonal, with a factor f_i written from the formula), dot tests at round-off, algebra identities, bad
 * input. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex (*factor_fn)(double complex d1, double complex d2, double complex s);

static double complex f_identity(double complex d1, double complex d2, double complex s) { return 1; }
static double complex f_zero(double complex d1, double complex d2, double complex s) { return 0; }
static double complex f_d1(double complex d1, double complex d2, double complex s) { return d1; }
static double complex f_sum(double complex d1, double complex d2, double complex s) { return d1 + d2; }
static double complex f_diff(double complex d1, double complex d2, double complex s) { return d1 - d2; }
static double complex f_prod(double complex d1, double complex d2, double complex s) { return d1 * d2; }
static double complex f_scaled(double complex d1, double complex d2, double complex s) { return s * d1; }
static double complex f_conj(double complex d1, double complex d2, double complex s) { return conj(d1); }
static double complex f_cube(double complex d1, double complex d2, double complex s) { return d1 * d1 * d1; }
static double complex f_sum_h(double complex d1, double complex d2, double complex s) { return conj(s * d1) + d2 * d2; }

typedef struct {
  const char *what;
  sl_op *op;
  factor_fn f;
} case_t;

/* y = op x (or op^H x) against y_i = f_i x_i (conj(f_i) x_i). */
static void check_apply(const case_t *c, sl_op_mode mode, sl_array *x, const double complex *xg,
                        const double complex *d1, const double complex *d2, double complex s, int64_t n, sl_dtype dt)
{
  sl_array *y = NULL;
  CHECK_OK(mode == SL_FORWARD ? sl_op_create_range(c->op, &y) : sl_op_create_domain(c->op, &y));
  CHECK_OK(sl_array_fill(y, SL_REAL(123.0))); /* stale values must be overwritten */
  CHECK_OK(sl_op_apply(c->op, mode, x, y));
  double complex *ref = malloc(sizeof *ref * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    double complex f = c->f(d1[i], d2[i], s);
    ref[i] = (mode == SL_FORWARD ? f : conj(f)) * xg[i];
  }
  char what[128];
  snprintf(what, sizeof what, "%s %s (%s, n=%lld)", c->what, mode == SL_FORWARD ? "forward" : "adjoint",
           sl_dtype_name(dt), (long long)n);
  CHECK(mc_compare(y, ref, what) == 0, "%s", what);
  free(ref);
  sl_array_destroy(&y);
}

static void run(sl_dtype dt, int64_t n)
{
  int64_t dims[1] = {n};
  double complex *xg, *d1g, *d2g;
  sl_array *x = mc_array(1, dims, dt, NULL, 3, &xg);
  sl_array *d1 = mc_array(1, dims, dt, NULL, 5, &d1g);
  sl_array *d2 = mc_array(1, dims, dt, NULL, 7, &d2g);
  int cplx = sl_dtype_is_complex(dt);
  sl_cscalar sc = cplx ? (sl_cscalar){2.0, -1.0} : SL_REAL(2.0);
  double complex s = sc.re + I * sc.im;
  sl_op *I_ = NULL, *Z = NULL, *D1 = NULL, *D2 = NULL, *S = NULL, *Df = NULL, *P = NULL, *Sc = NULL, *H = NULL,
        *T = NULL, *C = NULL, *Pw = NULL, *P0 = NULL, *Mixed = NULL, *ScH = NULL, *D2sq = NULL;
  CHECK_OK(sl_op_identity(&I_, x));
  CHECK_OK(sl_op_zero(&Z, x, x));
  CHECK_OK(sl_op_diagonal(&D1, d1));
  CHECK_OK(sl_op_diagonal(&D2, d2));
  CHECK_OK(sl_op_sum(&S, D1, D2));
  CHECK_OK(sl_op_diff(&Df, D1, D2));
  CHECK_OK(sl_op_product(&P, D1, D2));
  CHECK_OK(sl_op_scaled(&Sc, D1, sc));
  CHECK_OK(sl_op_adjoint(&H, D1));
  CHECK_OK(sl_op_transpose(&T, D1));
  CHECK_OK(sl_op_conj(&C, D1));
  CHECK_OK(sl_op_power(&Pw, D1, 3));
  CHECK_OK(sl_op_power(&P0, D1, 0));
  /* a deeper graph: (s D1)^H + D2 D2 */
  CHECK_OK(sl_op_adjoint(&ScH, Sc));
  CHECK_OK(sl_op_product(&D2sq, D2, D2));
  CHECK_OK(sl_op_sum(&Mixed, ScH, D2sq));
  case_t cases[] = {
      {"Identity", I_, f_identity}, {"Zero", Z, f_zero},       {"Diagonal", D1, f_d1},
      {"D1 + D2", S, f_sum},        {"D1 - D2", Df, f_diff},   {"D1 D2", P, f_prod},
      {"s D1", Sc, f_scaled},       {"D1^H", H, f_conj},       {"D1^T", T, f_d1},
      {"conj(D1)", C, f_conj},      {"D1^3", Pw, f_cube},      {"D1^0", P0, f_identity},
      {"(s D1)^H + D2 D2", Mixed, f_sum_h},
  };
  int ncases = (int)(sizeof cases / sizeof cases[0]);
  double tol = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-12;
  for (int k = 0; k < ncases; k++) {
    check_apply(&cases[k], SL_FORWARD, x, xg, d1g, d2g, s, n, dt);
    check_apply(&cases[k], SL_ADJOINT, x, xg, d1g, d2g, s, n, dt);
    double err = -1;
    CHECK_OK(sl_dottest(cases[k].op, 11u + (unsigned)k, &err));
    CHECK(err >= 0 && err <= tol, "dot test of %s (%s, n=%lld): relative error %.3g > %.1g", cases[k].what,
          sl_dtype_name(dt), (long long)n, err, tol);
  }
  /* (A B)^H = B^H A^H, applied to the same x */
  sl_op *AB = NULL, *ABh = NULL, *Ah = NULL, *Bh = NULL, *BhAh = NULL;
  CHECK_OK(sl_op_product(&AB, Sc, D2));
  CHECK_OK(sl_op_adjoint(&ABh, AB));
  CHECK_OK(sl_op_adjoint(&Ah, Sc));
  CHECK_OK(sl_op_adjoint(&Bh, D2));
  CHECK_OK(sl_op_product(&BhAh, Bh, Ah));
  sl_array *y1 = NULL, *y2 = NULL;
  CHECK_OK(sl_array_create_like(&y1, x));
  CHECK_OK(sl_array_create_like(&y2, x));
  CHECK_OK(sl_op_apply(ABh, SL_FORWARD, x, y1));
  CHECK_OK(sl_op_apply(BhAh, SL_FORWARD, x, y2));
  double complex *g1 = malloc(sizeof *g1 * (size_t)(n + 1));
  {
    /* y1 against y2, gathered as the reference */
    size_t el = sl_dtype_size(dt);
    void *raw = malloc(el * (size_t)(n + 1));
    CHECK_OK(sl_array_gather(y2, -1, raw));
    mc_from_dtype(dt, n, raw, g1);
    CHECK(mc_compare(y1, g1, "(A B)^H x = B^H A^H x") == 0, "(AB)^H identity (%s)", sl_dtype_name(dt));
    free(raw);
  }
  free(g1);
  sl_array_destroy(&y1);
  sl_array_destroy(&y2);
  sl_op *list[] = {I_, Z, D1, D2, S, Df, P, Sc, H, T, C, Pw, P0, Mixed, ScH, D2sq, AB, ABh, Ah, Bh, BhAh};
  for (size_t k = 0; k < sizeof list / sizeof list[0]; k++) sl_op_destroy(&list[k]);
  sl_array_destroy(&x);
  sl_array_destroy(&d1);
  sl_array_destroy(&d2);
  free(xg);
  free(d1g);
  free(d2g);
}

/* y = op x (mode 1: op^H x) on x scattered from the global values in (nin elements), against ref. */
static void apply_check(sl_op *op, int mode, sl_dtype dt, const double complex *in, int64_t nin,
                        const double complex *ref, const char *what)
{
  sl_array *x = NULL, *y = NULL;
  CHECK_OK(mode ? sl_op_create_range(op, &x) : sl_op_create_domain(op, &x));
  CHECK_OK(mode ? sl_op_create_domain(op, &y) : sl_op_create_range(op, &y));
  void *raw = malloc(sl_dtype_size(dt) * (size_t)(nin + 1));
  mc_to_dtype(dt, nin, in, raw);
  CHECK_OK(sl_array_scatter(x, -1, raw));
  CHECK_OK(sl_array_fill(y, SL_REAL(99.0)));
  CHECK_OK(sl_op_apply(op, mode ? SL_ADJOINT : SL_FORWARD, x, y));
  CHECK(mc_compare(y, ref, what) == 0, "%s", what);
  free(raw);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
}

/* MatrixMult: rank r holds A_r (nr_r x nc_r); the last rank (P > 1) holds 0 x 0, rank 1 (P > 2) maps no
 * columns (its rows of y are zero). */
static int64_t mm_rows(int r, int P) { return P > 1 && r == P - 1 ? 0 : 2 + r % 3; }
static int64_t mm_cols(int r, int P) { return (P > 1 && r == P - 1) || (P > 2 && r == 1) ? 0 : 3 + (r + 1) % 2; }
static double complex mm_a(int r, int64_t i, int64_t j, int cplx)
{
  return ((r * 7 + i * 3 + j * 5) % 11 - 5) * 0.25 + (cplx ? ((r + i * 2 + j) % 5 - 2) * 0.5 * I : 0);
}

/* kind 0: block diagonal; 1: VStack (every block has 4 columns, x replicated); 2: HStack (every block has
 * 3 rows, y replicated). The reference loop is the same for all three, with the offsets of each block. */
static int mm_kind;
static int64_t k_rows(int r, int P) { return mm_kind == 2 ? 3 : mm_rows(r, P); }
static int64_t k_cols(int r, int P) { return mm_kind == 1 ? 4 : mm_cols(r, P); }

static void run_matrix(sl_dtype dt, int64_t nrhs)
{
  int P = sl_size(), me = sl_rank(), cplx = sl_dtype_is_complex(dt);
  int64_t nr = k_rows(me, P), nc = k_cols(me, P), R = 0, C = 0;
  for (int r = 0; r < P; r++) R += k_rows(r, P), C += k_cols(r, P);
  if (mm_kind == 1) C = 4;
  if (mm_kind == 2) R = 3;
  double complex *a = malloc(sizeof *a * (size_t)(nr * nc + 1));
  for (int64_t i = 0; i < nr; i++)
    for (int64_t j = 0; j < nc; j++) a[i * nc + j] = mm_a(me, i, j, cplx);
  void *araw = malloc(sl_dtype_size(dt) * (size_t)(nr * nc + 1));
  mc_to_dtype(dt, nr * nc, a, araw);
  sl_op *M = NULL;
  if (mm_kind == 0) CHECK_OK(sl_op_matrix(&M, araw, nr, nc, nrhs, dt));
  if (mm_kind == 1) CHECK_OK(sl_op_vstack_matrix(&M, araw, nr, nc, nrhs, dt));
  if (mm_kind == 2) CHECK_OK(sl_op_hstack_matrix(&M, araw, nr, nc, nrhs, dt));
  free(araw);
  free(a);
  if (!M) return;
  CHECK(sl_op_nrows(M) == R * nrhs && sl_op_ncols(M) == C * nrhs, "%s shape %lld x %lld", sl_op_name(M),
        (long long)sl_op_nrows(M), (long long)sl_op_ncols(M));
  for (int mode = 0; mode < 2; mode++) {
    int64_t nin = mode ? R : C, nout = mode ? C : R;
    double complex *in = malloc(sizeof *in * (size_t)(nin * nrhs + 1)), *ref = calloc((size_t)(nout * nrhs + 1), sizeof *ref);
    for (int64_t g = 0; g < nin * nrhs; g++) in[g] = mc_value(dt, g, 9 + mode);
    /* the reference, block by block, from the formula of every rank's A_r */
    int64_t roff = 0, coff = 0;
    for (int r = 0; r < P; r++) {
      if (mm_kind == 1) coff = 0; /* VStack: every block reads all of x */
      if (mm_kind == 2) roff = 0; /* HStack: every block writes all of y */
      for (int64_t i = 0; i < k_rows(r, P); i++)
        for (int64_t j = 0; j < k_cols(r, P); j++)
          for (int64_t k = 0; k < nrhs; k++) {
            double complex aij = mm_a(r, i, j, cplx);
            if (!mode) ref[(roff + i) * nrhs + k] += aij * in[(coff + j) * nrhs + k];
            else ref[(coff + j) * nrhs + k] += conj(aij) * in[(roff + i) * nrhs + k];
          }
      roff += k_rows(r, P);
      coff += k_cols(r, P);
    }
    char what[96];
    snprintf(what, sizeof what, "%s %s (%s, nrhs %lld)", sl_op_name(M), mode ? "adjoint" : "forward",
             sl_dtype_name(dt), (long long)nrhs);
    apply_check(M, mode, dt, in, nin * nrhs, ref, what);
    free(in);
    free(ref);
  }
  double err = -1, tol = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-12;
  CHECK_OK(sl_dottest(M, 5, &err));
  CHECK(err >= 0 && err <= tol, "dot test of %s (%s, nrhs %lld): %.3g", sl_op_name(M), sl_dtype_name(dt), (long long)nrhs, err);
  /* a composite on top: (M^H M) is square and self-adjoint; its dot test too */
  sl_op *Mh = NULL, *N = NULL;
  CHECK_OK(sl_op_adjoint(&Mh, M));
  CHECK_OK(sl_op_product(&N, Mh, M));
  CHECK_OK(sl_dottest(N, 6, &err));
  CHECK(err >= 0 && err <= tol, "dot test of M^H M, M = %s (%s, nrhs %lld): %.3g", sl_op_name(M), sl_dtype_name(dt), (long long)nrhs, err);
  sl_op_destroy(&N);
  sl_op_destroy(&Mh);
  sl_op_destroy(&M);
}

/* Restriction: rank r keeps m_r = n_r + 1 of its n_r elements, idx_k = 2k mod n_r (so some repeat and the
 * adjoint must accumulate them); ranks that own nothing keep nothing. */
static int64_t rs_count(int64_t nl) { return nl > 0 ? nl + 1 : 0; }
static int64_t rs_index(int64_t nl, int64_t k) { return (2 * k) % nl; }

static void run_restriction(sl_dtype dt, int64_t n)
{
  int P = sl_size(), me = sl_rank();
  int64_t dims[1] = {n};
  double complex *xg;
  sl_array *x = mc_array(1, dims, dt, NULL, 3, &xg);
  int64_t nl = sl_array_count_of(x, me), m = rs_count(nl);
  int64_t *idx = malloc(sizeof *idx * (size_t)(m + 1));
  for (int64_t k = 0; k < m; k++) idx[k] = rs_index(nl, k);
  sl_op *R = NULL;
  CHECK_OK(sl_op_restriction(&R, x, idx, m));
  free(idx);
  if (!R) {
    sl_array_destroy(&x);
    free(xg);
    return;
  }
  int64_t M = 0;
  for (int r = 0; r < P; r++) M += rs_count(sl_array_count_of(x, r));
  double complex *yref = malloc(sizeof *yref * (size_t)(M + 1)), *v = malloc(sizeof *v * (size_t)(M + 1));
  double complex *xref = calloc((size_t)(n + 1), sizeof *xref);
  int64_t off = 0, yo = 0;
  for (int r = 0; r < P; r++) {
    int64_t nr = sl_array_count_of(x, r);
    for (int64_t k = 0; k < rs_count(nr); k++, yo++) {
      v[yo] = mc_value(dt, yo, 13);
      yref[yo] = xg[off + rs_index(nr, k)];
      xref[off + rs_index(nr, k)] += v[yo];
    }
    off += nr;
  }
  sl_array *y = NULL, *vin = NULL, *xa = NULL;
  CHECK_OK(sl_op_create_range(R, &y));
  CHECK_OK(sl_op_create_range(R, &vin));
  CHECK_OK(sl_op_create_domain(R, &xa));
  CHECK_OK(sl_array_fill(y, SL_REAL(5.0)));
  CHECK_OK(sl_array_fill(xa, SL_REAL(5.0)));
  CHECK_OK(sl_op_apply(R, SL_FORWARD, x, y));
  void *raw = malloc(sl_dtype_size(dt) * (size_t)(M + 1));
  mc_to_dtype(dt, M, v, raw);
  CHECK_OK(sl_array_scatter(vin, -1, raw));
  CHECK_OK(sl_op_apply(R, SL_ADJOINT, vin, xa));
  char what[96];
  snprintf(what, sizeof what, "Restriction forward (%s, n=%lld)", sl_dtype_name(dt), (long long)n);
  CHECK(mc_compare(y, yref, what) == 0, "%s", what);
  snprintf(what, sizeof what, "Restriction adjoint (%s, n=%lld)", sl_dtype_name(dt), (long long)n);
  CHECK(mc_compare(xa, xref, what) == 0, "%s", what);
  double err = -1, tol = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-12;
  CHECK_OK(sl_dottest(R, 17, &err));
  CHECK(err >= 0 && err <= tol, "dot test of Restriction (%s, n=%lld): %.3g", sl_dtype_name(dt), (long long)n, err);
  free(raw);
  free(yref);
  free(v);
  free(xref);
  free(xg);
  sl_array_destroy(&y);
  sl_array_destroy(&vin);
  sl_array_destroy(&xa);
  sl_array_destroy(&x);
  sl_op_destroy(&R);
}

/* CSR: rank r's block has MatrixMult's shape (mm_rows x mm_cols) and the entries (i, j) with
 * (i + 2 j + r) % 3 == 0, valued mm_a(r, i, j). */
static int cs_in(int r, int64_t i, int64_t j) { return (i + 2 * j + r) % 3 == 0; }

static void run_csr(sl_dtype dt)
{
  int P = sl_size(), me = sl_rank(), cplx = sl_dtype_is_complex(dt);
  int64_t nr = mm_rows(me, P), nc = mm_cols(me, P), R = 0, C = 0;
  for (int r = 0; r < P; r++) R += mm_rows(r, P), C += mm_cols(r, P);
  int64_t *rp = malloc(sizeof *rp * (size_t)(nr + 1)), *ci = malloc(sizeof *ci * (size_t)(nr * nc + 1));
  double complex *v = malloc(sizeof *v * (size_t)(nr * nc + 1));
  rp[0] = 0;
  for (int64_t i = 0; i < nr; i++) {
    rp[i + 1] = rp[i];
    for (int64_t j = 0; j < nc; j++)
      if (cs_in(me, i, j)) {
        ci[rp[i + 1]] = j;
        v[rp[i + 1]++] = mm_a(me, i, j, cplx);
      }
  }
  void *vraw = malloc(sl_dtype_size(dt) * (size_t)(rp[nr] + 1));
  mc_to_dtype(dt, rp[nr], v, vraw);
  sl_op *A = NULL;
  CHECK_OK(sl_op_csr(&A, nr, nc, rp, ci, vraw, dt));
  free(rp);
  free(ci);
  free(v);
  free(vraw);
  if (!A) return;
  for (int mode = 0; mode < 2; mode++) {
    int64_t nin = mode ? R : C, nout = mode ? C : R;
    double complex *in = malloc(sizeof *in * (size_t)(nin + 1)), *ref = calloc((size_t)(nout + 1), sizeof *ref);
    for (int64_t g = 0; g < nin; g++) in[g] = mc_value(dt, g, 21 + mode);
    int64_t roff = 0, coff = 0;
    for (int r = 0; r < P; r++) {
      for (int64_t i = 0; i < mm_rows(r, P); i++)
        for (int64_t j = 0; j < mm_cols(r, P); j++) {
          if (!cs_in(r, i, j)) continue;
          double complex aij = mm_a(r, i, j, cplx);
          if (!mode) ref[roff + i] += aij * in[coff + j];
          else ref[coff + j] += conj(aij) * in[roff + i];
        }
      roff += mm_rows(r, P);
      coff += mm_cols(r, P);
    }
    char what[96];
    snprintf(what, sizeof what, "CSR %s (%s)", mode ? "adjoint" : "forward", sl_dtype_name(dt));
    apply_check(A, mode, dt, in, nin, ref, what);
    free(in);
    free(ref);
  }
  double err = -1, tol = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-12;
  CHECK_OK(sl_dottest(A, 23, &err));
  CHECK(err >= 0 && err <= tol, "dot test of CSR (%s): %.3g", sl_dtype_name(dt), err);
  sl_op_destroy(&A);
}

/* Several dense blocks per rank: rank r holds 1 + r % 3 blocks (none on the last rank when P > 1), block b
 * (2 + b) x (3 - b % 2) with entries mm_a(200 + 10 r + b, i, j). */
static int mb_count(int r, int P) { return P > 1 && r == P - 1 ? 0 : 1 + r % 3; }

static void run_matrix_blocks(sl_dtype dt)
{
  int P = sl_size(), me = sl_rank(), cplx = sl_dtype_is_complex(dt), nb = mb_count(me, P);
  void *blk[4] = {NULL};
  int64_t nr[4], nc[4], R = 0, C = 0;
  for (int b = 0; b < nb; b++) {
    nr[b] = 2 + b, nc[b] = 3 - b % 2;
    double complex *z = malloc(sizeof *z * (size_t)(nr[b] * nc[b]));
    for (int64_t i = 0; i < nr[b]; i++)
      for (int64_t j = 0; j < nc[b]; j++) z[i * nc[b] + j] = mm_a(200 + 10 * me + b, i, j, cplx);
    blk[b] = malloc(sl_dtype_size(dt) * (size_t)(nr[b] * nc[b]));
    mc_to_dtype(dt, nr[b] * nc[b], z, blk[b]);
    free(z);
  }
  for (int r = 0; r < P; r++)
    for (int b = 0; b < mb_count(r, P); b++) R += 2 + b, C += 3 - b % 2;
  sl_op *A = NULL;
  CHECK_OK(sl_op_matrix_blocks(&A, nb, (const void *const *)blk, nr, nc, dt));
  for (int b = 0; b < nb; b++) free(blk[b]);
  if (!A) return;
  for (int mode = 0; mode < 2; mode++) {
    int64_t nin = mode ? R : C, nout = mode ? C : R;
    double complex *in = malloc(sizeof *in * (size_t)(nin + 1)), *ref = calloc((size_t)(nout + 1), sizeof *ref);
    for (int64_t g = 0; g < nin; g++) in[g] = mc_value(dt, g, 31 + mode);
    int64_t roff = 0, coff = 0;
    for (int r = 0; r < P; r++)
      for (int b = 0; b < mb_count(r, P); b++) {
        int64_t br = 2 + b, bc = 3 - b % 2;
        for (int64_t i = 0; i < br; i++)
          for (int64_t j = 0; j < bc; j++) {
            double complex aij = mm_a(200 + 10 * r + b, i, j, cplx);
            if (!mode) ref[roff + i] += aij * in[coff + j];
            else ref[coff + j] += conj(aij) * in[roff + i];
          }
        roff += br;
        coff += bc;
      }
    char what[96];
    snprintf(what, sizeof what, "matrix blocks %s (%s)", mode ? "adjoint" : "forward", sl_dtype_name(dt));
    apply_check(A, mode, dt, in, nin, ref, what);
    free(in);
    free(ref);
  }
  double err = -1, tol = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-12;
  CHECK_OK(sl_dottest(A, 29, &err));
  CHECK(err >= 0 && err <= tol, "dot test of the matrix blocks (%s): %.3g", sl_dtype_name(dt), err);
  sl_op_destroy(&A);
  int64_t neg = -1;
  int rc = sl_op_matrix_blocks(&A, 1, (const void *const *)blk, &neg, &neg, dt);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID), "matrix blocks with a negative size: %s", sl_last_error());
  /* sizes whose products overflow (or pass one CSR block's 2^32 entries) and a NaN on rank 0: refused before
   * anything is read or allocated */
  double buf[8] = {0};
  const void *pb[1] = {buf};
  int64_t one = 1, two = 2, huge = (int64_t)1 << 61, h32 = (int64_t)1 << 32;
  rc = sl_op_matrix_blocks(&A, 1, pb, &one, &huge, dt);
  CHECK(mc_same_error_everywhere(rc, SL_E_DIMS) && strstr(sl_last_error(), "2^32"), "a 1 x 2^61 block: %s", sl_last_error());
  rc = sl_op_matrix_blocks(&A, 1, pb, &h32, &h32, dt);
  CHECK(mc_same_error_everywhere(rc, SL_E_DIMS), "a 2^32 x 2^32 block (2^64 entries wrap to 0): %s", sl_last_error());
  if (sl_rank() == 0) buf[0] = NAN; /* a NaN element in every dtype (float32: the second) */
  rc = sl_op_matrix_blocks(&A, 1, pb, &two, &two, dt);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 3 (A): block 0 holds a non-finite"),
        "a NaN in a block on rank 0: %s", sl_last_error());
  CHECK(A == NULL, "no operator from refused blocks");
}

/* Fredholm1: rank r holds 1 + r % 2 slices (none on the last rank when P > 1); G of global slice k is
 * mm_a(100 + k, i, j); nx = 3, ny = 2, nz = 2. */
static int64_t fr_slices(int r, int P) { return P > 1 && r == P - 1 ? 0 : 1 + r % 2; }

static void run_fredholm(sl_dtype dt)
{
  int P = sl_size(), me = sl_rank(), cplx = sl_dtype_is_complex(dt);
  const int64_t nx = 3, ny = 2, nz = 2;
  int64_t nsl = fr_slices(me, P), K = 0, k0 = 0;
  for (int r = 0; r < P; r++) {
    if (r < me) k0 += fr_slices(r, P);
    K += fr_slices(r, P);
  }
  double complex *g = malloc(sizeof *g * (size_t)(nsl * nx * ny + 1));
  for (int64_t s = 0; s < nsl; s++)
    for (int64_t i = 0; i < nx; i++)
      for (int64_t j = 0; j < ny; j++) g[(s * nx + i) * ny + j] = mm_a(100 + (int)(k0 + s), i, j, cplx);
  void *graw = malloc(sl_dtype_size(dt) * (size_t)(nsl * nx * ny + 1));
  mc_to_dtype(dt, nsl * nx * ny, g, graw);
  sl_op *F = NULL;
  CHECK_OK(sl_op_fredholm1(&F, graw, nsl, nx, ny, nz, dt));
  free(g);
  free(graw);
  if (!F) return;
  for (int mode = 0; mode < 2; mode++) {
    int64_t rin = mode ? nx : ny, rout = mode ? ny : nx;
    double complex *in = malloc(sizeof *in * (size_t)(K * rin * nz + 1)), *ref = calloc((size_t)(K * rout * nz + 1), sizeof *ref);
    for (int64_t q = 0; q < K * rin * nz; q++) in[q] = mc_value(dt, q, 31 + mode);
    for (int64_t k = 0; k < K; k++)
      for (int64_t i = 0; i < nx; i++)
        for (int64_t j = 0; j < ny; j++)
          for (int64_t z = 0; z < nz; z++) {
            double complex gij = mm_a(100 + (int)k, i, j, cplx);
            if (!mode) ref[(k * nx + i) * nz + z] += gij * in[(k * ny + j) * nz + z];
            else ref[(k * ny + j) * nz + z] += conj(gij) * in[(k * nx + i) * nz + z];
          }
    char what[96];
    snprintf(what, sizeof what, "Fredholm1 %s (%s)", mode ? "adjoint" : "forward", sl_dtype_name(dt));
    apply_check(F, mode, dt, in, K * rin * nz, ref, what);
    free(in);
    free(ref);
  }
  double err = -1, tol = dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-12;
  CHECK_OK(sl_dottest(F, 29, &err));
  CHECK(err >= 0 && err <= tol, "dot test of Fredholm1 (%s): %.3g", sl_dtype_name(dt), err);
  sl_op_destroy(&F);
}

static void bad_input(void)
{
  int P = sl_size();
  int64_t n1[1] = {3 * P + 1}, n2[1] = {3 * P + 2};
  sl_array *a = NULL, *b = NULL, *af = NULL;
  CHECK_OK(sl_array_create(&a, 1, n1, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_create(&b, 1, n2, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_create(&af, 1, n1, SL_FLOAT32, NULL));
  sl_op *A = NULL, *B = NULL, *F = NULL, *out = NULL;
  CHECK_OK(sl_op_identity(&A, a));
  CHECK_OK(sl_op_identity(&B, b));
  CHECK_OK(sl_op_identity(&F, af));
  CHECK(mc_same_error_everywhere(sl_op_sum(&out, A, B), SL_E_DIMS), "sum of operators of different sizes");
  CHECK(strstr(sl_last_error(), "argument 3 (b)") != NULL, "message names b: %s", sl_last_error());
  CHECK(mc_same_error_everywhere(sl_op_product(&out, A, B), SL_E_DIMS), "product with mismatched inner sizes");
  CHECK(mc_same_error_everywhere(sl_op_sum(&out, A, F), SL_E_DTYPE), "sum of operators of different dtypes");
  CHECK(mc_same_error_everywhere(sl_op_apply(A, SL_FORWARD, b, a), SL_E_DIMS), "apply to an array of the wrong size");
  CHECK(strstr(sl_last_error(), "argument 3 (x)") != NULL, "message names x: %s", sl_last_error());
  CHECK(mc_same_error_everywhere(sl_op_apply(A, SL_FORWARD, a, a), SL_E_INVALID), "apply in place");
  CHECK(mc_same_error_everywhere(sl_op_apply(A, (sl_op_mode)7, a, b), SL_E_INVALID), "bad mode");
  CHECK(mc_same_error_everywhere(sl_op_power(&out, A, -1), SL_E_INVALID), "negative power");
  CHECK(mc_same_error_everywhere(sl_op_scaled(&out, A, (sl_cscalar){1, 1}), SL_E_DTYPE), "complex scale of a real op");
  CHECK(mc_same_error_everywhere(sl_op_zero(&out, a, af), SL_E_DTYPE), "zero between dtypes");
  CHECK(mc_same_error_everywhere(sl_op_diagonal(&out, NULL), SL_E_INVALID), "NULL diagonal");
  /* a bad argument on one rank only: the same verdict everywhere */
  double blk[4] = {1, 2, 3, 4};
  CHECK(mc_same_error_everywhere(sl_op_matrix(&out, sl_rank() == P - 1 ? NULL : blk, 2, 2, 1, SL_FLOAT64), SL_E_INVALID),
        "MatrixMult: NULL block on the last rank");
  CHECK(mc_same_error_everywhere(sl_op_matrix(&out, blk, 2, 2, 0, SL_FLOAT64), SL_E_INVALID), "MatrixMult: nrhs 0");
  int64_t rp_bad[3] = {0, 2, 1}, ci_ok[2] = {0, 1};
  double v_ok[2] = {1, 2};
  CHECK(mc_same_error_everywhere(sl_op_csr(&out, 2, 2, sl_rank() == P - 1 ? rp_bad : (int64_t[]){0, 1, 2}, ci_ok, v_ok,
                                           SL_FLOAT64), SL_E_INVALID), "CSR: decreasing row pointers on the last rank");
  double gb[4] = {1, 2, 3, 4};
  CHECK(mc_same_error_everywhere(sl_op_fredholm1(&out, gb, 1, 2, sl_rank() == 0 ? 2 : 1, 1, SL_FLOAT64),
                                 P > 1 ? SL_E_DIMS : SL_SUCCESS) || P == 1, "Fredholm1: ny differs between ranks");
  if (P == 1) sl_op_destroy(&out);
  int64_t bad_idx[1] = {sl_rank() == 0 ? 3 * P + 5 : 0};
  CHECK(mc_same_error_everywhere(sl_op_restriction(&out, a, bad_idx, 1), SL_E_INVALID),
        "Restriction: an index outside rank 0's block");
  if (P > 1)
    CHECK(mc_same_error_everywhere(sl_op_vstack_matrix(&out, blk, 1, sl_rank() == 0 ? 2 : 4, 1, SL_FLOAT64), SL_E_DIMS),
          "VStack: blocks with different column counts");
  sl_op_destroy(&A);
  sl_op_destroy(&B);
  sl_op_destroy(&F);
  sl_array_destroy(&a);
  sl_array_destroy(&b);
  sl_array_destroy(&af);
}

/* Diagonal along one axis (pylops' Diagonal(diag, dims, axis)): a 3-D array split along axis 0 (the last rank
 * of 4 owns nothing), d along each axis in turn, against y[g] = d[i_axis(g)] x[g] and conj(d) for the adjoint;
 * dot test; bad input. */
static void run_diagonal_axis(sl_dtype dt)
{
  int64_t dims[3] = {3, 4, 5}, n = 60;
  int cplx = sl_dtype_is_complex(dt);
  double complex *xg = NULL, *ref = malloc(sizeof *ref * (size_t)n), dv[5];
  sl_array *x = mc_array(3, dims, dt, NULL, 17, &xg);
  void *raw = malloc(sl_dtype_size(dt) * 5);
  for (int axis = 0; axis < 3; axis++) {
    for (int i = 0; i < dims[axis]; i++) dv[i] = (1.5 + i) + (cplx ? I * (0.5 - 0.25 * i) : 0);
    mc_to_dtype(dt, dims[axis], dv, raw);
    sl_op *D = NULL;
    CHECK_OK(sl_op_diagonal_axis(&D, x, raw, axis));
    if (!D) continue;
    int64_t stride = axis == 0 ? 20 : axis == 1 ? 5 : 1;
    for (int mode = 0; mode < 2; mode++) {
      for (int64_t g = 0; g < n; g++) {
        double complex f = dv[(g / stride) % dims[axis]];
        ref[g] = (mode ? conj(f) : f) * xg[g];
      }
      char what[96];
      snprintf(what, sizeof what, "%s: Diagonal along axis %d, %s", sl_dtype_name(dt), axis, mode ? "adjoint" : "forward");
      apply_check(D, mode, dt, xg, n, ref, what);
    }
    double err = 1;
    CHECK_OK(sl_dottest(D, 5, &err));
    CHECK(err < 10 * mc_tol(dt), "%s: dot test of Diagonal along axis %d: %g", sl_dtype_name(dt), axis, err);
    sl_op_destroy(&D);
  }
  /* bad input, the same verdict on every rank */
  sl_op *D = NULL;
  CHECK(mc_same_error_everywhere(sl_op_diagonal_axis(&D, x, raw, 3), SL_E_INVALID) && strstr(sl_last_error(), "axis"),
        "axis 3 of a 3-D array: %s", sl_last_error());
  for (int i = 0; i < 5; i++) dv[i] = 1.0 + (sl_rank() == sl_size() - 1 && i == 2);
  mc_to_dtype(dt, 5, dv, raw);
  int rc = sl_op_diagonal_axis(&D, x, raw, 2);
  if (sl_size() > 1)
    CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "(d)"), "d differing on one rank: %s",
          sl_last_error());
  sl_op_destroy(&D);
  dv[1] = NAN;
  mc_to_dtype(dt, 5, dv, raw);
  CHECK(mc_same_error_everywhere(sl_op_diagonal_axis(&D, x, raw, 2), SL_E_INVALID) && strstr(sl_last_error(), "finite"),
        "a NaN in d: %s", sl_last_error());
  CHECK(D == NULL, "no operator after an error");
  sl_array *parts[2] = {NULL, NULL}, *st = NULL;
  CHECK_OK(sl_array_create_like(&parts[0], x));
  CHECK_OK(sl_array_create_like(&parts[1], x));
  CHECK_OK(sl_array_stack(&st, 2, parts));
  dv[1] = 1.0;
  mc_to_dtype(dt, 5, dv, raw);
  CHECK(mc_same_error_everywhere(sl_op_diagonal_axis(&D, st, raw, 0), SL_E_INVALID) && strstr(sl_last_error(), "stacked"),
        "a stacked like: %s", sl_last_error());
  sl_array_destroy(&st);
  /* like laid out differently on the last rank (the same length along axis 2): refused, naming like */
  if (sl_size() > 1) {
    int64_t other[3] = {4, 3, 5};
    sl_array *xo = NULL;
    CHECK_OK(sl_array_create(&xo, 3, other, dt, NULL));
    for (int i = 0; i < 5; i++) dv[i] = 1.0; /* d alike everywhere */
    mc_to_dtype(dt, 5, dv, raw);
    CHECK(mc_same_error_everywhere(sl_op_diagonal_axis(&D, sl_rank() == sl_size() - 1 ? xo : x, raw, 2), SL_E_INVALID) &&
              strstr(sl_last_error(), "argument 2 (like: its layout) differs"),
          "like differing on one rank: %s", sl_last_error());
    sl_array_destroy(&xo);
  }
  free(raw);
  free(ref);
  free(xg);
  sl_array_destroy(&x);
}

/* First and second directional derivatives (pylops' definitions) on a 7 x 6 array split along axis 0, with one
 * direction and with a direction per point, against the dense matrix of sum_k v_k(g) (x[g + e_k] - x[g - e_k])
 * / (2 h_k) at points interior along k (0 at the ends: centered, no edge); second = -D^H D. */
/* pylops' first derivative along one axis as rows of a dense matrix: row g of M gets w times the derivative
 * of the axis through g (kind forward, backward, or centered of order 3 with or without edge) */
static void dir_rows(double complex *M, int64_t N, int nd, const int64_t *dims, int k, double h, sl_deriv_kind kind,
                     int edge, const double complex *w)
{
  int64_t stride = 1;
  for (int a = nd - 1; a > k; a--) stride *= dims[a];
  for (int64_t g = 0; g < N; g++) {
    const int64_t i = g / stride % dims[k], n = dims[k];
    double complex *row = M + g * N;
    if (kind == SL_DERIV_FORWARD) {
      if (i < n - 1) row[g + stride] += w[g] / h, row[g] -= w[g] / h;
    } else if (kind == SL_DERIV_BACKWARD) {
      if (i >= 1) row[g] += w[g] / h, row[g - stride] -= w[g] / h;
    } else if (i >= 1 && i <= n - 2) {
      row[g + stride] += w[g] / (2 * h), row[g - stride] -= w[g] / (2 * h);
    } else if (edge && i == 0) {
      row[g + stride] += w[g] / h, row[g] -= w[g] / h;
    } else if (edge && i == n - 1) {
      row[g] += w[g] / h, row[g - stride] -= w[g] / h;
    }
  }
}

/* First and Second directional derivatives (pylops' definitions) on 2-D (7 x 6) and 3-D (5 x 4 x 3) arrays split
 * along axis 0 with mc_share (the last of 4 ranks owning nothing): every kind, with and without edge, a fixed
 * direction and a field, forward and adjoint against the dense matrices, dot tests of both. */
static void run_directional(sl_dtype dt)
{
  for (int nd = 2; nd <= 3; nd++) {
    const int64_t dims[3] = {nd == 2 ? 7 : 5, nd == 2 ? 6 : 4, 3};
    const int64_t N = dims[0] * dims[1] * (nd == 3 ? dims[2] : 1);
    const double h[3] = {1.0, 0.5, 2.0}, vfix[3] = {0.6, -0.8, 0.3};
    int64_t ln = mc_share(dims[0]);
    sl_dist dist = sl_dist_default();
    dist.local_n = &ln;
    double complex *xg = NULL, *vg[3] = {NULL, NULL, NULL}, *M = calloc((size_t)(N * N), sizeof *M),
                   *ref = malloc(sizeof *ref * (size_t)N), *tmp = malloc(sizeof *tmp * (size_t)N),
                   *w = malloc(sizeof *w * (size_t)N);
    sl_array *x = mc_array(nd, dims, dt, &dist, 23, &xg), *vf[3] = {NULL, NULL, NULL};
    for (int k = 0; k < nd; k++) vf[k] = mc_array(nd, dims, dt, &dist, 29 + 2 * k, &vg[k]);
    const sl_deriv_kind kinds[4] = {SL_DERIV_CENTERED, SL_DERIV_CENTERED, SL_DERIV_FORWARD, SL_DERIV_BACKWARD};
    for (int c = 0; c < 4; c++)
      for (int field = 0; field < 2; field++) {
        const sl_deriv_kind kind = kinds[c];
        const int edge = c == 1;
        memset(M, 0, sizeof *M * (size_t)(N * N));
        for (int k = 0; k < nd; k++) {
          for (int64_t g = 0; g < N; g++) w[g] = field ? vg[k][g] : vfix[k];
          dir_rows(M, N, nd, dims, k, h[k], kind, edge, w);
        }
        sl_op *D = NULL, *S = NULL;
        CHECK_OK(sl_op_first_directional_derivative(&D, x, field ? NULL : vfix, field ? vf : NULL, h, kind, edge));
        if (kind == SL_DERIV_CENTERED) CHECK_OK(sl_op_second_directional_derivative(&S, x, field ? NULL : vfix, field ? vf : NULL, h, edge));
        if (!D || (kind == SL_DERIV_CENTERED && !S)) break;
        char what[128];
        const char *kn = kind == SL_DERIV_FORWARD ? "forward" : kind == SL_DERIV_BACKWARD ? "backward" : "centered";
        for (int mode = 0; mode < 2; mode++) {
          for (int64_t r = 0; r < N; r++) {
            ref[r] = 0;
            for (int64_t q = 0; q < N; q++) ref[r] += (mode ? conj(M[q * N + r]) : M[r * N + q]) * xg[q];
          }
          snprintf(what, sizeof what, "%s: FirstDirectionalDerivative %d-D (%s, edge %d, %s) %s", sl_dtype_name(dt), nd, kn,
                   edge, field ? "field" : "fixed", mode ? "adjoint" : "forward");
          apply_check(D, mode, dt, xg, N, ref, what);
        }
        double err = 1;
        CHECK_OK(sl_dottest(D, 3, &err));
        CHECK(err < 10 * mc_tol(dt), "%s: dot test of FirstDirectionalDerivative %d-D (%s, edge %d): %g", sl_dtype_name(dt), nd,
              kn, edge, err);
        if (S) {
          for (int64_t r = 0; r < N; r++) { /* -M^H M x, which is its own adjoint */
            tmp[r] = 0;
            for (int64_t q = 0; q < N; q++) tmp[r] += M[r * N + q] * xg[q];
          }
          for (int64_t r = 0; r < N; r++) {
            ref[r] = 0;
            for (int64_t q = 0; q < N; q++) ref[r] -= conj(M[q * N + r]) * tmp[q];
          }
          for (int mode = 0; mode < 2; mode++) {
            snprintf(what, sizeof what, "%s: SecondDirectionalDerivative %d-D (edge %d, %s) %s", sl_dtype_name(dt), nd, edge,
                     field ? "field" : "fixed", mode ? "adjoint" : "forward");
            apply_check(S, mode, dt, xg, N, ref, what);
          }
          CHECK_OK(sl_dottest(S, 5, &err));
          CHECK(err < 10 * mc_tol(dt), "%s: dot test of SecondDirectionalDerivative %d-D (edge %d): %g", sl_dtype_name(dt), nd,
                edge, err);
        }
        sl_op_destroy(&D);
        sl_op_destroy(&S);
      }
    if (nd == 2) {
      sl_op *D = NULL;
      CHECK(mc_same_error_everywhere(sl_op_first_directional_derivative(&D, x, vfix, vf, h, SL_DERIV_CENTERED, 0), SL_E_INVALID),
            "both v and vfield: %s", sl_last_error());
      double vbad[2] = {0.6, sl_rank() == 0 ? 0.8 : -0.8};
      int rc = sl_op_first_directional_derivative(&D, x, vbad, NULL, h, SL_DERIV_CENTERED, 0);
      if (sl_size() > 1) CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "(v)"), "v differing: %s", sl_last_error());
      sl_op_destroy(&D);
    }
    free(M), free(ref), free(tmp), free(w), free(xg);
    sl_array_destroy(&x);
    for (int k = 0; k < nd; k++) sl_array_destroy(&vf[k]), free(vg[k]);
  }
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  int P = sl_size();
  int64_t sizes[2] = {3 * (int64_t)P + 1, P > 1 ? (int64_t)P - 1 : 2}; /* uneven; the last rank owns nothing */
  for (int dt = 0; dt < 4; dt++)
    for (int k = 0; k < 2; k++) run((sl_dtype)dt, sizes[k]);
  for (mm_kind = 0; mm_kind < 3; mm_kind++)
    for (int dt = 0; dt < 4; dt++) {
      run_matrix((sl_dtype)dt, 1);
      run_matrix((sl_dtype)dt, 3);
    }
  for (int dt = 0; dt < 4; dt++)
    for (int k = 0; k < 2; k++) run_restriction((sl_dtype)dt, sizes[k]);
  for (int dt = 0; dt < 4; dt++) run_csr((sl_dtype)dt);
  for (int dt = 0; dt < 4; dt++) run_matrix_blocks((sl_dtype)dt);
  for (int dt = 0; dt < 4; dt++) run_fredholm((sl_dtype)dt);
  for (int dt = 0; dt < 4; dt++) run_diagonal_axis((sl_dtype)dt);
  for (int dt = 0; dt < 4; dt++) run_directional((sl_dtype)dt);
  bad_input();
  return mc_finish("mpi_ops");
}
