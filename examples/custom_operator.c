/* custom_operator: a user-written operator inside a starlops solve. Conv1D convolves an N-D array with a
 * small filter along one axis ("same" size, zeros beyond the edges), with a CPU loop and a CUDA kernel
 * (custom_operator_cuda.cu) run as StarPU tasks on the array's chunks, through the shell operator of
 * include/starlops_ext.h. The example builds A = Conv1D(axis 2) Conv1D(axis 1) on a 3-D float64 array split
 * over the ranks along axis 0, checks each part against a dense Toeplitz matrix built from the filter
 * (applied to the gathered array), runs the dot test, then solves A x = y with CGLS and checks the model.
 *   mpirun -n 2 ./custom_operator [--dims N0,N1,N2] [--niter K] [--quiet]
 * Exits non-zero if a check fails. docs/operators.md, "Writing your own operator", walks through it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "starlops_ext.h"
#include "example_util.h"
#include "custom_operator.h"

/* ---- the operator: its context, its codelet, its apply ---------------------------------------------- */
typedef struct {
  int axis, ntaps, center;
  double f[CONV_MAX_TAPS];
} conv_ctx;

static void conv_cpu(void *buffers[], void *arg)
{
  const conv_task *t = arg;
  double *y = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
  conv_inputs x;
  for (int q = 0; q < t->nseg; q++) x.p[q] = (const double *)STARPU_VECTOR_GET_PTR(buffers[1 + q]);
  for (int64_t i = t->s; i < t->e; i++) y[i - t->s] = conv_value(t, &x, i);
}

#ifdef SL_HAVE_CUDA
static void conv_cuda(void *buffers[], void *arg)
{
  const conv_task *t = arg;
  conv_inputs x;
  for (int q = 0; q < t->nseg; q++) x.p[q] = (const double *)STARPU_VECTOR_GET_PTR(buffers[1 + q]);
  conv_cuda_launch(t, x, (double *)STARPU_VECTOR_GET_PTR(buffers[0]), starpu_cuda_get_local_stream());
}
#else
#define conv_cuda NULL
#endif

static struct starpu_codelet conv_cl;
static struct starpu_perfmodel conv_model;

/* One task per chunk of y, reading the chunks of x its output needs. */
static int conv_apply(void *ctx, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  const conv_ctx *c = ctx;
  const int64_t *ld = sl_array_local_dims(y);
  int64_t stride = 1;
  for (int d = c->axis + 1; d < sl_array_ndim(y); d++) stride *= ld[d];
  int64_t reach = (int64_t)(c->center > c->ntaps - 1 - c->center ? c->center : c->ntaps - 1 - c->center) * stride;
  int64_t nloc = sl_array_local_size(y);
  conv_task t = {.n = ld[c->axis], .stride = stride, .ntaps = c->ntaps, .center = c->center, .sign = mode == SL_FORWARD ? 1 : -1};
  memcpy(t.f, c->f, sizeof t.f);
  for (int k = 0; k < sl_array_nchunks(y); k++) {
    int64_t count = 0;
    int rc = sl_array_chunk_extent(y, k, &t.s, &count);
    if (rc != SL_SUCCESS) return rc;
    t.e = t.s + count;
    int first = sl_array_chunk_of(x, t.s - reach > 0 ? t.s - reach : 0);
    int last = sl_array_chunk_of(x, t.e + reach < nloc ? t.e + reach - 1 : nloc - 1);
    t.nseg = last - first + 1;
    if (t.nseg > CONV_MAX_SEGS)
      return sl_error_set(SL_E_INVALID, "Conv1D: a task would read %d chunks (at most %d): use larger chunks "
                          "(STARLOPS_CHUNK_BYTES) or a shorter filter", t.nseg, CONV_MAX_SEGS);
    starpu_data_handle_t h[1 + CONV_MAX_SEGS] = {sl_array_chunk(y, k)};
    enum starpu_data_access_mode m[1 + CONV_MAX_SEGS] = {STARPU_W};
    for (int q = 0; q < t.nseg; q++) {
      h[1 + q] = sl_array_chunk(x, first + q);
      m[1 + q] = STARPU_R;
      if ((rc = sl_array_chunk_extent(x, first + q, &t.seg_start[q], NULL)) != SL_SUCCESS) return rc;
    }
    if ((rc = sl_array_chunk_extent(x, last + 1, &t.seg_start[t.nseg], NULL)) != SL_SUCCESS) return rc;
    rc = sl_task_submit(&conv_cl, &t, sizeof t, 1 + t.nseg, h, m, 2.0 * (double)count * c->ntaps);
    if (rc != SL_SUCCESS) return rc;
  }
  return SL_SUCCESS;
}

