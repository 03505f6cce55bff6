/* sl_prox: the object, its checked public calls (agreed across ranks), scratch arrays, Moreau's identity for
 * the conjugate, and the two compositions (pre: f(a x + b), post: a f(x) + b). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prox/prox_internal.h"

int prox_new(sl_prox **p, const sl_prox_ops *ops, const char *fmt, ...)
{
  sl_prox *q = calloc(1, sizeof *q);
  if (!q) return sl_error(SL_E_NOMEM, "sl_prox: out of memory");
  q->ops = ops;
  q->refs = 1;
  q->session = sl_session();
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(q->name, sizeof q->name, fmt, ap);
  va_end(ap);
  *p = q;
  return SL_SUCCESS;
}

int prox_make(sl_prox **p, const sl_prox_ops *ops, const char *name)
{
  sl_prox *q = NULL;
  int rc = sl_agree(sl_ctx.comm, prox_new(&q, ops, "%s", name));
  if (rc != SL_SUCCESS) {
    free(q);
    return rc;
  }
  *p = q;
  return SL_SUCCESS;
}

int prox_weighted_step(const sl_prox *p, double tau, double *t)
{
  *t = tau * p->sigma;
  SL_CHECK_ARG(isfinite(*t), SL_E_INVALID, "%s: tau sigma = %g (tau = %g, sigma = %g) is not finite", p->name, *t, tau, p->sigma);
  return SL_SUCCESS;
}

int prox_scratch(sl_prox *p, int i, const sl_array *like, sl_array **out)
{
  if (p->scratch[i] && !sl_array_same_layout(p->scratch[i], like)) sl_array_destroy(&p->scratch[i]);
  int rc = SL_SUCCESS;
  if (!p->scratch[i]) rc = sl_agree(sl_ctx.comm, sl_array_clone(&p->scratch[i], like, SL_STORE_TEMP));
  *out = p->scratch[i];
  return rc;
}

struct saff {
  double a, b;
  int mode;
};
/* v[0] = (re, im): mode 0 a re + b, 1 a sqrt(re) + b, 2 the indicator (0 when re is 0, else +Inf) */
static void saff_fn(double *const *v, const void *arg)
{
  const struct saff *q = arg;
  double r = v[0][0];
  if (q->mode == 2) r = r == 0 ? 0.0 : (isnan(r) ? r : INFINITY);
  else r = q->a * (q->mode == 1 ? sqrt(r) : r) + q->b;
  v[0][0] = r;
  v[0][1] = 0;
}

int prox_scalar_affine(sl_scalar *s, double a, double b, int mode)
{
  struct saff q = {a, b, mode};
  s->dtype = sl_dtype_real(s->dtype);
  return sl_stask_submit(saff_fn, &q, sizeof q, 1, &s->handle, (enum starpu_data_access_mode[]){STARPU_RW});
}

int prox_apply_p(sl_prox *p, double tau, const sl_array *x, sl_array *y) { return p->ops->prox(p, tau, x, y); }

/* Moreau: prox_(tau f*)(x) = x - tau prox_(f / tau)(x / tau) */
int prox_dual_p(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  if (p->ops->dual) return p->ops->dual(p, tau, x, y);
  if (!isfinite(1.0 / tau))
    return sl_error(SL_E_INVALID, "%s: the step tau = %g is too small for the conjugate's prox (Moreau's identity divides by it)",
                    p->name, tau);
  sl_array *t = NULL;
  SL_TRY(prox_scratch(p, PROX_NSCRATCH - 1, x, &t));
  SL_TRY(sl_array_axpby(t, SL_REAL(1.0 / tau), x, SL_REAL(0)));
  SL_TRY(p->ops->prox(p, 1.0 / tau, t, t));
  if (y != x) SL_TRY(sl_array_copy(y, x));
  return sl_array_axpby(y, SL_REAL(-tau), t, SL_REAL(1));
}

int prox_value_p(sl_prox *p, const sl_array *x, sl_scalar *s) { return p->ops->value(p, x, s); }

