/* The solver frame: argument checks, the state handle, the convergence test, the iteration table. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solver_internal.h"

void sl_solver_options_default(sl_solver_options *o)
{
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->niter = 100;
  o->tol = 1e-10;
  o->tol_rule = SL_TOL_RELATIVE;
  o->check_every = 1;
  o->atol = 1e-8;
  o->btol = 1e-8;
  o->conlim = 1e8;
  o->eps = 0.1;
  o->thresh = SL_THRESH_SOFT;
  o->power_niter = 30;
  o->theta = 1.0;
  o->epsg = 1.0;
  o->inner_niter = 10;
  o->gfirst = 1;
  o->beta = 0.5;
}

void sl_inner_cg_options(sl_solver_options *o, int niter, const sl_array *x0)
{
  sl_solver_options_default(o);
  o->niter = niter;
  o->tol = 0;
  o->check_every = niter;
  o->x0 = x0;
}

const char *sl_stop_reason_name(sl_stop_reason r)
{
  switch (r) {
  case SL_STOP_NONE: return "running";
  case SL_STOP_TOL: return "tolerance reached";
  case SL_STOP_NITER: return "iteration limit reached";
  case SL_STOP_CALLBACK: return "stopped by the callback";
  case SL_STOP_BREAKDOWN: return "breakdown (zero denominator: exact solution, or A not positive definite)";
  case SL_STOP_LSQR_ATOL: return "least-squares solution within atol";
  case SL_STOP_LSQR_CONLIM: return "condition estimate reached conlim";
  case SL_STOP_LSQR_EPS: return "a test reached machine precision";
  case SL_STOP_NONFINITE: return "a non-finite value (NaN or Inf) in a residual, norm or coefficient";
  }
  return "unknown";
}

int solver_arrays(sl_op *A, int side, sl_array **a, int nt)
{
  /* the work vectors of the previous solve on A when it kept them, new ones for the rest; one agreement
   * for the allocations */
  int rc = SL_SUCCESS;
  for (int i = 0; i < nt; i++) a[i] = NULL;
  for (int i = 0; i < nt && rc == SL_SUCCESS; i++) rc = sl_op_work_take(A, side, &a[i]);
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc != SL_SUCCESS) solver_arrays_free(A, side, a, nt);
  return rc;
}

void solver_arrays_free(sl_op *A, int side, sl_array **a, int nt)
{
  for (int i = 0; i < nt; i++) sl_op_work_give(A, side, &a[i]);
}

static const char *rule_text(sl_tol_rule r)
{
  return r == SL_TOL_RELATIVE ? "||r|| <= tol ||r0||" : (r == SL_TOL_ABSOLUTE ? "||r|| <= tol" : "||r||^2 <= tol");
}

