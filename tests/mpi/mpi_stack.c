/* Stacked arrays and stacked operators on 1 to 4 ranks, float64 and complex128: the vector operations and
 * reductions of a stack against the same computed from its gathered parts; VStack, HStack and BlockDiag
 * over operators (Diagonal, derivatives, the Laplacian) against their parts applied one by one, dot tests;
 * Gradient against its first derivatives; CGLS, LSQR and CG on stacked layouts; bad input. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;

static double tol_of(sl_dtype dt) { return dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-4 : 1e-12; }

/* Two parts: a 1-D scattered array of 13 and a replicated 2-D array of 3 x 2. */
static sl_array *make_stack(sl_dtype dt, int seed, cplx **g0, cplx **g1)
{
  int64_t d0[1] = {13}, d1[2] = {3, 2};
  sl_dist b = sl_dist_broadcast();
  sl_array *p[2] = {mc_array(1, d0, dt, NULL, seed, g0), mc_array(2, d1, dt, &b, seed + 1, g1)};
  sl_array *s = NULL;
  CHECK_OK(sl_array_stack(&s, 2, p));
  CHECK(p[0] == NULL && p[1] == NULL, "the stack took its parts");
  return s;
}

static void test_vector_ops(sl_dtype dt)
{
  cplx *a0, *a1, *b0, *b1;
  sl_array *s = make_stack(dt, 3, &a0, &a1), *t = make_stack(dt, 7, &b0, &b1);
  CHECK(sl_array_stack_nparts(s) == 2 && sl_array_global_size(s) == 19, "stack of 13 + 6 elements");
  sl_scalar *v = NULL;
  CHECK_OK(sl_scalar_create(&v, dt));
  /* references over both parts */
  cplx dot = 0, sum = 0;
  double n2 = 0, n1 = 0, ninf = 0;
  for (int i = 0; i < 13; i++) dot += conj(a0[i]) * b0[i], sum += a0[i], n2 += pow(cabs(a0[i]), 2), n1 += cabs(a0[i]), ninf = fmax(ninf, cabs(a0[i]));
  for (int i = 0; i < 6; i++) dot += conj(a1[i]) * b1[i], sum += a1[i], n2 += pow(cabs(a1[i]), 2), n1 += cabs(a1[i]), ninf = fmax(ninf, cabs(a1[i]));
  sl_cscalar c;
  double tol = tol_of(dt) * 10;
  CHECK_OK(sl_array_vdot(s, t, v));
  CHECK_OK(sl_scalar_get_c(v, &c));
  CHECK(cabs(c.re + I * c.im - dot) <= tol * cabs(dot), "stack vdot %g%+gi, expected %g%+gi", c.re, c.im, creal(dot), cimag(dot));
  CHECK_OK(sl_array_sum(s, v));
  CHECK_OK(sl_scalar_get_c(v, &c));
  CHECK(cabs(c.re + I * c.im - sum) <= tol * fmax(1, cabs(sum)), "stack sum");
  CHECK_OK(sl_array_norm(s, 2, v));
  CHECK_OK(sl_scalar_get_c(v, &c));
  CHECK(fabs(c.re - sqrt(n2)) <= tol * sqrt(n2), "stack 2-norm %g, expected %g", c.re, sqrt(n2));
  CHECK_OK(sl_array_norm(s, 1, v));
  CHECK_OK(sl_scalar_get_c(v, &c));
  CHECK(fabs(c.re - n1) <= tol * n1, "stack 1-norm %g, expected %g", c.re, n1);
  CHECK_OK(sl_array_norm(s, INFINITY, v));
  CHECK_OK(sl_scalar_get_c(v, &c));
  CHECK(fabs(c.re - ninf) <= tol * ninf, "stack max-norm %g, expected %g", c.re, ninf);
  /* s = 2 t - s, part by part */
  CHECK_OK(sl_array_axpby(s, SL_REAL(2), t, SL_REAL(-1)));
  for (int i = 0; i < 13; i++) a0[i] = 2 * b0[i] - a0[i];
  for (int i = 0; i < 6; i++) a1[i] = 2 * b1[i] - a1[i];
  CHECK(mc_compare(sl_array_stack_part(s, 0), a0, "stack axpby, part 0") == 0, "stack axpby part 0");
  CHECK(mc_compare(sl_array_stack_part(s, 1), a1, "stack axpby, part 1") == 0, "stack axpby part 1");
  /* plain-only functions refuse a stack; layouts must match */
  CHECK(mc_same_error_everywhere(sl_array_gather(s, -1, NULL), SL_E_INVALID), "gather of a stack");
  sl_array *plain = NULL;
  int64_t d19[1] = {19};
  CHECK_OK(sl_array_create(&plain, 1, d19, dt, NULL));
  CHECK(mc_same_error_everywhere(sl_array_copy(plain, s), SL_E_DIST), "copy between a stack and a plain array");
  sl_array_destroy(&plain);
  free(a0), free(a1), free(b0), free(b1);
  sl_scalar_destroy(&v);
  sl_array_destroy(&s);
  sl_array_destroy(&t);
}

