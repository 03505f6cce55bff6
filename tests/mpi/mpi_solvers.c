/* The solvers on 1 to 4 ranks (a rank owning nothing on 4), in float64 and complex128 (float32 smoke):
 * CG (classic and pipelined) on a dense SPD operator that couples every rank, CGLS and LSQR on a VStack
 * least-squares problem (with and without damping), against a dense direct solve through LAPACKE; their
 * first iterations against a serial dense CG written here; ISTA and FISTA iterates against serial
 * implementations written here; power iteration against the largest eigenvalue from a Jacobi eigensolver
 * written here; x0, early stopping,
 * check_every, callbacks, cost history; bad input. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;

static int P, R;

/* Entry (i, j) of the test matrices, from a formula (imaginary part only for complex dtypes). */
static cplx hval(sl_dtype dt, int64_t i, int64_t j, int seed)
{
  double di = (double)i, dj = (double)j;
  double re = sin(0.37 * di * di + 1.3 * di * dj + 0.71 * dj + 0.1 * seed) + (i == j ? 0.5 : 0.0);
  double im = sl_dtype_is_complex(dt) ? cos(0.53 * di * dj - 0.29 * dj * dj + seed) : 0.0;
  return re + I * im;
}

/* This rank's share of n over the ranks; on 4 ranks the last owns nothing. */
static void share(int64_t n, int64_t *cnt, int64_t *off)
{
  int users = P == 4 ? 3 : P;
  int64_t base = n / users, extra = n % users;
  *off = 0;
  for (int r = 0; r < R; r++) *off += r < users ? base + (r < extra) : 0;
  *cnt = R < users ? base + (R < extra) : 0;
}

/* Dense helpers (column-major for LAPACKE, n x n or m x n). */
static cplx *gram(sl_dtype dt, int64_t m, int64_t n, double c, int seed) /* M = H^H H + c I, H m x n */
{
  cplx *M = calloc((size_t)(n * n), sizeof *M);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      cplx s = 0;
      for (int64_t k = 0; k < m; k++) s += conj(hval(dt, k, i, seed)) * hval(dt, k, j, seed);
      M[i + j * n] = s + (i == j ? c : 0);
    }
  return M;
}

/* the diagonal of M^-1 (real parts), column by column from dense solves */
static void diag_inverse(int64_t n, const cplx *M, cplx *dref)
{
  cplx *ej = calloc((size_t)n, sizeof *ej), *col = malloc(sizeof *col * (size_t)n);
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = 0; i < n; i++) ej[i] = i == j;
    mc_solve_dense(n, M, ej, col);
    dref[j] = creal(col[j]);
  }
  free(ej), free(col);
}

/* Largest eigenvalue of a Hermitian n x n M (column-major), by cyclic Jacobi rotations on its real symmetric
 * embedding [[Re M, -Im M], [Im M, Re M]] (which has each eigenvalue of M twice). An independent reference
 * for the ISTA step and power iteration. */
static double max_eig_hermitian(int64_t n, const cplx *M)
{
  int64_t N = 2 * n;
  double *A = malloc(sizeof *A * (size_t)(N * N));
  CHECK(A != NULL, "max_eig_hermitian: out of memory");
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      double re = creal(M[i + j * n]), im = cimag(M[i + j * n]);
      A[i + j * N] = re, A[(i + n) + (j + n) * N] = re;
      A[(i + n) + j * N] = im, A[i + (j + n) * N] = -im;
    }
  for (int sweep = 0; sweep < 100; sweep++) {
    double off = 0, all = 0;
    for (int64_t j = 0; j < N; j++)
      for (int64_t i = 0; i < N; i++) {
        all += A[i + j * N] * A[i + j * N];
        if (i != j) off += A[i + j * N] * A[i + j * N];
      }
    if (off <= 1e-30 * all) break;
    for (int64_t p = 0; p < N - 1; p++)
      for (int64_t q = p + 1; q < N; q++) {
        double apq = A[p + q * N];
        if (apq == 0) continue;
        double theta = (A[q + q * N] - A[p + p * N]) / (2 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < N; k++) { /* columns p and q of A P */
          double akp = A[k + p * N], akq = A[k + q * N];
          A[k + p * N] = c * akp - s * akq;
          A[k + q * N] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < N; k++) { /* rows p and q of P^T (A P) */
          double apk = A[p + k * N], aqk = A[q + k * N];
          A[p + k * N] = c * apk - s * aqk;
          A[q + k * N] = s * apk + c * aqk;
        }
      }
  }
  double lmax = A[0];
  for (int64_t i = 1; i < N; i++) lmax = fmax(lmax, A[i + i * N]);
  free(A);
  return lmax;
}

static double rel_err(int64_t n, const cplx *a, const cplx *b)
{
  double d = 0, m = 0;
  for (int64_t i = 0; i < n; i++) {
    d += pow(cabs(a[i] - b[i]), 2);
    m += pow(cabs(b[i]), 2);
  }
  return sqrt(d / (m > 0 ? m : 1));
}

static void scatter(sl_array *a, const cplx *z)
{
  int64_t n = sl_array_global_size(a);
  void *buf = malloc(sl_dtype_size(sl_array_dtype(a)) * (size_t)(n ? n : 1));
  mc_to_dtype(sl_array_dtype(a), n, z, buf);
  CHECK_OK(sl_array_scatter(a, -1, buf));
  free(buf);
}

/* ---- the SPD problem: M = H^H H + c I with H an HStack of column blocks (dense, couples every rank) ---- */
typedef struct {
  sl_op *H, *Hh, *HhH, *Id, *cI, *M;
  int64_t m, n;
  cplx *Md; /* dense M, column-major */
} spd_t;

