/* The problem the set-up and memory benchmarks share: A = L^H L with L the 2-D Laplacian on n x n
 * (float64, rows over the ranks), x in its domain and a random y in its range. */
#ifndef BENCH_NORMAL_H
#define BENCH_NORMAL_H

#include "starlops.h"

typedef struct {
  sl_op *L, *LH, *A;
  sl_array *like, *x, *y;
} normal_t;

/** Collective. Builds m (SL_SUCCESS or the first failing call's code; bench_normal_free undoes either). */
static inline int bench_normal_make(int64_t n, normal_t *m)
{
  int64_t dims[2] = {n, n};
  *m = (normal_t){0};
  int rc = sl_array_create(&m->like, 2, dims, SL_FLOAT64, NULL);
  if (!rc) rc = sl_op_laplacian(&m->L, m->like, 2, NULL, NULL, NULL, SL_DERIV_CENTERED, 0);
  if (!rc) rc = sl_op_adjoint(&m->LH, m->L);
  if (!rc) rc = sl_op_product(&m->A, m->LH, m->L);
  if (!rc) rc = sl_op_create_domain(m->A, &m->x);
  if (!rc) rc = sl_op_create_range(m->A, &m->y);
  if (!rc) rc = sl_array_fill_random(m->y, 1);
  return rc;
}

static inline void bench_normal_free(normal_t *m)
{
  sl_array_destroy(&m->x);
  sl_array_destroy(&m->y);
  sl_op_destroy(&m->A);
  sl_op_destroy(&m->LH);
  sl_op_destroy(&m->L);
  sl_array_destroy(&m->like);
}

#endif
