/* Large allreduce and reduce-scatter on host MPI as a ring of non-blocking point-to-point messages.
 * Open MPI's non-blocking reductions (libnbc) reduce a few MiB at about half the bandwidth of the blocking
 * calls: for two ranks its allreduce sends the whole vector to one rank and the sum back. The ring moves
 * 2 (P - 1) / P of the vector per rank in 2 (P - 1) steps (P blocks): in step s of the reduce-scatter half
 * rank r sends block r - 1 - s to r + 1 and receives block r - 2 - s from r - 1, which it reduces into its
 * own (so after P - 1 steps it holds the reduction of block r); the allgather half then passes the reduced
 * blocks around. Each step is a send and a receive; the progress thread (or the task's own short poll)
 * reduces a received block and posts the next step when both complete, so no worker waits.
 * A reduce-scatter keeps its send vector untouched: the partial sums travel in two pool buffers.
 * The choice (the reduced vector holds STARLOPS_COMM_RING_BYTES or more per rank: 16 KiB by default, so
 * that each message stays large against the 2 (P - 1) latencies) is the same on every rank, and
 * a channel runs one collective at a time (its order token), so ring messages on the channel's
 * communicator meet no other traffic but their own; their tag lies above the neighbour exchanges' range. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_coll.h"

enum { RING_TAG = 32768 };

struct comm_ring {
  void *buf;          /* allreduce: the vector, reduced in place */
  const char *src;    /* reduce-scatter: the send vector */
  char *dst;          /* reduce-scatter: this rank's block of the result */
  int64_t *off, *len; /* the P blocks, in units */
  char *tmp[2];
  int step, nsteps, P, r, left, right;
};

static int ring_tag_ok(void)
{
  static int ok = -1;
  if (ok < 0) {
    void *v = NULL;
    int flag = 0;
    ok = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag) == MPI_SUCCESS && flag && *(int *)v >= RING_TAG;
  }
  return ok;
}

int coll_ring_wanted(const coll *c)
{
  int64_t limit = sl_ctx.set.comm_ring_bytes;
  if (limit <= 0 || c->ch->size < 2 || !ring_tag_ok()) return 0;
  if (c->kind == K_ALLREDUCE && !(c->nbuf == 1 || c->concat)) return 0;
  if (c->kind != K_ALLREDUCE && c->kind != K_REDUCE_SCATTER) return 0;
  int64_t units = 0;
  if (c->kind == K_ALLREDUCE) units = c->concat ? c->concat_units : c->units[0];
  else
    for (int k = 0; k < c->ch->size; k++) units += c->counts[k];
  return units * (int64_t)c->unit_bytes >= limit * c->ch->size; /* a block per rank of `limit` bytes */
}

/* dst = a op b over n units (float or double). */
static void reduce_units(void *dst, const void *a, const void *b, int64_t n, size_t unit_bytes, comm_op op)
{
#define RING_REDUCE(T)                                                                                     \
  do {                                                                                                     \
    T *d = dst;                                                                                            \
    const T *x = a, *y = b;                                                                                \
    if (op == COMM_SUM)                                                                                    \
      for (int64_t i = 0; i < n; i++) d[i] = x[i] + y[i];                                                  \
    else if (op == COMM_MAX)                                                                               \
      for (int64_t i = 0; i < n; i++) d[i] = x[i] > y[i] ? x[i] : y[i];                                    \
    else                                                                                                   \
      for (int64_t i = 0; i < n; i++) d[i] = x[i] < y[i] ? x[i] : y[i];                                    \
  } while (0)
  if (unit_bytes == 4) RING_REDUCE(float);
  else RING_REDUCE(double);
#undef RING_REDUCE
}

static int mod(int a, int P) { return ((a % P) + P) % P; }

static void ring_release(coll *c)
{
  comm_ring *g = c->ring;
  if (!g) return;
  comm_pool_put(g->tmp[0]);
  comm_pool_put(g->tmp[1]);
  free(g->off);
  free(g);
  c->ring = NULL;
}

