/* Large allreduce and reduce-scatter on host MPI as a ring of non-blocking point-to-point messages.
 * Open MPI's non-blocking reductions (libnbc) reduce a few MiB at about half the bandwidth of the blocking
 * calls: for two ranks its allreduce sends the whole vector to one rank and the sum back. The ring moves
 * 2 (P - 1) / P of the vector per rank in 2 (P - 1) steps (P blocks): in step s of the reduce-scatter half
 * rank r sends block r - 1 - s to r + 1 and receives block r - 2 - s from r - 1, which it reduces into its
 * own (so after P - 1 steps it holds the reduction of block r); the allgather half then passes the reduced
 * blocks around. Each block is cut into S segments (of STARLOPS_COMM_RING_SEGMENT_BYTES, 256 KiB by default,
 * at most 64), and a segment's send and receive in one step is a unit; two units are in flight, so the
 * reduction of one segment (by the progress thread, or the task's own short poll, as its requests
 * complete) overlaps the next segment's transfer, and no worker waits.
 * A reduce-scatter keeps its send vector untouched: the partial sums travel in pool buffers.
 * The choice (the reduced vector holds STARLOPS_COMM_RING_BYTES or more per rank: 16 KiB by default, so
 * that each message stays large against the 2 (P - 1) latencies; comm_task.c sends one-buffer allreduces of
 * 1 to 16 MiB to Open MPI's blocking call instead) is the same on every rank, and
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
  char *tmp[3];       /* the reduce-scatter half's receive buffers, by step modulo 3 */
  int P, r, left, right;
  int S;              /* segments per block */
  int units;          /* steps x S: one unit is one segment's send and receive */
  int head, next;     /* the oldest unit in flight, the next to post */
  int inflight;       /* units posted and not completed: 1 or 2 (their requests in reqs[0..1], [2..3]) */
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
  for (int k = 0; k < 3; k++) comm_pool_put(g->tmp[k]);
  free(g->off);
  free(g);
  c->ring = NULL;
}

/* An MPI call failed with units posted: their requests may still read or write the ring's buffers, and
 * cancelling a send may never complete, so the buffers are left to them (not returned to the pool) and the
 * collective is over for this rank; the peers then wait until the watchdog (STARLOPS_TIMEOUT) ends the job. */
static void ring_abandon(coll *c, int rc)
{
  sl_async_error(rc, "%s: %s (the ring's buffers are left to its pending requests)", coll_kind_name(c->kind), sl_last_error());
  comm_ring *g = c->ring;
  free(g->off);
  free(g);
  c->ring = NULL;
}

static int64_t seg_lo(int64_t len, int j, int S) { return len * j / S; }

/* The blocks unit u sends and receives: step s = u / S (the reduce-scatter half, then the allgather half). */
static void unit_blocks(const comm_ring *g, int s, int *sb, int *rb)
{
  int P = g->P, r = g->r;
  if (s < P - 1) {
    *sb = mod(r - 1 - s, P);
    *rb = mod(r - 2 - s, P);
  } else {
    *sb = mod(r - (s - (P - 1)), P);
    *rb = mod(r - (s - (P - 1)) - 1, P);
  }
}

/* Posts unit u (segment j of step s) into reqs[2 slot], [2 slot + 1]; a zero-length segment posts nothing on
 * both sides. The reduce-scatter half receives into tmp[s % 3]: a reduce-scatter sends a step's partial sums
 * in the next step, and with two units in flight the next step's first segment may be posted while the last
 * one of the step before is still moving, so three buffers keep every region in use apart (blocks differ in
 * length, so their segments do not line up). */
static int ring_post(coll *c, int u, int slot)
{
  comm_ring *g = c->ring;
  MPI_Datatype t = c->unit_bytes == 4 ? MPI_FLOAT : MPI_DOUBLE;
  int s = u / g->S, j = u % g->S, sb, rb;
  int64_t ub = (int64_t)c->unit_bytes;
  unit_blocks(g, s, &sb, &rb);
  int64_t slo = seg_lo(g->len[sb], j, g->S), sn = seg_lo(g->len[sb], j + 1, g->S) - slo;
  int64_t rlo = seg_lo(g->len[rb], j, g->S), rn = seg_lo(g->len[rb], j + 1, g->S) - rlo;
  const char *sp;
  char *rp, *base = c->kind == K_ALLREDUCE ? g->buf : NULL;
  if (s < g->P - 1) {
    rp = g->tmp[s % 3] + rlo * ub;
    if (base) sp = base + (g->off[sb] + slo) * ub;
    else sp = s == 0 ? g->src + (g->off[sb] + slo) * ub : g->tmp[(s - 1) % 3] + slo * ub;
  } else {
    sp = base + (g->off[sb] + slo) * ub;
    rp = base + (g->off[rb] + rlo) * ub;
  }
  MPI_Request *q = c->reqs + 2 * slot;
  q[0] = q[1] = MPI_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  if (rn > 0) rc = MPI_Irecv(rp, (int)rn, t, g->left, RING_TAG, c->ch->comm, &q[0]);
  if (rc == MPI_SUCCESS && sn > 0) rc = MPI_Isend((void *)sp, (int)sn, t, g->right, RING_TAG, c->ch->comm, &q[1]);
  return rc == MPI_SUCCESS ? SL_SUCCESS : sl_error_mpi(rc, coll_kind_name(c->kind), __FILE__, __LINE__);
}

