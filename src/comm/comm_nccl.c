/* The NCCL backend: communicator creation (once per channel, before any collective of it can run) and the
 * NCCL calls of each collective on the worker's stream. NCCL has no complex type (a complex element is
 * two reals, sum only) and no v-collectives: allgatherv is a group of broadcasts, reduce-scatter a group of
 * reduces, alltoallv and exchanges are grouped send/recv; zero-size blocks are skipped. */
#include "comm/comm_coll.h"

#ifdef SL_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdlib.h>

int coll_nccl_device(void);

#define NCCL_TRY(call)                                                                                \
  do {                                                                                                \
    ncclResult_t r_ = (call);                                                                         \
    if (r_ != ncclSuccess)                                                                            \
      return sl_error(SL_E_COMM, "%s failed: %s", #call, ncclGetErrorString(r_));                  \
  } while (0)

int comm_nccl_create(comm_channel *ch)
{
  ncclUniqueId id;
  int rc = SL_SUCCESS;
  if (ch->rank == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) rc = sl_error(SL_E_BACKEND, "ncclGetUniqueId failed: %s", ncclGetErrorString(r));
  }
  SL_TRY(sl_agree(ch->comm, rc));
  SL_CHECK_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, ch->comm));
  SL_CHECK_MPI(MPI_Barrier(ch->comm));
  cudaError_t e = cudaSetDevice(coll_nccl_device());
  if (e != cudaSuccess) rc = sl_error(SL_E_BACKEND, "NCCL: cudaSetDevice: %s", cudaGetErrorString(e));
  ncclComm_t nc = NULL;
  if (rc == SL_SUCCESS) {
    ncclResult_t r = ncclCommInitRank(&nc, ch->size, id, ch->rank);
    if (r != ncclSuccess)
      rc = sl_error(SL_E_BACKEND, "ncclCommInitRank failed: %s (NCCL needs one GPU per rank)", ncclGetErrorString(r));
  }
  rc = sl_agree(ch->comm, rc);
  if (rc != SL_SUCCESS) {
    if (nc) ncclCommDestroy(nc);
    return rc;
  }
  ch->nccl = nc;
  return SL_SUCCESS;
}

void comm_nccl_destroy(comm_channel *ch)
{
  if (ch->nccl) ncclCommDestroy((ncclComm_t)ch->nccl);
  ch->nccl = NULL;
}

static ncclRedOp_t nccl_op(comm_op op) { return op == COMM_MAX ? ncclMax : (op == COMM_MIN ? ncclMin : ncclSum); }

