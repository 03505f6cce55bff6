/* sl_solve_cgls: CG on the normal equations (A^H A + damp^2 I) x = A^H y, in pylops' arrangement:
 * s = y - A x, r = A^H s - damp^2 x, c the direction, q = A c. Two fused reductions per iteration; the
 * coefficients are steps of solver_prog.h, on the GPU when the vector operations run there. */
#include "solvers/solver_internal.h"
#include "codelets/codelets.h"

/* r = A^H s - damp^2 x */
static int normal_residual(sl_op *A, const sl_array *s, const sl_array *x, sl_array *r, double damp2)
{
  SL_TRY(sl_op_apply(A, SL_ADJOINT, s, r));
  if (damp2 == 0) return SL_SUCCESS;
  return sl_array_axpby(r, SL_REAL(-damp2), x, SL_REAL(1));
}

static int run(sl_solver *sv, sl_op *A, const sl_array *y, sl_array *x)
{
  sl_array *d[2] = {NULL}, *g[2] = {NULL}; /* domain: r, c; range: s, q */
  int rc = solver_arrays(A, 0, d, 2);
  if (rc == SL_SUCCESS) rc = solver_arrays(A, 1, g, 2);
  sl_array *r = d[0], *c = d[1], *s = g[0], *q = g[1];
  sl_prog_arg arg = {.flag = sv->cost_inf_ok, .rows = sv->ring_rows, .d = {sv->o.damp * sv->o.damp}};
  const sl_array *rs[3] = {r, s, x}, *qc[2] = {q, c}, *none[3] = {NULL, NULL, NULL};
  if (rc == SL_SUCCESS) rc = solver_residual(sv, A, y, x, s, q);
  if (rc == SL_SUCCESS) rc = normal_residual(A, s, x, r, arg.d[0]);
  if (rc == SL_SUCCESS) rc = sl_array_copy(c, r);
  if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_FORWARD, c, q);
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(2, rs, none, sv->sc);
  if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_CGLS_INIT, arg, 2, sv->sc);
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  int fuse = rc == SL_SUCCESS && solver_fusable(x) && solver_fusable(s), split = 0;
  if (rc == SL_SUCCESS) rc = solver_fusable_split(x, s, &split); /* every rank takes part */
  const sl_array *qv[1] = {q}, *sv1[1] = {s};
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    if (fuse || split) { /* one task on each side of the adjoint: the norms, the step, the updates (split: the
                          range's norms reduced and allreduced before each, the domain's in the task) */
      arg.k = k;
      starpu_data_handle_t va[4] = {sl_array_chunk(q, 0), sl_array_chunk(c, 0), sl_array_chunk(x, 0), sl_array_chunk(s, 0)};
      starpu_data_handle_t vb[4] = {sl_array_chunk(r, 0), sl_array_chunk(s, 0), sl_array_chunk(x, 0), sl_array_chunk(c, 0)};
      if (split) rc = sl_array_vdots_fused(1, qv, none, &sv->sc[0]);
      if (rc == SL_SUCCESS)
        rc = codelet_krylov_submit(split ? SL_KRY_CGLS_DIST_A : SL_KRY_CGLS_ALPHA, x->dtype, sv->hstate, sv->hring,
                                   split ? &sv->sc[0]->handle : NULL, va, arg);
      if (rc == SL_SUCCESS) rc = normal_residual(A, s, x, r, arg.d[0]);
      if (rc == SL_SUCCESS && split) rc = sl_array_vdots_fused(1, sv1, none, &sv->sc[1]);
      if (rc == SL_SUCCESS)
        rc = codelet_krylov_submit(split ? SL_KRY_CGLS_DIST_B : SL_KRY_CGLS_BETA, x->dtype, sv->hstate, sv->hring,
                                   split ? &sv->sc[1]->handle : NULL, vb, arg);
      sv->recorded = k;
      if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_FORWARD, c, q);
      if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
      continue;
    }
    rc = sl_array_vdots_fused(2, qc, none, sv->sc);
    if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_CGLS_ALPHA, arg, 2, sv->sc);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(x, SL_REAL(1), sv->hstate, slot(CGLS_ALPHA), c, SL_REAL(1), NULL, 0);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(s, SL_REAL(1), sv->hstate, slot(CGLS_MALPHA), q, SL_REAL(1), NULL, 0);
    if (rc == SL_SUCCESS) rc = normal_residual(A, s, x, r, arg.d[0]);
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(3, rs, none, sv->sc);
    if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_CGLS_BETA, arg, 3, sv->sc);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(c, SL_REAL(1), NULL, 0, r, SL_REAL(1), sv->hstate, slot(CGLS_BETA));
    if (rc == SL_SUCCESS) rc = sl_op_apply(A, SL_FORWARD, c, q);
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  solver_arrays_free(A, 0, d, 2);
  solver_arrays_free(A, 1, g, 2);
  return rc;
}

int sl_solve_cgls(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  sl_solver sv;
  int rc = solver_begin(&sv, "CGLS", A, y, x, o, info);
  solver_steps_on_device(&sv);
  if (rc == SL_SUCCESS) rc = run(&sv, A, y, x);
  return solver_end(&sv, rc);
}