/* The options' local checks (x0 laid out like x_like, named what). */
static int options_check(const char *name, const sl_solver_options *q, const sl_array *x, const sl_array *x_like,
                         const char *what)
{
  char an[64];
  SL_CHECK_ARG(q->niter >= 0 && q->niter < INT_MAX / 4, SL_E_INVALID, "%s: argument 4 (options): niter must be >= 0 and < %d, got %d", name, INT_MAX / 4, q->niter);
  SL_CHECK_ARG(q->tol >= 0 && !isnan(q->tol), SL_E_INVALID, "%s: argument 4 (options): tol must be >= 0, got %g", name, q->tol);
  SL_CHECK_ARG(q->tol_rule >= SL_TOL_RELATIVE && q->tol_rule <= SL_TOL_SQUARED, SL_E_INVALID,
               "%s: argument 4 (options): tol_rule is invalid (%d)", name, (int)q->tol_rule);
  SL_CHECK_ARG(q->check_every >= 1, SL_E_INVALID, "%s: argument 4 (options): check_every must be >= 1, got %d", name,
               q->check_every);
  SL_CHECK_ARG(q->damp >= 0 && isfinite(q->damp * q->damp), SL_E_INVALID, "%s: argument 4 (options): damp must be >= 0 with a finite square, got %g",
               name, q->damp);
  if (q->x0) {
    snprintf(an, sizeof an, "%s: options.x0", name);
    SL_TRY(sl_array_check_same(q->x0, an, x_like, what));
    SL_TRY(sl_array_check_data(name, q->x0, "options.x0"));
    SL_CHECK_ARG(q->x0 != x, SL_E_INVALID, "%s: options.x0 must differ from the solution argument (x)", name);
  }
  if (q->var) {
    snprintf(an, sizeof an, "%s: options.var", name);
    SL_TRY(sl_array_check_same(q->var, an, x_like, what));
    SL_CHECK_ARG(q->var != x && q->var != q->x0, SL_E_INVALID, "%s: options.var must differ from x and options.x0", name);
    SL_CHECK_ARG(!q->var->nparts, SL_E_INVALID, "%s: options.var must be a plain array", name);
    SL_CHECK_ARG(!strcmp(name, "LSQR"), SL_E_INVALID, "%s: options.var is computed by LSQR only", name);
  }
  if (!strcmp(name, "LSQR"))
    SL_CHECK_ARG(q->atol >= 0 && q->btol >= 0 && q->conlim >= 0 && isfinite(q->atol) && isfinite(q->btol), SL_E_INVALID,
                 "%s: argument 4 (options): atol, btol and conlim must be >= 0 (atol and btol finite), got %g, %g, %g",
                 name, q->atol, q->btol, q->conlim);
  if (strstr(name, "ISTA")) {
    SL_CHECK_ARG(q->eps >= 0 && isfinite(q->eps), SL_E_INVALID, "%s: argument 4 (options): eps must be finite and >= 0, got %g",
                 name, q->eps);
    SL_CHECK_ARG(q->thresh >= SL_THRESH_SOFT && q->thresh <= SL_THRESH_HALF, SL_E_INVALID,
                 "%s: argument 4 (options): thresh is invalid (%d)", name, (int)q->thresh);
    SL_CHECK_ARG(q->alpha >= 0 && isfinite(q->alpha), SL_E_INVALID,
                 "%s: argument 4 (options): alpha must be finite and >= 0, got %g", name, q->alpha);
    SL_CHECK_ARG(q->alpha > 0 || q->power_niter >= 1, SL_E_INVALID,
                 "%s: argument 4 (options): power_niter must be >= 1, got %d", name, q->power_niter);
    SL_CHECK_ARG(q->perc >= 0 && q->perc <= 100, SL_E_INVALID, "%s: argument 4 (options): perc must be in [0, 100] (0: off), got %g",
                 name, q->perc);
    SL_CHECK_ARG(q->perc == 0 || !x->nparts, SL_E_INVALID, "%s: argument 4 (options): perc needs a plain x, not a stacked one", name);
    for (int k = 0; q->decay && k < q->niter; k++) {
      SL_CHECK_ARG(isfinite(q->decay[k]) && q->decay[k] >= 0, SL_E_INVALID,
                   "%s: argument 4 (options): decay[%d] must be finite and >= 0, got %g", name, k, q->decay[k]);
      /* with perc, iteration k thresholds at the 100 - decay[k] (100 - perc)-th percentile, which must be >= 0 */
      SL_CHECK_ARG(q->perc == 0 || q->decay[k] * (100.0 - q->perc) <= 100.0, SL_E_INVALID,
                   "%s: argument 4 (options): decay[%d] = %g makes the percentile 100 - decay[k] (100 - perc) = %g negative "
                   "(perc %g): decay[k] must be <= 100 / (100 - perc)", name, k, q->decay[k], 100.0 - q->decay[k] * (100.0 - q->perc),
                   q->perc);
    }
  }
  SL_CHECK_ARG(q->tau >= 0 && isfinite(q->tau), SL_E_INVALID, "%s: options.tau must be finite and >= 0, got %g", name, q->tau);
  SL_CHECK_ARG(q->mu >= 0 && isfinite(q->mu), SL_E_INVALID, "%s: options.mu must be finite and >= 0, got %g", name, q->mu);
  SL_CHECK_ARG(q->theta >= 0 && isfinite(q->theta), SL_E_INVALID, "%s: options.theta must be finite and >= 0, got %g", name,
               q->theta);
  SL_CHECK_ARG(q->gamma >= 0 && isfinite(q->gamma), SL_E_INVALID, "%s: options.gamma must be finite and >= 0, got %g", name,
               q->gamma);
  SL_CHECK_ARG(q->epsg >= 0 && isfinite(q->epsg), SL_E_INVALID, "%s: options.epsg must be finite and >= 0, got %g", name, q->epsg);
  SL_CHECK_ARG(q->accel >= SL_ACCEL_NONE && q->accel <= SL_ACCEL_VANDENBERGHE, SL_E_INVALID, "%s: options.accel is invalid (%d)",
               name, (int)q->accel);
  if (strstr(name, "ADMM") || (q->backtrack && strstr(name, "ProximalGradient")))
    SL_CHECK_ARG(q->inner_niter >= 1 && q->inner_niter < INT_MAX / 4, SL_E_INVALID, "%s: options.inner_niter must be >= 1 and < %d, got %d",
                 name, INT_MAX / 4, q->inner_niter);
  if (!strcmp(name, "PrimalDual") && (!(q->tau > 0) || !(q->mu > 0)))
    SL_CHECK_ARG(q->power_niter >= 1, SL_E_INVALID, "%s: options.power_niter must be >= 1 where options.tau or options.mu is "
                 "0 (the steps come from ||A||), got %d", name, q->power_niter);
  if (q->backtrack)
    SL_CHECK_ARG(q->beta > 0 && q->beta < 1, SL_E_INVALID, "%s: options.beta must be in (0, 1), got %g", name, q->beta);
  return SL_SUCCESS;
}