static void spd_create(spd_t *s, sl_dtype dt, int64_t m, int64_t n, double c, int seed)
{
  memset(s, 0, sizeof *s);
  s->m = m;
  s->n = n;
  int64_t cnt, off;
  share(n, &cnt, &off);
  cplx *blk = malloc(sizeof *blk * (size_t)(m * (cnt ? cnt : 1)));
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < cnt; j++) blk[i * cnt + j] = hval(dt, i, off + j, seed);
  void *A = malloc(sl_dtype_size(dt) * (size_t)(m * (cnt ? cnt : 1)));
  mc_to_dtype(dt, m * cnt, blk, A);
  CHECK_OK(sl_op_hstack_matrix(&s->H, A, m, cnt, 1, dt));
  free(A);
  free(blk);
  sl_array *like = NULL;
  CHECK_OK(sl_op_create_domain(s->H, &like));
  CHECK_OK(sl_op_adjoint(&s->Hh, s->H));
  CHECK_OK(sl_op_product(&s->HhH, s->Hh, s->H));
  CHECK_OK(sl_op_identity(&s->Id, like));
  CHECK_OK(sl_op_scaled(&s->cI, s->Id, SL_REAL(c)));
  CHECK_OK(sl_op_sum(&s->M, s->HhH, s->cI));
  sl_array_destroy(&like);
  s->Md = gram(dt, m, n, c, seed);
}

static void spd_destroy(spd_t *s)
{
  sl_op *ops[6] = {s->H, s->Hh, s->HhH, s->Id, s->cI, s->M};
  for (int i = 0; i < 6; i++) sl_op_destroy(&ops[i]);
  free(s->Md);
}

/* Serial dense CG: the residual norms of its first k iterations. */
static void serial_cg(int64_t n, const cplx *M, const cplx *b, int k, double *res)
{
  cplx *x = calloc((size_t)n, sizeof *x), *r = malloc(sizeof *r * (size_t)n), *c = malloc(sizeof *c * (size_t)n),
       *q = malloc(sizeof *q * (size_t)n);
  memcpy(r, b, sizeof *r * (size_t)n);
  memcpy(c, b, sizeof *c * (size_t)n);
  double kold = 0;
  for (int64_t i = 0; i < n; i++) kold += pow(cabs(r[i]), 2);
  res[0] = sqrt(kold);
  for (int it = 1; it <= k; it++) {
    cplx cq = 0;
    for (int64_t i = 0; i < n; i++) {
      q[i] = 0;
      for (int64_t j = 0; j < n; j++) q[i] += M[i + j * n] * c[j];
      cq += conj(c[i]) * q[i];
    }
    cplx a = kold / cq;
    double kn = 0;
    for (int64_t i = 0; i < n; i++) {
      x[i] += a * c[i];
      r[i] -= a * q[i];
      kn += pow(cabs(r[i]), 2);
    }
    for (int64_t i = 0; i < n; i++) c[i] = r[i] + kn / kold * c[i];
    kold = kn;
    res[it] = sqrt(kn);
  }
  free(x);
  free(r);
  free(c);
  free(q);
}

static int stop_at_4(int iter, const sl_array *x, void *user)
{
  (*(int *)user)++;
  return iter == 4;
}

