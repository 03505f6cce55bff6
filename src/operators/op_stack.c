/* Operators over a list of operators, with stacked arrays on the stacked side (pylops-mpi's
 * StackedVStack, StackedHStack and StackedBlockDiag, over any starlops operators):
 *   VStack     y_i = A_i x            adjoint x = sum_i A_i^H y_i      (y stacked)
 *   HStack     y = sum_i A_i x_i      adjoint x_i = A_i^H y            (x stacked)
 *   BlockDiag  y_i = A_i x_i          adjoint x_i = A_i^H y_i          (x and y stacked)
 * and Gradient, the VStack of first derivatives along every axis (its adjoint is minus the divergence).
 * The parts communicate as they do alone; the sums are local element-wise additions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"

enum { STACK_V, STACK_H, STACK_DIAG };

/* The parts (references). */
typedef struct {
  int n;
  sl_op **parts;
} stack_ctx;

static void stack_free(void *p)
{
  stack_ctx *c = p;
  for (int i = 0; i < c->n; i++) sl_op_destroy(&c->parts[i]);
  free(c->parts);
  free(c);
}

/* VStack (sum_side = adjoint) and HStack (sum_side = forward): on the stacked side each part maps its own
 * part of the stacked array; on the other side the parts' results are summed into y. */
static int stack_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y, sl_op_mode sum_side)
{
  stack_ctx *c = op->data;
  if (mode != sum_side) {
    for (int i = 0; i < c->n; i++) SL_TRY(sl_op_call(c->parts[i], mode, x, y->parts[i]));
    return SL_SUCCESS;
  }
  SL_TRY(sl_op_call(c->parts[0], mode, x->parts[0], y));
  sl_array *t = NULL;
  if (c->n > 1) SL_TRY(sl_op_scratch(op, 0, y, &t));
  for (int i = 1; i < c->n; i++) {
    SL_TRY(sl_op_call(c->parts[i], mode, x->parts[i], t));
    SL_TRY(sl_array_axpby(y, SL_REAL(1), t, SL_REAL(1)));
  }
  return SL_SUCCESS;
}

static int vstack_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  return stack_apply(op, mode, x, y, SL_ADJOINT);
}

static int hstack_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  return stack_apply(op, mode, x, y, SL_FORWARD);
}

static int diag_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  stack_ctx *c = op->data;
  for (int i = 0; i < c->n; i++) SL_TRY(sl_op_call(c->parts[i], mode, x->parts[i], y->parts[i]));
  return SL_SUCCESS;
}

static const sl_op_ops vstack_ops = {vstack_apply, NULL, stack_free, NULL};
static const sl_op_ops hstack_ops = {hstack_apply, NULL, stack_free, NULL};
static const sl_op_ops diag_ops = {diag_apply, NULL, stack_free, NULL};

/* A stack of the parts' domains (ranges) as a layout template. */
static int stacked_like(sl_op **ops, int n, int range, sl_array **out)
{
  sl_array **a = calloc((size_t)n, sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "stacked operator: out of memory");
  int rc = SL_SUCCESS;
  for (int i = 0; i < n && rc == SL_SUCCESS; i++) rc = sl_array_clone(&a[i], range ? ops[i]->rng : ops[i]->dom, SL_STORE_LAYOUT);
  if (rc == SL_SUCCESS) rc = sl_array_stack(out, n, a);
  for (int i = 0; i < n; i++) sl_array_destroy(&a[i]);
  free(a);
  return rc;
}

