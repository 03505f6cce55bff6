/* What the proximal solvers share: work arrays laid out like an array, the cost request, the record task. */
#ifndef SL_PROXIMAL_COMMON_H
#define SL_PROXIMAL_COMMON_H

#include "solvers/solver_internal.h"
#include "prox/prox_internal.h"

/** Collective. n new library temporaries laid out like `like` (the verdict agreed). */
int prox_work(const sl_array *like, sl_array **a, int n);
void prox_work_free(sl_array **a, int n);
/** Collective: 1 when some rank asked for the cost (options.show or options.cost), so that every rank
 *  submits the same reductions. */
int prox_want_cost(const sl_solver *sv, int *want);
/** After iteration k: the update norm ||dx|| (sc[0] holds ||dx||^2) becomes the monitored value (its first
 *  value the reference); sc[1 .. nguard] must be finite (else the solve stops, SL_STOP_NONFINITE); and
 *  sc[1 + nguard] + w sc[2 + nguard] is the cost when cost is set. */
int prox_record(sl_solver *sv, int k, int cost, double w, int nguard);

#endif
