/* Hostile input to every collective call: each bad argument on every rank and on one rank alone (the last),
 * and each argument that must be equal on every rank given differently on the last rank. Every case must
 * return the expected code on every rank, the same code and message everywhere, with a message naming the
 * argument; nothing may crash or hang. Then non-finite data in every solver, misuse of local calls, and
 * calls after sl_finalize. Run with 1 to 4 ranks; prints the number of cases. */
#include <complex.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_check.h"
#include "starlops_ext.h"

static int ncases;

/* rc must be `code` on every rank, the same message everywhere, naming `name` (when the code is an error) */
static void expect(int rc, int code, const char *name, const char *what, int line)
{
  ncases++;
  if (getenv("HOSTILE_VERBOSE")) fprintf(stderr, "[rank %d] case %d: %s\n", sl_rank(), ncases, what);
  if (!mc_same_error_everywhere(rc, code)) {
    mc_failures++;
    mc_report(__FILE__, line, "case '%s'", what);
    return;
  }
  if (code != SL_SUCCESS && name && !strstr(sl_last_error(), name)) {
    mc_failures++;
    mc_report(__FILE__, line, "case '%s': the message '%s' does not name '%s'", what, sl_last_error(), name);
  }
}
#define EXPECT(call, code, name) expect((call), (code), (name), #call, __LINE__)

/* Modes of a bad argument: on every rank, or on the last rank alone. */
enum { ALL = 0, ONE = 1 };
static int bad_here(int mode) { return mode == ALL || sl_rank() == sl_size() - 1; }
/* good on every rank but the last, where it is `other` */
static double differ(double good, double other) { return sl_rank() == sl_size() - 1 && sl_size() > 1 ? other : good; }
/* what a differing argument gives: an error when there are several ranks */
static int differ_code(void) { return sl_size() > 1 ? SL_E_INVALID : SL_SUCCESS; }

