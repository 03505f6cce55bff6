/* Windows (or patches) along the distributed axis, for Sliding1D and Patch2D with a dense matrix per patch: a
 * rank owns the windows that start in its rows, so the model is split by the windows' starts; a window reaches
 * up to nwin - 1 rows into the next ranks, so the forward reads the ceil(nwin / step) windows before the
 * rank's own (ghost windows of the model) and the adjoint the nwin - 1 rows after its block (ghost rows of the
 * data), both filled through the comm layer's neighbour exchange (sl_array_ghost_fill). An apply is two patch
 * tasks, the first beside the exchange (apply_parts), or, where that split does not apply, one task that
 * reads the block and the ghost layer together. */
#include <stdio.h>
#include <stdlib.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"
#include "codelets/kernel_patch.h"

void sl_window_split_init(sl_window_split *w, const sl_array *like, int64_t nwin, int64_t step, int64_t nwins)
{
  *w = (sl_window_split){0};
  int64_t nrow = like->ldims[like->axis], off = 0;
  for (int m = 0; m < like->group->rank; m++) off += like->counts[like->group->members[m]];
  int64_t wl = (off + step - 1) / step, wh = (off + nrow + step - 1) / step;
  w->off = off;
  w->nrow = nrow;
  w->wl = wl < nwins ? wl : nwins;
  w->ln = (wh < nwins ? wh : nwins) - w->wl;
  w->gw[0] = (nwin + step - 1) / step;
  w->gw[1] = nwin - 1;
}

void sl_window_split_dims(sl_window_split *w, sl_patch_dims *fwd, sl_patch_dims *adj, int64_t model_plane, int64_t data_plane,
                          size_t el)
{
  w->on = 1;
  /* forward: this rank's rows from the model's ghost windows and its own; adjoint: its own windows from its
   * rows and the ghost rows after them */
  fwd->n0 = w->nrow;
  fwd->nw0 = w->gw[0] + w->ln;
  fwd->r0 = w->off;
  fwd->p0 = w->wl - w->gw[0];
  adj->n0 = w->nrow + w->gw[1];
  adj->nw0 = w->ln;
  adj->r0 = w->off;
  adj->p0 = w->wl;
  starpu_vector_data_register(&w->ghost[0], -1, 0, (uint32_t)(w->gw[0] * model_plane), el);
  if (w->gw[1] > 0) starpu_vector_data_register(&w->ghost[1], -1, 0, (uint32_t)(w->gw[1] * data_plane), el);
}

/* The apply as two tasks, so that the exchange runs beside the first: forward, the rank's own windows write its
 * rows, then the ghost windows add into the first rows they reach; adjoint, the windows that end inside the
 * rank's rows, then the others from the rows where they start and the ghost rows. Neither task packs the block:
 * the first has no ghost layer, the second reads the ghost layer alone (forward) or the last rows and the
 * ghost layer (adjoint). hx: the input's nx chunks; in: the same with the ghost layer (before the model's
 * chunks, after the data's). *done is 0 when the split does not apply (no own window, or no window inside). */
