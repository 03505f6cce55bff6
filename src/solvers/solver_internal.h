/* What the solvers share: a state of scalars on the task graph, the convergence test on the host, the
 * iteration table, the history of norms. */
#ifndef SL_SOLVER_INTERNAL_H
#define SL_SOLVER_INTERNAL_H

#include "internal.h"

/* Slots of the state (each an (re, im) pair of doubles) that every solver keeps up to date. */
enum {
  S_MON = 0,  /* the quantity the tolerance tests (real) */
  S_REF = 1,  /* its reference for SL_TOL_RELATIVE (real) */
  S_STOP = 2, /* a stop reason set by a scalar task (breakdown, LSQR's rules), 0 while running */
  S_COST = 3, /* the value recorded in the cost history */
  S_AUX = 4,  /* a second column of the table (CGLS/LSQR r2norm), NaN when unused */
  S_BAD = 5,  /* the first iteration whose recorded values were not finite (-1: none yet) */
  S_FIRST = 6 /* the solver's own slots start here */
};
#define SOLVER_MAX_SLOTS 40

typedef struct sl_solver {
  const char *name;
  sl_solver_options o;
  sl_solver_info *info;
  sl_solver_info local_info;
  double t0;
  double state[2 * SOLVER_MAX_SLOTS];
  starpu_data_handle_t hstate;
  double *hist;               /* 3 doubles per iteration: cost, monitored value, aux */
  starpu_data_handle_t hhist;
  int printed;                /* last iteration the table has considered */
  int row_printed;            /* last iteration it printed */
  int iter;                   /* iterations done */
  int no_initial_test;        /* iteration 0 has nothing to test (ISTA/FISTA, the proximal solvers) */
  int cost_inf_ok;            /* the cost may be +Inf (an indicator's value) without stopping the solve */
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
/** After iteration k: records the history row, calls the callback, and every check_every iterations (and at
 *  the last) waits for the state and tests convergence; *stop becomes nonzero (the same on every rank). */
int solver_after(sl_solver *sv, int k, const sl_array *x, int *stop);
/** Ends the solve: history to o->cost, info, the summary on rank 0; unregisters. rc is passed through. */
int solver_end(sl_solver *sv, int rc);
/** r = y - A x when o.x0 is set (x holds x0; tmp laid out like the range), else r = y (x is zero). */
int solver_residual(sl_solver *sv, sl_op *A, const sl_array *y, const sl_array *x, sl_array *r, sl_array *tmp);
/** A is square with its domain laid out like its range (CG, power iteration); fn names the caller. */
int solver_check_square(const char *fn, sl_op *A);
/** Slot i of the state handle, for sl_array_axpby_h (offset in doubles). */
static inline int slot(int i) { return 2 * i; }
/** Takes nt work vectors laid out like the domain (side 0) or range (side 1) of A: kept by an earlier solve
 *  on A (zeroed), or new (collective: the verdict is agreed). solver_arrays_free gives them back to A, which
 *  keeps up to SL_OP_WS_MAX per side until sl_op_free_workspace or sl_op_destroy. */
int solver_arrays(sl_op *A, int side, sl_array **a, int nt);
void solver_arrays_free(sl_op *A, int side, sl_array **a, int nt);

#endif