static void test_cg(sl_dtype dt, int pipelined)
{
  spd_t s;
  int64_t m = 23, n = 19;
  spd_create(&s, dt, m, n, 2.0, 1);
  sl_array *y = NULL, *x = NULL, *x0 = NULL;
  CHECK_OK(sl_op_create_range(s.M, &y));
  CHECK_OK(sl_op_create_domain(s.M, &x));
  CHECK_OK(sl_op_create_domain(s.M, &x0));
  cplx *b = malloc(sizeof *b * (size_t)n), *xref = malloc(sizeof *xref * (size_t)n), *x0g = malloc(sizeof *x0g * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    b[i] = hval(dt, i, 3 * i, 5);
    x0g[i] = 0.1 * hval(dt, 2 * i, i, 9);
  }
  scatter(y, b);
  scatter(x0, x0g);
  mc_solve_dense(n, s.Md, b, xref);
  const char *name = pipelined ? "CG (pipelined)" : "CG";
  double tol = dt == SL_FLOAT32 ? 1e-3 : 1e-8;

  /* converges to the direct solution; the first iterations follow serial CG */
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.pipelined = pipelined;
  o.niter = 200;
  o.tol = dt == SL_FLOAT32 ? 1e-5 : 1e-13;
  double *cost = malloc(sizeof *cost * 201);
  o.cost = cost;
  sl_solver_info info;
  CHECK_OK(sl_solve_cg(s.M, y, x, &o, &info));
  cplx *xs = mc_gather(x);
  double e = rel_err(n, xs, xref);
  CHECK(e < tol, "%s %s: relative error %.3e to the direct solve", name, sl_dtype_name(dt), e);
  CHECK(info.stop == SL_STOP_TOL, "%s %s: stopped for '%s'", name, sl_dtype_name(dt), sl_stop_reason_name(info.stop));
  CHECK(info.iterations > 1 && info.iterations < 200, "%s: %d iterations", name, info.iterations);
  CHECK(info.host_syncs == info.iterations + 2, "%s: %d host waits for %d iterations (check_every 1)", name,
        info.host_syncs, info.iterations);
  double sres[6];
  serial_cg(n, s.Md, b, 5, sres);
  int lag = pipelined; /* pipelined CG reports ||r|| of the iterate before its update */
  for (int k = 0; k + lag <= 5 && k <= info.iterations; k++) {
    double ref = sres[k > lag ? k - lag : 0], got = cost[k];
    CHECK(fabs(got - ref) <= (dt == SL_FLOAT32 ? 1e-3 : 1e-9) * ref, "%s %s: ||r|| at iteration %d is %.12e, serial CG %.12e",
          name, sl_dtype_name(dt), k, got, ref);
  }
  free(xs);
  /* check_every 4: the history between tests (recorded on the graph, fetched at each test) is the same */
  {
    double *cost4 = malloc(sizeof *cost4 * 201);
    sl_solver_info info4;
    o.check_every = 4;
    o.cost = cost4;
    CHECK_OK(sl_solve_cg(s.M, y, x, &o, &info4));
    int upto = info4.iterations < info.iterations ? info4.iterations : info.iterations, bad = -1;
    for (int k = 0; k <= upto && bad < 0; k++)
      if (!(fabs(cost4[k] - cost[k]) <= 1e-12 * cost[0])) bad = k;
    CHECK(bad < 0 && info4.iterations >= info.iterations, "%s %s: check_every 4: cost[%d] = %.12e, with check_every 1 %.12e "
          "(%d and %d iterations)", name, sl_dtype_name(dt), bad, bad < 0 ? 0 : cost4[bad], bad < 0 ? 0 : cost[bad],
          info4.iterations, info.iterations);
    for (int k = info4.iterations + 1; k <= 200; k++)
      if (!isnan(cost4[k])) bad = k;
    CHECK(bad < 0, "%s: cost[%d] after the last iteration is not NaN", name, bad);
    free(cost4);
    o.check_every = 1;
    o.cost = cost;
  }

  if (dt == SL_FLOAT64 || dt == SL_COMPLEX128) {
    /* x0: the same solution; check_every 3: iterations are a multiple of 3 and waits drop */
    o.x0 = x0;
    o.check_every = 3;
    o.cost = NULL;
    CHECK_OK(sl_solve_cg(s.M, y, x, &o, &info));
    xs = mc_gather(x);
    e = rel_err(n, xs, xref);
    CHECK(e < tol, "%s %s with x0, check_every 3: relative error %.3e", name, sl_dtype_name(dt), e);
    CHECK(info.iterations % 3 == 0 || info.iterations == o.niter, "%s: check_every 3 stopped at %d", name, info.iterations);
    CHECK(info.host_syncs <= info.iterations / 3 + 3, "%s: %d host waits for %d iterations", name, info.host_syncs, info.iterations);
    free(xs);
    /* niter 0 returns x0 */
    o.niter = 0;
    CHECK_OK(sl_solve_cg(s.M, y, x, &o, &info));
    xs = mc_gather(x);
    CHECK(rel_err(n, xs, x0g) < 1e-15 && info.iterations == 0, "%s: niter 0 does not return x0", name);
    free(xs);
    /* a callback stops at iteration 4 */
    int calls = 0;
    sl_solver_options_default(&o);
    o.pipelined = pipelined;
    o.callback = stop_at_4;
    o.user = &calls;
    CHECK_OK(sl_solve_cg(s.M, y, x, &o, &info));
    CHECK(info.iterations == 4 && info.stop == SL_STOP_CALLBACK && calls == 4, "%s: callback: %d iterations, %d calls, '%s'",
          name, info.iterations, calls, sl_stop_reason_name(info.stop));
    /* with check_every 3 the request waits for the next test (iteration 6); a request on the last rank alone
     * stops every rank there too */
    for (int alone = 0; alone < 2; alone++) {
      calls = 0;
      o.check_every = 3;
      o.callback = !alone || R == P - 1 ? stop_at_4 : NULL;
      CHECK_OK(sl_solve_cg(s.M, y, x, &o, &info));
      CHECK(info.iterations == 6 && info.stop == SL_STOP_CALLBACK, "%s: callback%s with check_every 3: %d iterations, '%s'", name,
            alone ? " on the last rank" : "", info.iterations, sl_stop_reason_name(info.stop));
    }
    o.check_every = 1;
    /* damp: (M + damp^2 I) x = y against the direct solve of the shifted matrix, from x0 */
    {
      cplx *Ms = malloc(sizeof *Ms * (size_t)(n * n)), *xd = malloc(sizeof *xd * (size_t)n);
      memcpy(Ms, s.Md, sizeof *Ms * (size_t)(n * n));
      for (int64_t i = 0; i < n; i++) Ms[i + i * n] += 0.7 * 0.7;
      mc_solve_dense(n, Ms, b, xd);
      sl_solver_options_default(&o);
      o.pipelined = pipelined;
      o.damp = 0.7;
      o.x0 = x0;
      o.niter = 200;
      o.tol = 1e-13;
      CHECK_OK(sl_solve_cg(s.M, y, x, &o, &info));
      xs = mc_gather(x);
      e = rel_err(n, xs, xd);
      CHECK(e < tol && info.stop == SL_STOP_TOL, "%s %s with damp 0.7: relative error %.3e to the shifted direct solve (%s)",
            name, sl_dtype_name(dt), e, sl_stop_reason_name(info.stop));
      free(xs);
      free(xd);
      free(Ms);
    }
    /* absolute and squared rules */
    sl_solver_options_default(&o);
    o.pipelined = pipelined;
    o.tol = 1e-6;
    o.tol_rule = SL_TOL_ABSOLUTE;
    o.niter = 500;
    CHECK_OK(sl_solve_cg(s.M, y, x, &o, &info));
    CHECK(info.stop == SL_STOP_TOL && info.rnorm <= 1e-6, "%s: absolute rule: ||r|| = %g", name, info.rnorm);
    o.tol_rule = SL_TOL_SQUARED;
    o.tol = 1e-12;
    CHECK_OK(sl_solve_cg(s.M, y, x, &o, &info));
    CHECK(info.stop == SL_STOP_TOL && info.rnorm * info.rnorm <= 1e-12, "%s: squared rule: ||r|| = %g", name, info.rnorm);
  }
  free(cost);
  free(b);
  free(xref);
  free(x0g);
  sl_array_destroy(&y);
  sl_array_destroy(&x);
  sl_array_destroy(&x0);
  spd_destroy(&s);
}

/* ---- least squares: V = VStack of row blocks (y scattered, x replicated) ---- */
typedef struct {
  sl_op *V;
  int64_t m, n;
  cplx *Ad; /* dense m x n, column-major */
} ls_t;

