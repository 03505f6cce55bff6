/* The shell operator (include/starlops_ext.h): a user-written diagonal D = diag(d), d_g = (2 + g % 5) + i (g % 3)
 * for complex dtypes (real part only for real ones), applied by the user's own codelet on every chunk, and
 * its adjoint conj(d) by a second function. Checked against the formula in all four dtypes: forward and
 * adjoint, the dot test, a sum with the Identity and a product with itself, CG on D (real, positive
 * definite), the same diagonal applied on the host (sl_array_acquire inside the apply, on library
 * temporaries: products, CG's work vectors), the user context's destructor running once at the last reference, the chunk extents, and
 * the errors of sl_op_shell (each the same on every rank). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starlops_ext.h"
#include "mpi_check.h"

typedef struct {
  sl_dtype dt;
  int destroyed;
} diag_ctx;

struct diag_args {
  sl_dtype dt;
  int conj;
  int64_t first; /* global index of the chunk's first element */
};

static double complex dval(int64_t g) { return (2.0 + (double)(g % 5)) + I * (double)(g % 3); }

/* y = d .* x (conj(d) for the adjoint) on one chunk */
static void diag_cpu(void *buffers[], void *arg)
{
  const struct diag_args *a = arg;
  int64_t n = (int64_t)STARPU_VECTOR_GET_NX(buffers[0]);
  void *y = (void *)STARPU_VECTOR_GET_PTR(buffers[0]);
  const void *x = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
  for (int64_t i = 0; i < n; i++) {
    double complex d = dval(a->first + i);
    if (a->conj) d = conj(d);
    switch (a->dt) {
    case SL_FLOAT32: ((float *)y)[i] = (float)creal(d) * ((const float *)x)[i]; break;
    case SL_FLOAT64: ((double *)y)[i] = creal(d) * ((const double *)x)[i]; break;
    case SL_COMPLEX64: ((float complex *)y)[i] = (float complex)d * ((const float complex *)x)[i]; break;
    case SL_COMPLEX128: ((double complex *)y)[i] = d * ((const double complex *)x)[i]; break;
    }
  }
}

static struct starpu_codelet diag_cl;
static struct starpu_perfmodel diag_model;

static int diag_apply(void *ctx, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  diag_ctx *c = ctx;
  int nc = sl_array_nchunks(y);
  int64_t off = sl_array_local_offset(y);
  for (int k = 0; k < nc; k++) {
    int64_t start = 0, count = 0;
    int rc = sl_array_chunk_extent(y, k, &start, &count);
    if (rc != SL_SUCCESS) return rc;
    struct diag_args a = {c->dt, mode == SL_ADJOINT, off + start};
    starpu_data_handle_t h[2] = {sl_array_chunk(y, k), sl_array_chunk(x, k)};
    enum starpu_data_access_mode m[2] = {STARPU_W, STARPU_R};
    rc = sl_task_submit(&diag_cl, &a, sizeof a, 2, h, m, (double)count);
    if (rc != SL_SUCCESS) return rc;
  }
  return SL_SUCCESS;
}

/* The same diagonal applied on the host: the apply acquires x (read) and y (write-only for the adjoint,
 * read-write for the forward, which overwrites it), the way a user wraps host code. Inside products and
 * solvers x and y are library temporaries, whose chunks have no host home. */
