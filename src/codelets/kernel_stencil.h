/* Finite-difference stencils along the axes of an N-D block (pylops' definitions, see docs/operators.md),
 * summed over several axes in one pass (the fused Laplacian). Kernels on raw buffers: no StarPU inside.
 * Complex data are real pairs: the weights are real, so a complex block is a real block with two components
 * per element. Row g of an axis of global length n has weights w[t + 2] on x[g + t], t = -2..2; the adjoint
 * uses the transposed weights c[t] = w_(g + t)[-t]. */
#ifndef SL_KERNEL_STENCIL_H
#define SL_KERNEL_STENCIL_H

#include <stdint.h>

#include "codelets/kernel_vec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { ST_D1_FWD, ST_D1_BWD, ST_D1_C3, ST_D1_C5, ST_D2_FWD, ST_D2_BWD, ST_D2_C } st_kind;

#define ST_MAX_TERMS SL_MAX_DIMS
/* Input segments one task may read. A task reads only the chunks its output range reaches: the range itself
 * and, for each term, the range moved by -2, -1, +1 and +2 rows. The chunks of a block differ in length by at
 * most one element, so a moved copy of a chunk's range meets at most two of them: 1 + 8 per term bounds
 * the count for any chunking (op_stencil.c). */
#define ST_MAX_SEGS (1 + 8 * ST_MAX_TERMS)

/** One axis of a stencil sum. */
typedef struct {
  int kind, edge;
  int axis;        /* axis of the block */
  int ghosts;      /* the distributed axis: rows beyond the block come from the ghost buffers */
  int64_t n;       /* global length along the axis */
  int64_t off;     /* global index of the block's first row */
  int64_t nloc;    /* rows of the block */
  int64_t stride;  /* elements between consecutive rows */
  double scale;    /* weight / sampling (first derivatives) or / sampling^2 */
  int64_t ilo, ihi; /* global rows [ilo, ihi) have the interior weights and reach only rows inside the axis
                       (st_plan_finish; a subrange of [4, n - 4) widened to the rows that share them) */
} st_term;

/** A stencil sum on a block of ndim local dims (elements of ncomp reals). */
typedef struct {
  int nterms, adjoint, ndim, ncomp;
  int generic;     /* CUDA: the generic kernel only (STARLOPS_STENCIL_GENERIC=1, the benchmark's reference) */
  int edge_serial; /* CUDA: the edge launch after the interior on the worker's stream (STARLOPS_STENCIL_EDGE_SERIAL=1) */
  int64_t slab;    /* CUDA: at most this many rows of axis 0 per interior launch (0: as many as 32-bit indices
                      allow; the unit test's way to run several slabs on small blocks) */
  int band;        /* CUDA, the 3-D whole-plane kernel: row tiles (of 8 rows) per launch (0: from the planes' size
                      and the L2 cache's; the unit test's way to run several bands on small planes) */
  int zmarch, zby; /* CUDA, the 3-D whole-plane kernel: planes a thread sums (4, or 8, 16, 32 marching) and rows
                      per block of the marching form (8, 16); 0: four planes, 8 rows (STARLOPS_STENCIL_ZPLANES, _ZROWS) */
  int64_t ldims[SL_MAX_DIMS];
  int wlo, whi;    /* ghost widths along the distributed axis (when a term has ghosts) */
  st_term t[ST_MAX_TERMS];
  double cint[ST_MAX_TERMS][5]; /* the weights of the interior rows (st_plan_finish) */
} st_plan;

/** Forward weights of row g. */
static inline SL_HD void st_row(int kind, int edge, int64_t n, int64_t g, double w[5])
{
  for (int i = 0; i < 5; i++) w[i] = 0.0;
  switch (kind) {
  case ST_D1_FWD:
    if (g < n - 1) w[3] = 1.0, w[2] = -1.0;
    break;
  case ST_D1_BWD:
    if (g >= 1) w[2] = 1.0, w[1] = -1.0;
    break;
  case ST_D1_C3:
    if (g >= 1 && g <= n - 2) w[3] = 0.5, w[1] = -0.5;
    else if (edge && n >= 2 && g == 0) w[3] = 1.0, w[2] = -1.0;
    else if (edge && n >= 2 && g == n - 1) w[2] = 1.0, w[1] = -1.0;
    break;
  case ST_D1_C5:
    if (g >= 2 && g <= n - 3) w[0] = 1.0 / 12.0, w[1] = -2.0 / 3.0, w[3] = 2.0 / 3.0, w[4] = -1.0 / 12.0;
    else if (edge && n >= 3 && g == 0) w[3] = 1.0, w[2] = -1.0;
    else if (edge && n >= 3 && g == n - 1) w[2] = 1.0, w[1] = -1.0;
    else if (edge && n >= 3 && (g == 1 || g == n - 2)) w[3] = 0.5, w[1] = -0.5;
    break;
  case ST_D2_FWD:
    if (g < n - 2) w[2] = 1.0, w[3] = -2.0, w[4] = 1.0;
    break;
  case ST_D2_BWD:
    if (g >= 2) w[2] = 1.0, w[1] = -2.0, w[0] = 1.0;
    break;
  default: /* ST_D2_C */
    if (g >= 1 && g <= n - 2) w[1] = 1.0, w[2] = -2.0, w[3] = 1.0;
    else if (edge && n >= 3 && g == 0) w[2] = 1.0, w[3] = -2.0, w[4] = 1.0;
    else if (edge && n >= 3 && g == n - 1) w[0] = 1.0, w[1] = -2.0, w[2] = 1.0;
    break;
  }
}