static void ls_create(ls_t *s, sl_dtype dt, int64_t m, int64_t n, int seed)
{
  s->m = m;
  s->n = n;
  int64_t cnt, off;
  share(m, &cnt, &off);
  cplx *blk = malloc(sizeof *blk * (size_t)((cnt ? cnt : 1) * n));
  for (int64_t i = 0; i < cnt; i++)
    for (int64_t j = 0; j < n; j++) blk[i * n + j] = hval(dt, off + i, j, seed);
  void *A = malloc(sl_dtype_size(dt) * (size_t)((cnt ? cnt : 1) * n));
  mc_to_dtype(dt, cnt * n, blk, A);
  CHECK_OK(sl_op_vstack_matrix(&s->V, A, cnt, n, 1, dt));
  free(A);
  free(blk);
  s->Ad = malloc(sizeof *s->Ad * (size_t)(m * n));
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) s->Ad[i + j * m] = hval(dt, i, j, seed);
}

/* x = (A^H A + damp^2 I)^-1 A^H b; with shift (LSQR with x0, as scipy): x0 + the damped solution for the
 * residual b - A x0 */
static void ls_reference(const ls_t *s, const cplx *b0, double damp, const cplx *shift, cplx *x)
{
  int64_t m = s->m, n = s->n;
  cplx *b = malloc(sizeof *b * (size_t)m);
  for (int64_t k = 0; k < m; k++) {
    b[k] = b0[k];
    for (int64_t j = 0; shift && j < n; j++) b[k] -= s->Ad[k + j * m] * shift[j];
  }
  cplx *N = calloc((size_t)(n * n), sizeof *N), *rhs = calloc((size_t)n, sizeof *rhs);
  for (int64_t i = 0; i < n; i++) {
    for (int64_t j = 0; j < n; j++) {
      for (int64_t k = 0; k < m; k++) N[i + j * n] += conj(s->Ad[k + i * m]) * s->Ad[k + j * m];
      if (i == j) N[i + j * n] += damp * damp;
    }
    for (int64_t k = 0; k < m; k++) rhs[i] += conj(s->Ad[k + i * m]) * b[k];
  }
  mc_solve_dense(n, N, rhs, x);
  for (int64_t j = 0; shift && j < n; j++) x[j] += shift[j];
  free(N);
  free(rhs);
  free(b);
}

typedef int (*solver_fn)(sl_op *, const sl_array *, sl_array *, const sl_solver_options *, sl_solver_info *);

static void test_least_squares(sl_dtype dt, const char *name, solver_fn solve)
{
  ls_t s;
  int64_t m = 41, n = 13;
  ls_create(&s, dt, m, n, 2);
  sl_array *y = NULL, *x = NULL, *x0 = NULL;
  CHECK_OK(sl_op_create_range(s.V, &y));
  CHECK_OK(sl_op_create_domain(s.V, &x));
  CHECK_OK(sl_op_create_domain(s.V, &x0));
  cplx *b = malloc(sizeof *b * (size_t)m), *xref = malloc(sizeof *xref * (size_t)n), *x0g = malloc(sizeof *x0g * (size_t)n);
  for (int64_t i = 0; i < m; i++) b[i] = hval(dt, 2 * i, i + 1, 4);
  for (int64_t i = 0; i < n; i++) x0g[i] = hval(dt, i, 2, 3);
  scatter(y, b);
  scatter(x0, x0g);
  double tol = dt == SL_FLOAT32 ? 2e-3 : 1e-8;
  double damps[2] = {0.0, 1.5};
  for (int d = 0; d < 2; d++) {
    for (int use_x0 = 0; use_x0 < 2; use_x0++) {
      if (dt == SL_FLOAT32 && (d || use_x0)) continue;
      int lsqr_shift = solve == sl_solve_lsqr && use_x0 && d; /* scipy's LSQR damps x - x0 */
      ls_reference(&s, b, damps[d], lsqr_shift ? x0g : NULL, xref);
      sl_solver_options o;
      sl_solver_options_default(&o);
      o.niter = 300;
      o.damp = damps[d];
      o.tol = dt == SL_FLOAT32 ? 1e-6 : 1e-14;
      o.atol = o.btol = dt == SL_FLOAT32 ? 1e-7 : 1e-15;
      o.x0 = use_x0 ? x0 : NULL;
      sl_array *var = NULL;
      int want_var = solve == sl_solve_lsqr && !use_x0 && dt != SL_FLOAT32;
      if (want_var) CHECK_OK(sl_array_create_like(&var, x));
      o.var = var;
      double cost[301];
      o.cost = cost;
      sl_solver_info info;
      CHECK_OK(solve(s.V, y, x, &o, &info));
      if (want_var) { /* calc_var: the diagonal of (A^H A + damp^2 I)^-1 once converged */
        cplx *N = calloc((size_t)(n * n), sizeof *N), *dref = malloc(sizeof *dref * (size_t)n);
        for (int64_t i = 0; i < n; i++)
          for (int64_t j = 0; j < n; j++) {
            for (int64_t k = 0; k < m; k++) N[i + j * n] += conj(s.Ad[k + i * m]) * s.Ad[k + j * m];
            if (i == j) N[i + j * n] += damps[d] * damps[d];
          }
        diag_inverse(n, N, dref);
        cplx *vg = mc_gather(var);
        double ev = rel_err(n, vg, dref);
        CHECK(ev < 1e-9, "LSQR %s damp %g: calc_var differs from diag((A^H A + damp^2 I)^-1) by %.3e", sl_dtype_name(dt),
              damps[d], ev);
        free(vg), free(N), free(dref);
        sl_array_destroy(&var);
      }
      cplx *xs = mc_gather(x);
      double e = rel_err(n, xs, xref);
      CHECK(e < tol, "%s %s damp %g x0 %d: relative error %.3e to the direct solve (%d iterations, '%s')", name,
            sl_dtype_name(dt), damps[d], use_x0, e, info.iterations, sl_stop_reason_name(info.stop));
      CHECK(info.stop != SL_STOP_NITER, "%s %s: did not converge in %d iterations", name, sl_dtype_name(dt), o.niter);
      /* the reported residual norms: ||y - A x|| and sqrt(that^2 + damp^2 ||x||^2) */
      double r1 = 0, xx = 0;
      for (int64_t i = 0; i < m; i++) {
        cplx ax = 0;
        for (int64_t j = 0; j < n; j++) ax += s.Ad[i + j * m] * xs[j];
        r1 += pow(cabs(b[i] - ax), 2);
      }
      for (int64_t j = 0; j < n; j++) xx += pow(cabs(xs[j]), 2);
      if (lsqr_shift) {
        xx = 0;
        for (int64_t j = 0; j < n; j++) xx += pow(cabs(xs[j] - x0g[j]), 2);
      }
      double r2 = sqrt(r1 + damps[d] * damps[d] * xx);
      if (solve == sl_solve_cgls || solve == sl_solve_lsqr) { /* the cost history: ||y - A x|| at the start and at the end */
        double nb = 0;
        for (int64_t i = 0; i < m; i++) nb += pow(cabs(b[i]), 2);
        double ftol = dt == SL_FLOAT32 ? 1e-3 : 1e-8;
        CHECK(use_x0 || fabs(cost[0] - sqrt(nb)) <= ftol * sqrt(nb), "%s %s damp %g: cost[0] %.10e, ||y|| %.10e", name,
              sl_dtype_name(dt), damps[d], cost[0], sqrt(nb));
        CHECK(fabs(cost[info.iterations] - sqrt(r1)) <= ftol * sqrt(nb), "%s %s damp %g x0 %d: cost[%d] %.10e, ||y - A x|| "
              "%.10e", name, sl_dtype_name(dt), damps[d], use_x0, info.iterations, cost[info.iterations], sqrt(r1));
      }
      CHECK(fabs(info.r2norm - r2) <= 1e-6 * r2 + (dt == SL_FLOAT32 ? 1e-3 : 0), "%s %s: r2norm %.10e, direct %.10e", name,
            sl_dtype_name(dt), info.r2norm, r2);
      free(xs);
    }
  }
  /* early stop: a loose tolerance stops well before convergence */
  if (dt == SL_FLOAT64) {
    sl_solver_options o;
    sl_solver_options_default(&o);
    o.tol = 1e-1;
    o.atol = o.btol = 1e-1;
    sl_solver_info info;
    CHECK_OK(solve(s.V, y, x, &o, &info));
    CHECK(info.iterations < n && info.stop != SL_STOP_NITER, "%s: loose tolerance took %d iterations ('%s')", name,
          info.iterations, sl_stop_reason_name(info.stop));
  }
  free(b);
  free(xref);
  free(x0g);
  free(s.Ad);
  sl_op_destroy(&s.V);
  sl_array_destroy(&y);
  sl_array_destroy(&x);
  sl_array_destroy(&x0);
}

