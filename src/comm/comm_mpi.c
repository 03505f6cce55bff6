/* The MPI calls of each collective, non-blocking, on host buffers (host MPI) or device buffers
 * (CUDA-aware MPI). Zero-size collectives post nothing on every rank alike; an exchange posts a receive for
 * each pair that has a receive buffer and a send for each that has a send buffer (a zero-size block is a
 * NULL handle on both sides). */
#include "comm/comm_coll.h"

static double dummy[2]; /* a valid address for zero-count arguments */

static MPI_Datatype unit_type(const coll *c) { return c->unit_bytes == 4 ? MPI_FLOAT : MPI_DOUBLE; }

static MPI_Op mpi_op(comm_op op) { return op == COMM_MAX ? MPI_MAX : (op == COMM_MIN ? MPI_MIN : MPI_SUM); }

static void *buf(coll *c, int i) { return i >= 0 && c->ptr[i] ? c->ptr[i] : (void *)dummy; }

/* An all-to-all's receive buffer. A rank with nothing to send and nothing to receive must not pass one dummy
 * as both buffers: Open MPI reads sendbuf == recvbuf as in place and then exchanges with every rank. */
static void *a2a_recv(coll *c)
{
  static char none;
  void *rb = buf(c, c->recv);
  return rb == buf(c, c->send) ? (void *)&none : rb;
}

int coll_max_requests(const coll *c)
{
  if (c->kind == K_EXCHANGE) return 2 * c->npairs;
  if (c->kind == K_ALLREDUCE) return c->nbuf > 4 ? c->nbuf : 4; /* the ring: two units of a send and a receive */
  return c->kind == K_REDUCE_SCATTER ? 4 : 1;
}

static int64_t sum_counts(const int *counts, int n)
{
  int64_t t = 0;
  for (int i = 0; i < n; i++) t += counts[i];
  return t;
}

int64_t coll_blocking_size(const coll *c)
{
  int64_t units = -1;
  switch (c->kind) {
  case K_ALLREDUCE:
    if (c->nbuf == 1 && !c->concat) units = c->units[0];
    break;
  case K_BCAST: units = c->units[0]; break;
  case K_ALLGATHERV:
  case K_REDUCE_SCATTER:
    units = sum_counts(c->counts, c->ch->size);
    break;
  default: break; /* alltoallv and exchanges: their sizes differ between ranks */
  }
  return units < 0 ? -1 : units * (int64_t)c->unit_bytes;
}

int coll_run_mpi_blocking(coll *c)
{
  MPI_Comm comm = c->ch->comm;
  MPI_Datatype t = unit_type(c);
  int P = c->ch->size, rc = MPI_SUCCESS;
  switch (c->kind) {
  case K_ALLREDUCE:
    for (int i = 0; i < c->nbuf && rc == MPI_SUCCESS; i++)
      if (c->units[i] > 0) rc = MPI_Allreduce(MPI_IN_PLACE, buf(c, i), (int)c->units[i], t, mpi_op(c->op), comm);
    break;
  case K_BCAST:
    if (c->units[0] > 0) rc = MPI_Bcast(buf(c, 0), (int)c->units[0], t, c->root, comm);
    break;
  case K_ALLGATHERV:
    if (sum_counts(c->counts, P) > 0)
      rc = MPI_Allgatherv(buf(c, c->send), c->counts[c->ch->rank], t, buf(c, c->recv), c->counts, c->displs, t, comm);
    break;
  case K_REDUCE_SCATTER:
    if (sum_counts(c->counts, P) > 0)
      rc = MPI_Reduce_scatter(buf(c, c->send), buf(c, c->recv), c->counts, t, mpi_op(c->op), comm);
    break;
  case K_BARRIER: rc = MPI_Barrier(comm); break;
  case K_ALLTOALLV:
    rc = MPI_Alltoallv(buf(c, c->send), c->scounts, c->sdispls, t, a2a_recv(c), c->counts, c->displs, t, comm);
    break;
  default: { /* point-to-point: the non-blocking calls carry no reduction, then wait here */
    int nreq = 0;
    for (int i = 0; i < coll_max_requests(c); i++) c->reqs[i] = MPI_REQUEST_NULL;
    int r = coll_post_mpi(c, &nreq);
    if (nreq > 0) rc = MPI_Waitall(nreq, c->reqs, MPI_STATUSES_IGNORE);
    if (r != SL_SUCCESS) return r;
    break;
  }
  }
  return rc == MPI_SUCCESS ? SL_SUCCESS : sl_error_mpi(rc, coll_kind_name(c->kind), __FILE__, __LINE__);
}

int coll_post_mpi(coll *c, int *nreq)
{
  MPI_Comm comm = c->ch->comm;
  MPI_Datatype t = unit_type(c);
  int P = c->ch->size, rc = MPI_SUCCESS;
  *nreq = 0;
  switch (c->kind) {
  case K_ALLREDUCE: /* one call on the concatenation when there is one, else one per buffer */
    if (c->concat && c->concat_units > 0)
      rc = MPI_Iallreduce(MPI_IN_PLACE, c->concat, (int)c->concat_units, t, mpi_op(c->op), comm, &c->reqs[(*nreq)++]);
    for (int i = 0; !c->concat && i < c->nbuf && rc == MPI_SUCCESS; i++)
      if (c->units[i] > 0)
        rc = MPI_Iallreduce(MPI_IN_PLACE, buf(c, i), (int)c->units[i], t, mpi_op(c->op), comm, &c->reqs[(*nreq)++]);
    break;
  case K_BCAST:
    if (c->units[0] > 0) rc = MPI_Ibcast(buf(c, 0), (int)c->units[0], t, c->root, comm, &c->reqs[(*nreq)++]);
    break;
  case K_ALLGATHERV:
    if (sum_counts(c->counts, P) > 0)
      rc = MPI_Iallgatherv(buf(c, c->send), c->counts[c->ch->rank], t, buf(c, c->recv), c->counts, c->displs, t,
                           comm, &c->reqs[(*nreq)++]);
    break;
  case K_REDUCE_SCATTER:
    if (sum_counts(c->counts, P) > 0)
      rc = MPI_Ireduce_scatter(buf(c, c->send), buf(c, c->recv), c->counts, t, mpi_op(c->op), comm,
                               &c->reqs[(*nreq)++]);
    break;
  case K_ALLTOALLV:
    rc = MPI_Ialltoallv(buf(c, c->send), c->scounts, c->sdispls, t, a2a_recv(c), c->counts, c->displs, t, comm,
                        &c->reqs[(*nreq)++]);
    break;
  case K_BARRIER: rc = MPI_Ibarrier(comm, &c->reqs[(*nreq)++]); break;
  case K_EXCHANGE:
    for (int i = 0; i < c->npairs && rc == MPI_SUCCESS; i++) {
      const coll_pair *p = &c->pairs[i];
      if (p->peer < 0) continue;
      if (p->recv >= 0) rc = MPI_Irecv(buf(c, p->recv), p->rcount, t, p->peer, p->recv_tag, comm, &c->reqs[(*nreq)++]);
      if (rc == MPI_SUCCESS && p->send >= 0)
        rc = MPI_Isend(buf(c, p->send), p->scount, t, p->peer, p->send_tag, comm, &c->reqs[(*nreq)++]);
    }
    break;
  default:
    break;
  }
  if (rc != MPI_SUCCESS) {
    if (*nreq > 0 && c->reqs[*nreq - 1] == MPI_REQUEST_NULL) (*nreq)--;
    return sl_error_mpi(rc, coll_kind_name(c->kind), __FILE__, __LINE__);
  }
  return SL_SUCCESS;
}
