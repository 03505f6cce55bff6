/* L2: f(x) = sigma / 2 ||Op x - b||^2, with an operator (the prox by CG on I + tau sigma Op^H Op, the
 * operator built once per tau) or without one (closed forms for the prox and its conjugate's prox). */
#include <limits.h>
#include <math.h>

#include "prox/prox_internal.h"
#include "operators/op_internal.h"

static int l2_check(const sl_prox *p, const sl_array *x, const char *an)
{
  if (p->op) return sl_array_check_same(x, an, sl_op_domain(p->op), "the domain of L2's operator");
  if (p->b) return sl_array_check_same(x, an, p->b, "L2's b");
  return SL_SUCCESS;
}

/* I + tau sigma Op^H Op for this tau (kept until another tau comes) */
static int normal_op(sl_prox *p, double tau)
{
  if (p->normal && p->tau_n == tau) return SL_SUCCESS;
  sl_op_destroy(&p->normal);
  sl_op *id = NULL, *ah = NULL, *aha = NULL, *s = NULL;
  int rc = sl_op_identity(&id, sl_op_domain(p->op));
  if (rc == SL_SUCCESS) rc = sl_op_adjoint(&ah, p->op);
  if (rc == SL_SUCCESS) rc = sl_op_product(&aha, ah, p->op);
  if (rc == SL_SUCCESS) rc = sl_op_scaled(&s, aha, SL_REAL(tau * p->sigma));
  if (rc == SL_SUCCESS) rc = sl_op_sum(&p->normal, id, s);
  sl_op_destroy(&s);
  sl_op_destroy(&aha);
  sl_op_destroy(&ah);
  sl_op_destroy(&id);
  if (rc == SL_SUCCESS) p->tau_n = tau;
  return rc;
}

static int l2_prox(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  double ts;
  SL_TRY(prox_weighted_step(p, tau, &ts));
  if (!p->op) { /* (x + tau sigma b) / (1 + tau sigma) */
    SL_TRY(sl_array_axpby(y, SL_REAL(1.0 / (1.0 + ts)), x, SL_REAL(0)));
    return p->b ? sl_array_axpby(y, SL_REAL(ts / (1.0 + ts)), p->b, SL_REAL(1)) : SL_SUCCESS;
  }
  if (p->b && !p->opb) {
    SL_TRY(sl_op_create_domain(p->op, &p->opb));
    SL_TRY(sl_op_apply(p->op, SL_ADJOINT, p->b, p->opb));
  }
  SL_TRY(normal_op(p, tau));
  sl_array *rhs = NULL, *x0 = NULL;
  SL_TRY(prox_scratch(p, 0, x, &rhs));
  SL_TRY(sl_array_copy(rhs, x));
  if (p->opb) SL_TRY(sl_array_axpby(rhs, SL_REAL(ts), p->opb, SL_REAL(1)));
  const sl_array *start = x;
  if (y == x) { /* CG needs its start apart from its solution */
    SL_TRY(prox_scratch(p, 2, x, &x0));
    SL_TRY(sl_array_copy(x0, x));
    start = x0;
  }
  sl_solver_options o;
  sl_inner_cg_options(&o, p->cg_niter, start);
  return sl_solve_cg(p->normal, rhs, y, &o, NULL);
}

/* f*(y) = ||y||^2 / (2 sigma) + Re <b, y>: prox_(tau f*)(x) = sigma (x - tau b) / (sigma + tau) */
static int l2_dual(sl_prox *p, double tau, const sl_array *x, sl_array *y)
{
  double c = p->sigma / (p->sigma + tau);
  SL_TRY(sl_array_axpby(y, SL_REAL(c), x, SL_REAL(0)));
  return p->b ? sl_array_axpby(y, SL_REAL(-c * tau), p->b, SL_REAL(1)) : SL_SUCCESS;
}

/* r = Op x - b in a scratch array (x itself when there is neither) */
static int residual(sl_prox *p, const sl_array *x, const sl_array **r)
{
  if (!p->op && !p->b) {
    *r = x;
    return SL_SUCCESS;
  }
  sl_array *t = NULL;
  SL_TRY(prox_scratch(p, 1, p->op ? sl_op_range(p->op) : x, &t));
  if (p->op) SL_TRY(sl_op_apply(p->op, SL_FORWARD, x, t));
  else SL_TRY(sl_array_copy(t, x));
  if (p->b) SL_TRY(sl_array_axpby(t, SL_REAL(-1), p->b, SL_REAL(1)));
  *r = t;
  return SL_SUCCESS;
}

