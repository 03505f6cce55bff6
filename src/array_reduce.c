/* Reductions: a partial per chunk, one combine task into the sl_scalar (one chunk: its task writes the
 * scalar), then (scatter arrays on more than one rank) an allreduce of the scalar through the comm layer
 * and the root of a p-norm. Nothing waits on the host. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"

/* Whether the scalar of a one-chunk reduction of x should be written in main memory (codelet_reduce_submit's
 * host): it is, unless a GPU reads it next, as an allreduce of x's group through NCCL or CUDA-aware MPI does and
 * the solvers' steps do with every compute codelet on the GPU (steps). Partials of several chunks always are (a
 * CPU task combines them). */
static int result_on_host(const sl_array *x, int steps)
{
  int collective = x->partition == SL_SCATTER && x->group->size > 1;
  if (collective && comm_backend_get() != COMM_BACKEND_MPI) return 0;
  return !(steps && sl_ctx.where == STARPU_CUDA);
}

static int reduce(const char *fn, sl_red_kind k, double p, double root_p, const sl_array *x, const sl_array *y,
                  sl_scalar *s, sl_dtype result)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(x != NULL, SL_E_INVALID, "%s: argument 1 (x) is NULL", fn);
  SL_CHECK_ARG(s != NULL, SL_E_INVALID, "%s: the result scalar is NULL", fn);
  SL_CHECK_ARG(!x->acquired, SL_E_STATE, "%s: argument 1 (x) is acquired by the host; release it first", fn);
  if (y) SL_TRY(sl_array_check_same(x, "argument 1 (x)", y, "argument 2 (y)"));
  if (x->nparts) return sl_stack_reduce(k, p, root_p, x, y, s, result);
  int collective = x->partition == SL_SCATTER && x->group->size > 1;
  if (x->nchunks == 1) { /* one chunk: its task writes the scalar (and takes the root unless allreduced) */
    sl_trace_block(0, 0);
    SL_TRY(codelet_reduce_submit(x->dtype, k, p, collective ? 0.0 : root_p, sl_array_chunk(x, 0),
                                 y ? sl_array_chunk(y, 0) : NULL, s->handle, result_on_host(x, 0)));
  } else {
    for (int c = 0; c < x->nchunks; c++) {
      sl_trace_block(0, c);
      SL_TRY(codelet_reduce_submit(x->dtype, k, p, 0.0, sl_array_chunk(x, c), y ? sl_array_chunk(y, c) : NULL,
                                   x->partials[c], 1));
    }
    SL_TRY(codelet_combine_submit(k, collective ? 0.0 : root_p, x->nchunks, x->partials, s->handle));
  }
  if (collective) {
    comm_op op = k == SL_RED_MAXABS ? COMM_MAX : (k == SL_RED_MINABS ? COMM_MIN : COMM_SUM);
    SL_TRY(comm_allreduce(x->group->channel, SL_FLOAT64, op, s->handle));
    SL_TRY(codelet_root_submit(root_p, s->handle));
  }
  s->dtype = result;
  return SL_SUCCESS;
}

/* The parts' reductions (no root) into the stack's scalars, then one scalar task combines them. */
struct stack_comb {
  int k, n;
  double root_p;
};

static void stack_combine(double *const *v, const void *arg)
{
  const struct stack_comb *c = arg;
  double acc[2];
  sl_red_identity((sl_red_kind)c->k, acc);
  for (int i = 1; i <= c->n; i++) sl_red_combine((sl_red_kind)c->k, acc, v[i]);
  if (c->root_p == 2.0) acc[0] = sqrt(acc[0]);
  else if (c->root_p != 0.0 && c->root_p != 1.0) acc[0] = pow(acc[0], 1.0 / c->root_p);
  v[0][0] = acc[0];
  v[0][1] = acc[1];
}