/* Posts step g->step: its send and its receive (a zero-length block posts nothing on both sides). */
static int ring_post(coll *c)
{
  comm_ring *g = c->ring;
  MPI_Datatype t = c->unit_bytes == 4 ? MPI_FLOAT : MPI_DOUBLE;
  int s = g->step, P = g->P, r = g->r, half = P - 1, sb, rb;
  const void *sp;
  void *rp;
  char *base = c->kind == K_ALLREDUCE ? g->buf : NULL;
  if (s < half) { /* reduce-scatter half */
    sb = mod(r - 1 - s, P);
    rb = mod(r - 2 - s, P);
    rp = g->tmp[base ? 0 : s & 1]; /* an allreduce reduces into its vector: one buffer serves every step */
    if (base) sp = base + g->off[sb] * (int64_t)c->unit_bytes;
    else sp = s == 0 ? (const void *)(g->src + g->off[sb] * (int64_t)c->unit_bytes) : g->tmp[(s - 1) & 1];
  } else { /* allgather half (allreduce only) */
    int a = s - half;
    sb = mod(r - a, P);
    rb = mod(r - a - 1, P);
    sp = base + g->off[sb] * (int64_t)c->unit_bytes;
    rp = base + g->off[rb] * (int64_t)c->unit_bytes;
  }
  c->reqs[0] = c->reqs[1] = MPI_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  if (g->len[rb] > 0) rc = MPI_Irecv(rp, (int)g->len[rb], t, g->left, RING_TAG, c->ch->comm, &c->reqs[0]);
  if (rc == MPI_SUCCESS && g->len[sb] > 0)
    rc = MPI_Isend((void *)sp, (int)g->len[sb], t, g->right, RING_TAG, c->ch->comm, &c->reqs[1]);
  return rc == MPI_SUCCESS ? SL_SUCCESS : sl_error_mpi(rc, coll_kind_name(c->kind), __FILE__, __LINE__);
}

/* After step g->step completed: reduce what it received, then post the next step. Returns the requests
 * posted (2) or 0 when the collective is over (errors are reported asynchronously). */
int coll_ring_advance(void *arg)
{
  coll *c = arg;
  comm_ring *g = c->ring;
  int s = g->step, P = g->P, r = g->r;
  if (s < P - 1) {
    int rb = mod(r - 2 - s, P);
    int64_t n = g->len[rb], o = g->off[rb] * (int64_t)c->unit_bytes;
    if (c->kind == K_ALLREDUCE) reduce_units((char *)g->buf + o, (char *)g->buf + o, g->tmp[0], n, c->unit_bytes, c->op);
    else if (s < P - 2) reduce_units(g->tmp[s & 1], g->tmp[s & 1], g->src + o, n, c->unit_bytes, c->op);
    else reduce_units(g->dst, g->tmp[s & 1], g->src + o, n, c->unit_bytes, c->op); /* rb == r */
  }
  if (++g->step >= g->nsteps) {
    ring_release(c);
    return 0;
  }
  int rc = ring_post(c);
  if (rc != SL_SUCCESS) {
    sl_async_error(rc, "%s: %s", coll_kind_name(c->kind), sl_last_error());
    ring_release(c);
    return 0;
  }
  return 2;
}

int coll_ring_start(coll *c, int *nreq)
{
  *nreq = 0;
  int P = c->ch->size, r = c->ch->rank;
  comm_ring *g = calloc(1, sizeof *g);
  int64_t *off = malloc(sizeof(int64_t) * 2 * (size_t)P);
  if (!g || !off) {
    free(g);
    free(off);
    return sl_error(SL_E_NOMEM, "%s: out of memory", coll_kind_name(c->kind));
  }
  g->off = off;
  g->len = off + P;
  g->P = P;
  g->r = r;
  g->left = mod(r - 1, P);
  g->right = mod(r + 1, P);
  int64_t most = 0, at = 0;
  if (c->kind == K_ALLREDUCE) {
    int64_t total = c->concat ? c->concat_units : c->units[0];
    g->buf = c->concat ? c->concat : c->ptr[0];
    for (int k = 0; k < P; k++) g->len[k] = total / P + (k < total % P);
    g->nsteps = 2 * (P - 1);
  } else {
    g->src = c->ptr[c->send];
    g->dst = c->recv >= 0 ? c->ptr[c->recv] : NULL;
    for (int k = 0; k < P; k++) g->len[k] = c->counts[k];
    g->nsteps = P - 1;
  }
  for (int k = 0; k < P; k++) {
    g->off[k] = at;
    at += g->len[k];
    if (g->len[k] > most) most = g->len[k];
  }
  size_t tb = (size_t)most * c->unit_bytes;
  g->tmp[0] = tb ? comm_pool_get(tb) : NULL;
  g->tmp[1] = tb && c->kind == K_REDUCE_SCATTER && P > 2 ? comm_pool_get(tb) : NULL;
  c->ring = g;
  if (tb && (!g->tmp[0] || (c->kind == K_REDUCE_SCATTER && P > 2 && !g->tmp[1]))) {
    ring_release(c);
    return sl_error(SL_E_NOMEM, "%s: no buffer of %zu bytes for the ring", coll_kind_name(c->kind), tb);
  }
  int rc = ring_post(c);
  if (rc != SL_SUCCESS) {
    ring_release(c);
    return rc;
  }
  *nreq = 2;
  return SL_SUCCESS;
}

void coll_ring_free(coll *c) { ring_release(c); }