/* The local checks of solver_begin (sv->o holds the options). */
static int begin_check(sl_solver *sv, const char *name, sl_op *A, const sl_array *y, sl_array *x)
{
  if (!strcmp(name, "CG") || !strcmp(name, "CG (pipelined)")) SL_TRY(solver_check_square("sl_solve_cg", A));
  SL_CHECK_ARG(A != NULL, SL_E_INVALID, "%s: argument 1 (A) is NULL", name);
  SL_CHECK_ARG(y != NULL, SL_E_INVALID, "%s: argument 2 (y) is NULL", name);
  SL_CHECK_ARG(x != NULL, SL_E_INVALID, "%s: argument 3 (x) is NULL", name);
  SL_CHECK_ARG(x != y, SL_E_INVALID, "%s: arguments 2 (y) and 3 (x) are the same array", name);
  SL_TRY(sl_op_check_session(name, A, "argument 1 (A)"));
  char what[200];
  snprintf(what, sizeof what, "the range of %s", sl_op_name(A));
  char an[64];
  snprintf(an, sizeof an, "%s: argument 2 (y)", name);
  SL_TRY(sl_array_check_same(y, an, sl_op_range(A), what));
  snprintf(what, sizeof what, "the domain of %s", sl_op_name(A));
  snprintf(an, sizeof an, "%s: argument 3 (x)", name);
  SL_TRY(sl_array_check_same(x, an, sl_op_domain(A), what));
  /* arrays the host holds: their tasks would wait for ever (x0: with the options) */
  SL_TRY(sl_array_check_data(name, y, "argument 2 (y)"));
  SL_TRY(sl_array_check_data(name, x, "argument 3 (x)"));
  return options_check(name, &sv->o, x, sl_op_domain(A), what);
}

/* What solver_begin and solver_begin_prox share once the local checks gave rc: the history, one agreement
 * (the verdict and the options), the state, the header (desc: the problem), x = x0 or 0. */