/* After the oldest unit in flight completed: reduce the segment it received (reduce-scatter half), post the
 * next unit, and wait for the oldest again. With two units in flight (blocks of 2 segments or more) a
 * segment's reduction overlaps the next segment's transfer; a unit's send needs the same segment of the
 * step before, at least S >= 2 units back, so it is always complete. Returns the requests to wait on (2),
 * or 0 when the collective is over (errors are reported asynchronously). */
int coll_ring_advance(void *arg)
{
  coll *c = arg;
  comm_ring *g = c->ring;
  int u = g->head, s = u / g->S, j = u % g->S, P = g->P, sb, rb;
  if (s < P - 1) {
    unit_blocks(g, s, &sb, &rb);
    int64_t ub = (int64_t)c->unit_bytes, lo = seg_lo(g->len[rb], j, g->S), n = seg_lo(g->len[rb], j + 1, g->S) - lo;
    int64_t o = (g->off[rb] + lo) * ub;
    char *t = g->tmp[s % 3] + lo * ub;
    if (c->kind == K_ALLREDUCE) reduce_units((char *)g->buf + o, (char *)g->buf + o, t, n, c->unit_bytes, c->op);
    else if (s < P - 2) reduce_units(t, t, g->src + o, n, c->unit_bytes, c->op);
    else reduce_units(g->dst + lo * ub, t, g->src + o, n, c->unit_bytes, c->op); /* rb == r */
  }
  g->head++;
  if (--g->inflight > 0) {
    c->reqs[0] = c->reqs[2];
    c->reqs[1] = c->reqs[3];
  }
  if (g->next < g->units) {
    int rc = ring_post(c, g->next, g->inflight);
    if (rc != SL_SUCCESS) {
      ring_abandon(c, rc);
      return 0;
    }
    g->next++;
    g->inflight++;
  }
  if (g->inflight == 0) {
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
  } else {
    g->src = c->ptr[c->send];
    g->dst = c->recv >= 0 ? c->ptr[c->recv] : NULL;
    for (int k = 0; k < P; k++) g->len[k] = c->counts[k];
  }
  for (int k = 0; k < P; k++) {
    g->off[k] = at;
    at += g->len[k];
    if (g->len[k] > most) most = g->len[k];
  }
  /* segments of STARLOPS_COMM_RING_SEGMENT_BYTES (256 KiB by default), at most 64 per block: the same on every
   * rank (the largest block and the agreed setting are) */
  int64_t seg = sl_ctx.set.comm_ring_segment_bytes / (int64_t)c->unit_bytes;
  if (seg < 1) seg = 1;
  int64_t nseg = (most + seg - 1) / seg;
  g->S = nseg < 1 ? 1 : (nseg > 64 ? 64 : (int)nseg);
  g->units = (c->kind == K_ALLREDUCE ? 2 : 1) * (P - 1) * g->S;
  size_t tb = (size_t)most * c->unit_bytes;
  int nt = P - 1 < 3 ? P - 1 : 3, got = 1; /* steps of the reduce-scatter half use tmp[s % 3] */
  for (int k = 0; k < nt && tb; k++) got = got && (g->tmp[k] = comm_pool_get(tb)) != NULL;
  c->ring = g;
  if (!got) {
    ring_release(c);
    return sl_error(SL_E_NOMEM, "%s: no buffer of %zu bytes for the ring", coll_kind_name(c->kind), tb);
  }
  int window = g->S >= 2 ? 2 : 1;
  for (; g->inflight < window && g->next < g->units; g->next++, g->inflight++) {
    int rc = ring_post(c, g->next, g->inflight);
    if (rc != SL_SUCCESS && g->next == 0 && c->reqs[0] == MPI_REQUEST_NULL && c->reqs[1] == MPI_REQUEST_NULL) {
      ring_release(c); /* nothing posted */
      return rc;
    }
    if (rc != SL_SUCCESS) {
      ring_abandon(c, rc);
      return SL_SUCCESS; /* reported; nothing to wait for */
    }
  }
  *nreq = 2;
  return SL_SUCCESS;
}

void coll_ring_free(coll *c) { ring_release(c); }