static int make_check(sl_op **out, const char *fn, int kind, int n, sl_op **ops)
{
  SL_CHECK_ARG(out != NULL, SL_E_INVALID, "%s: argument 1 (out) is NULL", fn);
  SL_CHECK_ARG(n >= 1, SL_E_INVALID, "%s: argument 2 (n) must be >= 1, got %d", fn, n);
  SL_CHECK_ARG(ops != NULL, SL_E_INVALID, "%s: argument 3 (ops) is NULL", fn);
  for (int i = 0; i < n; i++) {
    SL_CHECK_ARG(ops[i] != NULL, SL_E_INVALID, "%s: argument 3 (ops): operator %d is NULL", fn, i);
    char what[48];
    snprintf(what, sizeof what, "argument 3 (ops): operator %d", i);
    SL_TRY(sl_op_check_session(fn, ops[i], what));
    SL_CHECK_ARG(ops[i]->dtype == ops[0]->dtype, SL_E_DTYPE, "%s: operator %d is %s, operator 0 is %s", fn, i,
                 sl_dtype_name(ops[i]->dtype), sl_dtype_name(ops[0]->dtype));
    char a[96], b[96];
    snprintf(a, sizeof a, "%s: the %s of operator %d", fn, kind == STACK_V ? "domain" : "range", i);
    snprintf(b, sizeof b, "the %s of operator 0", kind == STACK_V ? "domain" : "range");
    if (kind == STACK_V) SL_TRY(sl_array_check_same(ops[i]->dom, a, ops[0]->dom, b));
    if (kind == STACK_H) SL_TRY(sl_array_check_same(ops[i]->rng, a, ops[0]->rng, b));
  }
  return SL_SUCCESS;
}

static int make(sl_op **out, const char *fn, int kind, int n, sl_op **ops)
{
  SL_CHECK_INIT();
  int rc = make_check(out, fn, kind, n, ops);
  uint64_t parts = SL_FNV1A_START; /* the parts in their order: names and layouts */
  for (int i = 0; rc == SL_SUCCESS && i < n; i++) {
    const uint64_t k = sl_op_key(ops[i]);
    parts = sl_fnv1a(parts, &k, sizeof k);
  }
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_I("argument 2 (n)", n), SL_SAME_KEY("argument 3 (ops: their names and layouts, in order)",
                                                                       rc == SL_SUCCESS ? parts : 0)));
  char name[160];
  int len = snprintf(name, sizeof name, "%s(", kind == STACK_V ? "VStack" : kind == STACK_H ? "HStack" : "BlockDiag");
  for (int i = 0; i < n && len < (int)sizeof name - 8; i++)
    len += snprintf(name + len, sizeof name - (size_t)len, "%s%.40s", i ? ", " : "", ops[i]->name);
  snprintf(name + (len < (int)sizeof name - 2 ? len : (int)sizeof name - 2), 2, ")");
  sl_array *dom = NULL, *rng = NULL;
  rc = kind == STACK_V ? SL_SUCCESS : stacked_like(ops, n, 0, &dom);
  if (rc == SL_SUCCESS && kind != STACK_H) rc = stacked_like(ops, n, 1, &rng);
  stack_ctx *c = rc == SL_SUCCESS ? calloc(1, sizeof *c) : NULL;
  if (c) c->parts = calloc((size_t)n, sizeof *c->parts);
  if (rc == SL_SUCCESS && (!c || !c->parts)) {
    rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
    if (c) stack_free(c);
    c = NULL;
  }
  for (int i = 0; c && i < n; i++) c->parts[c->n++] = sl_op_ref(ops[i]);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS)
    rc = sl_op_new(&o, name, dom ? dom : ops[0]->dom, rng ? rng : ops[0]->rng,
                   kind == STACK_V ? &vstack_ops : kind == STACK_H ? &hstack_ops : &diag_ops, c);
  sl_array_destroy(&dom);
  sl_array_destroy(&rng);
  return sl_op_finish(out, o, rc);
}

int sl_op_vstack(sl_op **out, int n, sl_op **ops) { return make(out, "sl_op_vstack", STACK_V, n, ops); }
int sl_op_hstack(sl_op **out, int n, sl_op **ops) { return make(out, "sl_op_hstack", STACK_H, n, ops); }
int sl_op_block_diag(sl_op **out, int n, sl_op **ops) { return make(out, "sl_op_block_diag", STACK_DIAG, n, ops); }

/* The sampling (like's ndim values; NULL: 1) and kind of a Gradient or a directional derivative, named by their
 * positions in the caller; *digest gets the sampling values (-0 as +0) for the agreement. */