static int begin_common(sl_solver *sv, const char *name, int rc, const char *desc, sl_dtype dt, sl_array *x,
                        uint64_t akey, sl_solver_info *info)
{
  const sl_solver_options *q = &sv->o;
  if (rc == SL_SUCCESS) {
    /* the graph writes the rows since the last test into a ring; the host copies them into the history */
    sv->ring_rows = (q->check_every < q->niter ? q->check_every : q->niter) + 1;
    sv->hist = calloc((size_t)q->niter + 1, 3 * sizeof(double));
    sv->ring = calloc((size_t)sv->ring_rows, 3 * sizeof(double));
    if (!sv->hist || !sv->ring)
      rc = sl_error(SL_E_NOMEM, "%s: argument 4 (options): niter = %d needs %.3g GB for the history of norms, which "
                    "cannot be allocated; use a smaller niter", name, q->niter, ((double)q->niter + 1) * 24e-9);
  }
  uint64_t decay_digest = q->decay && rc == SL_SUCCESS ? sl_fnv1a(SL_FNV1A_START, q->decay, sizeof(double) * (size_t)q->niter) : 0;
  SL_TRY(SL_AGREE(strncmp(name, "CG (", 4) ? name : "CG", rc, SL_SAME_I("options.decay (its values)", decay_digest),
                  SL_SAME_KEY("argument 1 (A: its name and shapes)", akey), SL_SAME_I("options.niter", q->niter), sl_same_d("options.tol", q->tol),
                  SL_SAME_I("options.tol_rule", q->tol_rule), SL_SAME_I("options.check_every", q->check_every),
                  SL_SAME_I("options.x0 (given or NULL)", q->x0 != NULL), SL_SAME_I("options.var (given or NULL)", q->var != NULL), sl_same_d("options.damp", q->damp),
                  SL_SAME_I("options.pipelined", q->pipelined != 0), sl_same_d("options.atol", q->atol),
                  sl_same_d("options.btol", q->btol), sl_same_d("options.conlim", q->conlim),
                  sl_same_d("options.eps", q->eps), sl_same_d("options.perc", q->perc), SL_SAME_I("options.thresh", q->thresh),
                  sl_same_d("options.alpha", q->alpha), SL_SAME_I("options.power_niter", q->power_niter),
                  sl_same_d("options.tau", q->tau), sl_same_d("options.mu", q->mu), sl_same_d("options.theta", q->theta),
                  sl_same_d("options.gamma", q->gamma), SL_SAME_I("options.gfirst", q->gfirst != 0),
                  sl_same_d("options.epsg", q->epsg), SL_SAME_I("options.accel", q->accel),
                  SL_SAME_I("options.inner_niter", q->inner_niter), SL_SAME_I("options.backtrack", q->backtrack != 0),
                  sl_same_d("options.beta", q->beta)));
  sv->x = x;
  sv->info = info ? info : &sv->local_info;
  memset(sv->info, 0, sizeof *sv->info);
  sv->out = q->out ? q->out : stdout;
  for (int i = 0; i < 2 * SOLVER_MAX_SLOTS; i++) sv->state[i] = 0.0;
  sv->state[slot(S_AUX)] = NAN;
  sv->state[slot(S_BAD)] = -1;
  starpu_variable_data_register(&sv->hstate, STARPU_MAIN_RAM, (uintptr_t)sv->state, sizeof sv->state);
  starpu_variable_data_register(&sv->hring, STARPU_MAIN_RAM, (uintptr_t)sv->ring, (size_t)sv->ring_rows * 3 * sizeof(double));
  for (int i = 0; i < 6; i++) SL_TRY(sl_scalar_create(&sv->sc[i], dt));
  sv->printed = sv->row_printed = sv->fetched = sv->recorded = -1;
  sv->t0 = MPI_Wtime();
  if (q->show && sl_ctx.rank == 0) {
    fprintf(sv->out, "%s: %s, %s, %d rank%s, %d CPU + %d CUDA workers per rank\n", name, desc, sl_dtype_name(dt), sl_ctx.size,
            sl_ctx.size > 1 ? "s" : "", sl_ctx.ncpu, sl_ctx.ncuda);
    fprintf(sv->out, "  niter = %d, tol = %g (%s), check every %d\n", q->niter, q->tol, rule_text(q->tol_rule),
            q->check_every);
    fprintf(sv->out, "  %6s  %13s  %13s  %13s  %9s\n", "iter", "cost", "test", "r2norm", "time (s)");
  }
  if (q->x0) SL_TRY(sl_array_copy(x, q->x0));
  else SL_TRY(sl_array_fill(x, SL_REAL(0)));
  return SL_SUCCESS;
}

int solver_begin(sl_solver *sv, const char *name, sl_op *A, const sl_array *y, sl_array *x,
                 const sl_solver_options *o, sl_solver_info *info)
{
  memset(sv, 0, sizeof *sv);
  sv->name = name;
  SL_CHECK_INIT();
  if (o) sv->o = *o;
  else sl_solver_options_default(&sv->o);
  /* one agreement: every rank's verdict, and the options every rank must share */
  int rc = begin_check(sv, name, A, y, x);
  char desc[160] = "A = ?";
  if (rc == SL_SUCCESS)
    snprintf(desc, sizeof desc, "A = %s (%lld x %lld)", sl_op_name(A), (long long)sl_op_nrows(A), (long long)sl_op_ncols(A));
  return begin_common(sv, name, rc, desc, A ? sl_op_dtype(A) : SL_FLOAT64, x, sl_op_key(A), info);
}

