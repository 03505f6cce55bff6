/* Shared pieces of the proximal solvers. */
#include <math.h>

#include "solvers/proximal_common.h"

int prox_work(const sl_array *like, sl_array **a, int n)
{
  int rc = SL_SUCCESS;
  for (int i = 0; i < n; i++) a[i] = NULL;
  for (int i = 0; i < n && rc == SL_SUCCESS; i++) rc = sl_array_clone(&a[i], like, SL_STORE_TEMP);
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc != SL_SUCCESS) prox_work_free(a, n);
  return rc;
}

void prox_work_free(sl_array **a, int n)
{
  for (int i = 0; i < n; i++) sl_array_destroy(&a[i]);
}

int prox_want_cost(const sl_solver *sv, int *want)
{
  *want = sv->o.show || sv->o.cost;
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, want, 1, MPI_INT, MPI_MAX, sl_ctx.comm));
  return SL_SUCCESS;
}

struct rec_arg {
  int first, cost, nguard;
  double w;
};

/* v[1] = ||dx||^2, v[2 .. 1 + nguard] = values that must be finite (a gradient's squared norm), then f and g */
static void rec_fn(double *const *v, const void *arg)
{
  const struct rec_arg *a = arg;
  double upd = sqrt(v[1][0]);
  v[0][slot(S_MON)] = upd;
  if (a->first) v[0][slot(S_REF)] = upd;
  for (int i = 0; i < a->nguard; i++)
    if (!prog_finite(v[2 + i][0])) v[0][slot(S_STOP)] = SL_STOP_NONFINITE;
  const double f = v[2 + a->nguard][0], g = v[3 + a->nguard][0];
  v[0][slot(S_COST)] = a->cost ? f + (a->w != 0 ? a->w * g : 0.0) : 0.0;
}

int prox_record(sl_solver *sv, int k, int cost, double w, int nguard)
{
  struct rec_arg a = {k == 1, cost, nguard, w};
  return solver_step(sv, rec_fn, &a, sizeof a, 3 + nguard, sv->sc);
}
