/* The operator algebra: sum, difference, product, scaling, adjoint, transpose, conjugate, power. A
 * composite submits its parts' tasks in order; StarPU's data dependencies make them one task graph. Every
 * temporary is allocated once, at the composite's first apply: building a composite allocates nothing of
 * vector size. */
#include <math.h>
#include <stdio.h>

#include <stdlib.h>

#include "operators/op_internal.h"

/* The context of every composite kind: its parts (references) and coefficients. */
typedef struct {
  sl_op *a, *b;
  double sign;     /* sum: +1, difference: -1 */
  sl_cscalar scale; /* scaled */
} parts_t;

static void parts_free(void *p)
{
  parts_t *c = p;
  sl_op_destroy(&c->a);
  sl_op_destroy(&c->b);
  free(c);
}

/* A composite named name over a and b (either may be NULL), taking a reference to each. */
static int composite(sl_op **out, const char *name, const sl_array *dom, const sl_array *rng, const sl_op_ops *ops, sl_op *a,
                     sl_op *b, double sign, sl_cscalar scale)
{
  parts_t *c = calloc(1, sizeof *c);
  if (!c) return sl_error(SL_E_NOMEM, "%s: out of memory", name);
  c->a = a ? sl_op_ref(a) : NULL;
  c->b = b ? sl_op_ref(b) : NULL;
  c->sign = sign;
  c->scale = scale;
  return sl_op_new(out, name, dom, rng, ops, c);
}

/* any_dtype: a product, whose parts meet at a's domain = b's range (checked with the layouts), so a
 * real-to-complex part may feed a complex one */
static int check_parts(const char *fn, const sl_op *a, const sl_op *b, int any_dtype)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "%s: argument 2 (a) is NULL", fn);
  SL_CHECK_ARG(b != NULL, SL_E_INVALID, "%s: argument 3 (b) is NULL", fn);
  SL_TRY(sl_op_check_session(fn, a, "argument 2 (a)"));
  SL_TRY(sl_op_check_session(fn, b, "argument 3 (b)"));
  SL_CHECK_ARG(any_dtype || a->dtype == b->dtype, SL_E_DTYPE, "%s: arguments 2 (a) and 3 (b) differ in dtype (%s, %s)", fn,
               sl_dtype_name(a->dtype), sl_dtype_name(b->dtype));
  return SL_SUCCESS;
}

/* ---- a + sign b: y = A x; y += sign B x (the temporaries: like the range forward, the domain adjoint) */
static int sum_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  parts_t *c = op->data;
  sl_array *t = NULL;
  SL_TRY(sl_op_scratch(op, mode == SL_FORWARD ? 0 : 1, y, &t));
  SL_TRY(sl_op_call(c->a, mode, x, y));
  SL_TRY(sl_op_call(c->b, mode, x, t));
  return sl_array_axpby(y, SL_REAL(c->sign), t, SL_REAL(1.0));
}
static const sl_op_ops sum_ops = {sum_apply, NULL, parts_free, NULL};

static int sum_of(sl_op **out, sl_op *a, sl_op *b, double sign, const char *fn)
{
  SL_CHECK_ARG(out != NULL, SL_E_INVALID, "%s: argument 1 (out) is NULL", fn);
  SL_TRY(check_parts(fn, a, b, 0));
  SL_TRY(sl_array_check_same(b->dom, "the domain of argument 3 (b)", a->dom, "the domain of argument 2 (a)"));
  SL_TRY(sl_array_check_same(b->rng, "the range of argument 3 (b)", a->rng, "the range of argument 2 (a)"));
  char name[160];
  snprintf(name, sizeof name, "(%.70s %c %.70s)", a->name, sign > 0 ? '+' : '-', b->name);
  return composite(out, name, a->dom, a->rng, &sum_ops, a, b, sign, SL_REAL(1.0));
}

int sl_op_sum(sl_op **out, sl_op *a, sl_op *b) { return sum_of(out, a, b, 1.0, "sl_op_sum"); }
int sl_op_diff(sl_op **out, sl_op *a, sl_op *b) { return sum_of(out, a, b, -1.0, "sl_op_diff"); }