int solver_begin_prox(sl_solver *sv, const char *name, int rc, const char *desc, sl_array *x, const sl_solver_options *o,
                      sl_solver_info *info)
{
  memset(sv, 0, sizeof *sv);
  sv->name = name;
  sv->no_initial_test = 1;
  sv->cost_inf_ok = 1;
  SL_CHECK_INIT();
  if (o) sv->o = *o;
  else sl_solver_options_default(&sv->o);
  if (rc == SL_SUCCESS && !x) rc = sl_error(SL_E_INVALID, "%s: the solution argument (x) is NULL", name);
  if (rc == SL_SUCCESS) rc = sl_array_check_data(name, x, "the solution argument (x)");
  if (rc == SL_SUCCESS) rc = options_check(name, &sv->o, x, x, "the solution x");
  return begin_common(sv, name, rc, desc, x ? x->dtype : SL_FLOAT64, x, 0, info);
}

int solver_step(sl_solver *sv, sl_stask_fn fn, const void *arg, size_t size, int ns, sl_scalar *const *s)
{
  starpu_data_handle_t h[8] = {sv->hstate};
  enum starpu_data_access_mode m[8] = {STARPU_RW};
  for (int i = 0; i < ns; i++) {
    h[i + 1] = s[i]->handle;
    m[i + 1] = STARPU_R;
  }
  return sl_stask_submit(fn, arg, size, ns + 1, h, m);
}

int solver_prog(sl_solver *sv, sl_prog p, sl_prog_arg a, int ns, sl_scalar *const *s)
{
  starpu_data_handle_t h[SL_PROG_MAXBUF] = {sv->hstate};
  enum starpu_data_access_mode m[SL_PROG_MAXBUF] = {STARPU_RW};
  for (int i = 0; i < ns && i + 1 < SL_PROG_MAXBUF; i++) {
    h[i + 1] = s[i]->handle;
    m[i + 1] = STARPU_R;
  }
  return sl_prog_submit(sv->on_device, p, a, ns + 1 < SL_PROG_MAXBUF ? ns + 1 : SL_PROG_MAXBUF, h, m);
}

/* one chunk of a plain array on this rank; split over several ranks (its reductions need an allreduce) */
static int one_chunk(const sl_array *x) { return x->nparts == 0 && x->nchunks == 1; }
static int over_ranks(const sl_array *x) { return x->partition == SL_SCATTER && x->group->size > 1; }

int solver_fusable(const sl_array *x) { return !sl_ctx.set.no_fuse && one_chunk(x) && !over_ranks(x); }

/* *yes = every rank's mine is nonzero (fusion off everywhere with STARLOPS_SOLVER_NO_FUSE) */
static int agree_all(int mine, int *yes)
{
  mine = mine && !sl_ctx.set.no_fuse;
  SL_CHECK_MPI(MPI_Allreduce(&mine, yes, 1, MPI_INT, MPI_MIN, sl_ctx.comm));
  return SL_SUCCESS;
}

/* no mask: every rank in the array's group */
int solver_fusable_dist(const sl_array *x, int *yes) { return agree_all(one_chunk(x) && over_ranks(x) && !x->group->mask, yes); }

int solver_fusable_split(const sl_array *x, const sl_array *s, int *yes)
{
  return agree_all(solver_fusable(x) && one_chunk(s) && over_ranks(s) && !s->group->mask, yes);
}

void solver_steps_on_device(sl_solver *sv) { sv->on_device = sl_ctx.where == STARPU_CUDA; }

/* Prints the rows since the last printed one: the first ten, every niter/10-th, and the last. */
static void print_rows(sl_solver *sv, int upto, int last)
{
  if (!sv->o.show || sl_ctx.rank != 0) return;
  int every = sv->o.niter >= 20 ? sv->o.niter / 10 : 1;
  double t = MPI_Wtime() - sv->t0;
  for (int k = sv->printed + 1; k <= upto; k++) {
    if (!(k <= 10 || k % every == 0 || (last && k == upto))) continue;
    sv->row_printed = k;
    char aux[32] = "            -";
    if (!isnan(sv->hist[3 * k + 2])) snprintf(aux, sizeof aux, "%13.6e", sv->hist[3 * k + 2]);
    fprintf(sv->out, "  %6d  %13.6e  %13.6e  %s  %9.3f\n", k, sv->hist[3 * k], sv->hist[3 * k + 1], aux, t);
  }
  fflush(sv->out);
  sv->printed = upto;
}

