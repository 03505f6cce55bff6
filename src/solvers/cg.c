/* sl_solve_cg: conjugate gradients on (A + damp^2 I) x = y, classic (two reductions per iteration) or pipelined (Ghysels and
 * Vanroose 2014: one fused reduction that overlaps the next apply). Every coefficient is computed by a
 * step of solver_prog.h, on the GPU when the vector operations run there; the host waits only for the
 * convergence test. */

#include "solvers/solver_internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"

/* out = (A + damp^2 I) in */
static int apply_damped(const sl_solver *sv, sl_op *A, const sl_array *in, sl_array *out)
{
  SL_TRY(sl_op_apply(A, SL_FORWARD, in, out));
  double d2 = sv->o.damp * sv->o.damp;
  return d2 > 0 ? sl_array_axpby(out, SL_REAL(d2), in, SL_REAL(1)) : SL_SUCCESS;
}

/* r = y - (A + damp^2 I) x0 (tmp laid out like the range), or y when x is zero */
static int residual(sl_solver *sv, sl_op *A, const sl_array *y, const sl_array *x, sl_array *r, sl_array *tmp)
{
  SL_TRY(sl_array_copy(r, y));
  if (!sv->o.x0) return SL_SUCCESS;
  SL_TRY(apply_damped(sv, A, x, tmp));
  return sl_array_axpby(r, SL_REAL(-1), tmp, SL_REAL(1));
}

static const sl_prog_arg noarg = {0};

static int classic(sl_solver *sv, sl_op *A, const sl_array *y, sl_array *x)
{
  sl_array *t[3] = {NULL}; /* r, c, Ac */
  int rc = solver_arrays(A, 0, t, 3);
  sl_array *r = t[0], *c = t[1], *Ac = t[2];
  const sl_array *rn[1] = {r}, *none[1] = {NULL}, *cv[1] = {c}, *acv[1] = {Ac};
  if (rc == SL_SUCCESS) rc = residual(sv, A, y, x, r, Ac);
  if (rc == SL_SUCCESS) rc = sl_array_copy(c, r);
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, rn, none, &sv->sc[0]);
  if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_CG_INIT, noarg, 1, &sv->sc[0]);
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  /* every rank takes part in the agreement (a rank alone in a masked group fuses locally: then none fuses
   * around the allreduces) */
  int fuse = rc == SL_SUCCESS && solver_fusable(x), dist = 0;
  if (rc == SL_SUCCESS) rc = solver_fusable_dist(x, &dist);
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    rc = apply_damped(sv, A, c, Ac);
    if (rc == SL_SUCCESS && (fuse || dist)) { /* the rest of the iteration in one task (dist: c^H A c allreduced;
                                                  alpha, x, r, ||r||^2 in one task; allreduced; beta, c) */
      sl_prog_arg rec = {.k = k, .flag = sv->cost_inf_ok, .rows = sv->ring_rows};
      starpu_data_handle_t va[4] = {sl_array_chunk(c, 0), sl_array_chunk(Ac, 0), sl_array_chunk(x, 0), sl_array_chunk(r, 0)};
      starpu_data_handle_t vb[2] = {sl_array_chunk(r, 0), sl_array_chunk(c, 0)};
      starpu_data_handle_t sa[2] = {sv->sc[1]->handle, sv->sc[0]->handle};
      if (!dist) {
        rc = codelet_krylov_submit(SL_KRY_CG, x->dtype, sv->hstate, sv->hring, NULL, va, rec);
      } else {
        rc = sl_array_vdots_fused(1, cv, acv, &sv->sc[1]);
        if (rc == SL_SUCCESS) rc = codelet_krylov_submit(SL_KRY_CG_DIST_A, x->dtype, sv->hstate, sv->hring, sa, va, rec);
        if (rc == SL_SUCCESS) rc = comm_allreduce(x->group->channel, SL_FLOAT64, COMM_SUM, sv->sc[0]->handle);
        if (rc == SL_SUCCESS) rc = codelet_krylov_submit(SL_KRY_CG_DIST_B, x->dtype, sv->hstate, sv->hring, &sa[1], vb, rec);
      }
      sv->recorded = k;
      if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
      continue;
    }
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, cv, acv, &sv->sc[1]);
    if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_CG_ALPHA, noarg, 1, &sv->sc[1]);
    /* x += alpha c and r -= alpha Ac in one task per chunk */
    if (rc == SL_SUCCESS) rc = sl_array_axpy2_h(x, c, slot(CG_ALPHA), r, Ac, slot(CG_MALPHA), sv->hstate);
    if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, rn, none, &sv->sc[0]);
    if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_CG_BETA, noarg, 1, &sv->sc[0]);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(c, SL_REAL(1), NULL, 0, r, SL_REAL(1), sv->hstate, slot(CG_BETA));
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  solver_arrays_free(A, 0, t, 3);
  return rc;
}

