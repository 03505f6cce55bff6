/* FirstDerivative, SecondDerivative and the fused Laplacian: finite-difference stencils along any axes of
 * an N-D array, the distributed one included (its two boundary planes on each side come from the
 * neighbours through the comm layer; the interior tasks do not wait for them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"
#include "codelets/kernel_stencil.h"

#define ST_GHOST 2 /* planes exchanged on each side: the widest reach of every stencil, edges included */

static int has_ghosts(const st_plan *p)
{
  for (int k = 0; k < p->nterms; k++)
    if (p->t[k].ghosts) return 1;
  return 0;
}

/* Whether output elements [s, e) touch the first or last ST_GHOST rows of the distributed axis. */
static void ghost_needs(const st_plan *p, int64_t s, int64_t e, int *lo, int *hi)
{
  *lo = *hi = 0;
  for (int k = 0; k < p->nterms; k++) {
    const st_term *t = &p->t[k];
    if (!t->ghosts || t->nloc == 0) continue;
    int64_t period = t->stride * t->nloc, rs = (s / t->stride) % t->nloc, re = ((e - 1) / t->stride) % t->nloc;
    int wrap = e - s >= period || s / period != (e - 1) / period;
    *lo |= wrap || rs < ST_GHOST;
    *hi |= wrap || re >= t->nloc - ST_GHOST;
  }
}

/* The input chunks a task writing output elements [s, e) reads, in increasing order: those meeting [s, e) or
 * [s, e) moved by -2, -1, +1, +2 rows of any term (clipped to the block). Moved ranges as long as one chunk meet
 * at most two chunks (their lengths differ by at most one), so at most 1 + 8 nterms <= ST_MAX_SEGS; `mark` has
 * nc entries, zero on entry and on return. */
static int needed_chunks(const st_plan *p, const int64_t *start, int nc, int64_t s, int64_t e, char *mark, int *list)
{
  int64_t n = start[nc];
  for (int k = -1; k < p->nterms; k++)
    for (int dr = -2; dr <= 2; dr++) {
      if ((k < 0) != (dr == 0)) continue; /* the range itself once, then the moved copies */
      int64_t sh = k < 0 ? 0 : dr * p->t[k].stride, lo = s + sh, hi = e + sh;
      if (lo < 0) lo = 0;
      if (hi > n) hi = n;
      if (lo >= hi) continue;
      int a = 0, b = nc - 1; /* the chunk holding lo */
      while (a < b) {
        int m = (a + b + 1) / 2;
        if (start[m] <= lo) a = m;
        else b = m - 1;
      }
      for (int c = a; c < nc && start[c] < hi; c++) mark[c] = 1;
    }
  int cnt = 0;
  for (int c = 0; c < nc; c++)
    if (mark[c]) {
      mark[c] = 0;
      if (cnt < ST_MAX_SEGS) list[cnt] = c;
      cnt++;
    }
  return cnt;
}

/* The plan and the ghost planes along the distributed axis (buffers allocated where first written). */
typedef struct {
  st_plan plan;
  starpu_data_handle_t ghost[2];
} stencil_t;

static void stencil_free(void *q)
{
  stencil_t *c = q;
  for (int s = 0; s < 2; s++)
    if (c->ghost[s]) starpu_data_unregister(c->ghost[s]);
  free(c);
}

/* The operator's plan for one apply in mode, with the run's settings for the CUDA kernel. */
static st_plan mode_plan(const sl_op *op, sl_op_mode mode)
{
  st_plan p = ((const stencil_t *)op->data)->plan;
  p.adjoint = mode == SL_ADJOINT;
  p.generic = sl_ctx.set.stencil_generic;
  p.edge_serial = sl_ctx.set.stencil_edge_serial;
  p.zmarch = sl_ctx.set.stencil_zplanes;
  p.zby = sl_ctx.set.stencil_zrows;
  return p;
}

