/* Ghost layers along the distributed axis: each rank's ghost planes [o - lo, o) and [o + n, o + n + hi) are
 * filled from whichever ranks own them (several, when blocks are thinner than the ghosts or empty), and
 * with zeros beyond the global edges. Only boundary planes move, all as tasks: a pack task per message
 * (sl_rows), one neighbour exchange through the comm layer, an unpack task per message into the ghost
 * layer. Nothing waits on the host. */
#include <stdlib.h>

#include "internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"

/* The planes of member m's ghost layer on side s, as a global range [*b, *e) clipped to the axis. */
static void ghost_range(const sl_array *a, const int64_t *off, const int width[2], int m, int s, int64_t *b, int64_t *e)
{
  int64_t n = a->counts[a->group->members[m]], N = a->dims[a->axis];
  *b = s == 0 ? off[m] - width[0] : off[m] + n;
  *e = s == 0 ? off[m] : off[m] + n + width[1];
  if (*b < 0) *b = 0;
  if (*e > N) *e = N;
}

static void intersect(int64_t b0, int64_t e0, int64_t b1, int64_t e1, int64_t *b, int64_t *e)
{
  *b = b0 > b1 ? b0 : b1;
  *e = e0 < e1 ? e0 : e1;
}

typedef struct {
  int side;
  int64_t b, e;
  starpu_data_handle_t h;
} message;

static int submit_exchange(const sl_array *a, const int64_t *off, const int width[2], const starpu_data_handle_t dst[2])
{
  const sl_group *g = a->group;
  int P = g->size, me = g->rank;
  int64_t plane = a->inner, outer = a->outer, n = a->counts[g->members[me]];
  /* at most one receive and one send per member and side: any number of ranks, any ghost width */
  message *recv = malloc(sizeof *recv * (size_t)(2 * P)), *send = malloc(sizeof *send * (size_t)(2 * P));
  comm_pair *pairs = malloc(sizeof *pairs * (size_t)(4 * P));
  int nrecv = 0, nsend = 0, np = 0, rc = SL_SUCCESS;
  /* the packing tasks read the block's chunks (any number: dynamic handles past StarPU's fixed 16) */
  starpu_data_handle_t *chunks = malloc(sizeof *chunks * (size_t)(a->nchunks > 0 ? a->nchunks : 1));
  if (!chunks || !recv || !send || !pairs) {
    free(chunks), free(recv), free(send), free(pairs);
    return sl_error(SL_E_NOMEM, "ghost exchange: out of memory");
  }
  for (int c = 0; c < a->nchunks; c++) chunks[c] = sl_array_chunk(a, c);
  const double zero[2] = {0, 0};
  for (int s = 0; s < 2 && rc == SL_SUCCESS; s++)
    if (dst[s]) rc = codelet_vec_submit(SL_VEC_FILL, a->dtype, dst[s], NULL, NULL, zero, zero);
  /* receives: my ghost planes owned by member q; sends: the planes of my block member r needs */
  for (int s = 0; s < 2 && rc == SL_SUCCESS; s++)
    for (int q = 0; q < P && rc == SL_SUCCESS; q++) {
      int64_t gb, ge, b, e;
      if (q == me) continue;
      ghost_range(a, off, width, me, s, &gb, &ge);
      intersect(gb, ge, off[q], off[q] + a->counts[g->members[q]], &b, &e);
      if (b < e) {
        message *m = &recv[nrecv++];
        *m = (message){s, b, e, NULL};
        starpu_vector_data_register(&m->h, -1, 0, (uint32_t)(outer * (e - b) * plane), a->elsize);
        pairs[np++] = (comm_pair){.peer = q, .recv_tag = s, .recv = m->h};
      }
      ghost_range(a, off, width, q, s, &gb, &ge);
      intersect(gb, ge, off[me], off[me] + n, &b, &e);
      if (b < e) {
        message *m = &send[nsend++];
        *m = (message){s, b, e, NULL};
        int64_t len = (e - b) * plane;
        starpu_vector_data_register(&m->h, -1, 0, (uint32_t)(outer * len), a->elsize);
        rc = codelet_rows_submit(1, &m->h, STARPU_W, a->nchunks, chunks, a->elsize, outer, len, (b - off[me]) * plane,
                                 n * plane, 0, len);
        pairs[np++] = (comm_pair){.peer = q, .send_tag = s, .send = m->h};
      }
    }
  if (rc == SL_SUCCESS && np > 0) rc = comm_exchange(g->channel, a->dtype, np, pairs);
  for (int k = 0; k < nrecv && rc == SL_SUCCESS; k++) {
    const message *m = &recv[k];
    int64_t lo = m->side == 0 ? off[me] - width[0] : off[me] + n, len = (m->e - m->b) * plane;
    rc = codelet_rows_submit(1, &dst[m->side], STARPU_RW, 1, &m->h, a->elsize, outer, len, 0, len,
                             (m->b - lo) * plane, width[m->side] * plane);
  }
  for (int k = 0; k < nrecv; k++) starpu_data_unregister_submit(recv[k].h);
  for (int k = 0; k < nsend; k++) starpu_data_unregister_submit(send[k].h);
  free(chunks), free(recv), free(send), free(pairs);
  return rc;
}

int sl_array_exchange_ghosts(sl_array *a)
{
  const char *fn = "sl_array_exchange_ghosts";
  SL_CHECK_INIT();
  /* collective: the verdict and the array's layout agreed before any message (a rank refusing alone left the
   * others waiting in the exchange) */
  int rc = SL_SUCCESS;
  if (!a) rc = sl_error(SL_E_INVALID, "%s: argument 1 (a) is NULL", fn);
  else if (a->session != sl_session()) rc = sl_array_check_session(fn, a, "argument 1 (a)");
  else if (a->nparts) rc = sl_error(SL_E_INVALID, "%s: a stacked array is not accepted here (use its parts: sl_array_stack_part)", fn);
  else if (a->partition != SL_SCATTER) rc = sl_error(SL_E_DIST, "%s: argument 1 (a) is not SL_SCATTER", fn);
  else if (a->acquired) rc = sl_error(SL_E_STATE, "%s: argument 1 (a) is acquired by the host; release it first", fn);
  else rc = sl_array_check_data(fn, a, "argument 1 (a)");
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_KEY("argument 1 (a: its layout)", rc == SL_SUCCESS ? sl_array_layout_key(SL_FNV1A_START, a) : 0),
                  SL_SAME_I("argument 1 (a: its ghost widths)", rc == SL_SUCCESS ? (int64_t)a->ghost_lo << 32 | a->ghost_hi : -1)));
  return sl_array_ghost_fill(a, (int[2]){a->ghost_lo, a->ghost_hi}, a->ghost_handle);
}

int sl_array_ghost_fill(const sl_array *a, const int width[2], const starpu_data_handle_t dst[2])
{
  if (width[0] == 0 && width[1] == 0) return SL_SUCCESS;
  const sl_group *g = a->group;
  int64_t *off = malloc(sizeof(int64_t) * (size_t)g->size);
  if (!off) return sl_error(SL_E_NOMEM, "sl_array_exchange_ghosts: out of memory");
  int64_t row = 0;
  for (int m = 0; m < g->size; m++) {
    off[m] = row;
    row += a->counts[g->members[m]];
  }
  int rc = submit_exchange(a, off, width, dst);
  free(off);
  return rc;
}