/* sc[0] = ||r||^2 and sc[1] = w^H r from the chunks' parts (r's and w's partials), allreduced over the group */
static int combine_parts(sl_solver *sv, const sl_array *r, const sl_array *w)
{
  SL_TRY(codelet_combine_submit(SL_RED_ABSPOW, 0.0, r->nchunks, r->partials, sv->sc[0]->handle));
  SL_TRY(codelet_combine_submit(SL_RED_VDOT, 0.0, w->nchunks, w->partials, sv->sc[1]->handle));
  if (r->partition != SL_SCATTER || r->group->size == 1) return SL_SUCCESS;
  starpu_data_handle_t sh[2] = {sv->sc[0]->handle, sv->sc[1]->handle};
  return comm_allreduce_n(r->group->channel, SL_FLOAT64, COMM_SUM, 2, sh);
}

/* Chunk c of pipelined CG's vectors in the fused steps' order: r, w, q, z, s, p (t) and x */
static void pcg_chunks(sl_array *const *t, const sl_array *x, int c, starpu_data_handle_t v[7])
{
  for (int i = 0; i < 6; i++) v[i] = sl_array_chunk(t[i], c);
  v[6] = sl_array_chunk(x, c);
}

static int pipelined(sl_solver *sv, sl_op *A, const sl_array *y, sl_array *x)
{
  sl_array *t[6] = {NULL}; /* r, w, q, z, s, p */
  int rc = solver_arrays(A, 0, t, 6);
  sl_array *r = t[0], *w = t[1], *q = t[2], *z = t[3], *s = t[4], *p = t[5];
  const sl_array *xs[2] = {r, w}, *ys[2] = {NULL, r};
  if (rc == SL_SUCCESS) rc = residual(sv, A, y, x, r, q);
  if (rc == SL_SUCCESS) rc = apply_damped(sv, A, r, w);
  /* the first test sees ||r_0|| */
  if (rc == SL_SUCCESS) rc = sl_array_vdots_fused(1, xs, ys, &sv->sc[0]);
  if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_CG_INIT, noarg, 1, &sv->sc[0]);
  int stop = 0;
  if (rc == SL_SUCCESS) rc = solver_after(sv, 0, x, &stop);
  int fuse = rc == SL_SUCCESS && solver_fusable(x), dist = 0, parts = 0;
  if (rc == SL_SUCCESS) rc = solver_fusable_dist(x, &dist);
  /* the other cases with every rank's vectors in chunks (not stacked): the updates of a chunk in one task */
  const int chunked = !sl_ctx.set.no_fuse && x->nparts == 0 && r && r->nparts == 0 && r->nchunks == x->nchunks;
  for (int k = 1; rc == SL_SUCCESS && !stop; k++) {
    int first = k == 1;
    if (dist && !first) { /* several ranks, one chunk each: the allreduce of gamma and delta (this rank's parts
                             left by the previous fused step, or reduced here) overlapped by q = A w, then the
                             rest of the iteration and the next parts in one task */
      sl_prog_arg rec = {.k = k, .flag = 0, .rows = sv->ring_rows};
      starpu_data_handle_t v[7];
      pcg_chunks(t, x, 0, v);
      starpu_data_handle_t sh[2] = {sv->sc[0]->handle, sv->sc[1]->handle};
      rc = parts ? comm_allreduce_n(x->group->channel, SL_FLOAT64, COMM_SUM, 2, sh) : sl_array_vdots_fused(2, xs, ys, sv->sc);
      if (rc == SL_SUCCESS) rc = apply_damped(sv, A, w, q);
      if (rc == SL_SUCCESS) rc = codelet_krylov_submit(SL_KRY_PCG_DIST, x->dtype, sv->hstate, sv->hring, sh, v, rec);
      parts = 1;
      sv->recorded = k;
      if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
      continue;
    }
    if (fuse && !first) { /* one rank, one chunk: q = A w, then the rest of the iteration in one task */
      sl_prog_arg rec = {.k = k, .flag = 0, .rows = sv->ring_rows}; /* flag: not the first; no +Inf cost */
      starpu_data_handle_t v[7];
      pcg_chunks(t, x, 0, v);
      rc = apply_damped(sv, A, w, q);
      if (rc == SL_SUCCESS)
        rc = codelet_krylov_submit(parts ? SL_KRY_PCG_NEXT : SL_KRY_PCG, x->dtype, sv->hstate, sv->hring, NULL, v, rec);
      parts = 1; /* the step's pass left the next gamma and delta in the state */
      sv->recorded = k;
      if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
      continue;
    }
    /* gamma = r^H r, delta = w^H r: one allreduce, overlapped by q = A w (the chunks' parts left by the
     * previous iteration's update tasks, combined here, or reduced here) */
    rc = parts ? combine_parts(sv, r, w) : sl_array_vdots_fused(2, xs, ys, sv->sc);
    if (rc == SL_SUCCESS) rc = apply_damped(sv, A, w, q);
    if (rc == SL_SUCCESS) rc = solver_prog(sv, SL_PROG_PCG_COEFFS, (sl_prog_arg){.k = k, .flag = first}, 2, sv->sc);
    if (rc == SL_SUCCESS && chunked && !first) { /* the updates and the next parts: one task per chunk */
      for (int c = 0; rc == SL_SUCCESS && c < x->nchunks; c++) {
        starpu_data_handle_t v[7];
        pcg_chunks(t, x, c, v);
        starpu_data_handle_t ph[2] = {r->partials[c], w->partials[c]};
        rc = codelet_krylov_submit(SL_KRY_PCG_CHUNK, x->dtype, sv->hstate, NULL, ph, v, (sl_prog_arg){.k = k});
      }
      parts = 1;
      if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
      continue;
    }
    if (rc == SL_SUCCESS && first) {
      rc = sl_array_copy(z, q);
      if (rc == SL_SUCCESS) rc = sl_array_copy(s, w);
      if (rc == SL_SUCCESS) rc = sl_array_copy(p, r);
    } else if (rc == SL_SUCCESS) {
      rc = sl_array_axpby_h(z, SL_REAL(1), NULL, 0, q, SL_REAL(1), sv->hstate, slot(CG_BETA));
      if (rc == SL_SUCCESS) rc = sl_array_axpby_h(s, SL_REAL(1), NULL, 0, w, SL_REAL(1), sv->hstate, slot(CG_BETA));
      if (rc == SL_SUCCESS) rc = sl_array_axpby_h(p, SL_REAL(1), NULL, 0, r, SL_REAL(1), sv->hstate, slot(CG_BETA));
    }
    if (rc == SL_SUCCESS) rc = sl_array_axpy2_h(x, p, slot(CG_ALPHA), r, s, slot(CG_MALPHA), sv->hstate);
    if (rc == SL_SUCCESS) rc = sl_array_axpby_h(w, SL_REAL(1), sv->hstate, slot(CG_MALPHA), z, SL_REAL(1), NULL, 0);
    if (rc == SL_SUCCESS) rc = solver_after(sv, k, x, &stop);
  }
  solver_arrays_free(A, 0, t, 6);
  return rc;
}

int sl_solve_cg(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info)
{
  sl_solver sv;
  int rc = solver_begin(&sv, o && o->pipelined ? "CG (pipelined)" : "CG", A, y, x, o, info);
  solver_steps_on_device(&sv);
  if (rc == SL_SUCCESS) rc = sv.o.pipelined ? pipelined(&sv, A, y, x) : classic(&sv, A, y, x);
  return solver_end(&sv, rc);
}