/* apply op (forward or adjoint) to x into a fresh array; gathered, part by part for stacks */
static cplx *apply_gather(sl_op *op, sl_op_mode mode, sl_array *x, int part)
{
  sl_array *y = NULL;
  CHECK_OK(mode == SL_FORWARD ? sl_op_create_range(op, &y) : sl_op_create_domain(op, &y));
  CHECK_OK(sl_op_apply(op, mode, x, y));
  cplx *g = mc_gather(part >= 0 ? sl_array_stack_part(y, part) : y);
  sl_array_destroy(&y);
  return g;
}

static void test_operators(sl_dtype dt)
{
  int64_t n = 13, d2[2] = {7, 5};
  int64_t d1[1] = {n};
  cplx *xg, *dg;
  sl_array *x = mc_array(1, d1, dt, NULL, 11, &xg), *d = mc_array(1, d1, dt, NULL, 12, &dg);
  sl_array *x2 = mc_array(2, d2, dt, NULL, 13, NULL);
  sl_op *D = NULL, *F = NULL, *L = NULL, *V = NULL, *H = NULL, *B = NULL, *G = NULL;
  CHECK_OK(sl_op_diagonal(&D, d));
  CHECK_OK(sl_op_first_derivative(&F, x, 0, 0.5, SL_DERIV_CENTERED, 5, 1));
  CHECK_OK(sl_op_laplacian(&L, x2, 2, NULL, NULL, NULL, SL_DERIV_CENTERED, 1));
  CHECK_OK(sl_op_vstack(&V, 2, (sl_op *[]){D, F}));
  CHECK_OK(sl_op_hstack(&H, 2, (sl_op *[]){D, F}));
  CHECK_OK(sl_op_block_diag(&B, 2, (sl_op *[]){D, L}));
  CHECK_OK(sl_op_gradient(&G, x2, (double[]){1.0, 0.5}, SL_DERIV_CENTERED, 0));
  double tol = tol_of(dt);
  sl_op *all[4] = {V, H, B, G};
  const char *names[4] = {"VStack", "HStack", "BlockDiag", "Gradient"};
  for (int k = 0; k < 4; k++) {
    double err = 1;
    if (!all[k]) continue;
    CHECK_OK(sl_dottest(all[k], 5, &err));
    CHECK(err < tol, "%s %s: dot test %.2e", names[k], sl_dtype_name(dt), err);
  }
  if (!V || !H || !B || !G) return;
  /* VStack forward: its parts are D x and F x */
  cplx *r0 = apply_gather(V, SL_FORWARD, x, 0), *r1 = apply_gather(V, SL_FORWARD, x, 1);
  cplx *e0 = apply_gather(D, SL_FORWARD, x, -1), *e1 = apply_gather(F, SL_FORWARD, x, -1);
  CHECK(mc_compare(x, xg, "x unchanged") == 0, "x unchanged");
  double worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, fmax(cabs(r0[i] - e0[i]), cabs(r1[i] - e1[i])));
  CHECK(worst <= 10 * tol, "VStack forward differs from its parts by %g", worst);
  /* HStack forward on the stack [x, x]: D x + F x */
  sl_array *sx = NULL;
  CHECK_OK(sl_op_create_domain(H, &sx));
  CHECK_OK(sl_array_copy(sl_array_stack_part(sx, 0), x));
  CHECK_OK(sl_array_copy(sl_array_stack_part(sx, 1), x));
  cplx *h = apply_gather(H, SL_FORWARD, sx, -1);
  worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, cabs(h[i] - (e0[i] + e1[i])));
  CHECK(worst <= 10 * tol, "HStack forward differs from D x + F x by %g", worst);
  /* VStack adjoint of [x, x] = D^H x + F^H x */
  cplx *va = apply_gather(V, SL_ADJOINT, sx, -1), *f0 = apply_gather(D, SL_ADJOINT, x, -1), *f1 = apply_gather(F, SL_ADJOINT, x, -1);
  worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, cabs(va[i] - (f0[i] + f1[i])));
  CHECK(worst <= 10 * tol, "VStack adjoint differs from D^H x + F^H x by %g", worst);
  /* Gradient: part a is the first derivative along axis a */
  for (int a = 0; a < 2; a++) {
    sl_op *Fa = NULL;
    CHECK_OK(sl_op_first_derivative(&Fa, x2, a, a ? 0.5 : 1.0, SL_DERIV_CENTERED, 3, 0));
    cplx *ga = apply_gather(G, SL_FORWARD, x2, a), *fa = apply_gather(Fa, SL_FORWARD, x2, -1);
    worst = 0;
    for (int i = 0; i < 35; i++) worst = fmax(worst, cabs(ga[i] - fa[i]));
    CHECK(worst <= 10 * tol, "Gradient part %d differs from the derivative by %g", a, worst);
    free(ga), free(fa);
    sl_op_destroy(&Fa);
  }
  /* bad input: a VStack of operators with different domains */
  sl_op *bad = NULL;
  CHECK(mc_same_error_everywhere(sl_op_vstack(&bad, 2, (sl_op *[]){D, L}), SL_E_DIMS), "VStack of different domains");
  free(r0), free(r1), free(e0), free(e1), free(h), free(va), free(f0), free(f1);
  sl_array_destroy(&sx);
  sl_op *ops[7] = {D, F, L, V, H, B, G};
  for (int i = 0; i < 7; i++) sl_op_destroy(&ops[i]);
  free(xg), free(dg);
  sl_array_destroy(&x);
  sl_array_destroy(&d);
  sl_array_destroy(&x2);
}