static int deriv_args(const char *fn, const sl_array *like, const double *sampling, int spos, sl_deriv_kind kind, int kpos,
                      uint64_t *digest)
{
  double sz[SL_MAX_DIMS] = {0};
  for (int a = 0; sampling && a < like->ndim; a++) {
    SL_CHECK_ARG(sampling[a] > 0 && isfinite(sampling[a]), SL_E_INVALID,
                 "%s: argument %d (sampling): sampling[%d] must be finite and > 0, got %g", fn, spos, a, sampling[a]);
    sz[a] = sampling[a] + 0.0;
  }
  SL_TRY(sl_deriv_kind_check(fn, kpos, kind));
  *digest = sl_fnv1a(SL_FNV1A_START, sz, sizeof sz);
  return SL_SUCCESS;
}

int sl_op_gradient(sl_op **out, const sl_array *like, const double *sampling, sl_deriv_kind kind, int edge)
{
  SL_CHECK_INIT();
  int rc = !out ? sl_error(SL_E_INVALID, "sl_op_gradient: argument 1 (out) is NULL")
           : !like ? sl_error(SL_E_INVALID, "sl_op_gradient: argument 2 (like) is NULL")
           : like->nparts ? sl_error(SL_E_INVALID, "sl_op_gradient: argument 2 (like) is a stacked array")
                          : sl_array_check_session("sl_op_gradient", like, "argument 2 (like)");
  uint64_t sd = 0;
  if (rc == SL_SUCCESS) rc = deriv_args("sl_op_gradient", like, sampling, 3, kind, 4, &sd);
  SL_TRY(SL_AGREE("sl_op_gradient", rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_KEY("argument 3 (sampling: its values)", sd), SL_SAME_I("argument 4 (kind)", kind),
                  SL_SAME_I("argument 5 (edge)", edge != 0)));
  sl_op *d[SL_MAX_DIMS] = {NULL};
  int nd = sl_array_ndim(like);
  for (int a = 0; a < nd && rc == SL_SUCCESS; a++)
    rc = sl_op_first_derivative(&d[a], like, a, sampling ? sampling[a] : 1.0, kind, 3, edge);
  if (rc == SL_SUCCESS) rc = sl_op_vstack(out, nd, d);
  for (int a = 0; a < nd; a++) sl_op_destroy(&d[a]);
  if (rc == SL_SUCCESS) snprintf((*out)->name, sizeof (*out)->name, "Gradient(%d axes)", nd);
  return rc;
}

/* The checks of a directional derivative's direction: exactly one of v (ndim finite values, the same on every
 * rank) and vfield (ndim arrays laid out like `like`). */