/* An operator constructor case: the call writes *op; a success is destroyed. */
#define OP_CASE(code, name, call)                                                                     \
  do {                                                                                                \
    sl_op *op = NULL;                                                                                 \
    int rc_ = (call);                                                                                 \
    expect(rc_, (code), (name), #call, __LINE__);                                                     \
    CHECK((rc_ == SL_SUCCESS) == (op != NULL), "an operator exactly when the call succeeds (%s)", #call); \
    sl_op_destroy(&op);                                                                               \
  } while (0)

static void derivatives(sl_array *a2, sl_array *a3)
{
  for (int m = ALL; m <= ONE; m++) {
    int b = bad_here(m);
    sl_op **nul = NULL;
    OP_CASE(SL_E_INVALID, "op", sl_op_first_derivative(b ? nul : &op, a2, 0, 1.0, SL_DERIV_CENTERED, 3, 0));
    OP_CASE(SL_E_INVALID, "like", sl_op_first_derivative(&op, b ? NULL : a2, 0, 1.0, SL_DERIV_CENTERED, 3, 0));
    OP_CASE(SL_E_INVALID, "axis", sl_op_first_derivative(&op, a2, b ? 2 : 0, 1.0, SL_DERIV_CENTERED, 3, 0));
    OP_CASE(SL_E_INVALID, "axis", sl_op_first_derivative(&op, a2, b ? -3 : 0, 1.0, SL_DERIV_CENTERED, 3, 0));
    const double bad_s[4] = {0.0, -1.0, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
      OP_CASE(SL_E_INVALID, "sampling", sl_op_first_derivative(&op, a2, 0, b ? bad_s[i] : 1.0, SL_DERIV_CENTERED, 3, 0));
      OP_CASE(SL_E_INVALID, "sampling", sl_op_second_derivative(&op, a2, 1, b ? bad_s[i] : 1.0, SL_DERIV_FORWARD, 0));
    }
    OP_CASE(SL_E_INVALID, "kind", sl_op_first_derivative(&op, a2, 0, 1.0, b ? (sl_deriv_kind)7 : SL_DERIV_CENTERED, 3, 0));
    OP_CASE(SL_E_INVALID, "order", sl_op_first_derivative(&op, a2, 0, 1.0, SL_DERIV_CENTERED, b ? 4 : 3, 0));
    OP_CASE(SL_E_INVALID, "op", sl_op_second_derivative(b ? nul : &op, a2, 0, 1.0, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "like", sl_op_second_derivative(&op, b ? NULL : a2, 0, 1.0, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "axis", sl_op_second_derivative(&op, a2, b ? 5 : 0, 1.0, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "kind", sl_op_second_derivative(&op, a2, 0, 1.0, b ? (sl_deriv_kind)-1 : SL_DERIV_CENTERED, 0));
    /* the Laplacian (3-D) */
    int ax2[2] = {0, 2}, dup[2] = {1, 1}, out[2] = {0, 5};
    double w2[2] = {1, 2}, wnan[2] = {1, NAN}, s2[2] = {1, 1}, s0[2] = {1, 0};
    OP_CASE(SL_E_INVALID, "op", sl_op_laplacian(b ? nul : &op, a3, 2, ax2, w2, s2, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "like", sl_op_laplacian(&op, b ? NULL : a3, 2, ax2, w2, s2, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "naxes", sl_op_laplacian(&op, a3, b ? 0 : 2, ax2, w2, s2, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "naxes", sl_op_laplacian(&op, a3, b ? 9 : 2, ax2, w2, s2, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "axes", sl_op_laplacian(&op, a3, 2, b ? dup : ax2, w2, s2, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "axis", sl_op_laplacian(&op, a3, 2, b ? out : ax2, w2, s2, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "weights", sl_op_laplacian(&op, a3, 2, ax2, b ? wnan : w2, s2, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "sampling", sl_op_laplacian(&op, a3, 2, ax2, w2, b ? s0 : s2, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "kind", sl_op_laplacian(&op, a3, 2, ax2, w2, s2, b ? (sl_deriv_kind)9 : SL_DERIV_CENTERED, 0));
    /* the gradient */
    double g3[3] = {1, 1, 1}, gbad[3] = {1, 0, 1};
    OP_CASE(SL_E_INVALID, "out", sl_op_gradient(b ? nul : &op, a3, g3, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "like", sl_op_gradient(&op, b ? NULL : a3, g3, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "sampling", sl_op_gradient(&op, a3, b ? gbad : g3, SL_DERIV_CENTERED, 0));
    OP_CASE(SL_E_INVALID, "kind", sl_op_gradient(&op, a3, g3, b ? (sl_deriv_kind)5 : SL_DERIV_CENTERED, 0));
  }
  /* arguments that differ on the last rank */
  int dc = differ_code();
  OP_CASE(dc, "axis", sl_op_first_derivative(&op, a2, (int)differ(0, 1), 1.0, SL_DERIV_CENTERED, 3, 0));
  OP_CASE(dc, "sampling", sl_op_first_derivative(&op, a2, 0, differ(1.0, 2.0), SL_DERIV_CENTERED, 3, 0));
  OP_CASE(dc, "kind", sl_op_first_derivative(&op, a2, 0, 1.0, (sl_deriv_kind)differ(SL_DERIV_FORWARD, SL_DERIV_BACKWARD), 3, 0));
  OP_CASE(dc, "order", sl_op_first_derivative(&op, a2, 0, 1.0, SL_DERIV_CENTERED, (int)differ(3, 5), 0));
  OP_CASE(dc, "edge", sl_op_first_derivative(&op, a2, 0, 1.0, SL_DERIV_CENTERED, 3, (int)differ(0, 1)));
  OP_CASE(dc, "axis", sl_op_second_derivative(&op, a2, (int)differ(1, 0), 1.0, SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "sampling", sl_op_second_derivative(&op, a2, 0, differ(1.0, 0.5), SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "kind", sl_op_second_derivative(&op, a2, 0, 1.0, (sl_deriv_kind)differ(SL_DERIV_CENTERED, SL_DERIV_FORWARD), 0));
  OP_CASE(dc, "edge", sl_op_second_derivative(&op, a2, 0, 1.0, SL_DERIV_CENTERED, (int)differ(1, 0)));
  int axa[3] = {0, 1, 2}, axb[3] = {0, 2, 1};
  int *axd = sl_rank() == sl_size() - 1 ? axb : axa;
  double wa[3] = {1, 1, 1}, wb[3] = {1, 1, 3}, *wd = sl_rank() == sl_size() - 1 ? wb : wa;
  OP_CASE(dc, "naxes", sl_op_laplacian(&op, a3, (int)differ(2, 3), axa, NULL, NULL, SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "axes", sl_op_laplacian(&op, a3, 2, axd + 1, NULL, NULL, SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "weights", sl_op_laplacian(&op, a3, 3, axa, wd, NULL, SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "sampling", sl_op_laplacian(&op, a3, 3, axa, NULL, wd, SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "kind", sl_op_laplacian(&op, a3, 3, axa, NULL, NULL, (sl_deriv_kind)differ(SL_DERIV_CENTERED, SL_DERIV_BACKWARD), 0));
  OP_CASE(dc, "edge", sl_op_laplacian(&op, a3, 3, axa, NULL, NULL, SL_DERIV_CENTERED, (int)differ(0, 1)));
  OP_CASE(dc, "sampling", sl_op_gradient(&op, a3, wd, SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "kind", sl_op_gradient(&op, a3, NULL, (sl_deriv_kind)differ(SL_DERIV_CENTERED, SL_DERIV_FORWARD), 0));
  OP_CASE(dc, "edge", sl_op_gradient(&op, a3, NULL, SL_DERIV_CENTERED, (int)differ(0, 1)));
}

static void ffts_and_mdc(sl_array *a3r)
{
  int64_t d3[3] = {3, 4, 5};
  sl_array *a3 = NULL;
  CHECK_OK(sl_array_create(&a3, 3, d3, SL_COMPLEX128, NULL));
  int ax[2] = {1, 2}, bad_ax[2] = {1, 7};
  for (int m = ALL; m <= ONE; m++) {
    int b = bad_here(m);
    sl_op **nul = NULL;
    OP_CASE(SL_E_INVALID, "op", sl_op_fft(b ? nul : &op, a3, 2, ax, SL_FFT_ORTHO, 0, -1));
    OP_CASE(SL_E_INVALID, "like", sl_op_fft(&op, b ? NULL : a3, 2, ax, SL_FFT_ORTHO, 0, -1));
    OP_CASE(SL_E_INVALID, "naxes", sl_op_fft(&op, a3, b ? 0 : 2, ax, SL_FFT_ORTHO, 0, -1));
    OP_CASE(SL_E_INVALID, "axes", sl_op_fft(&op, a3, 2, b ? bad_ax : ax, SL_FFT_ORTHO, 0, -1));
    OP_CASE(SL_E_INVALID, "norm", sl_op_fft(&op, a3, 2, ax, b ? (sl_fft_norm)7 : SL_FFT_ORTHO, 0, -1));
  }
  int dc = differ_code();
  OP_CASE(dc, "norm", sl_op_fft(&op, a3, 2, ax, (sl_fft_norm)differ(SL_FFT_ORTHO, SL_FFT_NONE), 0, -1));
  OP_CASE(dc, "out_axis", sl_op_fft(&op, a3, 2, ax, SL_FFT_ORTHO, 0, (int)differ(-1, 2)));
  OP_CASE(dc, "naxes", sl_op_fft(&op, a3, (int)differ(2, 1), ax, SL_FFT_ORTHO, 0, -1));
  OP_CASE(SL_E_DTYPE, "real", sl_op_fft(&op, a3r, 2, ax, SL_FFT_ORTHO, 0, -1));
  sl_array_destroy(&a3);
  /* MDC: nt = 8 samples, nfmax = 3 frequencies all on rank 0, ns = 2, nr = 3, nv = 1 */
  const int64_t nt = 8, nfmax = 3, ns = 2, nr = 3, nv = 1;
  int64_t nfl = sl_rank() == 0 ? nfmax : 0;
  double complex *G = calloc((size_t)(nfmax * ns * nr), sizeof *G);
  for (int64_t i = 0; i < nfmax * ns * nr; i++) G[i] = CMPLX(0.1 * (double)i, 0.2);
  for (int m = ALL; m <= ONE; m++) {
    int b = bad_here(m);
    OP_CASE(SL_E_INVALID, "dt", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, b ? NAN : 0.004, 1.0, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "dt", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, b ? 0.0 : 0.004, 1.0, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "dr", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 0.004, b ? NAN : 1.0, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "dr", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 0.004, b ? -1.0 : 1.0, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "nfmax", sl_op_mdc(&op, G, nfl, b ? 0 : nfmax, ns, nr, nt, nv, 0.004, 1.0, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "ns", sl_op_mdc(&op, G, nfl, nfmax, b ? 0 : ns, nr, nt, nv, 0.004, 1.0, SL_FLOAT64));
    OP_CASE(SL_E_DTYPE, "dtype", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 0.004, 1.0, b ? SL_COMPLEX128 : SL_FLOAT64));
  }
  OP_CASE(dc, "dt", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, differ(0.004, 0.002), 1.0, SL_FLOAT64));
  OP_CASE(dc, "dr", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 0.004, differ(1.0, 2.0), SL_FLOAT64));
  OP_CASE(dc, "nv", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, (int64_t)differ(1, 2), 0.004, 1.0, SL_FLOAT64));
  /* a scale dt dr sqrt(nt) that underflows to zero (a zero operator) or overflows float32 */
  OP_CASE(SL_E_INVALID, "underflows to zero", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 1e-200, 1e-200, SL_FLOAT64));
  OP_CASE(SL_E_INVALID, "underflows to zero in float32", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 1e-30, 1e-30, SL_FLOAT32));
  OP_CASE(SL_E_INVALID, "overflows", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 1e30, 1e30, SL_FLOAT32));
  OP_CASE(SL_E_INVALID, "times the scale", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 1e154, 5e153, SL_FLOAT64));
  free(G);
}

static void stacks(sl_array *a2)
{
  sl_op *id = NULL, *d = NULL;
  CHECK_OK(sl_op_identity(&id, a2));
  CHECK_OK(sl_op_first_derivative(&d, a2, 1, 1.0, SL_DERIV_CENTERED, 3, 0));
  sl_op *ops[2] = {id, d}, *withnull[2] = {id, NULL};
  int (*make[3])(sl_op **, int, sl_op **) = {sl_op_vstack, sl_op_hstack, sl_op_block_diag};
  for (int k = 0; k < 3; k++) {
    for (int m = ALL; m <= ONE; m++) {
      int b = bad_here(m);
      OP_CASE(SL_E_INVALID, "n", make[k](&op, b ? 0 : 2, ops));
      OP_CASE(SL_E_INVALID, "ops", make[k](&op, 2, b ? NULL : ops));
      OP_CASE(SL_E_INVALID, "operator 1", make[k](&op, 2, b ? withnull : ops));
    }
    OP_CASE(differ_code(), "n", make[k](&op, (int)differ(2, 1), ops));
  }
  sl_op_destroy(&id);
  sl_op_destroy(&d);
}

typedef int (*solve_fn)(sl_op *, const sl_array *, sl_array *, const sl_solver_options *, sl_solver_info *);

static void solver_options(sl_array *a2)
{
  sl_op *A = NULL;
  CHECK_OK(sl_op_identity(&A, a2));
  sl_array *y = NULL, *x = NULL, *x0 = NULL;
  CHECK_OK(sl_op_create_range(A, &y));
  CHECK_OK(sl_op_create_domain(A, &x));
  CHECK_OK(sl_op_create_domain(A, &x0));
  CHECK_OK(sl_array_fill(y, SL_REAL(1)));
  const char *names[5] = {"CG", "CGLS", "LSQR", "ISTA", "FISTA"};
  solve_fn fns[5] = {sl_solve_cg, sl_solve_cgls, sl_solve_lsqr, sl_solve_ista, sl_solve_fista};
  for (int k = 0; k < 5; k++) {
    for (int m = ALL; m <= ONE; m++) {
      int b = bad_here(m);
      sl_solver_options o;
      sl_solver_options_default(&o);
      o.niter = 3;
      o.alpha = 0.5;
      sl_solver_options bad[10];
      const char *what[10] = {"niter", "niter", "tol", "tol", "tol_rule", "check_every", "damp", "y", "x", "A"};
      for (int i = 0; i < 10; i++) bad[i] = o;
      bad[0].niter = -1;
      bad[1].niter = INT_MAX;
      bad[2].tol = NAN;
      bad[3].tol = -1;
      bad[4].tol_rule = (sl_tol_rule)9;
      bad[5].check_every = 0;
      bad[6].damp = NAN;
      for (int i = 0; i < 10; i++) {
        int rc = fns[k](i == 9 && b ? NULL : A, i == 7 && b ? NULL : y, i == 8 && b ? NULL : x, b ? &bad[i] : &o, NULL);
        char label[64];
        snprintf(label, sizeof label, "%s with a bad %s (%s)", names[k], what[i], m == ALL ? "every rank" : "one rank");
        expect(rc, SL_E_INVALID, what[i], label, __LINE__);
      }
      if (k == 2) {
        sl_solver_options q = o;
        q.atol = -1;
        expect(sl_solve_lsqr(A, y, x, b ? &q : &o, NULL), SL_E_INVALID, "atol", "LSQR atol < 0", __LINE__);
      }
      if (k >= 3) {
        sl_solver_options q[3] = {o, o, o};
        q[0].eps = -1;
        q[1].thresh = (sl_thresh)9;
        q[2].alpha = NAN;
        const char *qn[3] = {"eps", "thresh", "alpha"};
        for (int i = 0; i < 3; i++) expect(fns[k](A, y, x, b ? &q[i] : &o, NULL), SL_E_INVALID, qn[i], names[k], __LINE__);
      }
      if (k >= 3 && m == ALL) { /* a threshold eps alpha / 2 (x decay[k]) that overflows: refused before the first step */
        sl_solver_options q = o;
        double decay[3] = {1, 1, 1e308};
        q.eps = 1e300;
        q.alpha = 1e10;
        expect(fns[k](A, y, x, &q, NULL), SL_E_INVALID, "eps alpha / 2", "ISTA/FISTA threshold overflowing", __LINE__);
        q.eps = 100;
        q.alpha = 0.5;
        q.decay = decay;
        expect(fns[k](A, y, x, &q, NULL), SL_E_INVALID, "largest decay", "ISTA/FISTA threshold x decay overflowing", __LINE__);
      }
    }
    /* options that differ on the last rank */
    sl_solver_options o, q;
    sl_solver_options_default(&o);
    o.niter = 3;
    o.alpha = 0.5;
    int last = sl_rank() == sl_size() - 1;
    const char *dn[6] = {"niter", "tol", "check_every", "pipelined", "x0", "damp"};
    for (int i = 0; i < 6; i++) {
      q = o;
      if (last) {
        if (i == 0) q.niter = 4;
        if (i == 1) q.tol = 1e-3;
        if (i == 2) q.check_every = 2;
        if (i == 3) q.pipelined = 1;
        if (i == 4) q.x0 = x0;
        if (i == 5) q.damp = 0.5;
      }
      char label[64];
      snprintf(label, sizeof label, "%s with options.%s differing", names[k], dn[i]);
      expect(fns[k](A, y, x, &q, NULL), differ_code(), dn[i], label, __LINE__);
    }
  }
  /* the power iteration */
  sl_cscalar eig;
  for (int m = ALL; m <= ONE; m++) {
    int b = bad_here(m);
    EXPECT(sl_power_iteration(A, b ? 0 : 5, 0, 1, &eig, NULL), SL_E_INVALID, "niter");
    EXPECT(sl_power_iteration(A, 5, b ? NAN : 0, 1, &eig, NULL), SL_E_INVALID, "tol");
    EXPECT(sl_power_iteration(A, 5, 0, 1, b ? NULL : &eig, NULL), SL_E_INVALID, "eig");
    EXPECT(sl_power_iteration(b ? NULL : A, 5, 0, 1, &eig, NULL), SL_E_INVALID, "A");
  }
  EXPECT(sl_power_iteration(A, (int)differ(5, 6), 0, 1, &eig, NULL), differ_code(), "niter");
  EXPECT(sl_power_iteration(A, 5, 0, (unsigned)differ(1, 2), &eig, NULL), differ_code(), "seed");
  sl_array_destroy(&y);
  sl_array_destroy(&x);
  sl_array_destroy(&x0);
  sl_op_destroy(&A);
}

static void reductions_and_gathers(sl_array *a2)
{
  sl_array *y = NULL;
  sl_scalar *s = NULL;
  CHECK_OK(sl_array_create_like(&y, a2));
  CHECK_OK(sl_scalar_create(&s, SL_FLOAT64));
  size_t bytes = (size_t)sl_array_global_size(a2) * sizeof(double);
  double *global = malloc(bytes);
  for (int m = ALL; m <= ONE; m++) {
    int b = bad_here(m);
    EXPECT(sl_array_dot(b ? NULL : a2, y, s), SL_E_INVALID, "x");
    EXPECT(sl_array_dot(a2, b ? NULL : y, s), SL_E_INVALID, "y");
    EXPECT(sl_array_vdot(a2, y, b ? NULL : s), SL_E_INVALID, "result scalar");
    EXPECT(sl_array_norm(a2, b ? -1.0 : 2.0, s), SL_E_INVALID, "ord");
    EXPECT(sl_array_norm(a2, b ? NAN : 2.0, s), SL_E_INVALID, "ord");
    EXPECT(sl_array_sum(b ? NULL : a2, s), SL_E_INVALID, "x");
    EXPECT(sl_array_gather(a2, b ? sl_size() : 0, global), SL_E_INVALID, "root");
    EXPECT(sl_array_gather(a2, b ? -2 : 0, global), SL_E_INVALID, "root");
    EXPECT(sl_array_gather(a2, -1, b ? NULL : global), SL_E_INVALID, "global");
    EXPECT(sl_array_scatter(a2, b ? sl_size() + 3 : 0, global), SL_E_INVALID, "root");
    EXPECT(sl_array_scatter(b ? NULL : a2, 0, global), SL_E_INVALID, "a");
    EXPECT(sl_array_scatter(a2, -1, b ? NULL : global), SL_E_INVALID, "global");
  }
  EXPECT(sl_array_norm(a2, differ(1.0, 2.0), s), differ_code(), "ord");
  EXPECT(sl_array_gather(a2, (int)differ(0, sl_size() - 1), global), sl_size() > 1 ? SL_E_INVALID : SL_SUCCESS, "root");
  EXPECT(sl_array_scatter(a2, (int)differ(-1, 0), global), differ_code(), "root");
  CHECK_OK(sl_wait());
  free(global);
  sl_scalar_destroy(&s);
  sl_array_destroy(&y);
}

static void sizes_and_files(sl_array *a2, const char *dir)
{
  sl_array *a = NULL;
  for (int m = ALL; m <= ONE; m++) {
    int b = bad_here(m);
    int64_t huge[2] = {b ? (int64_t)1 << 32 : 4, b ? (int64_t)1 << 32 : 1}, huge2[2] = {b ? (int64_t)1 << 61 : 2, 4};
    EXPECT(sl_array_create(&a, 2, huge, SL_FLOAT64, NULL), SL_E_DIMS, "dims");
    sl_array_destroy(&a);
    EXPECT(sl_array_create(&a, 2, huge2, SL_COMPLEX128, NULL), SL_E_DIMS, "dims");
    int *mask = calloc((size_t)sl_size(), sizeof(int));
    if (b) mask[0] = -2;
    sl_dist d = sl_dist_scatter(0);
    d.mask = mask;
    int64_t dims[2] = {6, 3};
    EXPECT(sl_array_create(&a, 2, dims, SL_FLOAT64, &d), SL_E_DIST, "mask");
    sl_array_destroy(&a);
    free(mask);
  }
  char path[512], other[512];
  snprintf(path, sizeof path, "%s/hostile-a.npy", dir);
  snprintf(other, sizeof other, "%s/hostile-b.npy", dir);
  CHECK_OK(sl_array_save_npy(a2, path));
  for (int m = ALL; m <= ONE; m++) {
    int b = bad_here(m);
    EXPECT(sl_array_save_npy(a2, b ? NULL : path), SL_E_INVALID, "path");
    EXPECT(sl_array_load_npy(&a, b ? NULL : path, NULL), SL_E_INVALID, "path");
    CHECK(a == NULL, "no array from a failed load");
  }
  if (sl_rank() == 0) unlink(other);
  MPI_Barrier(sl_comm());
  /* a path that differs on the last rank */
  int last = sl_rank() == sl_size() - 1 && sl_size() > 1;
  EXPECT(sl_array_save_npy(a2, last ? other : path), sl_size() > 1 ? SL_E_INVALID : SL_SUCCESS, "path");

  /* a relative path, the last rank in another working directory: the same text names another file there */
  {
    char here[PATH_MAX], sub[600];
    CHECK(getcwd(here, sizeof here) != NULL, "getcwd");
    snprintf(sub, sizeof sub, "%s/hostile-sub", dir);
    if (sl_rank() == 0) mkdir(sub, 0755);
    MPI_Barrier(sl_comm());
    char copy[700];
    snprintf(copy, sizeof copy, "%s/hostile-a.npy", sub); /* the same bytes in both directories */
    CHECK_OK(sl_array_save_npy(a2, copy));
    CHECK(chdir(last ? sub : dir) == 0, "chdir");
    EXPECT(sl_array_save_npy(a2, "hostile-rel.npy"), sl_size() > 1 ? SL_E_INVALID : SL_SUCCESS, "resolved against");
    EXPECT(sl_array_load_npy(&a, "hostile-a.npy", NULL), sl_size() > 1 ? SL_E_INVALID : SL_SUCCESS, "resolved against");
    sl_array_destroy(&a);
    CHECK(chdir(here) == 0, "chdir back");
  }
  /* a file that only rank 0 is given */
  EXPECT(sl_array_load_npy(&a, last ? other : path, NULL), sl_size() > 1 ? SL_E_IO : SL_SUCCESS, "hostile-b.npy");
  sl_array_destroy(&a);
  /* a directory, a device, a file the kernel will not keep */
  EXPECT(sl_array_load_npy(&a, dir, NULL), SL_E_IO, "not a regular file");
  EXPECT(sl_array_save_npy(a2, dir), SL_E_IO, "not a regular file");
  EXPECT(sl_array_save_npy(a2, "/dev/full"), SL_E_IO, "/dev/full");
  if (access("/proc/version", F_OK) == 0) EXPECT(sl_array_save_npy(a2, "/proc/version"), SL_E_IO, "/proc/version");
  /* a header whose shape overflows */
  char hdr[128], file[160];
  const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952, 4), }";
  memset(hdr, ' ', sizeof hdr);
  memcpy(hdr, "\x93NUMPY\x01\x00\x76\x00", 10);
  memcpy(hdr + 10, dict, strlen(dict));
  hdr[127] = '\n';
  memcpy(file, hdr, 128);
  memset(file + 128, 0, 32);
  snprintf(path, sizeof path, "%s/hostile-huge.npy", dir);
  if (sl_rank() == 0) {
    FILE *f = fopen(path, "wb");
    if (f) {
      fwrite(file, 1, sizeof file, f);
      fclose(f);
    }
  }
  MPI_Barrier(sl_comm());
  EXPECT(sl_array_load_npy(&a, path, NULL), SL_E_FORMAT, "overflow");
  CHECK(a == NULL, "no array from a failed load");
}

/* This process's address space in bytes (VmSize), 0 if unknown. */
static long long address_space(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long long kb = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmSize: %lld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb * 1024;
}

/* Memory that one rank cannot have: its address space capped (RLIMIT_AS) 64 MiB above what it uses, the
 * array asks 256 MiB a rank; the others allocate theirs and must still fail with it (they went on, then
 * waited for that rank in the next collective). Ghost widths past the axis. Not under valgrind (its own
 * allocator), AddressSanitizer (its aborts) nor where the address space is unknown. */
static void allocations(void)
{
  sl_array *a = NULL;
  int64_t dims[2] = {6, 3};
  sl_dist g = sl_dist_scatter(0);
  g.ghost_lo = 7;
  EXPECT(sl_array_create(&a, 2, dims, SL_FLOAT64, &g), SL_E_DIST, "ghost widths");
  CHECK(a == NULL, "no array from a failed creation");
  const char *pre = getenv("LD_PRELOAD");
  int skip = (pre && strstr(pre, "vgpreload")) || address_space() == 0;
#if defined(__SANITIZE_ADDRESS__)
  skip = 1; /* AddressSanitizer aborts on a failed allocation by default */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  skip = 1;
#endif
#endif
  MPI_Allreduce(MPI_IN_PLACE, &skip, 1, MPI_INT, MPI_MAX, sl_comm());
  if (skip) return;
  struct rlimit old;
  CHECK(getrlimit(RLIMIT_AS, &old) == 0, "getrlimit");
  for (int m = ALL; m <= ONE; m++) {
    int64_t big[1] = {(int64_t)sl_size() * ((1 << 25) + 12345)};
    struct rlimit cap = old;
    cap.rlim_cur = (rlim_t)(address_space() + (64LL << 20));
    if (bad_here(m) && (old.rlim_cur == RLIM_INFINITY || cap.rlim_cur < old.rlim_cur))
      CHECK(setrlimit(RLIMIT_AS, &cap) == 0, "setrlimit");
    int rc = sl_array_create(&a, 1, big, SL_FLOAT64, NULL);
    CHECK(setrlimit(RLIMIT_AS, &old) == 0, "setrlimit back");
    expect(rc, SL_E_NOMEM, "cannot allocate", m == ALL ? "256 MiB a rank with 64 MiB left on every rank"
                                                      : "256 MiB a rank with 64 MiB left on the last rank", __LINE__);
    CHECK(a == NULL, "no array from a failed creation");
    sl_array_destroy(&a);
    double w[4];
    int64_t n4[1] = {4 * (int64_t)sl_size()};
    EXPECT(sl_array_wrap(&a, bad_here(m) ? NULL : w, 1, n4, SL_FLOAT64, NULL), SL_E_INVALID, "argument 2 (buffer)");
    CHECK(a == NULL, "no array from a failed wrap");
  }
}

/* Non-finite data: every solver stops with SL_E_NUMERIC and SL_STOP_NONFINITE, the same on every rank,
 * at the iteration that first sees it (check_every 1). */
static void nonfinite(sl_array *a2)
{
  const char *names[6] = {"CG", "CG pipelined", "CGLS", "LSQR", "ISTA", "FISTA"};
  solve_fn fns[6] = {sl_solve_cg, sl_solve_cg, sl_solve_cgls, sl_solve_lsqr, sl_solve_ista, sl_solve_fista};
  sl_array *dg = NULL, *dbad = NULL, *y = NULL, *x = NULL;
  CHECK_OK(sl_array_create_like(&dg, a2));
  CHECK_OK(sl_array_create_like(&dbad, a2));
  CHECK_OK(sl_array_create_like(&y, a2));
  CHECK_OK(sl_array_create_like(&x, a2));
  CHECK_OK(sl_array_fill(dg, SL_REAL(2)));
  CHECK_OK(sl_array_fill(dbad, SL_REAL(2)));
  /* one Inf on the last rank that owns something */
  double *p = NULL;
  CHECK_OK(sl_array_acquire(dbad, SL_READ_WRITE, (void **)&p));
  int64_t n = sl_array_local_size(dbad);
  int64_t owner = n > 0 ? sl_rank() : -1, last = owner;
  MPI_Allreduce(&owner, &last, 1, MPI_INT64_T, MPI_MAX, sl_comm());
  if (sl_rank() == last) p[n - 1] = INFINITY;
  CHECK_OK(sl_array_release(dbad));
  sl_op *good = NULL, *bad = NULL, *big = NULL;
  CHECK_OK(sl_op_diagonal(&good, dg));
  /* a diagonal holding Inf is refused where it is made */
  expect(sl_op_diagonal(&bad, dbad), SL_E_NUMERIC, "argument 2 (d)", "Diagonal with Inf on one rank", __LINE__);
  CHECK(bad == NULL, "no operator from a refused Diagonal");
  /* Inf made by the operator at its first apply: the largest double, twice, on that rank */
  CHECK_OK(sl_array_acquire(dbad, SL_READ_WRITE, (void **)&p));
  if (sl_rank() == last) p[n - 1] = DBL_MAX;
  CHECK_OK(sl_array_release(dbad));
  CHECK_OK(sl_op_diagonal(&big, dbad));
  CHECK_OK(sl_op_scaled(&bad, big, SL_REAL(2.0)));
  sl_op_destroy(&big);
  for (int c = 0; c < 3; c++) { /* NaN in y, Inf in y, Inf in the operator */
    for (int k = 0; k < 6; k++) {
      CHECK_OK(sl_array_fill(y, SL_REAL(1)));
      if (c < 2) {
        CHECK_OK(sl_array_acquire(y, SL_READ_WRITE, (void **)&p));
        if (sl_rank() == last) p[0] = c == 0 ? NAN : -INFINITY;
        CHECK_OK(sl_array_release(y));
      }
      sl_solver_options o;
      sl_solver_options_default(&o);
      o.niter = 20;
      o.alpha = 0.25;
      o.pipelined = k == 1;
      sl_solver_info info;
      memset(&info, 0, sizeof info);
      int rc = fns[k](c == 2 ? bad : good, y, x, &o, &info);
      char label[96];
      snprintf(label, sizeof label, "%s with %s", names[k], c == 0 ? "NaN in y" : c == 1 ? "-Inf in y" : "Inf in the operator");
      expect(rc, SL_E_NUMERIC, "non-finite", label, __LINE__);
      long st[2] = {info.stop, info.iterations}, lo[2], hi[2];
      MPI_Allreduce(st, lo, 2, MPI_LONG, MPI_MIN, sl_comm());
      MPI_Allreduce(st, hi, 2, MPI_LONG, MPI_MAX, sl_comm());
      CHECK(info.stop == SL_STOP_NONFINITE && lo[0] == hi[0] && lo[1] == hi[1],
            "%s: stop %d (%s), iteration %d, the same on every rank: %d", label, (int)info.stop,
            sl_stop_reason_name(info.stop), info.iterations, lo[0] == hi[0] && lo[1] == hi[1]);
      /* ISTA and FISTA take their first step at iteration 1; the others see y at iteration 0 (the
       * operator's Inf at the first apply: iteration 0 for CGLS, LSQR and pipelined CG, 1 for CG) */
      CHECK(info.iterations <= 1, "%s: stopped at iteration %d, not the first that sees the value", label, info.iterations);
    }
  }
  /* CG on a singular diagonal (a zero on it): success with a finite x, or a non-finite stop; never success
   * with a non-finite x */
  CHECK_OK(sl_array_acquire(dbad, SL_READ_WRITE, (void **)&p));
  if (sl_rank() == last) p[n - 1] = 0.0;
  CHECK_OK(sl_array_release(dbad));
  sl_op_destroy(&bad);
  CHECK_OK(sl_op_diagonal(&bad, dbad));
  CHECK_OK(sl_array_fill(y, SL_REAL(1)));
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 50;
  sl_solver_info info;
  int rc = sl_solve_cg(bad, y, x, &o, &info);
  sl_scalar *s = NULL;
  CHECK_OK(sl_scalar_create(&s, SL_FLOAT64));
  CHECK_OK(sl_array_norm(x, INFINITY, s)); /* the largest |x_i|: no overflow of its own */
  double xn = 0;
  CHECK_OK(sl_scalar_get(s, &xn));
  long r = rc, rlo = 0, rhi = 0;
  MPI_Allreduce(&r, &rlo, 1, MPI_LONG, MPI_MIN, sl_comm());
  MPI_Allreduce(&r, &rhi, 1, MPI_LONG, MPI_MAX, sl_comm());
  ncases++;
  CHECK(rlo == rhi && (rc == SL_SUCCESS ? isfinite(xn) : rc == SL_E_NUMERIC),
        "CG on a singular diagonal: rc %d (%s), ||x|| = %g, stop '%s'", rc, sl_last_error(), xn, sl_stop_reason_name(info.stop));
  sl_scalar_destroy(&s);
  sl_op_destroy(&good);
  sl_op_destroy(&bad);
  sl_array_destroy(&dg);
  sl_array_destroy(&dbad);
  sl_array_destroy(&y);
  sl_array_destroy(&x);
}

/* Host buffers with NaN, sizes whose products overflow, stacked arrays where plain ones are needed, a NULL on
 * one rank, and arguments equal up to their normal form: refused on every rank naming the argument (or accepted
 * alike), never a crash or a hang. */
static void buffers_and_overflows(sl_array *a2)
{
  const int P = sl_size(), me = sl_rank();
  double blk[4] = {1, 2, 3, 4}, nanblk[4] = {1, 2, NAN, 4};
  int64_t rp[3] = {0, 1, 2}, ci[2] = {0, 1}, huge = (int64_t)1 << 32;
  for (int m = ALL; m <= ONE; m++) {
    int b = bad_here(m);
    OP_CASE(SL_E_INVALID, "argument 2 (A) holds a non-finite", sl_op_matrix(&op, b ? nanblk : blk, 2, 2, 1, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "too large", sl_op_matrix(&op, blk, b ? huge : 2, b ? huge : 2, 1, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "argument 6 (vals)", sl_op_csr(&op, 2, 2, rp, ci, b ? nanblk + 1 : blk, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "argument 2 (G)", sl_op_fredholm1(&op, b ? nanblk : blk, 1, 2, 2, 1, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "too large", sl_op_fredholm1(&op, blk, 1, b ? huge : 2, b ? huge : 2, 1, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "argument 2 (d)", sl_op_diagonal(&op, b ? NULL : a2));
    const double v[2] = {1, 1};
    sl_op **nul = NULL;
    OP_CASE(SL_E_INVALID, "argument 1 (out)", sl_op_second_directional_derivative(b ? nul : &op, a2, v, NULL, NULL, 0));
  }
  /* MDC: G on rank 0 with a NaN; a scale dt dr sqrt(nt) past DBL_MAX */
  const int64_t nt = 8, nfmax = 3, ns = 2, nr = 3, nv = 1, nfl = me == 0 ? nfmax : 0;
  double complex *G = calloc((size_t)(nfmax * ns * nr), sizeof *G);
  for (int64_t i = 0; i < nfmax * ns * nr; i++) G[i] = CMPLX(0.1 * (double)i, 0.2);
  OP_CASE(SL_E_INVALID, "overflows", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 1e200, 1e200, SL_FLOAT64));
  G[4] = CMPLX(0, NAN);
  OP_CASE(SL_E_INVALID, "argument 2 (G)", sl_op_mdc(&op, G, nfl, nfmax, ns, nr, nt, nv, 0.004, 1.0, SL_FLOAT64));
  free(G);
  /* stacked arrays: refused by Restriction and Redistribute (they read a plain array's distribution) */
  sl_array *parts[2] = {NULL, NULL}, *stk = NULL;
  CHECK_OK(sl_array_create_like(&parts[0], a2));
  CHECK_OK(sl_array_create_like(&parts[1], a2));
  CHECK_OK(sl_array_stack(&stk, 2, parts));
  int64_t idx[1] = {0};
  OP_CASE(SL_E_INVALID, "stacked", sl_op_restriction(&op, stk, idx, sl_array_local_size(a2) > 0 ? 1 : 0));
  OP_CASE(SL_E_INVALID, "stacked", sl_op_redistribute(&op, stk, stk));
  /* a part is the stack's: destroying it alone is refused (the stack would use it after); a part acquired on
   * rank 0 fails a reduction of the stack on every rank */
  sl_array *part = sl_array_stack_part(stk, 0);
  CHECK(sl_array_destroy(&part) == SL_E_STATE && part != NULL && strstr(sl_last_error(), "part of a stacked array"),
        "destroying a stack's part: %s", sl_last_error());
  void *pv = NULL;
  if (me == 0) CHECK_OK(sl_array_acquire(part, SL_READ, &pv));
  sl_scalar *ss = NULL;
  CHECK_OK(sl_scalar_create(&ss, SL_FLOAT64));
  EXPECT(sl_array_norm(stk, 2.0, ss), SL_E_STATE, "its part 0 is acquired");
  if (me == 0) CHECK_OK(sl_array_release(part));
  EXPECT(sl_array_norm(stk, 2.0, ss), SL_SUCCESS, NULL);
  sl_scalar_destroy(&ss);
  sl_array_destroy(&stk);
  /* Roll: axis -1 on some ranks and 1 on others, shifts 7 apart along an axis of 7: the same operator */
  OP_CASE(SL_SUCCESS, NULL, sl_op_roll(&op, a2, me % 2 ? -1 : 1, 2));
  OP_CASE(SL_SUCCESS, NULL, sl_op_roll(&op, a2, 0, me % 2 ? 3 : 10));
  OP_CASE(differ_code(), "shift", sl_op_roll(&op, a2, 0, (int64_t)differ(3, 4)));
  /* Halo: dims whose product (with the halos) overflows 64 bits */
  int64_t hd[2] = {8 * (int64_t)P, (int64_t)1 << 62};
  int grid[2] = {P, 1}, halo[4] = {0, 0, 0, 0};
  OP_CASE(SL_E_DIMS, "overflows", sl_op_halo(&op, 2, hd, grid, halo, SL_HALO_ZERO, SL_FLOAT64));
  /* CG: damp whose square overflows */
  sl_array *x = NULL;
  CHECK_OK(sl_array_create_like(&x, a2));
  sl_op *eye = NULL;
  CHECK_OK(sl_op_identity(&eye, a2));
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.damp = 1e200;
  EXPECT(sl_solve_cg(eye, a2, x, &o, NULL), SL_E_INVALID, "damp");
  /* an operator's layout (no storage) where values are read: refused, not a NULL handle in a task */
  sl_scalar *sc = NULL;
  CHECK_OK(sl_scalar_create(&sc, SL_FLOAT64));
  EXPECT(sl_array_sum(sl_op_domain(eye), sc), SL_E_INVALID, "layout without storage");
  EXPECT(sl_array_copy(x, sl_op_domain(eye)), SL_E_INVALID, "argument 2 (src) is a layout");
  /* a reduction of another array on one rank (a broadcast one: no allreduce there) */
  sl_array *bc = NULL;
  sl_dist bd = sl_dist_broadcast();
  CHECK_OK(sl_array_create(&bc, 2, sl_array_dims(a2), SL_FLOAT64, &bd));
  EXPECT(sl_array_norm(me == P - 1 ? bc : a2, 2.0, sc), differ_code(), P > 1 ? "argument 1 (x: its layout) differs" : NULL);
  sl_array_destroy(&bc);
  sl_scalar_destroy(&sc);
  sl_op_destroy(&eye);
  sl_array_destroy(&x);
  /* local_n past the axis on one rank (the sum over the ranks wrapped around to the axis length) */
  int64_t d2[2] = {10, 2}, ln = me == 0 ? INT64_MAX : 10;
  sl_dist ld = sl_dist_default();
  ld.local_n = &ln;
  sl_array *bad = NULL;
  EXPECT(sl_array_create(&bad, 2, d2, SL_FLOAT64, &ld), SL_E_DIST, "local_n");
  CHECK(bad == NULL, "no array from a refused local_n");
  /* the ghost exchange: a NULL or another array on one rank, refused everywhere (the others waited in it) */
  sl_dist gd = sl_dist_scatter(0);
  gd.ghost_lo = 2;
  gd.ghost_hi = 1;
  sl_array *ga = NULL, *gb = NULL;
  CHECK_OK(sl_array_create(&ga, 2, sl_array_dims(a2), SL_FLOAT64, &gd));
  gd.ghost_lo = 1;
  CHECK_OK(sl_array_create(&gb, 2, sl_array_dims(a2), SL_FLOAT64, &gd));
  EXPECT(sl_array_exchange_ghosts(me == P - 1 ? NULL : ga), SL_E_INVALID, "argument 1 (a) is NULL");
  EXPECT(sl_array_exchange_ghosts(me == P - 1 ? gb : ga), differ_code(), P > 1 ? "ghost widths" : NULL);
  EXPECT(sl_array_exchange_ghosts(ga), SL_SUCCESS, NULL);
  sl_array_destroy(&ga);
  sl_array_destroy(&gb);
}

/* Local calls: refused, never a crash. */
static void misuse(sl_array *a2)
{
  sl_scalar *s = NULL;
  CHECK_OK(sl_scalar_create(&s, SL_FLOAT64));
  CHECK_OK(sl_array_sum(a2, s));
  ncases += 12;
  CHECK(sl_scalar_get(s, NULL) == SL_E_INVALID, "sl_scalar_get(s, NULL) is refused");
  CHECK(sl_scalar_get(NULL, &(double){0}) == SL_E_INVALID, "sl_scalar_get(NULL, v) is refused");
  CHECK(sl_array_ndim(NULL) == 0 && sl_array_dims(NULL) == NULL && sl_array_local_dims(NULL) == NULL,
        "accessors of NULL: ndim 0, dims NULL");
  CHECK(sl_array_global_size(NULL) == -1 && sl_array_local_size(NULL) == -1 && sl_array_local_offset(NULL) == -1,
        "accessors of NULL: sizes -1");
  CHECK(sl_array_axis(NULL) == -1 && sl_array_nchunks(NULL) == 0 && sl_array_count_of(NULL, 0) == -1,
        "accessors of NULL: axis -1, nchunks 0, count -1");
  CHECK((int)sl_array_dtype(NULL) == -1 && (int)sl_array_partition(NULL) == -1, "accessors of NULL: dtype -1");
  CHECK(sl_array_release_ghosts(a2) == SL_E_STATE, "ghost release without acquire is refused");
  void *lo = NULL, *hi = NULL;
  CHECK_OK(sl_array_acquire_ghosts(a2, &lo, &hi));
  CHECK(sl_array_acquire_ghosts(a2, &lo, &hi) == SL_E_STATE, "ghosts acquired twice are refused");
  CHECK_OK(sl_array_release_ghosts(a2));
  CHECK(sl_array_release_ghosts(a2) == SL_E_STATE, "ghosts released twice are refused");
  void *ptr = NULL;
  CHECK_OK(sl_array_acquire(a2, SL_READ, &ptr));
  CHECK(sl_array_acquire(a2, SL_READ, &ptr) == SL_E_STATE, "an array acquired twice is refused");
  CHECK_OK(sl_array_release(a2));
  CHECK(sl_array_release(a2) == SL_E_STATE, "an array released twice is refused");
  sl_scalar_destroy(&s);
}

/* Constructors given a `like` that is not the same array on every rank (8 x 6 on the last rank, 8 x 4 on the
 * others): refused on every rank, naming like, before anything collective depends on it; the parity
 * operators' own refusals (sizes whose products overflow, a taper with too much overlap, centres off the axis,
 * a direction field holding NaN, sampling and kind named by their own positions). */
static void likes_and_parity(void)
{
  int64_t wide[2] = {8, 6}, narrow[2] = {8, 4};
  sl_array *aw = NULL, *an = NULL;
  CHECK_OK(sl_array_create(&aw, 2, wide, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_create(&an, 2, narrow, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_fill(aw, SL_REAL(1)));
  CHECK_OK(sl_array_fill(an, SL_REAL(1)));
  const sl_array *lk = sl_rank() == sl_size() - 1 ? aw : an;
  const int dc = differ_code();
  double M[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, hs[3] = {1, 2, 1}, v2[2] = {0.6, 0.8};
  int64_t ih1[1] = {1}, iava[2] = {0, 2}, nf4[1] = {4};
  int ax1[1] = {1}, ax01[2] = {0, 1};
  OP_CASE(dc, "like", sl_op_first_derivative(&op, lk, 1, 1.0, SL_DERIV_CENTERED, 3, 0));
  OP_CASE(dc, "like", sl_op_second_derivative(&op, lk, 1, 1.0, SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "like", sl_op_laplacian(&op, lk, 2, NULL, NULL, NULL, SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "like", sl_op_gradient(&op, lk, NULL, SL_DERIV_FORWARD, 0));
  OP_CASE(dc, "like", sl_op_first_directional_derivative(&op, lk, v2, NULL, NULL, SL_DERIV_CENTERED, 0));
  OP_CASE(dc, "like", sl_op_nonstationary_convolve1d(&op, lk, hs, 1, 3, ih1, 1));
  OP_CASE(dc, "like", sl_op_restriction_axis(&op, lk, iava, 2, 1));
  OP_CASE(dc, "like", sl_op_roll(&op, lk, 1, 1));
  OP_CASE(dc, "like", sl_op_sliding1d(&op, lk, 1, M, 4, 4, 0, SL_TAPER_NONE));
  OP_CASE(dc, "like", sl_op_patch2d_dense(&op, lk, ax01, NULL, 2, 2, 2, 0, 2, 0, SL_TAPER_NONE));
  OP_CASE(dc, "like", sl_op_fft_nfft(&op, lk, 1, ax1, nf4, SL_FFT_ORTHO, 1, NULL, NULL));
  OP_CASE(dc, "like", sl_op_redistribute(&op, lk, lk));
  {
    sl_prox *px = NULL;
    int rc = sl_prox_l21_axis(&px, lk, 1, 0.5);
    expect(rc, dc, "like", "sl_prox_l21_axis with like differing between ranks", __LINE__);
    sl_prox_destroy(&px);
  }
  /* the parity operators' own refusals, on every rank */
  OP_CASE(SL_E_DIMS, "nm", sl_op_sliding1d(&op, aw, 1, M, INT64_MAX / 2, 4, 2, SL_TAPER_NONE));
  OP_CASE(SL_E_DIMS, "nm", sl_op_patch2d(&op, aw, ax01, M, 2, 2, 0, M, ((int64_t)1 << 62) - 1, 2, 0, SL_TAPER_NONE));
  OP_CASE(SL_E_DIMS, "nop0", sl_op_patch2d_dense(&op, aw, ax01, M, (int64_t)1 << 31, ((int64_t)1 << 31) + 1, 4, 2, 4, 2, SL_TAPER_NONE));
  OP_CASE(SL_E_INVALID, "nover", sl_op_sliding1d(&op, aw, 1, M, 3, 4, 3, SL_TAPER_COSINE));
  OP_CASE(SL_E_INVALID, "nover", sl_op_sliding1d(&op, aw, 1, M, 3, 4, 3, SL_TAPER_COSINESQUARE));
  int64_t off[1] = {6};
  OP_CASE(SL_E_INVALID, "argument 6 (ih)", sl_op_nonstationary_convolve1d(&op, aw, hs, 1, 3, off, 1));
  double hbad[2] = {1.0, -1.0};
  OP_CASE(SL_E_INVALID, "argument 5 (sampling)", sl_op_first_directional_derivative(&op, aw, v2, NULL, hbad, SL_DERIV_CENTERED, 0));
  OP_CASE(SL_E_INVALID, "argument 6 (kind)", sl_op_first_directional_derivative(&op, aw, v2, NULL, NULL, (sl_deriv_kind)7, 0));
  OP_CASE(SL_E_INVALID, "argument 3 (sampling)", sl_op_gradient(&op, aw, hbad, SL_DERIV_CENTERED, 0));
  double hdiff[2] = {1.0, differ(1.0, 2.0)};
  OP_CASE(dc, "argument 5 (sampling", sl_op_first_directional_derivative(&op, aw, v2, NULL, hdiff, SL_DERIV_CENTERED, 0));
  {
    sl_array *vf[2] = {NULL, NULL};
    CHECK_OK(sl_array_create_like(&vf[0], aw));
    CHECK_OK(sl_array_create_like(&vf[1], aw));
    CHECK_OK(sl_array_fill(vf[0], SL_REAL(1)));
    CHECK_OK(sl_array_fill(vf[1], SL_REAL(1)));
    double *p = NULL;
    CHECK_OK(sl_array_acquire(vf[1], SL_READ_WRITE, (void **)&p));
    if (sl_rank() == sl_size() - 1 && sl_array_local_size(vf[1]) > 0) p[0] = NAN;
    CHECK_OK(sl_array_release(vf[1]));
    int owner = sl_array_local_size(vf[1]) > 0 && sl_rank() == sl_size() - 1, any = 0;
    MPI_Allreduce(&owner, &any, 1, MPI_INT, MPI_MAX, sl_comm());
    OP_CASE(any ? SL_E_NUMERIC : SL_SUCCESS, "vfield[1]", sl_op_first_directional_derivative(&op, aw, NULL, vf, NULL, SL_DERIV_CENTERED, 0));
    OP_CASE(any ? SL_E_NUMERIC : SL_SUCCESS, "vfield[1]", sl_op_second_directional_derivative(&op, aw, NULL, vf, NULL, 0));
    OP_CASE(any ? SL_E_NUMERIC : SL_SUCCESS, "argument 2 (d)", sl_op_diagonal(&op, vf[1]));
    sl_array_destroy(&vf[0]);
    sl_array_destroy(&vf[1]);
  }
  /* arguments named by the call that takes them, not by the call it makes inside */
  int64_t huge[1] = {INT64_MAX / 4};
  OP_CASE(SL_E_DIMS, "sl_op_fft_nfft: argument 5 (nfft)", sl_op_fft_nfft(&op, aw, 1, ax1, huge, SL_FFT_ORTHO, 1, NULL, NULL));
  OP_CASE(SL_E_DTYPE, "sl_op_fft_nfft: argument 7 (real)", sl_op_fft_nfft(&op, aw, 1, ax1, nf4, SL_FFT_ORTHO, 0, NULL, NULL));
  OP_CASE(SL_E_INVALID, "sl_op_fft_nfft: argument 6 (norm)", sl_op_fft_nfft(&op, aw, 1, ax1, nf4, (sl_fft_norm)5, 1, NULL, NULL));
  {
    double blk[4] = {1, 2, 3, 4};
    float blkf[4] = {1, 2, 3, 4};
    const void *A[1] = {sl_rank() == sl_size() - 1 ? (const void *)blkf : (const void *)blk};
    int64_t nr[1] = {2}, nc[1] = {2};
    OP_CASE(dc, "argument 6 (dt)", sl_op_matrix_blocks(&op, 1, A, nr, nc, sl_rank() == sl_size() - 1 ? SL_FLOAT32 : SL_FLOAT64));
    /* the dense blocks' nrhs and dtype, named by the call (they were refused by the array it makes inside) */
    OP_CASE(dc, "sl_op_matrix: argument 5 (nrhs)", sl_op_matrix(&op, blk, 2, 2, differ(1, 2), SL_FLOAT64));
    OP_CASE(dc, "sl_op_hstack_matrix: argument 6 (dt)", sl_op_hstack_matrix(&op, A[0], 2, 2, 1, sl_rank() == sl_size() - 1 ? SL_FLOAT32 : SL_FLOAT64));
    int64_t hd[2] = {8, 6};
    int grid[2] = {sl_size(), 1}, halo[2] = {1, 1};
    OP_CASE(dc, "sl_op_halo_split", sl_op_halo_split(&op, 2, hd, grid, halo, SL_HALO_ZERO,
                                                    sl_rank() == sl_size() - 1 ? SL_HALO_SPLIT_CEIL : SL_HALO_SPLIT_EVEN, SL_FLOAT64));
  }
  sl_array_destroy(&aw);
  sl_array_destroy(&an);
}

/* a shell callback that answers with a value that is not a status */
static int bad_status(void *ctx, sl_op_mode mode, const sl_array *x, sl_array *y) { return 5; }

/* a shell callback that applies an inner operator, and on the last rank fails at its left-th call */
typedef struct {
  int left;
  sl_op *inner;
} fail_late_t;
static int fail_late(void *ctx, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  fail_late_t *c = ctx;
  if (sl_rank() == sl_size() - 1 && --c->left == 0) return sl_error_set(SL_E_BACKEND, "FailLate: the user's device is gone");
  return sl_op_apply(c->inner, mode, x, y);
}

/* Arrays and operators: storage-less layouts where data is read, parts of stacks stacked again, scales and
 * powers out of range, dot tests that overflow, shell callbacks' statuses, and arguments that must be the
 * same array or operator on every rank (the last rank passes another) */
static void arrays_and_algebra(const char *dir)
{
  int64_t d7[2] = {7, 5}, d6[2] = {6, 4};
  sl_array *a7 = NULL, *a6 = NULL, *b7 = NULL;
  CHECK_OK(sl_array_create(&a7, 2, d7, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_create(&a6, 2, d6, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_create(&b7, 2, d7, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_fill(a7, SL_REAL(1)));
  CHECK_OK(sl_array_fill(b7, SL_REAL(2)));
  const int last = sl_rank() == sl_size() - 1, dc = differ_code();
  sl_op *Id = NULL, *Dg = NULL;
  CHECK_OK(sl_op_identity(&Id, a7));
  CHECK_OK(sl_op_diagonal(&Dg, b7));
  sl_array *lay = (sl_array *)sl_op_domain(Id); /* a layout: no storage */
  double *buf = malloc(sizeof *buf * 35);
  void *p = NULL;
  EXPECT(sl_array_redistribute(a7, lay), SL_E_INVALID, "argument 2 (src)");
  EXPECT(sl_array_redistribute(lay, a7), SL_E_INVALID, "argument 1 (dst)");
  EXPECT(sl_array_gather(lay, -1, buf), SL_E_INVALID, "argument 1 (a)");
  EXPECT(sl_array_fill_random(lay, 3), SL_E_INVALID, "argument 1 (a)");
  EXPECT(sl_array_acquire(lay, SL_READ, &p), SL_E_INVALID, "argument 1 (a)");
  char path[512];
  snprintf(path, sizeof path, "%s/hostile_layout.npy", dir);
  EXPECT(sl_array_save_npy(lay, path), SL_E_INVALID, "argument 1 (a)");
  /* a part of a stack stacked again (its stack owns it: destroying both freed it twice) */
  sl_array *c1 = NULL, *c2 = NULL, *st = NULL, *st2 = NULL;
  CHECK_OK(sl_array_create_like(&c1, a7));
  CHECK_OK(sl_array_create_like(&c2, a7));
  CHECK_OK(sl_array_stack(&st, 2, (sl_array *[]){c1, c2}));
  EXPECT(sl_array_stack(&st2, 1, (sl_array *[]){sl_array_stack_part(st, 0)}), SL_E_INVALID, "another stacked array");
  sl_array_destroy(&st2);
  sl_array_destroy(&st);
  /* scales and powers */
  OP_CASE(SL_E_INVALID, "argument 3 (s)", sl_op_scaled(&op, Id, SL_REAL(NAN)));
  OP_CASE(SL_E_INVALID, "argument 3 (s)", sl_op_scaled(&op, Id, SL_REAL(INFINITY)));
  OP_CASE(SL_E_INVALID, "argument 3 (k)", sl_op_power(&op, Id, SL_OP_POWER_MAX + 1));
  {
    char before[128];
    snprintf(before, sizeof before, "%s", sl_op_name(Dg));
    sl_op *one = NULL;
    CHECK_OK(sl_op_power(&one, Dg, 1));
    CHECK(strcmp(sl_op_name(Dg), before) == 0, "sl_op_power(a, 1) renamed a: '%s' (was '%s')", sl_op_name(Dg), before);
    sl_op_destroy(&one);
  }
  /* a dot test on an operator that overflows: SL_E_NUMERIC, not success with err NaN */
  {
    sl_op *big = NULL, *big2 = NULL;
    CHECK_OK(sl_op_scaled(&big, Id, SL_REAL(1e200)));
    CHECK_OK(sl_op_product(&big2, big, big));
    double err = 0;
    EXPECT(sl_dottest(big2, 1, &err), SL_E_NUMERIC, "not both finite");
    EXPECT(sl_dottest(Id, 1, last ? NULL : &err), SL_E_INVALID, "argument 3 (err)");
    EXPECT(sl_dottest(Id, (unsigned)differ(1, 2), &err), dc, "argument 2 (seed)");
    sl_op_destroy(&big);
    sl_op_destroy(&big2);
  }
  /* a shell callback returning a value that is not a status: SL_E_RUNTIME naming it */
  {
    sl_op *sh = NULL;
    CHECK_OK(sl_op_shell(&sh, "BadStatus", a7, a7, bad_status, NULL, NULL, NULL));
    EXPECT(sl_op_apply(sh, SL_FORWARD, a7, b7), SL_E_RUNTIME, "returned 5");
    sl_op_destroy(&sh);
    OP_CASE(dc, "domain_like", sl_op_shell(&op, "Differ", last ? a6 : a7, a7, bad_status, NULL, NULL, NULL));
    /* a callback failing on the last rank only, at its third call inside a solve: the solve fails on every
     * rank with the last rank's message (the others waited in the next reduction for ever) */
    sl_array *x = NULL, *dg = NULL;
    CHECK_OK(sl_array_create_like(&x, a7));
    CHECK_OK(sl_array_create_like(&dg, a7));
    CHECK_OK(sl_array_fill_random(dg, 5));
    CHECK_OK(sl_array_axpby(dg, SL_REAL(1), b7, SL_REAL(1))); /* 2 + random: 35 distinct values, many CG iterations */
    fail_late_t fl = {3, NULL};
    CHECK_OK(sl_op_diagonal(&fl.inner, dg));
    CHECK_OK(sl_op_shell(&sh, "FailLate", a7, a7, fail_late, fail_late, &fl, NULL));
    sl_solver_options o;
    sl_solver_options_default(&o);
    o.niter = 10;
    o.tol = 0;
    expect(sl_solve_cg(sh, b7, x, &o, NULL), SL_E_BACKEND, "the user's device is gone", "CG on a shell failing on the last rank", __LINE__);
    /* an apply whose x is wrong on the last rank only: refused on every rank (the others entered the callback
     * and waited in its agreement) */
    EXPECT(sl_op_apply(sh, SL_FORWARD, last ? a6 : a7, b7), SL_E_DIMS, "argument 3 (x)");
    fl.left = 3;
    expect(sl_solve_cgls(sh, b7, x, &o, NULL), SL_E_BACKEND, "FailLate", "CGLS on a shell failing on the last rank", __LINE__);
    sl_array_destroy(&x);
    sl_array_destroy(&dg);
    sl_op_destroy(&sh);
    sl_op_destroy(&fl.inner);
  }
  /* the same array or operators on every rank */
  {
    sl_array *cl = NULL;
    EXPECT(sl_array_create_like(&cl, last ? a6 : a7), dc, "argument 2 (like");
    sl_array_destroy(&cl);
    /* a replicated array filled from seeds that differ: the replicas would differ */
    sl_dist bd = sl_dist_broadcast();
    CHECK_OK(sl_array_create(&cl, 2, d7, SL_FLOAT64, &bd));
    EXPECT(sl_array_fill_random(cl, (unsigned)differ(3, 4)), dc, "argument 2 (seed)");
    EXPECT(sl_array_fill_random(cl, 3), SL_SUCCESS, NULL);
    /* a stack of a scattered and a replicated part, the scattered one held by the host on the last rank */
    sl_array *sc = NULL, *stk = NULL;
    CHECK_OK(sl_array_create(&sc, 2, d7, SL_FLOAT64, NULL));
    CHECK_OK(sl_array_stack(&stk, 2, (sl_array *[]){sc, cl}));
    void *hp = NULL;
    if (last) CHECK_OK(sl_array_acquire(sc, SL_READ, &hp));
    EXPECT(sl_array_fill_random(stk, 3), SL_E_STATE, "acquired");
    if (last) CHECK_OK(sl_array_release(sc));
    EXPECT(sl_array_fill_random(stk, 3), SL_SUCCESS, NULL);
    sl_array_destroy(&stk); /* the stack owns its parts */
    cl = NULL;
    EXPECT(sl_array_gather(last ? b7 : a7, -1, buf), SL_SUCCESS, NULL); /* the same layout: allowed */
    EXPECT(sl_array_gather(last ? a6 : a7, -1, buf), dc, "argument 1 (a: its layout)");
    snprintf(path, sizeof path, "%s/hostile_differ.npy", dir);
    EXPECT(sl_array_save_npy(last ? a6 : a7, path), dc, "argument 1 (a: its layout)");
    OP_CASE(dc, "argument 3 (ops", sl_op_vstack(&op, 2, last ? (sl_op *[]){Dg, Id} : (sl_op *[]){Id, Dg}));
    OP_CASE(dc, "argument 3 (ops", sl_op_block_diag(&op, 2, last ? (sl_op *[]){Dg, Id} : (sl_op *[]){Id, Dg}));
  }
  /* the grid operators: a grid differing between ranks, non-finite blocks, bad sizes */
  {
    double A[64];
    for (int i = 0; i < 64; i++) A[i] = 1.0;
    const int P = sl_size();
    OP_CASE(P > 1 ? SL_E_INVALID : SL_SUCCESS, P > 1 ? "differs" : NULL,
            sl_op_matmul_summa(&op, A, 4, 4, 4, last ? P : 1, last ? 1 : P, SL_FLOAT64));
    A[0] = NAN;
    OP_CASE(SL_E_INVALID, "non-finite", sl_op_matmul_summa(&op, A, 4, 4, 4, 1, P, SL_FLOAT64));
    OP_CASE(SL_E_INVALID, "non-finite", sl_op_matmul_block(&op, A, 4, 4, 4, 1, P, SL_FLOAT64));
    int64_t e[8];
    EXPECT(sl_op_summa_block(-5, 4, 4, 1, 1, 0, e), SL_E_INVALID, "N, K, M");
  }
  /* a solver's x, y or x0 held by the host on the last rank: refused on every rank (the tasks waited for ever) */
  for (int w = 0; w < 3; w++) {
    sl_array *x = NULL, *y = NULL, *x0 = NULL;
    CHECK_OK(sl_array_create_like(&x, a7));
    CHECK_OK(sl_array_create_like(&y, a7));
    CHECK_OK(sl_array_create_like(&x0, a7));
    CHECK_OK(sl_array_fill(y, SL_REAL(1)));
    CHECK_OK(sl_array_fill(x0, SL_REAL(0)));
    sl_array *held = w == 0 ? x : w == 1 ? y : x0;
    void *hp = NULL;
    if (last) CHECK_OK(sl_array_acquire(held, w == 0 ? SL_READ : SL_READ_WRITE, &hp));
    sl_solver_options o;
    sl_solver_options_default(&o);
    o.niter = 3;
    o.x0 = x0;
    char label[64];
    snprintf(label, sizeof label, "CG with %s acquired on the last rank", w == 0 ? "x" : w == 1 ? "y" : "x0");
    expect(sl_solve_cg(Dg, y, x, &o, NULL), SL_E_STATE, "acquired", label, __LINE__);
    if (w != 1) { /* the proximal solvers' x and x0 */
      sl_prox *l1 = NULL, *l2 = NULL;
      CHECK_OK(sl_prox_l1(&l1, 0.1));
      CHECK_OK(sl_prox_l2(&l2, NULL, y, 1.0, 0));
      snprintf(label, sizeof label, "ProximalGradient with %s acquired on the last rank", w == 0 ? "x" : "x0");
      expect(sl_solve_proximal_gradient(l2, l1, x, &o, NULL), SL_E_STATE, "acquired", label, __LINE__);
      snprintf(label, sizeof label, "PrimalDual with %s acquired on the last rank", w == 0 ? "x" : "x0");
      expect(sl_solve_primal_dual(l2, l1, Id, x, &o, NULL), SL_E_STATE, "acquired", label, __LINE__);
      sl_prox_destroy(&l1);
      sl_prox_destroy(&l2);
    }
    if (last) CHECK_OK(sl_array_release(held));
    sl_array_destroy(&x);
    sl_array_destroy(&y);
    sl_array_destroy(&x0);
  }
  free(buf);
  sl_op_destroy(&Id);
  sl_op_destroy(&Dg);
  sl_array_destroy(&a7);
  sl_array_destroy(&a6);
  sl_array_destroy(&b7);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  /* sizes that do not divide over the ranks; on 4 ranks the 3-D array leaves a rank with nothing */
  int64_t d2[2] = {7, 5}, d3[3] = {3, 4, 5};
  sl_array *a2 = NULL, *a3 = NULL;
  CHECK_OK(sl_array_create(&a2, 2, d2, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_create(&a3, 3, d3, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_fill_random(a2, 3));
  derivatives(a2, a3);
  ffts_and_mdc(a3);
  stacks(a2);
  solver_options(a2);
  reductions_and_gathers(a2);
  sizes_and_files(a2, dir);
  allocations();
  nonfinite(a2);
  buffers_and_overflows(a2);
  misuse(a2);
  likes_and_parity();
  arrays_and_algebra(dir);
  /* the library still works after all of it */
  sl_scalar *s = NULL;
  CHECK_OK(sl_scalar_create(&s, SL_FLOAT64));
  CHECK_OK(sl_array_fill(a2, SL_REAL(1)));
  CHECK_OK(sl_array_sum(a2, s));
  double v = 0;
  CHECK_OK(sl_scalar_get(s, &v));
  CHECK(v == 35.0, "sum of ones after the hostile cases: %g", v);
  sl_scalar_destroy(&s);
  sl_array_destroy(&a3);
  if (sl_rank() == 0) printf("mpi_hostile: %d cases on %d ranks\n", ncases, sl_size());
  /* after sl_finalize: refused, no abort inside StarPU; sl_init after MPI_Finalize: refused */
  int rc = mc_finish("mpi_hostile");
  /* the array whose destruction after sl_finalize is refused stays the test's, reachable to the end (valgrind) */
  static sl_array *kept;
  kept = a2;
  int late = sl_array_destroy(&kept), again = sl_init(NULL, NULL, NULL);
  kept = a2;
  if (late != SL_E_STATE || again != SL_E_STATE) {
    fprintf(stderr, "after sl_finalize: sl_array_destroy gave %d, sl_init gave %d (both should be SL_E_STATE)\n", late, again);
    return 1;
  }
  return rc;
}