static int stencil_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  stencil_t *ctx = op->data;
  st_plan p = mode_plan(op, mode);
  if (has_ghosts(&p)) SL_TRY(sl_array_ghost_fill(x, (int[2]){ST_GHOST, ST_GHOST}, ctx->ghost));
  int nc = y->nchunks;
  if (nc == 0) return SL_SUCCESS;
  int64_t *start = malloc(sizeof *start * (size_t)(nc + 1));
  char *mark = calloc((size_t)nc, 1);
  if (!start || !mark) {
    free(start);
    free(mark);
    return sl_error(SL_E_NOMEM, "%s: out of memory", op->name);
  }
  start[0] = 0;
  for (int c = 0; c < nc; c++) start[c + 1] = start[c] + (int64_t)starpu_vector_get_nx(sl_array_chunk(y, c));
  /* STARLOPS_STENCIL_NO_OVERLAP=1 makes every task wait for the ghost planes: the benchmark's reference for
   * how much of the exchange the interior tasks hide */
  int serial = sl_ctx.set.stencil_no_overlap && has_ghosts(&p);
  int rc = SL_SUCCESS;
  for (int c = 0; c < nc && rc == SL_SUCCESS; c++) {
    int64_t s = start[c], e = start[c + 1], seg_start[ST_MAX_SEGS];
    int list[ST_MAX_SEGS];
    starpu_data_handle_t hx[ST_MAX_SEGS];
    int nin = needed_chunks(&p, start, nc, s, e, mark, list);
    if (nin > ST_MAX_SEGS) {
      rc = sl_error(SL_E_RUNTIME, "%s: a task would read %d chunks (at most %d)", op->name, nin, ST_MAX_SEGS);
      break;
    }
    for (int i = 0; i < nin; i++) {
      hx[i] = sl_array_chunk(x, list[i]);
      seg_start[i] = start[list[i]];
    }
    int lo = 0, hi = 0;
    ghost_needs(&p, s, e, &lo, &hi);
    if (serial) lo = hi = 1;
    sl_trace_block(0, c);
    rc = codelet_stencil_submit(&p, op->dtype, lo ? ctx->ghost[0] : NULL, hi ? ctx->ghost[1] : NULL, nin, hx,
                                seg_start, sl_array_chunk(y, c), s, e);
  }
  free(start);
  free(mark);
  return rc;
}

/* t = first x, y = second t as one task when both are stencils without ghost terms and x, t, y are one chunk
 * each (distinct): the case of a product such as L^H L on a GPU node, one chunk per block */
static const sl_op_ops stencil_ops;
static int stencil_pair(sl_op *first, sl_op_mode m1, sl_op *second, sl_op_mode m2, const sl_array *x, sl_array *t,
                        sl_array *y)
{
  if (second->ops != &stencil_ops || first->dtype != second->dtype || x->nchunks != 1 || t->nchunks != 1 ||
      y->nchunks != 1 || sl_array_chunk(x, 0) == sl_array_chunk(y, 0))
    return SL_OP_DECLINED;
  st_plan p[2] = {mode_plan(first, m1), mode_plan(second, m2)};
  if (has_ghosts(&p[0]) || has_ghosts(&p[1])) return SL_OP_DECLINED;
  int64_t n = (int64_t)starpu_vector_get_nx(sl_array_chunk(y, 0));
  return codelet_stencil_pair_submit(&p[0], &p[1], first->dtype, sl_array_chunk(x, 0), sl_array_chunk(t, 0),
                                     sl_array_chunk(y, 0), n);
}
static const sl_op_ops stencil_ops = {stencil_apply, NULL, stencil_free, stencil_pair};

/* One term of the plan: the stencil kind along axis of arrays laid out like `like`. */
static void add_term(st_plan *p, const sl_array *like, int axis, int kind, int edge, double scale)
{
  st_term *t = &p->t[p->nterms++];
  int dist = like->partition == SL_SCATTER && axis == like->axis && like->group->size > 1;
  int64_t stride = 1;
  for (int d = axis + 1; d < like->ndim; d++) stride *= like->ldims[d];
  *t = (st_term){.kind = kind, .edge = edge, .axis = axis, .ghosts = dist, .n = like->dims[axis],
                 .off = dist ? like->offset : 0, .nloc = like->ldims[axis], .stride = stride, .scale = scale};
}

static int check_like(const char *fn, const sl_array *like)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(like != NULL, SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  SL_TRY(sl_array_check_session(fn, like, "argument 2 (like)"));
  return SL_SUCCESS;
}

static int check_axis(const char *fn, const sl_array *like, int argn, int *axis)
{
  int a = *axis < 0 ? *axis + like->ndim : *axis;
  SL_CHECK_ARG(a >= 0 && a < like->ndim, SL_E_INVALID, "%s: argument %d (axis) is %d, the array has %d dims", fn, argn,
               *axis, like->ndim);
  *axis = a;
  return SL_SUCCESS;
}