/* The last row, if the table skipped it. */
static void print_last(sl_solver *sv)
{
  if (sv->row_printed == sv->iter) return;
  sv->printed = sv->iter - 1;
  print_rows(sv, sv->iter, 1);
}

/* Waits for the state and the history on the host. */
static int fetch(sl_solver *sv)
{
  sl_watch_begin("a solver's convergence test (the iteration's tasks and reductions)");
  int rc = sl_host_acquire(sv->hstate, STARPU_R);
  if (rc == 0) {
    starpu_data_release(sv->hstate);
    rc = sl_host_acquire(sv->hring, STARPU_R);
    if (rc == 0) { /* the rows recorded since the last test */
      for (int k = sv->fetched + 1; k <= sv->iter; k++)
        memcpy(sv->hist + 3 * k, sv->ring + 3 * (k % sv->ring_rows), 3 * sizeof(double));
      sv->fetched = sv->iter;
      starpu_data_release(sv->hring);
    }
  }
  sl_watch_end();
  if (rc != 0) return sl_error_starpu(rc, "starpu_data_acquire", __FILE__, __LINE__);
  sv->info->host_syncs++;
  return sl_async_error_take();
}

static int converged(const sl_solver *sv)
{
  double t = sv->o.tol, m = sv->state[slot(S_MON)], r = sv->state[slot(S_REF)];
  if (t <= 0) return 0;
  switch (sv->o.tol_rule) {
  case SL_TOL_RELATIVE: return m <= t * r;
  case SL_TOL_ABSOLUTE: return m <= t;
  default: return m * m <= t;
  }
}

int solver_after(sl_solver *sv, int k, const sl_array *x, int *stop)
{
  *stop = 0;
  sv->iter = k;
  sl_prog_arg ra = {.k = k, .flag = sv->cost_inf_ok, .rows = sv->ring_rows};
  if (sv->recorded != k)
    SL_TRY(sl_prog_submit(sv->on_device, SL_PROG_RECORD, ra, 2, (starpu_data_handle_t[]){sv->hstate, sv->hring},
                        (enum starpu_data_access_mode[]){STARPU_RW, STARPU_RW}));
  if (sl_ctx.tracing) { /* the iteration number in the trace (a user event; nothing when not tracing) */
    char ev[64];
    snprintf(ev, sizeof ev, "%s iteration %d", sv->name, k);
    SL_TRY(sl_trace_event(ev));
  }
  sl_trace_iteration(k + 1); /* the next iteration's tasks carry its number */
  /* a callback's request waits for the next test, which every rank makes at the same iteration (a request on
   * one rank alone would otherwise send that rank into the test's allreduce by itself) */
  if (sv->o.callback && k > 0 && sv->o.callback(k, x, sv->o.user)) sv->cb_stop = 1;
  int test = k == 0 || k % sv->o.check_every == 0 || k == sv->o.niter;
  if (!test) return SL_SUCCESS;
  int code = sv->cb_stop ? SL_STOP_CALLBACK : 0;
  SL_TRY(fetch(sv));
  print_rows(sv, k, 0);
  if (sv->state[slot(S_BAD)] >= 0) code = SL_STOP_NONFINITE; /* before any other reason */
  if (!code && sv->state[slot(S_STOP)] != 0) code = (int)sv->state[slot(S_STOP)];
  if (!code && k > 0 && converged(sv)) code = SL_STOP_TOL;
  if (!code && k == 0 && !sv->no_initial_test && sv->state[slot(S_MON)] == 0 && sv->o.tol_rule != SL_TOL_RELATIVE)
    code = SL_STOP_TOL; /* y - A x0 = 0 already */
  if (!code && k >= sv->o.niter) code = SL_STOP_NITER;
  /* The values are allreduced, so every rank should agree; one allreduce makes sure. */
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, sl_ctx.comm));
  *stop = code;
  sv->info->stop = (sl_stop_reason)code;
  if (code == SL_STOP_NONFINITE && sv->state[slot(S_BAD)] >= 0) sv->iter = (int)sv->state[slot(S_BAD)];
  return SL_SUCCESS;
}