static int apply_parts(const sl_window_split *w, sl_dtype dt, int adj, const sl_patch_dims *d, starpu_data_handle_t tables,
                       starpu_data_handle_t scratch, int nx, const starpu_data_handle_t *hx,
                       const starpu_data_handle_t *in, int ny, const starpu_data_handle_t *hy, int *done)
{
  const int64_t row = d->B * d->n1 * d->C, win = d->nop0 * d->B * d->nw1 * d->nop1 * d->C, end = w->off + w->nrow;
  *done = 0;
  if (d->A != 1 || w->ln == 0) return SL_SUCCESS;
  sl_patch_dims own = *d, rest = *d;
  own.p0 = w->wl;
  if (!adj) {
    int64_t rb = w->wl > 0 ? (w->wl - 1) * d->s0 + d->nwin0 - w->off : 0; /* rows the ghost windows reach */
    own.nw0 = w->ln;
    *done = 1;
    int rc = codelet_patch_submit(dt, 0, &own, tables, scratch, nx, hx, 0, ny, hy, NULL);
    if (rc != SL_SUCCESS || rb <= 0) return rc;
    rest.nw0 = w->gw[0];
    rest.p0 = w->wl - w->gw[0];
    rest.n0 = rb < w->nrow ? rb : w->nrow;
    rest.acc = 1;
    const codelet_patch_part part = {0, 0, 1};
    return codelet_patch_submit(dt, 0, &rest, tables, scratch, 1, &w->ghost[0], 0, ny, hy, &part);
  }
  int64_t li = end >= d->nwin0 ? (end - d->nwin0) / d->s0 - w->wl + 1 : 0; /* own windows ending inside */
  if (li > w->ln) li = w->ln;
  if (li <= 0) return SL_SUCCESS;
  own.nw0 = li;
  own.n0 = w->nrow;
  *done = 1;
  int rc = codelet_patch_submit(dt, 1, &own, tables, scratch, nx, hx, 0, ny, hy, NULL);
  if (rc != SL_SUCCESS || li == w->ln) return rc;
  const int64_t ra = (w->wl + li) * d->s0 - w->off; /* the first row of the other windows */
  rest.nw0 = w->ln - li;
  rest.p0 = w->wl + li;
  rest.n0 = d->n0 - ra;
  rest.r0 = d->r0 + ra;
  const codelet_patch_part part = {ra * row, li * win, 1};
  return codelet_patch_submit(dt, 1, &rest, tables, scratch, nx + 1, in, 1, ny, hy, &part);
}

int sl_window_split_apply(const sl_window_split *w, sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y,
                          const sl_patch_dims *d, starpu_data_handle_t tables, starpu_data_handle_t scratch)
{
  int adj = mode == SL_ADJOINT, side = adj ? 1 : 0, width[2] = {0, 0}, g = w->gw[side] > 0, done = 0;
  starpu_data_handle_t dst[2] = {NULL, NULL}, *hx = NULL, *hy = NULL, *in = NULL;
  width[side] = w->gw[side];
  dst[side] = w->ghost[side];
  int nx = 0, ny = 0, rc = g ? sl_array_ghost_fill(x, width, dst) : SL_SUCCESS;
  if (rc == SL_SUCCESS) rc = sl_op_chunks(x, &hx, &nx);
  if (rc == SL_SUCCESS) rc = sl_op_chunks(y, &hy, &ny);
  if (rc == SL_SUCCESS && !(in = malloc(sizeof *in * (size_t)(nx + 1))))
    rc = sl_error(SL_E_NOMEM, "%s: out of memory", op->name);
  if (rc == SL_SUCCESS) { /* the ghost windows before the model's chunks, the ghost rows after the data's */
    for (int k = 0; k < nx; k++) in[k + (g && !adj)] = hx[k];
    if (g) in[adj ? nx : 0] = w->ghost[side];
  }
  if (rc == SL_SUCCESS && g && ny > 0) rc = apply_parts(w, op->dtype, adj, d, tables, scratch, nx, hx, in, ny, hy, &done);
  if (rc == SL_SUCCESS && !done) /* one task on the block and the ghost layer */
    rc = codelet_patch_submit(op->dtype, adj, d, tables, scratch, nx + g, in, g, ny, hy, NULL);
  free(in);
  free(hx);
  free(hy);
  return rc;
}

int sl_window_wrap(sl_op **op, sl_op *inner, const sl_array *loc, const sl_array *like, const char *name)
{
  sl_op *r = NULL, *p = NULL;
  int rc = sl_op_redistribute(&r, loc, like);
  if (rc == SL_SUCCESS) rc = sl_op_product(&p, r, inner);
  sl_op_destroy(&r);
  sl_op_destroy(&inner);
  if (rc == SL_SUCCESS) snprintf(p->name, sizeof p->name, "%s", name);
  return sl_op_finish(op, p, rc);
}

void sl_window_split_free(sl_window_split *w)
{
  for (int s = 0; s < 2; s++)
    if (w->ghost[s]) starpu_data_unregister_submit(w->ghost[s]);
  w->ghost[0] = w->ghost[1] = NULL;
}