static int l2_value(sl_prox *p, const sl_array *x, sl_scalar *s)
{
  const sl_array *r = NULL;
  SL_TRY(residual(p, x, &r));
  const sl_array *none[1] = {NULL};
  SL_TRY(sl_array_vdots_fused(1, &r, none, &s));
  return prox_scalar_affine(s, 0.5 * p->sigma, 0, 0);
}

static int l2_grad(sl_prox *p, const sl_array *x, sl_array *g)
{
  const sl_array *r = NULL;
  SL_TRY(residual(p, x, &r));
  if (p->op) SL_TRY(sl_op_apply(p->op, SL_ADJOINT, r, g));
  else SL_TRY(sl_array_copy(g, r));
  return sl_array_scale(g, SL_REAL(p->sigma));
}

static int l2_lipschitz(sl_prox *p, const sl_array *like, double *L)
{
  if (!p->op) {
    *L = p->sigma;
    return SL_SUCCESS;
  }
  if (p->lip == 0) {
    double lambda = 0;
    SL_TRY(sl_normal_eig(p->op, 30, &lambda));
    p->lip = p->sigma * lambda;
  }
  *L = p->lip;
  return SL_SUCCESS;
}

static void l2_destroy(sl_prox *p)
{
  sl_op_destroy(&p->normal);
  sl_op_destroy(&p->op);
  sl_array_destroy(&p->b);
  sl_array_destroy(&p->opb);
}

static const sl_prox_ops l2_ops = {l2_prox, NULL, l2_value, l2_grad, l2_lipschitz, l2_check, l2_destroy};
static const sl_prox_ops l2_plain_ops = {l2_prox, l2_dual, l2_value, l2_grad, l2_lipschitz, l2_check, l2_destroy};

int sl_prox_l2(sl_prox **p, sl_op *Op, const sl_array *b, double sigma, int cg_niter)
{
  return prox_l2_make(p, Op, b, sigma, cg_niter, 1);
}

int prox_l2_make(sl_prox **p, sl_op *Op, const sl_array *b, double sigma, int cg_niter, int check_b)
{
  const char *fn = "sl_prox_l2";
  int rc = SL_SUCCESS;
  if (!sl_ctx.initialized) rc = sl_error(SL_E_STATE, "%s: starlops is not initialised", fn);
  else if (!p) rc = sl_error(SL_E_INVALID, "%s: argument 1 (p) is NULL", fn);
  else if (!(sigma >= 0 && isfinite(sigma))) rc = sl_error(SL_E_INVALID, "%s: argument 4 (sigma) must be finite and >= 0, got %g", fn, sigma);
  else if (Op && (cg_niter < 1 || cg_niter >= INT_MAX / 4))
    rc = sl_error(SL_E_INVALID, "%s: argument 5 (cg_niter) must be >= 1 and < %d with an operator, got %d", fn, INT_MAX / 4, cg_niter);
  else if (Op && sl_op_check_session(fn, Op, "argument 2 (Op)") != SL_SUCCESS) rc = SL_E_STATE;
  else if (b && b->session != sl_session()) rc = sl_array_check_session(fn, b, "argument 3 (b)");
  else if (b && b->acquired) rc = sl_error(SL_E_STATE, "%s: argument 3 (b) is acquired by the host; release it first", fn);
  else if (Op && b) rc = sl_array_check_same(b, "sl_prox_l2: argument 3 (b)", sl_op_range(Op), "the range of argument 2 (Op)");
  SL_TRY(SL_AGREE(fn, rc, sl_same_d("argument 4 (sigma)", sigma), SL_SAME_I("argument 5 (cg_niter)", Op ? cg_niter : 0),
                  SL_SAME_I("argument 2 (Op: given or NULL)", Op != NULL), SL_SAME_I("argument 3 (b: given or NULL)", b != NULL)));
  sl_array *bc = NULL;
  if (b) {
    /* a NaN or an Inf in b would pass unseen where a Box or an indicator clips what it reaches */
    if (check_b) SL_TRY(sl_array_check_finite(b, fn, "argument 3 (b)"));
    rc = sl_agree(sl_ctx.comm, sl_array_clone(&bc, b, SL_STORE_TEMP));
    if (rc == SL_SUCCESS) rc = sl_agree(sl_ctx.comm, sl_array_copy(bc, b));
  }
  sl_prox *q = NULL;
  if (rc == SL_SUCCESS) rc = prox_make(&q, Op ? &l2_ops : &l2_plain_ops, Op ? "L2(Op)" : "L2");
  if (rc != SL_SUCCESS) {
    sl_array_destroy(&bc);
    return rc;
  }
  q->sigma = sigma;
  q->op = Op ? sl_op_ref(Op) : NULL;
  q->b = bc;
  q->cg_niter = Op ? cg_niter : 0; /* unused (and not agreed) without an operator */
  *p = q;
  return SL_SUCCESS;
}
