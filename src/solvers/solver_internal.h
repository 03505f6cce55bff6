/* What the solvers share: a state of scalars on the task graph, the convergence test on the host, the
 * iteration table, the history of norms. */
#ifndef SL_SOLVER_INTERNAL_H
#define SL_SOLVER_INTERNAL_H

#include "internal.h"
#include "solvers/solver_prog.h"


typedef struct sl_solver {
  const char *name;
  sl_solver_options o;
  sl_solver_info *info;
  sl_solver_info local_info;
  double t0;
  double state[2 * SOLVER_MAX_SLOTS];
  starpu_data_handle_t hstate;
  double *hist;               /* 3 doubles per iteration: cost, monitored value, aux */
  double *ring;               /* the rows since the last test (row k at k % ring_rows), filled by the graph */
  starpu_data_handle_t hring;
  int ring_rows;
  int fetched;                /* the last iteration whose row the host has copied from the ring */
  int recorded;               /* the last iteration whose row a fused step wrote (solver_after skips it) */
  int on_device;              /* the scalar steps run on a GPU (every step of the solver is a solver_prog.h step) */
  int printed;                /* last iteration the table has considered */
  int row_printed;            /* last iteration it printed */
  int iter;                   /* iterations done */
  int no_initial_test;        /* iteration 0 has nothing to test (ISTA/FISTA, the proximal solvers) */
  int cost_inf_ok;            /* the cost may be +Inf (an indicator's value) without stopping the solve */
  int cb_stop;                /* the callback asked to stop: acted on at the next test */
  sl_scalar *sc[6];           /* reduction results (sc[5]: the final check of x) */
  const sl_array *x;          /* the solution */
  FILE *out;
} sl_solver;

/** Validates the common arguments (A, y like A's range, x like its domain, options), applies the defaults,
 *  registers the state and the history, prints the header; x = x0 or 0. */
int solver_begin(sl_solver *sv, const char *name, sl_op *A, const sl_array *y, sl_array *x,
                 const sl_solver_options *o, sl_solver_info *info);
/** solver_begin for the proximal solvers: rc is the caller's local verdict on its own arguments, desc the
 *  problem for the header; x is laid out as the caller checked. */
int solver_begin_prox(sl_solver *sv, const char *name, int rc, const char *desc, sl_array *x, const sl_solver_options *o,
                      sl_solver_info *info);
/** Submits a scalar task fn(state, scalars s[0..ns)) with the state read-write and the scalars read. */
int solver_step(sl_solver *sv, sl_stask_fn fn, const void *arg, size_t size, int ns, sl_scalar *const *s);
/** Submits step p of solvers/solver_prog.h (arguments a) on the n variable handles h: on a CUDA worker when
 *  on_device (CUDA builds), else on a CPU worker. */
int sl_prog_submit(int on_device, int p, sl_prog_arg a, int n, const starpu_data_handle_t *h,
                   const enum starpu_data_access_mode *modes);
/** Submits step p of solver_prog.h with the state read-write and the scalars s[0..ns) read: on a GPU when
 *  sv->on_device, else on the CPU. */
int solver_prog(sl_solver *sv, sl_prog p, sl_prog_arg a, int ns, sl_scalar *const *s);
/** The solver's steps are all solver_prog.h steps: they run where the vector operations run (a GPU when the
 *  compute codelets are placed on CUDA workers), so the state stays there between tests. Call before the
 *  first step. */
void solver_steps_on_device(sl_solver *sv);
/** The vectors laid out like x (one chunk on this rank, not split over ranks) take the fused steps of
 *  codelets/codelet_krylov.c: a reduction, its coefficient and the updates in one task. STARLOPS_SOLVER_NO_FUSE=1
 *  turns them off. */
int solver_fusable(const sl_array *x);
/** Collective. *yes becomes nonzero when the vectors laid out like x are one chunk on every rank of a
 *  group of several (none owning nothing): fused steps then sit between the reductions' allreduces. */
int solver_fusable_dist(const sl_array *x, int *yes);
/** Collective. *yes becomes nonzero when on every rank the vectors laid out like x are whole (one chunk,
 *  reduced without an allreduce: replicated or on one rank) and those laid out like s are one chunk split
 *  over a group of several ranks without a mask (a VStack's domain and range): CGLS then fuses its steps
 *  between the allreduces of the split vectors' norms. */
int solver_fusable_split(const sl_array *x, const sl_array *s, int *yes);
/** After iteration k: records the history row, calls the callback, and every check_every iterations (and at
 *  the last) waits for the state and tests convergence; *stop becomes nonzero (the same on every rank). */
int solver_after(sl_solver *sv, int k, const sl_array *x, int *stop);
/** Ends the solve: history to o->cost, info, the summary on rank 0; unregisters. rc is passed through. */
int solver_end(sl_solver *sv, int rc);
/** r = y - A x when o.x0 is set (x holds x0; tmp laid out like the range), else r = y (x is zero). */
int solver_residual(sl_solver *sv, sl_op *A, const sl_array *y, const sl_array *x, sl_array *r, sl_array *tmp);
/** A is square with its domain laid out like its range (CG, power iteration); fn names the caller. */
int solver_check_square(const char *fn, sl_op *A);
/** Takes nt work vectors laid out like the domain (side 0) or range (side 1) of A: kept by an earlier solve
 *  on A (zeroed), or new (collective: the verdict is agreed). solver_arrays_free gives them back to A, which
 *  keeps up to SL_OP_WS_MAX per side until sl_op_free_workspace or sl_op_destroy. */
int solver_arrays(sl_op *A, int side, sl_array **a, int nt);
void solver_arrays_free(sl_op *A, int side, sl_array **a, int nt);

#endif