uint64_t prox_key(const sl_prox *p)
{
  if (!p) return 0;
  uint64_t h = sl_fnv1a(SL_FNV1A_START, p->name, strlen(p->name));
  /* + 0.0: -0 and +0 agree */
  const double v[] = {p->sigma + 0.0, p->lo + 0.0, p->hi + 0.0, p->a + 0.0, p->shift + 0.0};
  const int64_t k[] = {p->cg_niter, (int64_t)sl_op_key(p->op), p->b != NULL, p->layout != NULL, (int64_t)prox_key(p->f)};
  h = sl_fnv1a(sl_fnv1a(h, v, sizeof v), k, sizeof k);
  if (p->b) h = sl_array_layout_key(h, p->b);
  return p->layout ? sl_array_layout_key(h, p->layout) : h;
}

int prox_smooth(const sl_prox *p) { return p->ops->grad != NULL && (!p->f || prox_smooth(p->f)); }

int prox_grad_p(sl_prox *p, const sl_array *x, sl_array *g)
{
  if (!prox_smooth(p))
    return sl_error(SL_E_INVALID, "%s is not smooth: it has no gradient (use L2 or a composition of it)", p->name);
  return p->ops->grad(p, x, g);
}

int prox_lipschitz_p(sl_prox *p, const sl_array *like, double *L)
{
  if (!p->ops->lipschitz || !prox_smooth(p))
    return sl_error(SL_E_INVALID, "%s has no Lipschitz constant for its gradient: give options.tau", p->name);
  return p->ops->lipschitz(p, like, L);
}

/* SL_E_STATE naming the call fn and p's argument `label` when p was made before the last sl_finalize */
static int check_session(const char *fn, const sl_prox *p, const char *label)
{
  if (p->session == sl_session()) return SL_SUCCESS;
  char what[128];
  snprintf(what, sizeof what, "%s (%s)", label, p->name);
  return sl_error_stale(fn, what);
}

int prox_check_p(const sl_prox *p, const sl_array *x, const char *an)
{
  if (p->session != sl_session()) { /* an names the call and the array p was given with */
    char what[256];
    snprintf(what, sizeof what, "the proximal operator %s given with %s", p->name, an);
    return sl_error_stale(NULL, what);
  }
  return p->ops->check ? p->ops->check(p, x, an) : SL_SUCCESS;
}

/* ---- the public calls ------------------------------------------------------------------------------ */

/* The local checks shared by the applies: p, tau, x, y alike. With need_tau the call is (p, tau, x, y), else
 * (p, x, g): the arguments' numbers and names in errors follow. */
static int check_apply(const char *fn, const sl_prox *p, double tau, const sl_array *x, const sl_array *y, int need_tau)
{
  const int xi = need_tau ? 3 : 2;
  const char *yn = need_tau ? "y" : "g";
  SL_CHECK_INIT();
  SL_CHECK_ARG(p != NULL, SL_E_INVALID, "%s: argument 1 (p) is NULL", fn);
  SL_CHECK_ARG(!need_tau || (tau > 0 && isfinite(tau)), SL_E_INVALID, "%s: argument 2 (tau) must be finite and > 0, got %g",
               fn, tau);
  SL_CHECK_ARG(x != NULL, SL_E_INVALID, "%s: argument %d (x) is NULL", fn, xi);
  SL_CHECK_ARG(y != NULL, SL_E_INVALID, "%s: argument %d (%s) is NULL", fn, xi + 1, yn);
  SL_TRY(sl_array_check_session(fn, x, xi == 3 ? "argument 3 (x)" : "argument 2 (x)"));
  SL_TRY(sl_array_check_session(fn, y, need_tau ? "argument 4 (y)" : "argument 3 (g)"));
  SL_CHECK_ARG(!x->acquired && !y->acquired, SL_E_STATE, "%s: an argument is acquired by the host; release it first", fn);
  char an[96], yname[32];
  snprintf(an, sizeof an, "%s: argument %d (x)", fn, xi);
  snprintf(yname, sizeof yname, "argument %d (%s)", xi + 1, yn);
  SL_TRY(sl_array_check_same(y, yname, x, an));
  return prox_check_p(p, x, an);
}

int sl_prox_apply(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  int rc = check_apply("sl_prox_apply", p, tau, x, y, 1);
  SL_TRY(SL_AGREE("sl_prox_apply", rc, sl_same_d("argument 2 (tau)", tau), SL_SAME_KEY("argument 1 (p: its kind and parameters)", prox_key(p))));
  return prox_apply_p(p, tau, x, y);
}

int sl_prox_apply_dual(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  int rc = check_apply("sl_prox_apply_dual", p, tau, x, y, 1);
  SL_TRY(SL_AGREE("sl_prox_apply_dual", rc, sl_same_d("argument 2 (tau)", tau),
                  SL_SAME_KEY("argument 1 (p: its kind and parameters)", prox_key(p))));
  return prox_dual_p(p, tau, x, y);
}

