/* sl_solve_admm_l2: ADMM for min 1/2 ||Op x - b||^2 + g(A x) (pyproximal's ADMML2). The x-update solves
 * (Op^H Op + A^H A / tau) x = Op^H b + A^H (z - u) / tau by CG (inner_niter iterations, warm-started from the
 * last x; one host wait each), then z = prox_(tau g)(A x + u) and u += A x - z. */
#include <math.h>
#include <stdio.h>

#include "solvers/proximal_common.h"

/* Op^H Op + (1 / tau) A^H A */
static int normal_op(sl_op *Op, sl_op *A, double tau, sl_op **out)
{
  sl_op *oh = NULL, *oho = NULL, *ah = NULL, *aha = NULL, *s = NULL;
  int rc = sl_op_adjoint(&oh, Op);
  if (rc == SL_SUCCESS) rc = sl_op_product(&oho, oh, Op);
  if (rc == SL_SUCCESS) rc = sl_op_adjoint(&ah, A);
  if (rc == SL_SUCCESS) rc = sl_op_product(&aha, ah, A);
  if (rc == SL_SUCCESS) rc = sl_op_scaled(&s, aha, SL_REAL(1.0 / tau));
  if (rc == SL_SUCCESS) rc = sl_op_sum(out, oho, s);
  sl_op_destroy(&s);
  sl_op_destroy(&aha);
  sl_op_destroy(&ah);
  sl_op_destroy(&oho);
  sl_op_destroy(&oh);
  return rc;
}

static int run(sl_solver *sv, sl_prox *g, sl_op *Op, const sl_array *b, sl_op *A, sl_array *x)
{
  const sl_solver_options *o = &sv->o;
  double tau = o->tau > 0 ? o->tau : 1.0;
  sv->info->alpha = tau;
  int want = 0, rc = prox_want_cost(sv, &want);
  sl_op *N = NULL;
  sl_prox *f = NULL;
  sl_array *d[4] = {NULL}, *r[4] = {NULL}; /* domain: xold (then the update), rhs, Op^H b, t; range of A: z, u, Ax, w */
  if (rc == SL_SUCCESS) rc = normal_op(Op, A, tau, &N);
  if (rc == SL_SUCCESS) rc = prox_work(x, d, 4);
  if (rc == SL_SUCCESS) rc = prox_work(sl_op_range(A), r, 4);
  if (rc == SL_SUCCESS && want) rc = prox_l2_make(&f, Op, b, 1.0, 1, 0); /* b checked finite by the caller */
  sl_array *xold = d[0], *rhs = d[1], *opb = d[2], *t = d[3], *z = r[0], *u = r[1], *ax = r[2], *w = r[3];
  if (rc == SL_SUCCESS) rc = sl_op_apply(Op, SL_ADJOINT, b, opb);
  if (rc == SL_SUCCESS) rc = sl_array_fill(z, SL_REAL(0));
  if (rc == SL_SUCCESS) rc = sl_array_fill(u, SL_REAL(0));
  if (rc == SL_SUCCESS && o->show && sl_ctx.rank == 0)
    fprintf(sv->out, "  tau = %g, %d CG iterations per x-update\n", tau, o->inner_niter);
  sl_solver_options io;
  sl_inner_cg_options(&io, o->inner_niter, xold);
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    rc = sl_array_copy(xold, x);
    if (rc == SL_SUCCESS) rc = sl_array_copy(w, z); /* rhs = Op^H b + A^H (z - u) / tau */
    if (rc == SL_SUCCESS) rc = sl_array_axpby(w, SL_REAL(-1), u, SL_REAL(1));
    if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_ADJOINT, w, t);
    if (rc == SL_SUCCESS) rc = sl_array_copy(rhs, opb);
    if (rc == SL_SUCCESS) rc = sl_array_axpby(rhs, SL_REAL(1.0 / tau), t, SL_REAL(1));
    if (rc == SL_SUCCESS) rc = sl_solve_cg(N, rhs, x, &io, NULL);
    if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_FORWARD, x, ax);
    if (rc == SL_SUCCESS) rc = sl_array_copy(z, ax); /* z = prox_(tau g)(A x + u) */
    if (rc == SL_SUCCESS) rc = sl_array_axpby(z, SL_REAL(1), u, SL_REAL(1));
    if (rc == SL_SUCCESS) rc = prox_apply_p(g, tau, z, z);
    if (rc == SL_SUCCESS) rc = sl_array_axpby(u, SL_REAL(1), ax, SL_REAL(1)); /* u += A x - z */
    if (rc == SL_SUCCESS) rc = sl_array_axpby(u, SL_REAL(-1), z, SL_REAL(1));
    if (rc == SL_SUCCESS) rc = sl_array_axpby(xold, SL_REAL(1), x, SL_REAL(-1));
    const sl_array *dd[1] = {xold}, *none[1] = {NULL};
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, dd, none, sv->sc);
    if (rc == SL_SUCCESS && want) rc = prox_value_p(f, x, sv->sc[1]);
    if (rc == SL_SUCCESS && want) rc = prox_value_p(g, ax, sv->sc[2]);
    if (rc == SL_SUCCESS) rc = prox_record(sv, k, want, 1.0, 0);
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  sl_prox_destroy(&f);
  prox_work_free(d, 4);
  prox_work_free(r, 4);
  sl_op_destroy(&N);
  return rc;
}