/* ---- a b: forward t = B x, y = A t; adjoint t = A^H x, y = B^H t (t in a's domain) ----------------- */
static const sl_op_ops adjoint_ops;

/* op without its adjoint views (a^H^H = a), mode flipped for each */
static sl_op *bare(sl_op *op, sl_op_mode *mode)
{
  while (op->ops == &adjoint_ops) {
    *mode = *mode == SL_FORWARD ? SL_ADJOINT : SL_FORWARD;
    op = ((parts_t *)op->data)->a;
  }
  return op;
}

static int product_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  parts_t *c = op->data;
  sl_op *first = mode == SL_FORWARD ? c->b : c->a, *second = mode == SL_FORWARD ? c->a : c->b;
  sl_array *t = NULL;
  SL_TRY(sl_op_scratch(op, 0, c->a->dom, &t));
  /* both parts in fewer tasks where the first's kind can (two stencils on one chunk: one task) */
  sl_op_mode m1 = mode, m2 = mode;
  sl_op *f = bare(first, &m1), *s = bare(second, &m2);
  if (f->ops->pair && !sl_ctx.set.no_fuse) {
    int rc = f->ops->pair(f, m1, s, m2, x, t, y);
    if (rc != SL_OP_DECLINED) return rc;
  }
  SL_TRY(sl_op_call(first, mode, x, t));
  return sl_op_call(second, mode, t, y);
}
static const sl_op_ops product_ops = {product_apply, NULL, parts_free, NULL};

int sl_op_product(sl_op **out, sl_op *a, sl_op *b)
{
  const char *fn = "sl_op_product";
  SL_CHECK_ARG(out != NULL, SL_E_INVALID, "%s: argument 1 (out) is NULL", fn);
  SL_TRY(check_parts(fn, a, b, 1));
  SL_TRY(sl_array_check_same(b->rng, "the range of argument 3 (b)", a->dom, "the domain of argument 2 (a)"));
  char name[160];
  snprintf(name, sizeof name, "(%.70s %.70s)", a->name, b->name);
  return composite(out, name, b->dom, a->rng, &product_ops, a, b, 1.0, SL_REAL(1.0));
}

/* ---- s a: y = A x, y *= s (conj(s) for the adjoint) ----------------------------------------------- */
static int scaled_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  parts_t *c = op->data;
  SL_TRY(sl_op_call(c->a, mode, x, y));
  sl_cscalar s = c->scale;
  if (mode == SL_ADJOINT) s.im = -s.im;
  return sl_array_scale(y, s);
}
static const sl_op_ops scaled_ops = {scaled_apply, NULL, parts_free, NULL};

int sl_op_scaled(sl_op **out, sl_op *a, sl_cscalar s)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(out != NULL, SL_E_INVALID, "sl_op_scaled: argument 1 (out) is NULL");
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_op_scaled: argument 2 (a) is NULL");
  SL_TRY(sl_op_check_session("sl_op_scaled", a, "argument 2 (a)"));
  SL_CHECK_ARG(isfinite(s.re) && isfinite(s.im), SL_E_INVALID, "sl_op_scaled: argument 3 (s) = %g%+gi is not finite", s.re,
               s.im);
  SL_CHECK_ARG(sl_dtype_is_complex(a->dtype) || s.im == 0.0, SL_E_DTYPE,
               "sl_op_scaled: argument 3 (s) is complex (%g%+gi) but argument 2 (a) is %s", s.re, s.im,
               sl_dtype_name(a->dtype));
  char name[160];
  snprintf(name, sizeof name, "%.6g%+.6gi %.100s", s.re, s.im, a->name);
  return composite(out, name, a->dom, a->rng, &scaled_ops, a, NULL, 1.0, s);
}

