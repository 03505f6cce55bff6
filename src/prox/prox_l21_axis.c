/* L21 along an axis of a plain array: f(x) = sigma sum over the other indices of the 2-norm of the line along
 * `axis`. V = VStack of the restrictions to each plane along the axis is a permutation of the elements (V^H V
 * = I), so prox_f(x) = V^H prox_L21(V x) with L21 grouping the parts of the stacked V x, and the same for the
 * conjugate's prox and the value. One restriction task per plane each way: meant for short axes (the
 * components of a vector field). Along the distributed axis a line spans ranks: V then starts with a
 * redistribution R of the array along its longest other axis (a permutation too, two all-to-alls per prox),
 * after which every line is local: prox_f(x) = R^H V^H prox_L21(V R x). A 1-D array is one group, the whole
 * vector (distributed or not): f(x) = sigma ||x||_2, its prox the vector scaled by max(0, 1 - tau sigma /
 * ||x||) and its conjugate's prox the projection onto the ball of radius sigma, the factor computed by a
 * scalar task from the norm's reduction (nothing waits on the host). */
#include <math.h>
#include <stdlib.h>

#include "prox/prox_internal.h"

static int axis_check(const sl_prox *p, const sl_array *x, const char *an)
{
  return sl_array_check_same(x, an, sl_op_domain(p->op), "the layout L21 along an axis was made for");
}

/* t = V x in a scratch stacked array */
static int spread(sl_prox *p, const sl_array *x, sl_array **t)
{
  SL_TRY(prox_scratch(p, 0, sl_op_range(p->op), t));
  return sl_op_apply(p->op, SL_FORWARD, x, *t);
}

static int axis_prox(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  sl_array *t = NULL;
  SL_TRY(spread(p, x, &t));
  SL_TRY(prox_apply_p(p->f, tau, t, t));
  return sl_op_apply(p->op, SL_ADJOINT, t, y);
}

static int axis_dual(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  sl_array *t = NULL;
  SL_TRY(spread(p, x, &t));
  SL_TRY(prox_dual_p(p->f, tau, t, t));
  return sl_op_apply(p->op, SL_ADJOINT, t, y);
}

static int axis_value(sl_prox *p, const sl_array *x, sl_scalar *s)
{
  sl_array *t = NULL;
  SL_TRY(spread(p, x, &t));
  return prox_value_p(p->f, t, s);
}

static void axis_destroy(sl_prox *p) { sl_op_destroy(&p->op); }

static const sl_prox_ops axis_ops = {axis_prox, axis_dual, axis_value, NULL, NULL, axis_check, axis_destroy};

/* ---- one group: the whole of a 1-D array ----------------------------------------------------------- */
static int whole_check(const sl_prox *p, const sl_array *x, const char *an)
{
  return sl_array_check_same(x, an, p->layout, "the layout L21 along an axis was made for");
}

struct factor_args {
  double t;
  int ball; /* 0: shrink by max(0, 1 - t / s); 1: project onto the ball of radius t */
};

/* v[0] = (||x||, 0) -> the factor; a NaN norm gives a NaN factor (NaN in, NaN out) */
static void factor_fn(double *const *v, const void *arg)
{
  const struct factor_args *q = arg;
  double s = v[0][0], f;
  if (isnan(s)) f = s;
  else if (q->ball) f = s > q->t ? q->t / s : 1.0;
  else f = s > q->t ? 1.0 - q->t / s : 0.0;
  v[0][0] = f;
  v[0][1] = 0;
}

static int whole_scale(sl_prox *p, const sl_array *x, sl_array *y, double t, int ball)
{
  SL_TRY(sl_array_norm_p(x, 2.0, p->gs));
  struct factor_args q = {t, ball};
  SL_TRY(sl_stask_submit(factor_fn, &q, sizeof q, 1, &p->gs->handle, (enum starpu_data_access_mode[]){STARPU_RW}));
  if (y == x) return sl_array_scale_h(y, SL_REAL(1), p->gs->handle, 0);
  return sl_array_axpby_h(y, SL_REAL(1), p->gs->handle, 0, x, SL_REAL(0), NULL, 0);
}

static int whole_prox(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  double t;
  SL_TRY(prox_weighted_step(p, tau, &t));
  return whole_scale(p, x, y, t, 0);
}

static int whole_dual(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  (void)tau;
  return whole_scale(p, x, y, p->sigma, 1);
}

static int whole_value(sl_prox *p, const sl_array *x, sl_scalar *s)
{
  SL_TRY(sl_array_norm_p(x, 2.0, s));
  return prox_scalar_affine(s, p->sigma, 0, 0);
}

static void whole_destroy(sl_prox *p)
{
  sl_array_destroy(&p->layout);
  sl_scalar_destroy(&p->gs);
}