/* Collective. Conv1D along axis of arrays laid out like `like` (float64; the axis must not be split
 * over ranks), filter f of ntaps taps centred on tap ntaps / 2. */
static int conv1d(sl_op **op, const sl_array *like, int axis, int ntaps, const double *f)
{
  int split = sl_array_partition(like) == SL_SCATTER && sl_array_axis(like) == axis && sl_size() > 1;
  int rc = sl_array_dtype(like) != SL_FLOAT64 ? sl_error_set(SL_E_DTYPE, "Conv1D: this example is written for float64")
           : axis < 0 || axis >= sl_array_ndim(like) ? sl_error_set(SL_E_INVALID, "Conv1D: axis %d is not an axis", axis)
           : split ? sl_error_set(SL_E_DIST, "Conv1D: axis %d is split over the ranks; convolve along another one", axis)
           : ntaps < 1 || ntaps > CONV_MAX_TAPS ? sl_error_set(SL_E_INVALID, "Conv1D: 1 to %d taps", CONV_MAX_TAPS)
                                                : SL_SUCCESS;
  if (rc != SL_SUCCESS) return rc; /* every rank sees the same layout and arguments here */
  conv_ctx *c = calloc(1, sizeof *c);
  if (!c) return sl_error_set(SL_E_NOMEM, "Conv1D: out of memory");
  *c = (conv_ctx){.axis = axis, .ntaps = ntaps, .center = ntaps / 2};
  memcpy(c->f, f, sizeof(double) * (size_t)ntaps);
  char name[64];
  snprintf(name, sizeof name, "Conv1D(axis %d, %d taps)", axis, ntaps);
  rc = sl_op_shell(op, name, like, like, conv_apply, conv_apply, c, free);
  if (rc != SL_SUCCESS) free(c); /* a failed call leaves the context to us */
  return rc;
}

/* ---- the checks --------------------------------------------------------------------------------------- */
/* max |A x - T x| / max |T x| (mode SL_FORWARD; T^T for SL_ADJOINT) with T the dense Toeplitz matrix of the
 * filter applied along axis of the gathered x (dims d) */
static double dense_check(sl_op *A, sl_op_mode mode, sl_array *x, sl_array *y, const int64_t *d, int axis, int ntaps,
                          const double *f)
{
  int64_t n = d[0] * d[1] * d[2], na = d[axis], stride = 1;
  for (int k = axis + 1; k < 3; k++) stride *= d[k];
  double *xg = malloc(sizeof *xg * (size_t)n), *yg = malloc(sizeof *yg * (size_t)n), *T = calloc((size_t)(na * na), sizeof *T);
  double err = INFINITY;
  if (xg && yg && T && sl_op_apply(A, mode, x, y) == SL_SUCCESS && sl_array_gather(x, -1, xg) == SL_SUCCESS &&
      sl_array_gather(y, -1, yg) == SL_SUCCESS) {
    for (int64_t r = 0; r < na; r++) /* T[r][r + k - center] = f[k] */
      for (int k = 0; k < ntaps; k++)
        if (r + k - ntaps / 2 >= 0 && r + k - ntaps / 2 < na) T[r * na + r + k - ntaps / 2] = f[k];
    double e = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t r = (i / stride) % na, base = i - r * stride;
      double ref = 0;
      for (int64_t c = 0; c < na; c++) ref += (mode == SL_FORWARD ? T[r * na + c] : T[c * na + r]) * xg[base + c * stride];
      e = fmax(e, fabs(yg[i] - ref));
      m = fmax(m, fabs(ref));
    }
    err = e / m;
  }
  free(xg);
  free(yg);
  free(T);
  return err;
}