int sl_solve_admm_l2(sl_prox *g, sl_op *Op, const sl_array *b, sl_op *A, sl_array *x, const sl_solver_options *o,
                     sl_solver_info *info)
{
  const char *name = "ADMM-L2";
  int rc = SL_SUCCESS;
  sl_op *id = NULL;
  if (!g) rc = sl_error(SL_E_INVALID, "%s: argument 1 (g) is NULL", name);
  else if (!Op) rc = sl_error(SL_E_INVALID, "%s: argument 2 (Op) is NULL", name);
  else if (!b) rc = sl_error(SL_E_INVALID, "%s: argument 3 (b) is NULL", name);
  else if (!x) rc = sl_error(SL_E_INVALID, "%s: argument 5 (x) is NULL", name);
  else if (x == b) rc = sl_error(SL_E_INVALID, "%s: arguments 3 (b) and 5 (x) are the same array", name);
  else if (b->acquired) rc = sl_error(SL_E_STATE, "%s: argument 3 (b) is acquired by the host; release it first", name);
  else if ((rc = sl_array_check_same(b, "ADMM-L2: argument 3 (b)", sl_op_range(Op), "the range of argument 2 (Op)")) != SL_SUCCESS) {
  } else if ((rc = sl_array_check_same(x, "ADMM-L2: argument 5 (x)", sl_op_domain(Op), "the domain of argument 2 (Op)")) != SL_SUCCESS) {
  } else if (A && (rc = sl_array_check_same(x, "ADMM-L2: argument 5 (x)", sl_op_domain(A), "the domain of argument 4 (A)")) != SL_SUCCESS) {
  } else if (A && sl_op_dtype(A) != sl_op_dtype(Op)) {
    rc = sl_error(SL_E_DTYPE, "%s: arguments 2 (Op) and 4 (A) differ in dtype", name);
  } else {
    rc = prox_check_p(g, A ? sl_op_range(A) : x, "ADMM-L2: the range of argument 4 (A), for g");
  }
  char desc[200];
  snprintf(desc, sizeof desc, "Op = %s, g = %s, A = %s", Op ? sl_op_name(Op) : "?", g ? g->name : "?",
           A ? sl_op_name(A) : "Identity");
  sl_solver sv;
  rc = solver_begin_prox(&sv, name, rc, desc, x, o, info);
  if (rc == SL_SUCCESS)
    rc = SL_AGREE(name, SL_SUCCESS, SL_SAME_KEY("argument 1 (g: its kind and parameters)", prox_key(g)),
                  SL_SAME_KEY("argument 2 (Op: its name and shapes)", sl_op_key(Op)),
                  SL_SAME_KEY("argument 4 (A: given or NULL, its name and shapes)", A ? sl_op_key(A) : 1));
  if (rc == SL_SUCCESS) rc = sl_array_check_finite(b, name, "argument 3 (b)");
  if (rc == SL_SUCCESS && !A) rc = sl_op_identity(&id, x);
  if (rc == SL_SUCCESS) rc = run(&sv, g, Op, b, A ? A : id, x);
  sl_op_destroy(&id);
  return solver_end(&sv, rc);
}