int sl_stack_reduce(int kind, double p, double root_p, const sl_array *x, const sl_array *y, sl_scalar *s, sl_dtype result)
{
  int n = x->nparts;
  starpu_data_handle_t *h = malloc(sizeof *h * (size_t)(n + 1));
  enum starpu_data_access_mode *m = malloc(sizeof *m * (size_t)(n + 1));
  int rc = h && m ? SL_SUCCESS : sl_error(SL_E_NOMEM, "stacked reduction: out of memory");
  for (int i = 0; i < n && rc == SL_SUCCESS; i++) {
    rc = reduce("stacked reduction", (sl_red_kind)kind, p, 0.0, x->parts[i], y ? y->parts[i] : NULL, x->pscal[i], result);
    h[i + 1] = x->pscal[i]->handle;
    m[i + 1] = STARPU_R;
  }
  if (rc == SL_SUCCESS) {
    h[0] = s->handle;
    m[0] = STARPU_W;
    struct stack_comb c = {kind, n, root_p};
    rc = sl_stask_submit(stack_combine, &c, sizeof c, n + 1, h, m);
  }
  free(h);
  free(m);
  if (rc == SL_SUCCESS) s->dtype = result;
  return rc;
}

/* The local checks of a public reduction (y: 1 when the call takes a second array). */
/* sarg: the position of the result scalar s among the call's arguments */
static int public_check(const char *fn, const sl_array *x, int two, const sl_array *y, const sl_scalar *s, int sarg)
{
  SL_CHECK_ARG(x != NULL, SL_E_INVALID, "%s: argument 1 (x) is NULL", fn);
  SL_CHECK_ARG(!two || y != NULL, SL_E_INVALID, "%s: argument 2 (y) is NULL", fn);
  SL_CHECK_ARG(s != NULL, SL_E_INVALID, "%s: argument %d (s), the result scalar, is NULL", fn, sarg);
  SL_TRY(sl_scalar_check_session(fn, s, sarg == 3 ? "argument 3 (s)" : "argument 2 (s)"));
  SL_TRY(sl_array_check_session(fn, x, "argument 1 (x)"));
  SL_CHECK_ARG(!x->acquired, SL_E_STATE, "%s: argument 1 (x) is acquired by the host; release it first", fn);
  SL_TRY(sl_array_check_data(fn, x, "argument 1 (x)"));
  if (two) SL_TRY(sl_array_check_same(x, "argument 1 (x)", y, "argument 2 (y)"));
  if (two) SL_TRY(sl_array_check_data(fn, y, "argument 2 (y)"));
  return SL_SUCCESS;
}

/* Public reductions are collective: the verdict is agreed before any task is submitted (a rank that refused
 * its arguments would leave the others waiting in the allreduce), and so is x's layout (another array on one
 * rank, a broadcast one say, would skip the allreduce there). */
#define XKEY(x) SL_SAME_KEY("argument 1 (x: its layout)", (x) ? sl_array_layout_key(SL_FNV1A_START, (x)) : 0)
int sl_array_dot(const sl_array *x, const sl_array *y, sl_scalar *s)
{
  SL_CHECK_INIT();
  SL_TRY(SL_AGREE("sl_array_dot", public_check("sl_array_dot", x, 1, y, s, 3), SL_SAME_I("the reduction called (dot, vdot, sum or norm)", 1), XKEY(x),
                  sl_same_d("argument 2 (ord)", 0)));
  return reduce("sl_array_dot", SL_RED_DOT, 0, 0, x, y, s, x->dtype);
}

int sl_array_vdot(const sl_array *x, const sl_array *y, sl_scalar *s)
{
  SL_CHECK_INIT();
  SL_TRY(SL_AGREE("sl_array_vdot", public_check("sl_array_vdot", x, 1, y, s, 3), SL_SAME_I("the reduction called (dot, vdot, sum or norm)", 2), XKEY(x),
                  sl_same_d("argument 2 (ord)", 0)));
  return reduce("sl_array_vdot", SL_RED_VDOT, 0, 0, x, y, s, x->dtype);
}

int sl_array_sum(const sl_array *x, sl_scalar *s)
{
  SL_CHECK_INIT();
  SL_TRY(SL_AGREE("sl_array_sum", public_check("sl_array_sum", x, 0, NULL, s, 2), SL_SAME_I("the reduction called (dot, vdot, sum or norm)", 3), XKEY(x),
                  sl_same_d("argument 2 (ord)", 0)));
  return reduce("sl_array_sum", SL_RED_SUM, 0, 0, x, NULL, s, x->dtype);
}

int sl_array_norm(const sl_array *x, double ord, sl_scalar *s)
{
  SL_CHECK_INIT();
  int rc = public_check("sl_array_norm", x, 0, NULL, s, 3);
  if (rc == SL_SUCCESS && !(!isnan(ord) && (ord >= 0 || ord == -INFINITY)))
    rc = sl_error(SL_E_INVALID, "sl_array_norm: argument 2 (ord) must be >= 0, INFINITY or -INFINITY, got %g", ord);
  SL_TRY(SL_AGREE("sl_array_norm", rc, SL_SAME_I("the reduction called (dot, vdot, sum or norm)", 4), XKEY(x), sl_same_d("argument 2 (ord)", ord)));
  return sl_array_norm_p(x, ord, s);
}