static int check_sampling(const char *fn, int argn, double d)
{
  SL_CHECK_ARG(d > 0 && isfinite(d), SL_E_INVALID, "%s: argument %d (sampling) must be finite and > 0, got %g", fn, argn, d);
  return SL_SUCCESS;
}

int sl_deriv_kind_check(const char *fn, int argn, sl_deriv_kind kind)
{
  SL_CHECK_ARG(kind == SL_DERIV_FORWARD || kind == SL_DERIV_BACKWARD || kind == SL_DERIV_CENTERED, SL_E_INVALID,
               "%s: argument %d (kind) must be SL_DERIV_FORWARD, SL_DERIV_BACKWARD or SL_DERIV_CENTERED", fn, argn);
  return SL_SUCCESS;
}

static int second_kind(sl_deriv_kind kind)
{
  return kind == SL_DERIV_FORWARD ? ST_D2_FWD : (kind == SL_DERIV_BACKWARD ? ST_D2_BWD : ST_D2_C);
}

static const char *kind_name(sl_deriv_kind kind)
{
  return kind == SL_DERIV_FORWARD ? "forward" : (kind == SL_DERIV_BACKWARD ? "backward" : "centered");
}

/* A stencil operator from its plan: domain and range like `like`, ghost planes for the distributed axis. */
static int make(sl_op **out, const char *name, const sl_array *like, const st_plan *plan)
{
  int rc = SL_SUCCESS;
  stencil_t *c = calloc(1, sizeof *c);
  sl_op *o = NULL;
  if (!c) rc = sl_error(SL_E_NOMEM, "%s: out of memory", name);
  else {
    st_plan *p = &c->plan;
    *p = *plan;
    p->ndim = like->ndim;
    p->ncomp = sl_dtype_is_complex(like->dtype) ? 2 : 1;
    p->wlo = p->whi = ST_GHOST;
    for (int d = 0; d < like->ndim; d++) p->ldims[d] = like->ldims[d];
    if (has_ghosts(p) && like->outer * like->inner > 0)
      for (int s = 0; s < 2; s++)
        starpu_vector_data_register(&c->ghost[s], -1, 0, (uint32_t)(like->outer * ST_GHOST * like->inner), like->elsize);
    rc = sl_op_new(&o, name, like, like, &stencil_ops, c);
  }
  return sl_op_finish(out, o, rc);
}

static int first_check(const char *fn, sl_op **op, const sl_array *like, int *axis, double sampling,
                       sl_deriv_kind kind, int order)
{
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  SL_TRY(check_like(fn, like));
  SL_TRY(check_axis(fn, like, 3, axis));
  SL_TRY(check_sampling(fn, 4, sampling));
  SL_TRY(sl_deriv_kind_check(fn, 5, kind));
  SL_CHECK_ARG(kind != SL_DERIV_CENTERED || order == 3 || order == 5, SL_E_INVALID,
               "%s: argument 6 (order) must be 3 or 5 for a centered derivative, got %d", fn, order);
  return SL_SUCCESS;
}

int sl_op_first_derivative(sl_op **op, const sl_array *like, int axis, double sampling, sl_deriv_kind kind, int order,
                           int edge)
{
  const char *fn = "sl_op_first_derivative";
  SL_CHECK_INIT();
  int rc = first_check(fn, op, like, &axis, sampling, kind, order);
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 3 (axis)", axis), sl_same_d("argument 4 (sampling)", sampling),
                  SL_SAME_I("argument 5 (kind)", kind), SL_SAME_I("argument 6 (order)", kind == SL_DERIV_CENTERED ? order : 0),
                  SL_SAME_I("argument 7 (edge)", edge != 0)));
  st_plan p;
  memset(&p, 0, sizeof p);
  int k = kind == SL_DERIV_FORWARD ? ST_D1_FWD : (kind == SL_DERIV_BACKWARD ? ST_D1_BWD : (order == 3 ? ST_D1_C3 : ST_D1_C5));
  add_term(&p, like, axis, k, edge != 0, 1.0 / sampling);
  char name[96];
  if (kind == SL_DERIV_CENTERED)
    snprintf(name, sizeof name, "FirstDerivative(axis %d, centered %d%s)", axis, order, edge ? ", edge" : "");
  else snprintf(name, sizeof name, "FirstDerivative(axis %d, %s)", axis, kind_name(kind));
  return make(op, name, like, &p);
}