int main(int argc, char **argv)
{
  int64_t d[3] = {37, 24, 29};
  int niter = 100, quiet = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dims") && i + 1 < argc) {
      if (sscanf(argv[++i], "%ld,%ld,%ld", &d[0], &d[1], &d[2]) != 3) return 2;
    } else if (!strcmp(argv[i], "--niter") && i + 1 < argc) niter = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--quiet")) quiet = 1;
    else {
      printf("usage: custom_operator [--dims N0,N1,N2] [--niter K] [--quiet]\n");
      return 2;
    }
  }
  TRY(sl_init(&argc, &argv, NULL));
  TRY(sl_codelet_init(&conv_cl, &conv_model, "example_conv1d", conv_cpu, conv_cuda));
  int fails = 0;
  {
    sl_array *x = NULL, *y = NULL, *xt = NULL;
    TRY(sl_array_create(&x, 3, d, SL_FLOAT64, NULL)); /* split along axis 0 */
    TRY(sl_array_create_like(&y, x));
    TRY(sl_array_create_like(&xt, x));
    const double f2[3] = {-0.2, 1.0, 0.3}, f1[5] = {0.05, -0.1, 1.0, 0.2, -0.05};
    sl_op *C2 = NULL, *C1 = NULL, *A = NULL;
    TRY(conv1d(&C2, x, 2, 3, f2));
    TRY(conv1d(&C1, x, 1, 5, f1));
    TRY(sl_op_product(&A, C2, C1));
    TRY(sl_array_fill_random(xt, 11));

    double e2 = 0, e1 = 0;
    for (int mode = 0; mode < 2; mode++) {
      e2 = fmax(e2, dense_check(C2, (sl_op_mode)mode, xt, y, d, 2, 3, f2));
      e1 = fmax(e1, dense_check(C1, (sl_op_mode)mode, xt, y, d, 1, 5, f1));
    }
    double dt[3] = {1, 1, 1};
    TRY(sl_dottest(C2, 4, &dt[0]));
    TRY(sl_dottest(C1, 2, &dt[1]));
    TRY(sl_dottest(A, 3, &dt[2]));
    if (sl_rank() == 0 && !quiet)
      printf("custom_operator: %s on %lld x %lld x %lld float64, %d ranks, %d chunk(s) on rank 0\n"
             "  forward and adjoint against the dense Toeplitz matrix: axis 2 %.2e, axis 1 %.2e\n"
             "  dot tests: %.2e, %.2e, %.2e\n", sl_op_name(A), (long long)d[0], (long long)d[1], (long long)d[2],
             sl_size(), sl_array_nchunks(x), e2, e1, dt[0], dt[1], dt[2]);
    fails += !(e2 < 1e-14 && e1 < 1e-14);
    fails += !(dt[0] < 1e-12 && dt[1] < 1e-12 && dt[2] < 1e-12);

    /* CGLS on A x = y from y = A xt */
    TRY(sl_op_apply(A, SL_FORWARD, xt, y));
    sl_solver_options o;
    sl_solver_options_default(&o);
    o.niter = niter;
    o.tol = 1e-12;
    o.show = !quiet;
    sl_solver_info info;
    TRY(sl_solve_cgls(A, y, x, &o, &info));
    sl_scalar *s1 = NULL, *s2 = NULL;
    double en = 0, xn = 1;
    TRY(sl_scalar_create(&s1, SL_FLOAT64));
    TRY(sl_scalar_create(&s2, SL_FLOAT64));
    TRY(sl_array_norm(xt, 2, s2));
    TRY(sl_array_axpby(x, SL_REAL(-1), xt, SL_REAL(1)));
    TRY(sl_array_norm(x, 2, s1));
    TRY(sl_scalar_get(s1, &en));
    TRY(sl_scalar_get(s2, &xn));
    if (sl_rank() == 0)
      printf("custom_operator: CGLS stopped after %d iterations (%s), |x - x_true| / |x_true| = %.2e\n", info.iterations,
             sl_stop_reason_name(info.stop), en / xn);
    fails += !(en / xn < 1e-8);
    sl_scalar_destroy(&s1);
    sl_scalar_destroy(&s2);
    sl_op_destroy(&A);
    sl_op_destroy(&C1);
    sl_op_destroy(&C2);
    sl_array_destroy(&x);
    sl_array_destroy(&y);
    sl_array_destroy(&xt);
  }
  if (sl_rank() == 0) printf("custom_operator: %s\n", fails ? "FAILED" : "all checks passed");
  TRY(sl_finalize());
  return fails ? 1 : 0;
}