/* ---- ISTA / FISTA against serial implementations with the same step ---- */
static double thresh_factor(int kind, double a, double t)
{
  if (kind == SL_THRESH_SOFT) return a > t ? (a - t) / a : 0;
  if (kind == SL_THRESH_HARD) return a > sqrt(2 * t) ? 1 : 0;
  if (a <= pow(54.0, 1.0 / 3.0) / 4.0 * pow(t, 2.0 / 3.0)) return 0;
  double arg = fmin(1.0, t / 8.0 * pow(a / 3.0, -1.5));
  return 2.0 / 3.0 * (1 + cos(2.0 * M_PI / 3.0 - 2.0 / 3.0 * acos(arg)));
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* numpy.percentile(|u|, p) (linear interpolation) */
static double serial_percentile(int64_t n, const cplx *u, double p)
{
  double *m = malloc(sizeof *m * (size_t)n);
  for (int64_t i = 0; i < n; i++) m[i] = cabs(u[i]);
  qsort(m, (size_t)n, sizeof *m, cmp_d);
  double h = (double)(n - 1) * p / 100.0;
  int64_t k = (int64_t)floor(h);
  double v = m[k] + (h - (double)k) * (m[k + 1 < n ? k + 1 : k] - m[k]);
  free(m);
  return v;
}

/* the threshold level of iteration it: eps alpha / 2 (times decay), or the percentile's (perc > 0) */
static double serial_level(int kind, int64_t n, const cplx *u, double alpha, double eps, double perc, const double *decay, int it)
{
  double dk = decay ? decay[it] : 1.0;
  if (perc <= 0) return eps * alpha * 0.5 * dk;
  double t = serial_percentile(n, u, 100.0 - dk * (100.0 - perc));
  return kind == SL_THRESH_SOFT ? t : (kind == SL_THRESH_HARD ? 0.5 * t * t : pow(4.0 * t / cbrt(54.0), 1.5));
}

static void serial_ista(const ls_t *s, const cplx *b, double alpha, double eps, int kind, int niter, int fista,
                        const double *decay, double perc, cplx *x)
{
  int64_t m = s->m, n = s->n;
  cplx *z = calloc((size_t)n, sizeof *z), *xo = calloc((size_t)n, sizeof *xo), *res = malloc(sizeof *res * (size_t)m);
  memset(x, 0, sizeof *x * (size_t)n);
  double t = 1;
  for (int it = 0; it < niter; it++) {
    memcpy(xo, x, sizeof *x * (size_t)n);
    const cplx *src = fista ? z : x;
    for (int64_t i = 0; i < m; i++) {
      res[i] = b[i];
      for (int64_t j = 0; j < n; j++) res[i] -= s->Ad[i + j * m] * src[j];
    }
    cplx *u = malloc(sizeof *u * (size_t)n);
    for (int64_t j = 0; j < n; j++) {
      cplx g = 0;
      for (int64_t i = 0; i < m; i++) g += conj(s->Ad[i + j * m]) * res[i];
      u[j] = src[j] + alpha * g;
    }
    double level = serial_level(kind, n, u, alpha, eps, perc, decay, it);
    for (int64_t j = 0; j < n; j++) x[j] = thresh_factor(kind, cabs(u[j]), level) * u[j];
    free(u);
    if (fista) {
      double told = t;
      t = (1 + sqrt(1 + 4 * t * t)) / 2;
      for (int64_t j = 0; j < n; j++) z[j] = x[j] + (told - 1) / t * (x[j] - xo[j]);
    }
  }
  free(z);
  free(xo);
  free(res);
}

static void test_ista(sl_dtype dt)
{
  ls_t s;
  int64_t m = 30, n = 45; /* underdetermined: sparse recovery */
  ls_create(&s, dt, m, n, 6);
  sl_array *y = NULL, *x = NULL;
  CHECK_OK(sl_op_create_range(s.V, &y));
  CHECK_OK(sl_op_create_domain(s.V, &x));
  cplx *xt = calloc((size_t)n, sizeof *xt), *b = calloc((size_t)m, sizeof *b), *xr = malloc(sizeof *xr * (size_t)n);
  xt[3] = 2.0;
  xt[17] = -1.5;
  xt[30] = sl_dtype_is_complex(dt) ? 1.0 + 1.0 * I : 1.0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) b[i] += s.Ad[i + j * m] * xt[j];
  scatter(y, b);
  /* the step from power iteration: compare with the largest eigenvalue of A^H A */
  cplx *N = calloc((size_t)(n * n), sizeof *N);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++)
      for (int64_t k = 0; k < m; k++) N[i + j * n] += conj(s.Ad[k + i * m]) * s.Ad[k + j * m];
  double lmax = max_eig_hermitian(n, N);
  const char *names[3] = {"soft", "hard", "half"};
  double decay[40];
  for (int k = 0; k < 40; k++) decay[k] = 1.5 * pow(0.95, k); /* pylops' decay: a shrinking threshold */
  for (int fista = 0; fista < 2; fista++)
    for (int c = 0; c < 8; c++) { /* soft, hard, half; soft with decay; percentile: soft, hard, soft decayed, half */
      int kind = c < 3 ? c : (c == 5 ? SL_THRESH_HARD : c == 7 ? SL_THRESH_HALF : SL_THRESH_SOFT);
      sl_solver_options o;
      sl_solver_options_default(&o);
      o.decay = c == 3 || c == 6 ? decay : NULL;
      o.perc = c >= 4 ? 70.0 : 0.0;
      o.niter = 40;
      o.tol = 0;
      o.eps = kind == SL_THRESH_SOFT ? 0.5 : 0.05;
      o.thresh = (sl_thresh)kind;
      o.alpha = 0.9 / lmax;
      sl_solver_info info;
      CHECK_OK((fista ? sl_solve_fista : sl_solve_ista)(s.V, y, x, &o, &info));
      serial_ista(&s, b, o.alpha, o.eps, kind, o.niter, fista, o.decay, o.perc, xr);
      cplx *xs = mc_gather(x);
      double e = rel_err(n, xs, xr);
      CHECK(e < 1e-9, "%s %s%s%s %s: relative distance %.3e to the serial iterates after %d iterations", fista ? "FISTA" : "ISTA",
            names[kind], o.decay ? " with decay" : "", o.perc > 0 ? " (percentile)" : "", sl_dtype_name(dt), e, o.niter);
      CHECK(info.iterations == 40 && info.stop == SL_STOP_NITER, "ISTA: %d iterations", info.iterations);
      free(xs);
    }
  { /* a decay that would take the percentile below 0 (numpy refuses it): refused, naming decay[k] */
    sl_solver_options o;
    sl_solver_options_default(&o);
    o.niter = 5;
    o.perc = 70.0;
    o.decay = decay;
    decay[2] = 4.0; /* 100 - 4 x 30 = -20 */
    int rc = sl_solve_ista(s.V, y, x, &o, NULL);
    CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "decay[2]"), "ISTA, perc 70 with decay 4: %s",
          sl_last_error());
  }
  /* FISTA recovers the sparse model with the step from power iteration */
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 800;
  o.eps = 1e-2; /* converges in about 500 iterations (checked with a numpy model) */
  o.tol = 1e-12;
  o.tol_rule = SL_TOL_ABSOLUTE;
  o.check_every = 50;
  sl_solver_info info;
  CHECK_OK(sl_solve_fista(s.V, y, x, &o, &info));
  /* a Rayleigh quotient never exceeds lambda_max; 30 power iterations come within a few percent here */
  CHECK(info.alpha * lmax >= 1 - 1e-12 && info.alpha * lmax < 1.05, "FISTA %s: step %.8e, 1 / lambda_max = %.8e",
        sl_dtype_name(dt), info.alpha, 1 / lmax);
  cplx *xs = mc_gather(x);
  double e = rel_err(n, xs, xt);
  CHECK(e < 2e-2, "FISTA %s: relative error %.3e to the sparse model (%d iterations)", sl_dtype_name(dt), e, info.iterations);
  free(xs);
  free(N);
  free(xt);
  free(b);
  free(xr);
  free(s.Ad);
  sl_op_destroy(&s.V);
  sl_array_destroy(&y);
  sl_array_destroy(&x);
}