int sl_array_check_finite(const sl_array *x, const char *fn, const char *an)
{
  sl_scalar *s = NULL;
  int rc = sl_agree(sl_ctx.comm, sl_scalar_create(&s, x->dtype));
  sl_cscalar v = {0, 0};
  if (rc == SL_SUCCESS) rc = sl_array_norm_p(x, 1.0, s);
  if (rc == SL_SUCCESS) rc = sl_scalar_get_c(s, &v);
  sl_scalar_destroy(&s);
  if (rc == SL_SUCCESS && !isfinite(v.re))
    rc = sl_error(SL_E_NUMERIC, "%s: %s holds NaN or Inf, or values too large to sum (its 1-norm is %g)", fn, an, v.re);
  return sl_agree(sl_ctx.comm, rc);
}

int sl_array_norm_p(const sl_array *x, double ord, sl_scalar *s)
{
  sl_dtype rt = x ? sl_dtype_real(x->dtype) : SL_FLOAT64;
  if (ord == INFINITY) return reduce("sl_array_norm", SL_RED_MAXABS, 0, 0, x, NULL, s, rt);
  if (ord == -INFINITY) return reduce("sl_array_norm", SL_RED_MINABS, 0, 0, x, NULL, s, rt);
  if (ord == 0) return reduce("sl_array_norm", SL_RED_NNZ, 0, 0, x, NULL, s, rt);
  return reduce("sl_array_norm", SL_RED_ABSPOW, ord, ord, x, NULL, s, rt);
}

int sl_array_vdots_fused(int n, const sl_array *const *x, const sl_array *const *y, sl_scalar *const *s)
{
  SL_CHECK_ARG(n > 0 && n <= 8, SL_E_INVALID, "fused reductions: 1 to 8 at a time, not %d", n);
  for (int i = 0; i < n; i++) /* stacked arrays: reduced part by part (one allreduce per part) */
    if (x[i]->nparts) SL_TRY(sl_stack_reduce(y[i] ? SL_RED_VDOT : SL_RED_ABSPOW, 2.0, 0.0, x[i], y[i], s[i],
                                             y[i] ? x[i]->dtype : sl_dtype_real(x[i]->dtype)));
  for (int i = 0; i < n; i++) {
    if (x[i]->nparts) continue;
    sl_red_kind k = y[i] ? SL_RED_VDOT : SL_RED_ABSPOW;
    if (x[i]->nchunks == 1) { /* one chunk: its task writes the scalar */
      SL_TRY(codelet_reduce_submit(x[i]->dtype, k, 2.0, 0.0, sl_array_chunk(x[i], 0), y[i] ? sl_array_chunk(y[i], 0) : NULL,
                                   s[i]->handle, result_on_host(x[i], 1)));
    } else {
      for (int c = 0; c < x[i]->nchunks; c++)
        SL_TRY(codelet_reduce_submit(x[i]->dtype, k, 2.0, 0.0, sl_array_chunk(x[i], c),
                                     y[i] ? sl_array_chunk(y[i], c) : NULL, x[i]->partials[c], 1));
      SL_TRY(codelet_combine_submit(k, 0.0, x[i]->nchunks, x[i]->partials, s[i]->handle));
    }
    s[i]->dtype = y[i] ? x[i]->dtype : sl_dtype_real(x[i]->dtype);
  }
  /* One allreduce per group of the scattered arrays (usually one in all). */
  int done[8] = {0};
  for (int i = 0; i < n; i++) {
    if (done[i] || x[i]->nparts || x[i]->partition != SL_SCATTER || x[i]->group->size == 1) continue;
    starpu_data_handle_t h[8];
    int nh = 0;
    for (int j = i; j < n; j++)
      if (!done[j] && !x[j]->nparts && x[j]->partition == SL_SCATTER && x[j]->group == x[i]->group) {
        done[j] = 1;
        h[nh++] = s[j]->handle;
      }
    SL_TRY(comm_allreduce_n(x[i]->group->channel, SL_FLOAT64, COMM_SUM, nh, h));
  }
  return SL_SUCCESS;
}