/* Solvers on stacked layouts: CGLS and LSQR on VStack[D, 0.3 F] (Tikhonov-like, range stacked); CG on
 * BlockDiag[D1, D2] with positive diagonals (domain stacked; the solution is y_i / d_i). */
static void test_solvers(sl_dtype dt)
{
  int64_t n = 13, d1[1] = {n};
  cplx *dg, *eg;
  sl_array *like = mc_array(1, d1, dt, NULL, 1, NULL), *d = mc_array(1, d1, dt, NULL, 21, &dg), *e = mc_array(1, d1, dt, NULL, 22, &eg);
  sl_op *D = NULL, *F = NULL, *sF = NULL, *V = NULL;
  CHECK_OK(sl_op_diagonal(&D, d));
  CHECK_OK(sl_op_first_derivative(&F, like, 0, 1.0, SL_DERIV_CENTERED, 3, 1));
  CHECK_OK(sl_op_scaled(&sF, F, SL_REAL(0.3)));
  CHECK_OK(sl_op_vstack(&V, 2, (sl_op *[]){D, sF}));
  sl_array *y = NULL, *x1 = NULL, *x2 = NULL, *r = NULL, *g = NULL;
  CHECK_OK(sl_op_create_range(V, &y));
  CHECK_OK(sl_op_create_range(V, &r));
  CHECK_OK(sl_op_create_domain(V, &x1));
  CHECK_OK(sl_op_create_domain(V, &x2));
  CHECK_OK(sl_op_create_domain(V, &g));
  CHECK_OK(sl_array_fill_random(y, 4));
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 200;
  o.tol = 1e-14;
  o.atol = o.btol = 1e-15;
  sl_solver_info i1, i2;
  CHECK_OK(sl_solve_cgls(V, y, x1, &o, &i1));
  CHECK_OK(sl_solve_lsqr(V, y, x2, &o, &i2));
  /* the normal equations: ||V^H (y - V x)|| <= 1e-8 ||V^H y|| */
  sl_scalar *s1 = NULL, *s2 = NULL;
  CHECK_OK(sl_scalar_create(&s1, dt));
  CHECK_OK(sl_scalar_create(&s2, dt));
  sl_array *xs[2] = {x1, x2};
  for (int k = 0; k < 2; k++) {
    CHECK_OK(sl_op_apply(V, SL_FORWARD, xs[k], r));
    CHECK_OK(sl_array_axpby(r, SL_REAL(1), y, SL_REAL(-1)));
    CHECK_OK(sl_op_apply(V, SL_ADJOINT, r, g));
    CHECK_OK(sl_array_norm(g, 2, s1));
    CHECK_OK(sl_op_apply(V, SL_ADJOINT, y, g));
    CHECK_OK(sl_array_norm(g, 2, s2));
    sl_cscalar a, b;
    CHECK_OK(sl_scalar_get_c(s1, &a));
    CHECK_OK(sl_scalar_get_c(s2, &b));
    CHECK(a.re <= 1e-8 * b.re, "%s on VStack (%s): normal-equation residual %.2e of %.2e", k ? "LSQR" : "CGLS",
          sl_dtype_name(dt), a.re, b.re);
  }
  /* CG on BlockDiag of two positive diagonals: x_i = y_i / d_i */
  cplx *dp = malloc(sizeof *dp * (size_t)n), *ep = malloc(sizeof *ep * (size_t)n);
  for (int i = 0; i < n; i++) dp[i] = 2.0 + creal(dg[i]), ep[i] = 3.0 + creal(eg[i]);
  sl_array *dd = NULL, *ee = NULL;
  CHECK_OK(sl_array_create_like(&dd, like));
  CHECK_OK(sl_array_create_like(&ee, like));
  void *buf = malloc(sl_dtype_size(dt) * (size_t)n);
  mc_to_dtype(dt, n, dp, buf);
  CHECK_OK(sl_array_scatter(dd, -1, buf));
  mc_to_dtype(dt, n, ep, buf);
  CHECK_OK(sl_array_scatter(ee, -1, buf));
  sl_op *P = NULL, *Q = NULL, *B = NULL;
  CHECK_OK(sl_op_diagonal(&P, dd));
  CHECK_OK(sl_op_diagonal(&Q, ee));
  CHECK_OK(sl_op_block_diag(&B, 2, (sl_op *[]){P, Q}));
  sl_array *yb = NULL, *xb = NULL;
  CHECK_OK(sl_op_create_range(B, &yb));
  CHECK_OK(sl_op_create_domain(B, &xb));
  CHECK_OK(sl_array_fill_random(yb, 9));
  CHECK_OK(sl_solve_cg(B, yb, xb, &o, &i1));
  cplx *y0 = mc_gather(sl_array_stack_part(yb, 0)), *y1 = mc_gather(sl_array_stack_part(yb, 1));
  cplx *x0 = mc_gather(sl_array_stack_part(xb, 0)), *xx1 = mc_gather(sl_array_stack_part(xb, 1));
  double worst = 0;
  for (int i = 0; i < n; i++) worst = fmax(worst, fmax(cabs(x0[i] - y0[i] / dp[i]), cabs(xx1[i] - y1[i] / ep[i])));
  CHECK(worst < 1e-10, "CG on BlockDiag (%s): error %.2e", sl_dtype_name(dt), worst);
  free(dp), free(ep), free(buf), free(y0), free(y1), free(x0), free(xx1), free(dg), free(eg);
  sl_scalar_destroy(&s1);
  sl_scalar_destroy(&s2);
  sl_array *arr[11] = {like, d, e, y, x1, x2, r, g, dd, ee, yb};
  for (int i = 0; i < 11; i++) sl_array_destroy(&arr[i]);
  sl_array_destroy(&xb);
  sl_op *ops[7] = {D, F, sF, V, P, Q, B};
  for (int i = 0; i < 7; i++) sl_op_destroy(&ops[i]);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  sl_dtype dts[2] = {SL_FLOAT64, SL_COMPLEX128};
  for (int k = 0; k < 2; k++) {
    test_vector_ops(dts[k]);
    test_operators(dts[k]);
    test_solvers(dts[k]);
  }
  return mc_finish("mpi_stack");
}