/* Percentile thresholding on a scattered x (the quantile over every rank's block, the last of 4 owning nothing):
 * ISTA and FISTA with a diagonal operator against the serial iterates. */
static void test_ista_percentile_scattered(sl_dtype dt)
{
  const int64_t n = 37;
  int64_t cnt, off;
  share(n, &cnt, &off);
  sl_dist dist = sl_dist_default();
  dist.local_n = &cnt;
  sl_array *da = NULL, *y = NULL, *x = NULL;
  CHECK_OK(sl_array_create(&da, 1, &n, dt, &dist));
  CHECK_OK(sl_array_create_like(&y, da));
  CHECK_OK(sl_array_create_like(&x, da));
  cplx *d = malloc(sizeof *d * (size_t)n), *b = malloc(sizeof *b * (size_t)n), *xr = calloc((size_t)n, sizeof *xr);
  cplx *z = calloc((size_t)n, sizeof *z), *xo = malloc(sizeof *xo * (size_t)n), *u = malloc(sizeof *u * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    d[i] = 1.0 + 0.5 * sin(0.7 * (double)i);
    b[i] = hval(dt, i, 2 * i, 11);
  }
  scatter(da, d);
  scatter(y, b);
  sl_op *A = NULL;
  CHECK_OK(sl_op_diagonal(&A, da));
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 10;
  o.tol = 0;
  o.alpha = 0.5;
  o.perc = 60;
  for (int fista = 0; fista < 2; fista++) {
    sl_solver_info info;
    CHECK_OK((fista ? sl_solve_fista : sl_solve_ista)(A, y, x, &o, &info));
    double t = 1;
    for (int64_t i = 0; i < n; i++) xr[i] = z[i] = 0;
    for (int it = 0; it < o.niter; it++) {
      memcpy(xo, xr, sizeof *xr * (size_t)n);
      const cplx *src = fista ? z : xr;
      for (int64_t i = 0; i < n; i++) u[i] = src[i] + o.alpha * conj(d[i]) * (b[i] - d[i] * src[i]);
      double level = serial_percentile(n, u, 60.0);
      for (int64_t i = 0; i < n; i++) xr[i] = thresh_factor(SL_THRESH_SOFT, cabs(u[i]), level) * u[i];
      if (fista) {
        double told = t;
        t = (1 + sqrt(1 + 4 * t * t)) / 2;
        for (int64_t i = 0; i < n; i++) z[i] = xr[i] + (told - 1) / t * (xr[i] - xo[i]);
      }
    }
    cplx *xs = mc_gather(x);
    double e = rel_err(n, xs, xr);
    CHECK(e < (dt == SL_FLOAT32 ? 1e-4 : 1e-10), "%s with percentile thresholding on a scattered x (%s): relative distance %.3e",
          fista ? "FISTA" : "ISTA", sl_dtype_name(dt), e);
    free(xs);
  }
  if (dt == SL_FLOAT64) { /* a NaN in y on the first rank: SL_E_NUMERIC on every rank, naming the solver */
    double *p = NULL;
    CHECK_OK(sl_array_acquire(y, SL_READ_WRITE, (void **)&p));
    if (R == 0 && cnt > 0) p[0] = NAN;
    CHECK_OK(sl_array_release(y));
    o.niter = 3;
    for (int fista = 0; fista < 2; fista++) {
      int rc = (fista ? sl_solve_fista : sl_solve_ista)(A, y, x, &o, NULL);
      CHECK(mc_same_error_everywhere(rc, SL_E_NUMERIC) && strstr(sl_last_error(), fista ? "FISTA" : "ISTA"),
            "%s with percentile thresholding and NaN in y: %s", fista ? "FISTA" : "ISTA", sl_last_error());
    }
  }
  sl_op_destroy(&A);
  sl_array_destroy(&da);
  sl_array_destroy(&y);
  sl_array_destroy(&x);
  free(d), free(b), free(xr), free(z), free(xo), free(u);
}