int sl_prox_gradient(sl_prox *p, const sl_array *x, sl_array *g)
{
  int rc = check_apply("sl_prox_gradient", p, 1.0, x, g, 0);
  if (rc == SL_SUCCESS && x == g) rc = sl_error(SL_E_INVALID, "sl_prox_gradient: arguments 2 (x) and 3 (g) must differ");
  if (rc == SL_SUCCESS && !prox_smooth(p))
    rc = sl_error(SL_E_INVALID, "sl_prox_gradient: argument 1 (%s) is not smooth: it has no gradient", p->name);
  SL_TRY(SL_AGREE("sl_prox_gradient", rc, SL_SAME_KEY("argument 1 (p: its kind and parameters)", prox_key(p))));
  return prox_grad_p(p, x, g);
}

int sl_prox_value(sl_prox *p, const sl_array *x, sl_scalar *s)
{
  int rc = SL_SUCCESS;
  if (!sl_ctx.initialized) rc = sl_error(SL_E_STATE, "sl_prox_value: starlops is not initialised");
  else if (!p) rc = sl_error(SL_E_INVALID, "sl_prox_value: argument 1 (p) is NULL");
  else if (!x) rc = sl_error(SL_E_INVALID, "sl_prox_value: argument 2 (x) is NULL");
  else if (!s) rc = sl_error(SL_E_INVALID, "sl_prox_value: argument 3 (s) is NULL");
  else if (sl_scalar_check_session("sl_prox_value", s, "argument 3 (s)") != SL_SUCCESS) rc = SL_E_STATE;
  else if (x->session != sl_session()) rc = sl_array_check_session("sl_prox_value", x, "argument 2 (x)");
  else if (x->acquired) rc = sl_error(SL_E_STATE, "sl_prox_value: argument 2 (x) is acquired by the host; release it first");
  else rc = prox_check_p(p, x, "sl_prox_value: argument 2 (x)");
  SL_TRY(SL_AGREE("sl_prox_value", rc, SL_SAME_KEY("argument 1 (p: its kind and parameters)", prox_key(p))));
  return prox_value_p(p, x, s);
}

const char *sl_prox_name(const sl_prox *p) { return p ? p->name : "(null)"; }

int sl_prox_destroy(sl_prox **pp)
{
  if (!pp || !*pp) return SL_SUCCESS;
  sl_prox *p = *pp;
  if (sl_ctx.initialized) SL_TRY(check_session("sl_prox_destroy", p, "argument 1"));
  *pp = NULL;
  if (--p->refs > 0) return SL_SUCCESS;
  if (!sl_ctx.initialized) return sl_error(SL_E_STATE, "sl_prox_destroy: called after sl_finalize; destroy it before");
  if (p->ops->destroy) p->ops->destroy(p);
  for (int i = 0; i < PROX_NSCRATCH; i++) sl_array_destroy(&p->scratch[i]);
  sl_prox *f = p->f;
  free(p);
  return sl_prox_destroy(&f);
}

/* ---- compositions -------------------------------------------------------------------------------- */

/* t = a x + b */
static int affine(sl_array *t, double a, const sl_array *x, double b)
{
  if (b == 0) return sl_array_axpby(t, SL_REAL(a), x, SL_REAL(0));
  SL_TRY(sl_array_fill(t, SL_REAL(b)));
  return sl_array_axpby(t, SL_REAL(a), x, SL_REAL(1));
}

static int pre_prox(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  const double step = p->a * p->a * tau;
  if (!(step >= 0 && isfinite(step))) /* 0: ProximalGradient with epsg = 0 asks g's prox with a zero step */
    return sl_error(SL_E_INVALID, "%s: the inner step a^2 tau = %g (a = %g, tau = %g) is not finite and >= 0", p->name, step,
                    p->a, tau);
  sl_array *t = NULL;
  SL_TRY(prox_scratch(p, 0, x, &t));
  SL_TRY(affine(t, p->a, x, p->shift));
  SL_TRY(prox_apply_p(p->f, p->a * p->a * tau, t, t));
  return affine(y, 1.0 / p->a, t, -p->shift / p->a);
}