static const sl_prox_ops whole_ops = {whole_prox, whole_dual, whole_value, NULL, NULL, whole_check, whole_destroy};

static int whole_new(sl_prox **p, const sl_array *like, double sigma)
{
  sl_array *layout = NULL;
  sl_scalar *gs = NULL;
  sl_prox *q = NULL;
  int rc = sl_array_clone(&layout, like, SL_STORE_LAYOUT);
  if (rc == SL_SUCCESS) rc = sl_scalar_create(&gs, SL_FLOAT64);
  if (rc == SL_SUCCESS) rc = prox_new(&q, &whole_ops, "L21(axis 0, one group)");
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc != SL_SUCCESS) {
    free(q);
    sl_array_destroy(&layout);
    sl_scalar_destroy(&gs);
    return rc;
  }
  q->layout = layout;
  q->gs = gs;
  q->sigma = sigma;
  *p = q;
  return SL_SUCCESS;
}

int sl_prox_l21_axis(sl_prox **p, const sl_array *like, int axis, double sigma)
{
  const char *fn = "sl_prox_l21_axis";
  int rc = SL_SUCCESS;
  if (!sl_ctx.initialized) rc = sl_error(SL_E_STATE, "%s: starlops is not initialised", fn);
  else if (!p) rc = sl_error(SL_E_INVALID, "%s: argument 1 (p) is NULL", fn);
  else if (!like) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  else if (like->session != sl_session()) rc = sl_array_check_session(fn, like, "argument 2 (like)");
  else if (like->nparts) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is stacked; for the parts of a stacked array use sl_prox_l21", fn);
  else if (axis < -like->ndim || axis >= like->ndim)
    rc = sl_error(SL_E_INVALID, "%s: argument 3 (axis) is %d, outside the %d axes of argument 2 (like)", fn, axis, like->ndim);
  else if (!(sigma >= 0 && isfinite(sigma))) rc = sl_error(SL_E_INVALID, "%s: argument 4 (sigma) must be finite and >= 0, got %g", fn, sigma);
  if (rc == SL_SUCCESS && axis < 0) axis += like->ndim;
  int across = rc == SL_SUCCESS && like->partition == SL_SCATTER && like->axis == axis && like->group->size > 1;
  if (across && like->group->mask)
    rc = sl_error(SL_E_DIST, "%s: argument 3 (axis = %d) is the distributed axis of argument 2 (like), which has a mask "
                  "(replicas): redistribute it first (sl_op_redistribute)", fn, axis);
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 3 (axis)", axis), sl_same_d("argument 4 (sigma)", sigma)));
  if (like->ndim == 1) return whole_new(p, like, sigma);
  sl_array *lines = NULL; /* the layout where every line is local: like's, or like's along the other axis */
  sl_op *redist = NULL;
  if (across) { /* along the longest other axis */
    rc = sl_layout_moved(&lines, like, &axis, 1); /* both agreed */
    if (rc == SL_SUCCESS) rc = sl_op_redistribute(&redist, like, lines);
    if (rc != SL_SUCCESS) {
      sl_array_destroy(&lines);
      return rc;
    }
  }
  const sl_array *lay = across ? lines : like;
  int64_t n = like->dims[axis];
  sl_op **r = calloc((size_t)n, sizeof *r), *v = NULL;
  rc = sl_agree(sl_ctx.comm, r ? SL_SUCCESS : sl_error(SL_E_NOMEM, "%s: out of memory", fn));
  for (int64_t k = 0; rc == SL_SUCCESS && k < n; k++) rc = sl_op_restriction_axis(&r[k], lay, &k, 1, axis);
  if (rc == SL_SUCCESS) rc = sl_op_vstack(&v, (int)n, r);
  for (int64_t k = 0; r && k < n; k++) sl_op_destroy(&r[k]);
  free(r);
  if (rc == SL_SUCCESS && redist) { /* V R */
    sl_op *vr = NULL;
    rc = sl_op_product(&vr, v, redist);
    sl_op_destroy(&v);
    v = vr;
  }
  sl_op_destroy(&redist);
  sl_array_destroy(&lines);
  sl_prox *inner = NULL;
  if (rc == SL_SUCCESS) rc = sl_prox_l21(&inner, sigma);
  char name[32];
  snprintf(name, sizeof name, "L21(axis %d)", axis);
  if (rc == SL_SUCCESS) rc = prox_make(p, &axis_ops, name);
  if (rc != SL_SUCCESS) {
    sl_op_destroy(&v);
    sl_prox_destroy(&inner);
    return rc;
  }
  (*p)->op = v;
  (*p)->f = inner;
  (*p)->sigma = sigma;
  return SL_SUCCESS;
}