static void test_power(sl_dtype dt)
{
  spd_t s;
  int64_t m = 15, n = 11;
  spd_create(&s, dt, m, n, 0.5, 7); /* lambda_2 / lambda_1 about 0.7 */
  double lmax = max_eig_hermitian(n, s.Md);
  sl_cscalar eig;
  int it = 0;
  CHECK_OK(sl_power_iteration(s.M, 200, 1e-13, 3, &eig, &it));
  CHECK(fabs(eig.re - lmax) < 1e-8 * lmax && fabs(eig.im) < 1e-8 * lmax,
        "power iteration %s: %.12e%+.3ei after %d iterations, Jacobi %.12e", sl_dtype_name(dt), eig.re, eig.im, it, lmax);
  CHECK(it > 1 && it < 200, "power iteration: %d iterations", it);
  spd_destroy(&s);
}

static void test_bad_input(void)
{
  ls_t s;
  ls_create(&s, SL_FLOAT64, 20, 7, 2);
  sl_array *y = NULL, *x = NULL, *wrong = NULL;
  CHECK_OK(sl_op_create_range(s.V, &y));
  CHECK_OK(sl_op_create_domain(s.V, &x));
  int64_t dims[1] = {7};
  CHECK_OK(sl_array_create(&wrong, 1, dims, SL_FLOAT64, NULL)); /* scattered, the domain is replicated */
  sl_solver_options o;
  sl_solver_options_default(&o);
  CHECK(mc_same_error_everywhere(sl_solve_cg(s.V, y, x, &o, NULL), SL_E_DIMS), "CG on a non-square operator");
  CHECK(mc_same_error_everywhere(sl_solve_cgls(s.V, y, wrong, &o, NULL), SL_E_DIST), "CGLS with a scattered x");
  CHECK(strstr(sl_last_error(), "argument 3 (x)") != NULL, "the message names x: %s", sl_last_error());
  CHECK(mc_same_error_everywhere(sl_solve_lsqr(s.V, x, x, &o, NULL), SL_E_INVALID), "LSQR with y = x");
  o.niter = -1;
  CHECK(mc_same_error_everywhere(sl_solve_cgls(s.V, y, x, &o, NULL), SL_E_INVALID), "niter < 0");
  CHECK(strstr(sl_last_error(), "niter") != NULL, "the message names niter: %s", sl_last_error());
  sl_solver_options_default(&o);
  o.check_every = 0;
  CHECK(mc_same_error_everywhere(sl_solve_lsqr(s.V, y, x, &o, NULL), SL_E_INVALID), "check_every 0");
  sl_solver_options_default(&o);
  o.eps = -1;
  CHECK(mc_same_error_everywhere(sl_solve_ista(s.V, y, x, &o, NULL), SL_E_INVALID), "eps < 0");
  sl_solver_options_default(&o);
  o.x0 = wrong;
  CHECK(mc_same_error_everywhere(sl_solve_fista(s.V, y, x, &o, NULL), SL_E_DIST), "x0 laid out wrongly");
  sl_solver_options_default(&o);
  o.var = wrong;
  CHECK(mc_same_error_everywhere(sl_solve_lsqr(s.V, y, x, &o, NULL), SL_E_DIST), "options.var laid out wrongly");
  sl_array *v2 = NULL;
  CHECK_OK(sl_array_create_like(&v2, x));
  o.var = v2;
  CHECK(mc_same_error_everywhere(sl_solve_cgls(s.V, y, x, &o, NULL), SL_E_INVALID) && strstr(sl_last_error(), "LSQR only"),
        "options.var given to CGLS: %s", sl_last_error());
  sl_array_destroy(&v2);
  CHECK(mc_same_error_everywhere(sl_power_iteration(s.V, 10, 0, 1, &(sl_cscalar){0, 0}, NULL), SL_E_DIMS),
        "power iteration on a non-square operator");
  free(s.Ad);
  sl_op_destroy(&s.V);
  sl_array_destroy(&y);
  sl_array_destroy(&x);
  sl_array_destroy(&wrong);
}