int sl_op_second_derivative(sl_op **op, const sl_array *like, int axis, double sampling, sl_deriv_kind kind, int edge)
{
  const char *fn = "sl_op_second_derivative";
  SL_CHECK_INIT();
  int rc = first_check(fn, op, like, &axis, sampling, kind, 3);
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 3 (axis)", axis), sl_same_d("argument 4 (sampling)", sampling),
                  SL_SAME_I("argument 5 (kind)", kind), SL_SAME_I("argument 6 (edge)", edge != 0)));
  st_plan p;
  memset(&p, 0, sizeof p);
  add_term(&p, like, axis, second_kind(kind), edge != 0, 1.0 / (sampling * sampling));
  char name[96];
  snprintf(name, sizeof name, "SecondDerivative(axis %d, %s%s)", axis, kind_name(kind), edge ? ", edge" : "");
  return make(op, name, like, &p);
}

/* The Laplacian's terms from its arguments, its name so far in name[0..*len). */
static int laplacian_terms(const char *fn, sl_op **op, const sl_array *like, int naxes, const int *axes,
                           const double *weights, const double *sampling, sl_deriv_kind kind, int edge, st_plan *p,
                           char *name, int *len)
{
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  SL_TRY(check_like(fn, like));
  SL_CHECK_ARG(naxes >= 1 && naxes <= like->ndim && naxes <= ST_MAX_TERMS, SL_E_INVALID,
               "%s: argument 3 (naxes) must be 1 to %d, got %d", fn, like->ndim, naxes);
  SL_TRY(sl_deriv_kind_check(fn, 7, kind));
  for (int i = 0; i < naxes; i++) {
    int a = axes ? axes[i] : i;
    SL_TRY(check_axis(fn, like, 4, &a));
    for (int j = 0; j < p->nterms; j++)
      SL_CHECK_ARG(p->t[j].axis != a, SL_E_INVALID, "%s: argument 4 (axes) names axis %d twice", fn, a);
    double w = weights ? weights[i] : 1.0, d = sampling ? sampling[i] : 1.0;
    SL_CHECK_ARG(isfinite(w), SL_E_INVALID, "%s: argument 5 (weights) has a non-finite entry %d", fn, i);
    SL_TRY(check_sampling(fn, 6, d));
    add_term(p, like, a, second_kind(kind), edge != 0, w / (d * d));
    *len += snprintf(name + *len, 160 - (size_t)*len, " %d", a);
  }
  return SL_SUCCESS;
}

int sl_op_laplacian(sl_op **op, const sl_array *like, int naxes, const int *axes, const double *weights,
                    const double *sampling, sl_deriv_kind kind, int edge)
{
  const char *fn = "sl_op_laplacian";
  SL_CHECK_INIT();
  st_plan p;
  memset(&p, 0, sizeof p);
  char name[160];
  int len = snprintf(name, sizeof name, "Laplacian(axes");
  int rc = laplacian_terms(fn, op, like, naxes, axes, weights, sampling, kind, edge, &p, name, &len);
  /* what must match: the terms (axis and coefficient each), the kind and the edge rule */
  sl_same same[2 * ST_MAX_TERMS + 4];
  int ns = 0; /* as many values on every rank: unused terms are zeros */
  same[ns++] = SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like);
  same[ns++] = SL_SAME_I("argument 3 (naxes)", naxes);
  same[ns++] = SL_SAME_I("argument 7 (kind)", kind);
  same[ns++] = SL_SAME_I("argument 8 (edge)", edge != 0);
  for (int i = 0; i < ST_MAX_TERMS; i++) {
    int used = rc == SL_SUCCESS && i < p.nterms;
    same[ns++] = SL_SAME_I("argument 4 (axes)", used ? p.t[i].axis : -1);
    same[ns++] = sl_same_d("arguments 5-6 (weights, sampling)", used ? p.t[i].scale : 0.0);
  }
  SL_TRY(sl_agree_same(sl_ctx.comm, fn, rc, ns, same));
  snprintf(name + len, sizeof name - (size_t)len, ", %s%s)", kind_name(kind), edge ? ", edge" : "");
  return make(op, name, like, &p);
}