static int pre_value(sl_prox *p, const sl_array *x, sl_scalar *s)
{
  sl_array *t = NULL;
  SL_TRY(prox_scratch(p, 0, x, &t));
  SL_TRY(affine(t, p->a, x, p->shift));
  return prox_value_p(p->f, t, s);
}

static int pre_grad(sl_prox *p, const sl_array *x, sl_array *g)
{
  sl_array *t = NULL;
  SL_TRY(prox_scratch(p, 0, x, &t));
  SL_TRY(affine(t, p->a, x, p->shift));
  SL_TRY(prox_grad_p(p->f, t, g));
  return sl_array_scale(g, SL_REAL(p->a));
}

static int pre_lipschitz(sl_prox *p, const sl_array *like, double *L)
{
  SL_TRY(prox_lipschitz_p(p->f, like, L));
  *L *= p->a * p->a;
  return SL_SUCCESS;
}

static int comp_check(const sl_prox *p, const sl_array *x, const char *an) { return prox_check_p(p->f, x, an); }

static const sl_prox_ops pre_ops = {pre_prox, NULL, pre_value, pre_grad, pre_lipschitz, comp_check, NULL};

static int post_prox(sl_prox *p, double tau, const sl_array *x, sl_array *y) { return prox_apply_p(p->f, p->a * tau, x, y); }

/* g = a f + b: g*(y) = a f*(y / a) - b, so prox_(tau g*)(x) = a prox_((tau / a) f*)(x / a) */
static int post_dual(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  sl_array *t = NULL;
  SL_TRY(prox_scratch(p, 0, x, &t));
  SL_TRY(sl_array_axpby(t, SL_REAL(1.0 / p->a), x, SL_REAL(0)));
  SL_TRY(prox_dual_p(p->f, tau / p->a, t, y));
  return sl_array_scale(y, SL_REAL(p->a));
}

static int post_value(sl_prox *p, const sl_array *x, sl_scalar *s)
{
  SL_TRY(prox_value_p(p->f, x, s));
  return prox_scalar_affine(s, p->a, p->shift, 0);
}

static int post_grad(sl_prox *p, const sl_array *x, sl_array *g)
{
  SL_TRY(prox_grad_p(p->f, x, g));
  return sl_array_scale(g, SL_REAL(p->a));
}

static int post_lipschitz(sl_prox *p, const sl_array *like, double *L)
{
  SL_TRY(prox_lipschitz_p(p->f, like, L));
  *L *= p->a;
  return SL_SUCCESS;
}

static const sl_prox_ops post_ops = {post_prox, post_dual, post_value, post_grad, post_lipschitz, comp_check, NULL};

static int compose(const char *fn, sl_prox **g, sl_prox *f, double a, double b, int post)
{
  int rc = SL_SUCCESS;
  if (!sl_ctx.initialized) rc = sl_error(SL_E_STATE, "%s: starlops is not initialised", fn);
  else if (!g) rc = sl_error(SL_E_INVALID, "%s: argument 1 (g) is NULL", fn);
  else if (!f) rc = sl_error(SL_E_INVALID, "%s: argument 2 (f) is NULL", fn);
  else if (f->session != sl_session()) rc = check_session(fn, f, "argument 2 (f)");
  else if (!isfinite(a) || (post ? !(a > 0) : a == 0))
    rc = sl_error(SL_E_INVALID, "%s: argument 3 (a) must be finite and %s, got %g", fn, post ? "> 0" : "nonzero", a);
  else if (!isfinite(b)) rc = sl_error(SL_E_INVALID, "%s: argument 4 (b) must be finite, got %g", fn, b);
  SL_TRY(SL_AGREE(fn, rc, sl_same_d("argument 3 (a)", a), sl_same_d("argument 4 (b)", b),
                  SL_SAME_KEY("argument 2 (f: its kind and parameters)", prox_key(f))));
  char name[64];
  snprintf(name, sizeof name, "%s %.40s", post ? "postcomposed" : "precomposed", f->name);
  SL_TRY(prox_make(g, post ? &post_ops : &pre_ops, name));
  (*g)->f = f;
  f->refs++;
  (*g)->a = a;
  (*g)->shift = b;
  return SL_SUCCESS;
}

int sl_prox_precompose(sl_prox **g, sl_prox *f, double a, double b) { return compose("sl_prox_precompose", g, f, a, b, 0); }
int sl_prox_postcompose(sl_prox **g, sl_prox *f, double a, double b) { return compose("sl_prox_postcompose", g, f, a, b, 1); }