/* order[] = pair indices sorted by (peer, send tag) or (peer, receive tag). */
static void sort_pairs(const coll *c, int *order, int by_send)
{
  for (int i = 0; i < c->npairs; i++) {
    int j = i;
    const coll_pair *p = &c->pairs[i];
    long key = (long)p->peer * 65536 + (by_send ? p->send_tag : p->recv_tag);
    while (j > 0) {
      const coll_pair *q = &c->pairs[order[j - 1]];
      if ((long)q->peer * 65536 + (by_send ? q->send_tag : q->recv_tag) <= key) break;
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
}

static char *at(coll *c, int i, int64_t units) { return (char *)c->ptr[i] + (size_t)units * c->unit_bytes; }

int coll_post_nccl(coll *c, void *stream_)
{
  cudaStream_t s = (cudaStream_t)stream_;
  ncclComm_t nc = (ncclComm_t)c->ch->nccl;
  ncclDataType_t t = c->unit_bytes == 4 ? ncclFloat32 : ncclFloat64;
  int P = c->ch->size, me = c->ch->rank;
  switch (c->kind) {
  case K_ALLREDUCE: /* several buffers: one NCCL group */
    NCCL_TRY(ncclGroupStart());
    for (int i = 0; i < c->nbuf; i++)
      if (c->units[i] > 0) NCCL_TRY(ncclAllReduce(c->ptr[i], c->ptr[i], (size_t)c->units[i], t, nccl_op(c->op), nc, s));
    NCCL_TRY(ncclGroupEnd());
    break;
  case K_BCAST:
    if (c->units[0] > 0) NCCL_TRY(ncclBroadcast(c->ptr[0], c->ptr[0], (size_t)c->units[0], t, c->root, nc, s));
    break;
  case K_ALLGATHERV:
    NCCL_TRY(ncclGroupStart());
    for (int r = 0; r < P; r++)
      if (c->counts[r] > 0)
        NCCL_TRY(ncclBroadcast(r == me ? c->ptr[c->send] : NULL, at(c, c->recv, c->displs[r]), (size_t)c->counts[r], t,
                               r, nc, s));
    NCCL_TRY(ncclGroupEnd());
    break;
  case K_REDUCE_SCATTER:
    NCCL_TRY(ncclGroupStart());
    for (int r = 0; r < P; r++)
      if (c->counts[r] > 0)
        NCCL_TRY(ncclReduce(at(c, c->send, c->displs[r]), r == me ? c->ptr[c->recv] : NULL, (size_t)c->counts[r], t,
                            nccl_op(c->op), r, nc, s));
    NCCL_TRY(ncclGroupEnd());
    break;
  case K_ALLTOALLV:
    NCCL_TRY(ncclGroupStart());
    for (int r = 0; r < P; r++) {
      if (c->scounts[r] > 0) NCCL_TRY(ncclSend(at(c, c->send, c->sdispls[r]), (size_t)c->scounts[r], t, r, nc, s));
      if (c->counts[r] > 0) NCCL_TRY(ncclRecv(at(c, c->recv, c->displs[r]), (size_t)c->counts[r], t, r, nc, s));
    }
    NCCL_TRY(ncclGroupEnd());
    break;
  case K_EXCHANGE: {
    /* a message is (peer, tag): sends go out sorted by (peer, send tag) and receives are posted sorted by
     * (peer, receive tag), so the k-th send to a peer meets that peer's k-th receive from us; messages to
     * ourselves are device copies */
    int order_s[COLL_MAXBUF], order_r[COLL_MAXBUF];
    sort_pairs(c, order_s, 1);
    sort_pairs(c, order_r, 0);
    NCCL_TRY(ncclGroupStart());
    for (int k = 0; k < c->npairs; k++) {
      const coll_pair *p = &c->pairs[order_s[k]];
      if (p->peer >= 0 && p->peer != me && p->scount > 0)
        NCCL_TRY(ncclSend(c->ptr[p->send], (size_t)p->scount, t, p->peer, nc, s));
    }
    for (int k = 0; k < c->npairs; k++) {
      const coll_pair *p = &c->pairs[order_r[k]];
      if (p->peer < 0 || p->rcount == 0) continue;
      if (p->peer != me) {
        NCCL_TRY(ncclRecv(c->ptr[p->recv], (size_t)p->rcount, t, p->peer, nc, s));
        continue;
      }
      const coll_pair *q = NULL;
      for (int j = 0; j < c->npairs && !q; j++)
        if (c->pairs[j].peer == me && c->pairs[j].send_tag == p->recv_tag) q = &c->pairs[j];
      if (!q || q->scount != p->rcount) return sl_error(SL_E_INVALID, "exchange: no matching send to self with tag %d", p->recv_tag);
      cudaError_t e = cudaMemcpyAsync(c->ptr[p->recv], c->ptr[q->send], (size_t)p->rcount * c->unit_bytes,
                                      cudaMemcpyDeviceToDevice, s);
      if (e != cudaSuccess) return sl_error(SL_E_RUNTIME, "exchange: %s", cudaGetErrorString(e));
    }
    NCCL_TRY(ncclGroupEnd());
    break;
  }
  default:
    break;
  }
  return SL_SUCCESS;
}
#endif