/* ---- a^H: the other mode of a --------------------------------------------------------------------- */
static int adjoint_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  parts_t *c = op->data;
  return sl_op_call(c->a, mode == SL_FORWARD ? SL_ADJOINT : SL_FORWARD, x, y);
}
static const sl_op_ops adjoint_ops = {adjoint_apply, NULL, parts_free, NULL};

/* ---- a^T x = conj(a^H conj(x)), conj(a) x = conj(a conj(x)): the input's conjugate goes to the
 * temporary laid out like x, the result is conjugated in place ----------------------------------- */
static int conj_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y, int transpose)
{
  parts_t *c = op->data;
  sl_op_mode inner = transpose ? (mode == SL_FORWARD ? SL_ADJOINT : SL_FORWARD) : mode;
  if (!sl_dtype_is_complex(op->dtype)) return sl_op_call(c->a, inner, x, y);
  sl_array *t = NULL;
  SL_TRY(sl_op_scratch(op, mode == SL_FORWARD ? 0 : 1, x, &t));
  SL_TRY(sl_array_conj(t, x));
  SL_TRY(sl_op_call(c->a, inner, t, y));
  return sl_array_conj(y, y);
}

static int transpose_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y) { return conj_apply(op, mode, x, y, 1); }
static int conjugate_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y) { return conj_apply(op, mode, x, y, 0); }
static const sl_op_ops transpose_ops = {transpose_apply, NULL, parts_free, NULL};
static const sl_op_ops conjugate_ops = {conjugate_apply, NULL, parts_free, NULL};

static int unary(sl_op **out, sl_op *a, const char *fn, const char *fmt, int swap, const sl_op_ops *ops)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(out != NULL, SL_E_INVALID, "%s: argument 1 (out) is NULL", fn);
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "%s: argument 2 (a) is NULL", fn);
  SL_TRY(sl_op_check_session(fn, a, "argument 2 (a)"));
  char name[160];
  snprintf(name, sizeof name, fmt, a->name);
  return composite(out, name, swap ? a->rng : a->dom, swap ? a->dom : a->rng, ops, a, NULL, 1.0, SL_REAL(1.0));
}

int sl_op_adjoint(sl_op **out, sl_op *a) { return unary(out, a, "sl_op_adjoint", "%.150s^H", 1, &adjoint_ops); }
int sl_op_transpose(sl_op **out, sl_op *a) { return unary(out, a, "sl_op_transpose", "%.150s^T", 1, &transpose_ops); }
int sl_op_conj(sl_op **out, sl_op *a) { return unary(out, a, "sl_op_conj", "conj(%.140s)", 0, &conjugate_ops); }

/* ---- a^k: a chain of products (a^0 is the identity) ------------------------------------------------ */
int sl_op_power(sl_op **out, sl_op *a, int k)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(out != NULL, SL_E_INVALID, "sl_op_power: argument 1 (out) is NULL");
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_op_power: argument 2 (a) is NULL");
  SL_TRY(sl_op_check_session("sl_op_power", a, "argument 2 (a)"));
  /* a power is a chain of k products (applied by recursion k deep) */
  SL_CHECK_ARG(k >= 0 && k <= SL_OP_POWER_MAX, SL_E_INVALID, "sl_op_power: argument 3 (k) is %d, must be in [0, %d]", k,
               SL_OP_POWER_MAX);
  SL_TRY(sl_array_check_same(a->dom, "sl_op_power: the domain of argument 2 (a)", a->rng, "its range"));
  if (k == 0) return sl_op_identity(out, a->dom);
  if (k == 1) { /* a itself (another reference): its name stays */
    *out = sl_op_ref(a);
    return SL_SUCCESS;
  }
  sl_op *acc = sl_op_ref(a);
  for (int i = 1; i < k; i++) {
    sl_op *next;
    int rc = sl_op_product(&next, a, acc);
    sl_op_destroy(&acc);
    if (rc != SL_SUCCESS) return rc;
    acc = next;
  }
  snprintf(acc->name, sizeof acc->name, "%.140s^%d", a->name, k);
  *out = acc;
  return SL_SUCCESS;
}