static int host_apply(void *ctx, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  diag_ctx *c = ctx;
  int64_t off = sl_array_local_offset(y), n = sl_array_local_size(y);
  void *xp = NULL, *yp = NULL;
  int rc = sl_array_acquire((sl_array *)x, SL_READ, &xp);
  if (rc != SL_SUCCESS) return rc;
  rc = sl_array_acquire(y, mode == SL_ADJOINT ? SL_WRITE : SL_READ_WRITE, &yp);
  if (rc != SL_SUCCESS) {
    sl_array_release((sl_array *)x);
    return rc;
  }
  for (int64_t i = 0; i < n; i++) {
    double complex d = dval(off + i);
    if (mode == SL_ADJOINT) d = conj(d);
    switch (c->dt) {
    case SL_FLOAT32: ((float *)yp)[i] = (float)creal(d) * ((const float *)xp)[i]; break;
    case SL_FLOAT64: ((double *)yp)[i] = creal(d) * ((const double *)xp)[i]; break;
    case SL_COMPLEX64: ((float complex *)yp)[i] = (float complex)d * ((const float complex *)xp)[i]; break;
    case SL_COMPLEX128: ((double complex *)yp)[i] = d * ((const double complex *)xp)[i]; break;
    }
  }
  rc = sl_array_release(y);
  int rc2 = sl_array_release((sl_array *)x);
  return rc != SL_SUCCESS ? rc : rc2;
}

static void ctx_destroy(void *p) { ((diag_ctx *)p)->destroyed++; }

static double rel_err(const double complex *got, const double complex *ref, int64_t n)
{
  double e = 0, r = 0;
  for (int64_t i = 0; i < n; i++) {
    e = fmax(e, cabs(got[i] - ref[i]));
    r = fmax(r, cabs(ref[i]));
  }
  return e / (r > 0 ? r : 1);
}

/* y = A x (mode) matches ref (the global result) to tol. */
static void expect_apply(sl_op *A, int mode, const sl_array *x, sl_array *y, const double complex *ref, double tol,
                         const char *what)
{
  CHECK_OK(sl_op_apply(A, (sl_op_mode)mode, x, y));
  double complex *got = mc_gather(y);
  double e = rel_err(got, ref, sl_array_global_size(y));
  CHECK(e < tol, "%s: %s %s: relative error %.3e", sl_dtype_name(sl_array_dtype(y)), what, mode ? "adjoint" : "forward", e);
  free(got);
}

