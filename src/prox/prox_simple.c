/* The element-wise and group functions: L1 (soft thresholding), L21 over the parts of a stacked array
 * (group shrinkage) and the Box indicator (clipping); their conjugates' proxes are projections. */
#include <math.h>

#include "prox/prox_internal.h"
#include "codelets/kernel_vec.h"

/* The agreed constructor frame: the local verdict and the numbers every rank must share. */
static int begin(const char *fn, sl_prox **p, int rc, double v1, const char *n1, double v2, const char *n2)
{
  if (!sl_ctx.initialized) rc = sl_error(SL_E_STATE, "%s: starlops is not initialised", fn);
  else if (!p) rc = sl_error(SL_E_INVALID, "%s: argument 1 (p) is NULL", fn);
  return SL_AGREE(fn, rc, sl_same_d(n1, v1), sl_same_d(n2, v2));
}

/* A function with one weight sigma >= 0 (L1, L21). */
static int weighted_new(const char *fn, sl_prox **p, double sigma, const sl_prox_ops *ops, const char *name)
{
  int rc = sigma >= 0 && isfinite(sigma) ? SL_SUCCESS
                                         : sl_error(SL_E_INVALID, "%s: argument 2 (sigma) must be finite and >= 0, got %g", fn, sigma);
  SL_TRY(begin(fn, p, rc, sigma, "argument 2 (sigma)", 0, "-"));
  SL_TRY(prox_make(p, ops, name));
  (*p)->sigma = sigma;
  return SL_SUCCESS;
}

/* ---- L1 ------------------------------------------------------------------------------------------- */
static int l1_prox(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  double t;
  SL_TRY(prox_weighted_step(p, tau, &t));
  return sl_array_threshold(y, x, SL_THRESH_SOFT, t);
}

/* f* is the indicator of |x_i| <= sigma: the projection onto that disc */
static int l1_dual(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  return sl_array_clip_p(y, x, SL_KCLIP_BALL, 0, 0, p->sigma);
}

static int l1_value(sl_prox *p, const sl_array *x, sl_scalar *s)
{
  SL_TRY(sl_array_norm_p(x, 1.0, s));
  return prox_scalar_affine(s, p->sigma, 0, 0);
}

static const sl_prox_ops l1_ops = {l1_prox, l1_dual, l1_value, NULL, NULL, NULL, NULL};

int sl_prox_l1(sl_prox **p, double sigma) { return weighted_new("sl_prox_l1", p, sigma, &l1_ops, "L1"); }

/* ---- L21 ------------------------------------------------------------------------------------------ */
static int l21_check(const sl_prox *p, const sl_array *x, const char *an)
{
  SL_CHECK_ARG(x->nparts > 0, SL_E_INVALID,
               "%s: L21 groups the parts of a stacked array (a Gradient's range, sl_array_stack); a plain array was given",
               an);
  SL_CHECK_ARG(x->parts[0]->nparts == 0, SL_E_INVALID, "%s: L21 needs plain parts, part 0 is stacked", an);
  for (int i = 1; i < x->nparts; i++) {
    char pn[32];
    snprintf(pn, sizeof pn, "its part %d", i);
    int rc = sl_array_check_same(x->parts[0], an, x->parts[i], pn);
    if (rc != SL_SUCCESS)
      return sl_error(rc, "%s (L21 needs parts laid out alike, element j of every part forming group j)", sl_last_error());
    SL_CHECK_ARG(x->parts[i]->nparts == 0, SL_E_INVALID, "%s: L21 needs plain parts, part %d is stacked", an, i);
  }
  return SL_SUCCESS;
}

/* s = sum over the parts of |x_k|^2 */
static int group_norms(sl_prox *p, const sl_array *x, sl_array **s)
{
  SL_TRY(prox_scratch(p, 0, x->parts[0], s));
  for (int k = 0; k < x->nparts; k++) SL_TRY(sl_array_abs2_p(*s, x->parts[k], k > 0));
  return SL_SUCCESS;
}

static int l21_apply(sl_prox *p, const sl_array *x, sl_array *y, int kind, double t)
{
  sl_array *s = NULL;
  SL_TRY(group_norms(p, x, &s));
  for (int k = 0; k < x->nparts; k++) SL_TRY(sl_array_group_p(y->parts[k], x->parts[k], s, kind, t));
  return SL_SUCCESS;
}

static int l21_prox(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  double t;
  SL_TRY(prox_weighted_step(p, tau, &t));
  return l21_apply(p, x, y, SL_KGROUP_SOFT, t);
}
/* f* is the indicator of ||x_j|| <= sigma for every group: the projection onto those balls */
static int l21_dual(sl_prox *p, double tau, const sl_array *x, sl_array *y) { return l21_apply(p, x, y, SL_KGROUP_BALL, p->sigma); }

/* sigma sum_j sqrt(s_j) = sigma sqrt(||s||_(1/2)) */
static int l21_value(sl_prox *p, const sl_array *x, sl_scalar *s)
{
  sl_array *g = NULL;
  SL_TRY(group_norms(p, x, &g));
  SL_TRY(sl_array_norm_p(g, 0.5, s));
  return prox_scalar_affine(s, p->sigma, 0, 1);
}

static const sl_prox_ops l21_ops = {l21_prox, l21_dual, l21_value, NULL, NULL, l21_check, NULL};

int sl_prox_l21(sl_prox **p, double sigma) { return weighted_new("sl_prox_l21", p, sigma, &l21_ops, "L21"); }

/* ---- Box ------------------------------------------------------------------------------------------ */
static int box_prox(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  return sl_array_clip_p(y, x, SL_KCLIP_BOX, p->lo, p->hi, 0);
}

/* 0 when x is its own clipping, else +Inf: max |x - clip(x)| through the indicator */
static int box_value(sl_prox *p, const sl_array *x, sl_scalar *s)
{
  sl_array *t = NULL;
  SL_TRY(prox_scratch(p, 0, x, &t));
  SL_TRY(sl_array_clip_p(t, x, SL_KCLIP_BOX, p->lo, p->hi, 0));
  SL_TRY(sl_array_axpby(t, SL_REAL(1), x, SL_REAL(-1)));
  SL_TRY(sl_array_norm_p(t, INFINITY, s));
  return prox_scalar_affine(s, 0, 0, 2);
}

static const sl_prox_ops box_ops = {box_prox, NULL, box_value, NULL, NULL, NULL, NULL};

int sl_prox_box(sl_prox **p, double lower, double upper)
{
  int rc = SL_SUCCESS;
  if (isnan(lower) || isnan(upper) || !(lower <= upper) || lower == INFINITY || upper == -INFINITY)
    rc = sl_error(SL_E_INVALID, "sl_prox_box: arguments 2 and 3 (lower, upper) must satisfy lower <= upper with a non-empty box, got %g and %g",
                  lower, upper);
  SL_TRY(begin("sl_prox_box", p, rc, lower, "argument 2 (lower)", upper, "argument 3 (upper)"));
  SL_TRY(prox_make(p, &box_ops, "Box"));
  (*p)->lo = lower;
  (*p)->hi = upper;
  return SL_SUCCESS;
}