/* CG on arrays with a mask (the last rank alone holds a full replica, the others split the vector): every
 * rank takes the same decision on the fused steps, whatever its group, and each group converges to d^-1 y */
static void test_cg_masked(void)
{
  int P = sl_size();
  if (P < 2) return;
  int *mask = calloc((size_t)P, sizeof *mask);
  mask[P - 1] = 1;
  sl_dist dm = sl_dist_scatter(0);
  dm.mask = mask;
  int64_t n = 11;
  sl_array *dg = NULL, *y = NULL, *x = NULL;
  CHECK_OK(sl_array_create(&dg, 1, &n, SL_FLOAT64, &dm));
  CHECK_OK(sl_array_create(&y, 1, &n, SL_FLOAT64, &dm));
  CHECK_OK(sl_array_create(&x, 1, &n, SL_FLOAT64, &dm));
  double dv[11], yv[11];
  cplx xref[11];
  for (int i = 0; i < 11; i++) dv[i] = 2.0 + i, yv[i] = 1.0 + 0.1 * i, xref[i] = yv[i] / dv[i];
  CHECK_OK(sl_array_scatter(dg, -1, dv));
  CHECK_OK(sl_array_scatter(y, -1, yv));
  sl_op *D = NULL;
  CHECK_OK(sl_op_diagonal(&D, dg));
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 50;
  o.tol = 1e-13;
  o.check_every = 3;
  sl_solver_info info;
  CHECK_OK(sl_solve_cg(D, y, x, &o, &info));
  CHECK(info.stop == SL_STOP_TOL, "CG on a masked array: stopped for '%s'", sl_stop_reason_name(info.stop));
  mc_compare(x, xref, "CG on a masked array");
  sl_op_destroy(&D);
  sl_array_destroy(&dg), sl_array_destroy(&y), sl_array_destroy(&x);
  free(mask);
}

/* LSQR's calc_var on a scattered domain: A an HStack of column blocks (m x n, the columns over the ranks, the
 * last of 4 owning none; A^H A couples every rank), against diag((A^H A + damp^2 I)^-1) by dense solves. */
static void test_calc_var_scattered(sl_dtype dt)
{
  const int64_t m = 11, n = 7;
  const double damps[2] = {0.0, 1.5};
  spd_t s;
  spd_create(&s, dt, m, n, 0.0, 4);
  sl_array *x = NULL, *y = NULL, *var = NULL;
  CHECK_OK(sl_op_create_domain(s.H, &x));
  CHECK_OK(sl_op_create_range(s.H, &y));
  CHECK_OK(sl_array_create_like(&var, x));
  cplx *yg = malloc(sizeof *yg * (size_t)m), *dref = malloc(sizeof *dref * (size_t)n);
  for (int64_t i = 0; i < m; i++) yg[i] = hval(dt, i, 3, 9);
  scatter(y, yg);
  for (int d = 0; d < 2; d++) {
    sl_solver_options o;
    sl_solver_options_default(&o);
    o.niter = (int)n; /* the Krylov space whole: iterations past it add rounding directions to the estimate (scipy's too) */
    o.damp = damps[d];
    o.tol = 1e-14;
    o.atol = o.btol = 1e-15;
    o.var = var;
    sl_solver_info info;
    CHECK_OK(sl_solve_lsqr(s.H, y, x, &o, &info));
    cplx *N = gram(dt, m, n, damps[d] * damps[d], 4);
    diag_inverse(n, N, dref);
    cplx *vg = mc_gather(var);
    double ev = rel_err(n, vg, dref);
    CHECK(ev < 1e-9, "LSQR %s damp %g, scattered domain: calc_var differs from diag((A^H A + damp^2 I)^-1) by %.3e",
          sl_dtype_name(dt), damps[d], ev);
    free(vg), free(N);
  }
  free(yg), free(dref);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_array_destroy(&var);
  spd_destroy(&s);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  P = sl_size();
  R = sl_rank();
  sl_dtype dts[3] = {SL_FLOAT64, SL_COMPLEX128, SL_FLOAT32};
  for (int d = 0; d < 3; d++) {
    test_cg(dts[d], 0);
    test_cg(dts[d], 1);
    test_least_squares(dts[d], "CGLS", sl_solve_cgls);
    test_least_squares(dts[d], "LSQR", sl_solve_lsqr);
  }
  for (int d = 0; d < 2; d++) {
    test_ista(dts[d]);
    test_power(dts[d]);
  }
  for (int d = 0; d < 3; d++) test_ista_percentile_scattered(dts[d]);
  for (int d = 0; d < 2; d++) test_calc_var_scattered(dts[d]);
  test_bad_input();
  test_cg_masked();
  return mc_finish("mpi_solvers");
}