/** The weights applied at row g: forward, or the transposed ones; scaled. */
static inline SL_HD void st_coeffs(const st_term *t, int adjoint, int64_t g, double c[5])
{
  if (!adjoint) {
    st_row(t->kind, t->edge, t->n, g, c);
  } else {
    double w[5];
    for (int k = -2; k <= 2; k++) {
      c[k + 2] = 0.0;
      if (g + k < 0 || g + k >= t->n) continue;
      st_row(t->kind, t->edge, t->n, g + k, w);
      c[k + 2] = w[2 - k];
    }
  }
  for (int i = 0; i < 5; i++) c[i] *= t->scale;
}

/** Rows g in [4, n - 4) share their weights (forward and adjoint). */
static inline SL_HD int st_interior(const st_term *t, int64_t g) { return g >= 4 && g < t->n - 4; }

/** Row g's weights (forward or adjoint) are the interior ones ci, and reach no row outside [0, n). */
static inline int st_row_is_interior(const st_term *t, int adjoint, const double ci[5], int64_t g)
{
  double c[5];
  st_coeffs(t, adjoint, g, c);
  for (int i = 0; i < 5; i++)
    if (c[i] != ci[i] || (ci[i] != 0.0 && (g + i - 2 < 0 || g + i - 2 >= t->n))) return 0;
  return 1;
}

/** Fills the interior weights of the plan and each term's interior rows [ilo, ihi): [4, n - 4) widened
 *  towards the ends while the rows keep the interior weights (a 3-point stencil's interior starts at row 1
 *  or 2, so a row's ends done one element at a time are 1-2 elements, not 4). */
static inline void st_plan_finish(st_plan *p)
{
  for (int k = 0; k < p->nterms; k++) {
    st_term *t = &p->t[k];
    st_coeffs(t, p->adjoint, 4, p->cint[k]);
    t->ilo = 4;
    t->ihi = t->n - 4;
    if (t->n < 9) continue;
    while (t->ilo > 0 && st_row_is_interior(t, p->adjoint, p->cint[k], t->ilo - 1)) t->ilo--;
    while (t->ihi < t->n && st_row_is_interior(t, p->adjoint, p->cint[k], t->ihi)) t->ihi++;
  }
}

/** The input block as segments (the chunks a task reads, in increasing order of start): element e of the
 *  block is at ptr[i] + (e - start[i]) for the segment holding it. Segments need not be adjacent in memory. */
typedef struct {
  int nseg;
  int64_t start[ST_MAX_SEGS], len[ST_MAX_SEGS];
  const void *ptr[ST_MAX_SEGS];
  const void *glo, *ghi; /* ghost planes: (outer, wlo or whi, stride) of the distributed axis */
} st_input;

/** The segment holding element f of the block, or -1 (binary search over the starts). */
static inline SL_HD int st_seg_find(const st_input *in, int64_t f)
{
  int lo = 0, hi = in->nseg - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (f < in->start[mid]) hi = mid - 1;
    else if (f >= in->start[mid] + in->len[mid]) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/** y (elements [s, e) of the block, contiguous) = the stencil sum of the input. single: float, else double.
 *  Returns -1 when an element the sum needs is in no segment (a submission error). */
int kernel_stencil(const st_plan *p, int single, const st_input *in, int64_t s, int64_t e, void *y);
#ifdef SL_HAVE_CUDA
int kernel_cuda_stencil(const st_plan *p, int single, const st_input *in, int64_t s, int64_t e, void *y, void *stream);
#endif

#ifdef __cplusplus
}
#endif
#endif
