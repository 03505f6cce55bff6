/* sl_solve_lsqr: LSQR (Paige and Saunders 1982) with the recurrences and stopping rules of
 * scipy.sparse.linalg.lsqr. The bidiagonalisation's norms come from two fused reductions per iteration;
 * the scalar recurrences are two steps of solver_prog.h per iteration, on the GPU when the vector
 * operations run there; on one chunk and one rank each side of the bidiagonalisation is one fused task. */
#include "solvers/solver_internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"

static double *at(double *v, int i) { return &v[slot(i)]; }

static int run(sl_solver *sv, sl_op *A, const sl_array *y, sl_array *x)
{
  sl_array *d[4] = {NULL}, *g[2] = {NULL}; /* domain: v, w, A^H u (, w / rho for var); range: u, A v */
  sl_array *var = (sl_array *)sv->o.var;
  int rc = solver_arrays(A, 0, d, var ? 4 : 3);
  if (rc == SL_SUCCESS) rc = solver_arrays(A, 1, g, 2);
  sl_array *v = d[0], *w = d[1], *atu = d[2], *u = g[0], *av = g[1];
  const sl_solver_options *o = &sv->o;
  sl_prog_arg arg = {.flag = sv->cost_inf_ok, .rows = sv->ring_rows, .niter = o->niter,
                     .d = {o->damp, o->atol, o->btol, o->conlim > 0 ? 1.0 / o->conlim : 0.0}};
  const sl_array *yu[2] = {y, u}, *vw[2] = {v, w}, *none[2] = {NULL, NULL};
  if (rc == SL_SUCCESS) rc = solver_residual(sv, A, y, x, u, av);
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, yu, none, sv->sc);
  if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_LSQR_BETA0, arg, 2, sv->sc);
  if (rc == SL_SUCCESS) rc = sl_array_scale_h(u, SL_REAL(1), sv->hstate, slot(LSQR_INV_BETA));
  if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_ADJOINT, u, v);
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, vw, none, sv->sc);
  if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_LSQR_ALPHA0, arg, 1, sv->sc);
  if (rc == SL_SUCCESS) rc = sl_array_scale_h(v, SL_REAL(1), sv->hstate, slot(LSQR_INV_ALPHA));
  if (rc == SL_SUCCESS) rc = sl_array_copy(w, v);
  if (rc == SL_SUCCESS && var) rc = sl_array_fill(var, SL_REAL(0));
  int stop = 0;
  sv->o.tol = 0; /* LSQR's own rules decide (S_STOP) */
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  int fuse = rc == SL_SUCCESS && !var && solver_fusable(x) && solver_fusable(u), split = 0;
  if (rc == SL_SUCCESS) rc = solver_fusable_split(x, u, &split); /* every rank takes part */
  split = split && !var;
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    arg.k = k;
    if (fuse || split) { /* each side of the bidiagonalisation after its apply in one task (split: u's update
                          and norm, the allreduce, then step A and u's scaling) */
      starpu_data_handle_t va[2] = {sl_array_chunk(u, 0), sl_array_chunk(av, 0)}, *hn = &sv->sc[0]->handle;
      starpu_data_handle_t vb[4] = {sl_array_chunk(v, 0), sl_array_chunk(atu, 0), sl_array_chunk(w, 0), sl_array_chunk(x, 0)};
      rc = sl_op_apply(A, SL_FORWARD, v, av);
      if (rc == SL_SUCCESS && !split) rc = codelet_krylov_submit(SL_KRY_LSQR_U, x->dtype, sv->hstate, sv->hring, NULL, va, arg);
      if (rc == SL_SUCCESS && split) {
        rc = codelet_krylov_submit(SL_KRY_LSQR_DIST_U1, x->dtype, sv->hstate, sv->hring, hn, va, arg);
        if (rc == SL_SUCCESS) rc = comm_allreduce(u->group->channel, SL_FLOAT64, COMM_SUM, *hn);
        if (rc == SL_SUCCESS) rc = codelet_krylov_submit(SL_KRY_LSQR_DIST_U2, x->dtype, sv->hstate, sv->hring, hn, va, arg);
      }
      if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_ADJOINT, u, atu);
      if (rc == SL_SUCCESS) rc = codelet_krylov_submit(SL_KRY_LSQR_V, x->dtype, sv->hstate, sv->hring, NULL, vb, arg);
      sv->recorded = k;
      if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
      continue;
    }
    rc = sl_op_apply(A, SL_FORWARD, v, av);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(u, SL_REAL(1), NULL, 0, av, SL_REAL(1), sv->hstate, slot(LSQR_MALPHA));
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, &yu[1], none, sv->sc);
    if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_LSQR_STEP_A, arg, 1, sv->sc);
    if (rc == SL_SUCCESS) rc = sl_array_scale_h(u, SL_REAL(1), sv->hstate, slot(LSQR_INV_BETA));
    if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_ADJOINT, u, atu);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(v, SL_REAL(1), sv->hstate, slot(LSQR_CU), atu, SL_REAL(1), sv->hstate, slot(LSQR_CV));
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, vw, none, sv->sc);
    if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_LSQR_STEP_B, arg, 2, sv->sc);
    if (rc == SL_SUCCESS) rc = sl_array_scale_h(v, SL_REAL(1), sv->hstate, slot(LSQR_INV_ALPHA));
    if (rc == SL_SUCCESS && var) { /* scipy's calc_var: var += |w / rho|^2 */
      rc = sl_array_axpby_h(d[3], SL_REAL(1), sv->hstate, slot(LSQR_INV_RHO), w, SL_REAL(0), NULL, 0);
      if (rc == SL_SUCCESS) rc = sl_array_abs2_p(var, d[3], 1);
    }
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(x, SL_REAL(1), sv->hstate, slot(LSQR_T1), w, SL_REAL(1), NULL, 0);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(w, SL_REAL(1), NULL, 0, v, SL_REAL(1), sv->hstate, slot(LSQR_T2));
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  if (rc == SL_SUCCESS) {
    sv->info->anorm = *at(sv->state, LSQR_ANORM);
    sv->info->acond = *at(sv->state, LSQR_ACOND);
    sv->info->arnorm = *at(sv->state, LSQR_ARNORM);
    sv->info->xnorm = *at(sv->state, LSQR_XNORM);
  }
  solver_arrays_free(A, 0, d, 4);
  solver_arrays_free(A, 1, g, 2);
  return rc;
}

int sl_solve_lsqr(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  sl_solver sv;
  int rc = solver_begin(&sv, "LSQR", A, y, x, o, info);
  solver_steps_on_device(&sv);
  if (rc == SL_SUCCESS) rc = run(&sv, A, y, x);
  return solver_end(&sv, rc);
}
