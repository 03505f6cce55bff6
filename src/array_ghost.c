/* Ghost layers along the distributed axis: each rank's ghost planes [o - lo, o) and [o + n, o + n + hi) are
 * filled from whichever ranks own them (several, when blocks are thinner than the ghosts or empty), and
 * with zeros beyond the global edges. Only boundary planes move. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The planes of member m's ghost layer on side s, as a global range [*b, *e) clipped to the axis. */
static void ghost_range(const sl_array *a, const int64_t *off, int m, int s, int64_t *b, int64_t *e)
{
  int64_t n = a->counts[a->group->members[m]], N = a->dims[a->axis];
  *b = s == 0 ? off[m] - a->ghost_lo : off[m] + n;
  *e = s == 0 ? off[m] : off[m] + n + a->ghost_hi;
  if (*b < 0) *b = 0;
  if (*e > N) *e = N;
}

static void intersect(int64_t b0, int64_t e0, int64_t b1, int64_t e1, int64_t *b, int64_t *e)
{
  *b = b0 > b1 ? b0 : b1;
  *e = e0 < e1 ? e0 : e1;
}

int sl_array_exchange_ghosts(sl_array *a)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_array_exchange_ghosts: argument 1 (a) is NULL");
  SL_CHECK_ARG(a->partition == SL_SCATTER, SL_E_DIST, "sl_array_exchange_ghosts: argument 1 (a) is not SL_SCATTER");
  if (a->ghost_lo == 0 && a->ghost_hi == 0) return SL_SUCCESS;
  const sl_group *g = a->group;
  int P = g->size, me = g->rank;
  int64_t plane = a->inner, row = 0;
  int64_t *off = malloc(sizeof(int64_t) * (size_t)P);
  /* At most one message per (peer, side) in each direction. */
  MPI_Request *req = malloc(sizeof(MPI_Request) * 4 * (size_t)P);
  char **buf = calloc(4 * (size_t)P, sizeof(char *));
  int nreq = 0, rc = SL_SUCCESS;
  if (!off || !req || !buf) rc = sl_error(SL_E_NOMEM, "sl_array_exchange_ghosts: out of memory");
  for (int m = 0; rc == SL_SUCCESS && m < P; m++) {
    off[m] = row;
    row += a->counts[g->members[m]];
  }
  void *local = NULL, *gh[2] = {NULL, NULL};
  if (rc == SL_SUCCESS) rc = sl_array_acquire(a, SL_READ, &local);
  if (rc == SL_SUCCESS) rc = sl_array_acquire_ghosts(a, &gh[0], &gh[1]);
  int64_t n = a->counts[g->members[me]];
  int width[2] = {a->ghost_lo, a->ghost_hi};
  for (int s = 0; s < 2; s++)
    if (gh[s]) memset(gh[s], 0, (size_t)(a->outer * width[s] * plane) * a->elsize);
  /* Receives: my ghost planes owned by member q. */
  for (int s = 0; rc == SL_SUCCESS && s < 2; s++) {
    int64_t gb, ge;
    ghost_range(a, off, me, s, &gb, &ge);
    for (int q = 0; q < P && rc == SL_SUCCESS; q++) {
      int64_t b, e;
      intersect(gb, ge, off[q], off[q] + a->counts[g->members[q]], &b, &e);
      if (q == me || b >= e) continue;
      size_t bytes = (size_t)(a->outer * (e - b) * plane) * a->elsize;
      buf[nreq] = malloc(bytes);
      if (!buf[nreq]) { rc = sl_error(SL_E_NOMEM, "sl_array_exchange_ghosts: out of memory"); break; }
      int mpi = MPI_Irecv(buf[nreq], (int)bytes, MPI_BYTE, q, s, g->comm, &req[nreq]);
      if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Irecv", __FILE__, __LINE__);
      nreq++;
    }
  }
  int nrecv = nreq;
  /* Sends: the planes of my block that member r needs as ghosts. */
  for (int r = 0; rc == SL_SUCCESS && r < P; r++) {
    for (int s = 0; s < 2 && r != me; s++) {
      int64_t gb, ge, b, e;
      ghost_range(a, off, r, s, &gb, &ge);
      intersect(gb, ge, off[me], off[me] + n, &b, &e);
      if (b >= e) continue;
      int64_t len = (e - b) * plane;
      buf[nreq] = malloc((size_t)(a->outer * len) * a->elsize);
      if (!buf[nreq]) { rc = sl_error(SL_E_NOMEM, "sl_array_exchange_ghosts: out of memory"); break; }
      sl_copy_rows(buf[nreq], len, (char *)local + (size_t)((b - off[me]) * plane) * a->elsize, n * plane, a->outer,
                   len, a->elsize);
      int mpi = MPI_Isend(buf[nreq], (int)((size_t)(a->outer * len) * a->elsize), MPI_BYTE, r, s, g->comm, &req[nreq]);
      if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Isend", __FILE__, __LINE__);
      nreq++;
    }
  }
  if (nreq > 0) {
    int mpi = MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    if (mpi != MPI_SUCCESS && rc == SL_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Waitall", __FILE__, __LINE__);
  }
  /* Unpack in the order the receives were posted. */
  int k = 0;
  for (int s = 0; rc == SL_SUCCESS && s < 2; s++) {
    int64_t gb, ge, lo = s == 0 ? off[me] - a->ghost_lo : off[me] + n;
    ghost_range(a, off, me, s, &gb, &ge);
    for (int q = 0; q < P && k < nrecv; q++) {
      int64_t b, e;
      intersect(gb, ge, off[q], off[q] + a->counts[g->members[q]], &b, &e);
      if (q == me || b >= e) continue;
      sl_copy_rows((char *)gh[s] + (size_t)((b - lo) * plane) * a->elsize, width[s] * plane, buf[k], (e - b) * plane,
                   a->outer, (e - b) * plane, a->elsize);
      k++;
    }
  }
  for (int i = 0; buf && i < nreq; i++) free(buf[i]);
  if (local || a->acquired) sl_array_release(a);
  if (gh[0] || gh[1]) sl_array_release_ghosts(a);
  free(off);
  free(req);
  free(buf);
  return rc;
}