int solver_end(sl_solver *sv, int rc)
{
  sl_trace_iteration(0);
  if (sv->hstate) {
    if (rc == SL_SUCCESS) rc = fetch(sv);
    if (rc == SL_SUCCESS && sv->info->stop != SL_STOP_NONFINITE) {
      /* x itself must be finite: a step can overflow x while the residual stays finite (a singular or
       * indefinite operator); its 1-norm (one reduction per solve) carries any NaN or Inf */
      sl_cscalar n1 = {0, 0};
      rc = sl_array_norm_p(sv->x, 1.0, sv->sc[5]);
      if (rc == SL_SUCCESS) rc = sl_scalar_get_c(sv->sc[5], &n1);
      if (rc == SL_SUCCESS && !isfinite(n1.re)) {
        sv->info->stop = SL_STOP_NONFINITE;
        rc = sl_error(SL_E_NUMERIC, "%s: the solution x is not finite after iteration %d (its 1-norm is %g): the "
                      "operator is probably singular or indefinite for this solver, or holds NaN or Inf", sv->name,
                      sv->iter, n1.re);
      }
    }
    sl_solver_info *in = sv->info;
    in->iterations = sv->iter;
    in->seconds = MPI_Wtime() - sv->t0;
    in->rnorm = sv->state[slot(S_MON)];
    in->r0norm = sv->state[slot(S_REF)];
    if (!isnan(sv->state[slot(S_AUX)])) in->r2norm = sv->state[slot(S_AUX)];
    if (rc == SL_SUCCESS && in->stop == SL_STOP_NONFINITE && sv->state[slot(S_BAD)] >= 0)
      rc = sl_error(SL_E_NUMERIC, "%s: a non-finite value (NaN or Inf) appeared in iteration %d (residual norm %g, "
                    "reference %g): check y, options.x0 and the operator for NaN or Inf", sv->name, in->iterations,
                    in->rnorm, in->r0norm);
    if (rc == SL_SUCCESS || in->stop == SL_STOP_NONFINITE) {
      print_last(sv);
      if (sv->o.cost)
        for (int k = 0; k <= sv->o.niter; k++) sv->o.cost[k] = k <= sv->iter ? sv->hist[3 * k] : NAN;
      if (sv->o.show && sl_ctx.rank == 0) {
        fprintf(sv->out, "%s stopped after %d iteration%s: %s\n", sv->name, in->iterations,
                in->iterations == 1 ? "" : "s", sl_stop_reason_name(in->stop));
        fprintf(sv->out, "  final test value %.6e (reference %.6e), %.3f s, %d host wait%s (%.2f per iteration)\n",
                in->rnorm, in->r0norm, in->seconds, in->host_syncs, in->host_syncs == 1 ? "" : "s",
                in->iterations ? (double)in->host_syncs / in->iterations : 0.0);
        fflush(sv->out);
      }
    }
    starpu_data_unregister(sv->hstate);
    starpu_data_unregister(sv->hring);
  }
  for (int i = 0; i < 6; i++) sl_scalar_destroy(&sv->sc[i]);
  free(sv->hist);
  sv->hist = NULL;
  free(sv->ring);
  sv->ring = NULL;
  return rc;
}

int solver_residual(sl_solver *sv, sl_op *A, const sl_array *y, const sl_array *x, sl_array *r, sl_array *tmp)
{
  SL_TRY(sl_array_copy(r, y));
  if (!sv->o.x0) return SL_SUCCESS;
  SL_TRY(sl_op_apply(A, SL_FORWARD, x, tmp));
  return sl_array_axpby(r, SL_REAL(-1), tmp, SL_REAL(1));
}

int solver_check_square(const char *fn, sl_op *A)
{
  SL_CHECK_ARG(A != NULL, SL_E_INVALID, "%s: argument 1 (A) is NULL", fn);
  SL_CHECK_ARG(sl_op_nrows(A) == sl_op_ncols(A), SL_E_DIMS, "%s: argument 1 (A) must be square, it is %lld x %lld", fn,
               (long long)sl_op_nrows(A), (long long)sl_op_ncols(A));
  char what[96];
  snprintf(what, sizeof what, "%s: the domain of argument 1 (A)", fn);
  return sl_array_check_same(sl_op_domain(A), what, sl_op_range(A), "its range");
}