/* CG on A (real, positive definite) with y = A 1: the solution is 1. x gives the layout; y is overwritten. */
static void check_cg(sl_op *A, const char *what, sl_array *x, sl_array *y, int niter)
{
  sl_dtype dt = sl_array_dtype(x);
  int64_t n = sl_array_global_size(x);
  sl_array *ones = NULL, *sol = NULL;
  CHECK_OK(sl_array_create_like(&ones, x));
  CHECK_OK(sl_array_create_like(&sol, x));
  CHECK_OK(sl_array_fill(ones, SL_REAL(1.0)));
  CHECK_OK(sl_op_apply(A, SL_FORWARD, ones, y));
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = niter;
  o.tol = dt == SL_FLOAT32 ? 1e-6 : 1e-12;
  sl_solver_info info;
  CHECK_OK(sl_solve_cg(A, y, sol, &o, &info));
  CHECK(info.stop == SL_STOP_TOL, "%s: CG on %s stopped with %s", sl_dtype_name(dt), what, sl_stop_reason_name(info.stop));
  double complex *got = mc_gather(sol), *ref = malloc(sizeof *ref * (size_t)n);
  for (int64_t g = 0; g < n; g++) ref[g] = 1.0;
  double e = rel_err(got, ref, n);
  CHECK(e < (dt == SL_FLOAT32 ? 1e-4 : 1e-9), "%s: CG on %s: solution error %.3e", sl_dtype_name(dt), what, e);
  free(got);
  free(ref);
  sl_array_destroy(&ones);
  sl_array_destroy(&sol);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  CHECK_OK(sl_codelet_init(&diag_cl, &diag_model, "test_shell_diag", diag_cpu, NULL));
  int64_t n = 1000 + 3 * sl_size() + 1; /* uneven over the ranks */
  const sl_dtype dts[4] = {SL_FLOAT32, SL_FLOAT64, SL_COMPLEX64, SL_COMPLEX128};
  for (int t = 0; t < 4; t++) {
    sl_dtype dt = dts[t];
    int cplx = dt == SL_COMPLEX64 || dt == SL_COMPLEX128;
    double tol = mc_tol(dt);
    double complex *xg = NULL;
    sl_array *x = mc_array(1, &n, dt, NULL, 7, &xg), *y = NULL;
    CHECK_OK(sl_array_create_like(&y, x));
    diag_ctx ctx = {dt, 0};
    sl_op *D = NULL;
    CHECK_OK(sl_op_shell(&D, "UserDiagonal", x, x, diag_apply, diag_apply, &ctx, ctx_destroy));
    CHECK(sl_op_shell_context(D) == &ctx, "%s: sl_op_shell_context gives the ctx", sl_dtype_name(dt));

    /* the chunks cover the local block in order */
    int64_t covered = 0;
    for (int k = 0; k < sl_array_nchunks(x); k++) {
      int64_t s = -1, c = -1;
      CHECK_OK(sl_array_chunk_extent(x, k, &s, &c));
      CHECK(s == covered && c > 0, "chunk %d starts at %lld (expected %lld), %lld long", k, (long long)s, (long long)covered,
            (long long)c);
      CHECK(c == (int64_t)starpu_vector_get_nx(sl_array_chunk(x, k)), "chunk %d: extent %lld, its handle holds %u", k,
            (long long)c, starpu_vector_get_nx(sl_array_chunk(x, k)));
      CHECK(sl_array_chunk_of(x, s) == k && sl_array_chunk_of(x, s + c - 1) == k, "sl_array_chunk_of at chunk %d", k);
      covered += c;
    }
    CHECK(covered == sl_array_local_size(x), "the chunks cover %lld of %lld local elements", (long long)covered,
          (long long)sl_array_local_size(x));
    CHECK(sl_array_chunk_extent(x, sl_array_nchunks(x) + 1, NULL, NULL) == SL_E_INVALID, "a chunk past the end is refused");
    CHECK(sl_array_chunk(x, -1) == NULL && sl_array_chunk(NULL, 0) == NULL, "sl_array_chunk out of range gives NULL");

    /* forward and adjoint against the formula */
    double complex *ref = malloc(sizeof *ref * (size_t)n);
    for (int mode = 0; mode < 2; mode++) {
      for (int64_t g = 0; g < n; g++) {
        double complex d = cplx ? dval(g) : creal(dval(g));
        ref[g] = (mode ? conj(d) : d) * xg[g];
      }
      expect_apply(D, mode, x, y, ref, tol, "D");
    }
    double dot = 1;
    CHECK_OK(sl_dottest(D, 3, &dot));
    CHECK(dot < 10 * tol, "%s: dot test of the shell operator: %.3e", sl_dtype_name(dt), dot);

    /* in a sum and a product */
    sl_op *Id = NULL, *S = NULL, *P = NULL;
    CHECK_OK(sl_op_identity(&Id, x));
    CHECK_OK(sl_op_sum(&S, D, Id));
    CHECK_OK(sl_op_product(&P, D, D));
    for (int which = 0; which < 2; which++) {
      for (int64_t g = 0; g < n; g++) {
        double complex d = cplx ? dval(g) : creal(dval(g));
        ref[g] = (which ? d * d : d + 1.0) * xg[g];
      }
      expect_apply(which ? P : S, SL_FORWARD, x, y, ref, tol, which ? "D D" : "D + I");
    }
    CHECK_OK(sl_dottest(P, 5, &dot));
    CHECK(dot < 10 * tol, "%s: dot test of D D: %.3e", sl_dtype_name(dt), dot);

    /* CG on D (real dtypes: positive definite): y = D 1 gives x = 1 */
    if (!cplx) check_cg(D, "D", x, y, 50);

    /* host-applied: H H H (two temporaries between the factors) against the formula, its dot test, and CG on H
     * (work vectors as H's input and output) */
    {
      diag_ctx hctx = {dt, 0};
      sl_op *H = NULL, *HH = NULL, *HHH = NULL;
      CHECK_OK(sl_op_shell(&H, "HostDiagonal", x, x, host_apply, host_apply, &hctx, NULL));
      CHECK_OK(sl_op_product(&HH, H, H));
      CHECK_OK(sl_op_product(&HHH, H, HH));
      for (int mode = 0; mode < 2; mode++) {
        for (int64_t g = 0; g < n; g++) {
          double complex d = cplx ? dval(g) : creal(dval(g));
          if (mode) d = conj(d);
          ref[g] = d * d * d * xg[g];
        }
        expect_apply(HHH, mode, x, y, ref, tol, "host-applied H H H");
      }
      CHECK_OK(sl_dottest(HHH, 9, &dot));
      CHECK(dot < 10 * tol, "%s: dot test of the host-applied H H H: %.3e", sl_dtype_name(dt), dot);
      if (!cplx) check_cg(HH, "the host-applied H H", x, y, 60);
      sl_op_destroy(&HHH);
      sl_op_destroy(&HH);
      sl_op_destroy(&H);
    }

    /* the context goes at the last reference: S and P still hold D */
    sl_op_destroy(&D);
    CHECK(ctx.destroyed == 0, "%s: ctx_destroy ran while composites hold the operator", sl_dtype_name(dt));
    sl_op_destroy(&S);
    sl_op_destroy(&P);
    CHECK(ctx.destroyed == 1, "%s: ctx_destroy ran %d times at the last reference", sl_dtype_name(dt), ctx.destroyed);
    CHECK(sl_op_shell_context(Id) == NULL, "sl_op_shell_context of a library operator is NULL");
    sl_op_destroy(&Id);
    free(ref);
    free(xg);
    sl_array_destroy(&x);
    sl_array_destroy(&y);
  }

  /* errors, the same on every rank; a failed call leaves the ctx to the caller */
  {
    sl_array *x = mc_array(1, &n, SL_FLOAT64, NULL, 1, NULL);
    diag_ctx ctx = {SL_FLOAT64, 0};
    sl_op *D = NULL;
    int rc = sl_op_shell(&D, "bad", x, x, NULL, NULL, &ctx, ctx_destroy);
    CHECK(mc_same_error_everywhere(rc, SL_E_INVALID), "a NULL forward function: %s", sl_last_error());
    rc = sl_op_shell(&D, "bad", x, sl_rank() == sl_size() - 1 ? NULL : x, diag_apply, NULL, &ctx, ctx_destroy);
    CHECK(mc_same_error_everywhere(rc, SL_E_INVALID), "a NULL range_like on one rank: %s", sl_last_error());
    if (sl_size() > 1) {
      rc = sl_op_shell(&D, "bad", x, x, diag_apply, sl_rank() == 0 ? diag_apply : NULL, &ctx, ctx_destroy);
      CHECK(rc != SL_SUCCESS && mc_same_error_everywhere(rc, rc), "the adjoint given on rank 0 only: %d (%s)", rc, sl_last_error());
      rc = sl_op_shell(&D, sl_rank() == 0 ? "bad" : "other", x, x, diag_apply, diag_apply, &ctx, ctx_destroy);
      CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 2 (name) differs between ranks"),
            "a name differing between ranks: %s", sl_last_error());
    }
    CHECK(D == NULL && ctx.destroyed == 0, "failed calls made no operator and kept the ctx");
    CHECK(sl_codelet_init(&diag_cl, &diag_model, "none", NULL, NULL) == SL_E_INVALID, "a codelet without functions is refused");
    CHECK(sl_task_submit(&diag_cl, NULL, 8, 0, NULL, NULL, 0) == SL_E_INVALID, "a NULL arg with a size is refused");
    sl_array_destroy(&x);
  }
  return mc_finish("mpi_shell");
}