static int direction_check(const char *fn, sl_op **out, const sl_array *like, const double *v, sl_array *const *vfield)
{
  SL_CHECK_ARG(out != NULL, SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  SL_CHECK_ARG(like != NULL && !like->nparts, SL_E_INVALID, "%s: argument 2 (like) is NULL or a stacked array", fn);
  SL_TRY(sl_array_check_session(fn, like, "argument 2 (like)"));
  SL_CHECK_ARG(like->ndim >= 2, SL_E_DIMS, "%s: argument 2 (like) has %d axis; a directional derivative needs 2 or more "
               "(use sl_op_first_derivative)", fn, like->ndim);
  SL_CHECK_ARG(!v != !vfield, SL_E_INVALID, "%s: give exactly one of argument 3 (v) and argument 4 (vfield)", fn);
  for (int k = 0; v && k < like->ndim; k++)
    SL_CHECK_ARG(isfinite(v[k]), SL_E_INVALID, "%s: argument 3 (v): v[%d] is not finite", fn, k);
  for (int k = 0; vfield && k < like->ndim; k++) {
    char an[64];
    snprintf(an, sizeof an, "%s: argument 4 (vfield[%d])", fn, k);
    SL_TRY(sl_array_check_same(vfield[k], an, like, "argument 2 (like)"));
  }
  return SL_SUCCESS;
}

/* HStack of v_k I (or diag(vfield[k])) after the Gradient: sum_k v_k d/dx_k. */
static int first_directional(const char *fn, sl_op **out, const sl_array *like, const double *v, sl_array *const *vfield,
                             const double *sampling, sl_deriv_kind kind, int edge, int epos)
{
  SL_CHECK_INIT();
  int rc = direction_check(fn, out, like, v, vfield);
  uint64_t sd = 0;
  if (rc == SL_SUCCESS) rc = deriv_args(fn, like, sampling, 5, kind, 6, &sd);
  double vz[SL_MAX_DIMS] = {0};
  for (int k = 0; v && rc == SL_SUCCESS && k < like->ndim; k++) vz[k] = v[k] + 0.0; /* -0 and +0 agree */
  uint64_t digest = v && rc == SL_SUCCESS ? sl_fnv1a(SL_FNV1A_START, vz, sizeof *vz * (size_t)like->ndim) : 0;
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 3 (v) given", v != NULL), SL_SAME_I("argument 3 (v): the values", (int64_t)digest),
                  SL_SAME_KEY("argument 5 (sampling: its values)", sd), SL_SAME_I("argument 6 (kind)", kind),
                  SL_SAME_I(epos == 7 ? "argument 7 (edge)" : "argument 6 (edge)", edge != 0)));
  int nd = like->ndim;
  for (int k = 0; !v && k < nd; k++) { /* the field's values: finite (collective, the same on every rank) */
    char an[64];
    snprintf(an, sizeof an, "argument 4 (vfield[%d])", k);
    SL_TRY(sl_array_check_finite(vfield[k], fn, an));
  }
  sl_op *w[SL_MAX_DIMS] = {NULL}, *id = NULL, *G = NULL, *H = NULL;
  rc = sl_op_gradient(&G, like, sampling, kind, edge);
  if (rc == SL_SUCCESS && v) rc = sl_op_identity(&id, like);
  for (int k = 0; k < nd && rc == SL_SUCCESS; k++)
    rc = v ? sl_op_scaled(&w[k], id, SL_REAL(v[k])) : sl_op_diagonal(&w[k], vfield[k]);
  if (rc == SL_SUCCESS) rc = sl_op_hstack(&H, nd, w);
  if (rc == SL_SUCCESS) rc = sl_op_product(out, H, G);
  for (int k = 0; k < nd; k++) sl_op_destroy(&w[k]);
  sl_op_destroy(&id);
  sl_op_destroy(&G);
  sl_op_destroy(&H);
  return rc;
}

int sl_op_first_directional_derivative(sl_op **out, const sl_array *like, const double *v, sl_array *const *vfield,
                                       const double *sampling, sl_deriv_kind kind, int edge)
{
  const char *fn = "sl_op_first_directional_derivative";
  int rc = first_directional(fn, out, like, v, vfield, sampling, kind, edge, 7);
  if (rc == SL_SUCCESS) snprintf((*out)->name, sizeof (*out)->name, "FirstDirectionalDerivative(%d axes)", like->ndim);
  return rc;
}

int sl_op_second_directional_derivative(sl_op **out, const sl_array *like, const double *v, sl_array *const *vfield,
                                        const double *sampling, int edge)
{
  const char *fn = "sl_op_second_directional_derivative";
  SL_CHECK_INIT();
  sl_op *D = NULL, *DH = NULL, *DHD = NULL;
  /* out is not first_directional's: checked and agreed here, before anything is built */
  SL_TRY(sl_agree(sl_ctx.comm, out ? SL_SUCCESS : sl_error(SL_E_INVALID, "%s: argument 1 (out) is NULL", fn)));
  int rc = first_directional(fn, &D, like, v, vfield, sampling, SL_DERIV_CENTERED, edge, 6);
  if (rc == SL_SUCCESS) rc = sl_op_adjoint(&DH, D);
  if (rc == SL_SUCCESS) rc = sl_op_product(&DHD, DH, D);
  if (rc == SL_SUCCESS) rc = sl_op_scaled(out, DHD, SL_REAL(-1.0));
  if (rc == SL_SUCCESS) snprintf((*out)->name, sizeof (*out)->name, "SecondDirectionalDerivative(%d axes)", like->ndim);
  sl_op_destroy(&D);
  sl_op_destroy(&DH);
  sl_op_destroy(&DHD);
  return rc;
}
