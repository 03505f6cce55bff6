/* Redistribution: moving an array's distributed axis (a to b) or changing its local extents, through one
 * all-to-all. Rank q's block of the source restricted to rank r's range along b is one strided row copy out
 * of q's block (rows before b, each a run of r's planes), and lands in r's block as one strided row copy
 * (rows before a, each a run of q's planes). The piece a rank keeps for itself goes from block to block in
 * one copy. The plan (counts, copies) is made once and reused by every application, its buffers on the first
 * application. Two transports:
 *   shared memory (every rank on one node, host MPI: comm_shm.c): each rank's receive buffer is a segment
 *     the others map; a barrier (every rank's earlier reads of its segment are over), pack tasks that copy
 *     each piece straight into the receiver's segment (on the rank's workers, in parallel), a barrier (every
 *     piece has landed), unpack tasks. One copy on each side and no MPI transfer. A rank whose pieces are all
 *     runs of its block has its segment laid out as the block (each piece at its place), and a caller that
 *     makes that segment the destination (sl_redist_block: the FFT's work buffer) skips the unpacks, the rank's
 *     own piece then packed into its own segment between the barriers like the others;
 *   MPI (otherwise, or STARLOPS_COMM_SHM=0): pack tasks, one comm_alltoallv, unpack tasks. A side whose
 *     pieces are all runs of one handle (the source of a move to an earlier axis, the destination of a move
 *     to a later one) skips its copies: the all-to-all reads or writes the block in place.
 * Nothing runs on the host thread. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"

int sl_layout_moved(sl_array **loc, const sl_array *like, const int *skip, int nskip)
{
  int other = -1;
  for (int d = 0; d < like->ndim; d++) {
    int in = 0;
    for (int k = 0; k < nskip; k++) in |= skip[k] == d;
    if (!in && (other < 0 || like->dims[d] > like->dims[other])) other = d;
  }
  if (other < 0) other = skip[0] < skip[nskip - 1] ? skip[0] : skip[nskip - 1];
  sl_dist d = {.partition = SL_SCATTER, .axis = other};
  return sl_layout_create(loc, like->ndim, like->dims, like->dtype, &d);
}

typedef struct {
  int64_t rows, len, start, stride;
} rowcopy;

struct sl_redist {
  sl_dtype dt;
  size_t el;
  int P, me;
  int64_t *scount, *sdispl, *rcount, *rdispl;
  rowcopy *pack, *unpack;  /* per destination / per source rank */
  int64_t *sdirect, *rdirect; /* the pieces' places in a one-handle source / destination, when all are runs */
  starpu_data_handle_t send, recv, self;
  int64_t nsend, nrecv;        /* MPI: the send and receive buffers' elements, made on the first application */
  int buffered;
  comm_shm *shm;               /* the receive buffers in shared memory, or NULL (MPI) */
  starpu_data_handle_t *peer;  /* shared memory: per destination rank, this rank's piece's place in its segment
                                  (peer[me]: the own piece's place, block-shaped segments only) */
  int block;                   /* shared memory: this rank's segment is laid out as its destination block (every
                                  piece it receives is a run there), each piece landing at its place */
  int nfence;                  /* the handles the barriers hold: recv and the pieces' places */
  starpu_data_handle_t *fence;
};

/* A row copy that is one run of elements. */
static int is_run(const rowcopy *c) { return c->rows <= 1 || c->stride == c->len; }

static int64_t prod(const int64_t *d, int b, int e)
{
  int64_t p = 1;
  for (int i = b; i < e; i++) p *= d[i];
  return p;
}

/* The part of block `blk` (local dims ld, distributed along axis a, first index off) lying in [b0, b0 + n)
 * along axis b (global dims dims) as a row copy inside the block; *cnt its elements. */
static rowcopy piece(const int64_t *dims, int nd, const int64_t *ld, int a, int64_t off, int b, int64_t b0, int64_t n,
                     int64_t *cnt)
{
  rowcopy rc = {0, 0, 0, 0};
  int64_t inner = prod(ld, b + 1, nd), outer = prod(ld, 0, b);
  if (a == b) { /* both ranges along the same axis: their intersection */
    int64_t lo = b0 > off ? b0 : off, hi = b0 + n < off + ld[a] ? b0 + n : off + ld[a];
    if (hi < lo) hi = lo;
    rc = (rowcopy){outer, (hi - lo) * inner, (lo - off) * inner, ld[a] * inner};
  } else {
    rc = (rowcopy){outer, n * inner, b0 * inner, dims[b] * inner};
  }
  *cnt = rc.rows * rc.len;
  if (*cnt == 0) rc.rows = rc.len = 0;
  return rc;
}

void sl_redist_destroy(sl_redist *p)
{
  if (!p) return;
  if (p->send) starpu_data_unregister_submit(p->send);
  if (p->self) starpu_data_unregister_submit(p->self);
  if (p->shm) { /* the handles over shared memory go (after their tasks) before the memory is unmapped */
    if (p->recv) starpu_data_unregister_no_coherency(p->recv);
    for (int r = 0; p->peer && r < p->P; r++)
      if (p->peer[r]) starpu_data_unregister_no_coherency(p->peer[r]);
    comm_shm_destroy(p->shm);
  } else if (p->recv) starpu_data_unregister_submit(p->recv);
  free(p->scount), free(p->sdispl), free(p->rcount), free(p->rdispl), free(p->pack), free(p->unpack);
  free(p->sdirect), free(p->rdirect), free(p->peer), free(p->fence);
  free(p);
}

/* Rank r's block's local dims in layout l. */
static void ldims_of(const sl_array *l, int r, int64_t *ld)
{
  memcpy(ld, l->dims, sizeof(int64_t) * (size_t)l->ndim);
  ld[l->axis] = l->counts[r];
}

/* First indices along the distributed axis of every rank in layout l (of[P]). */
static void offsets_of(const sl_array *l, int64_t *of)
{
  of[0] = 0;
  for (int r = 1; r < sl_ctx.size; r++) of[r] = of[r - 1] + l->counts[r - 1];
}

/* What rank r receives from rank q, as r places it in its block (its unpack piece); *cnt its elements. */
static rowcopy recv_piece(const sl_array *from, const sl_array *to, const int64_t *ofa, const int64_t *ofb, int r, int q,
                          int64_t *cnt)
{
  int64_t ld[SL_MAX_DIMS];
  ldims_of(to, r, ld);
  return piece(to->dims, to->ndim, ld, to->axis, ofb[r], from->axis, ofa[q], from->counts[q], cnt);
}

static int64_t recv_count(const sl_array *from, const sl_array *to, const int64_t *ofa, const int64_t *ofb, int r, int q)
{
  int64_t cnt;
  (void)recv_piece(from, to, ofa, ofb, r, q, &cnt);
  return cnt;
}

/* Whether rank r's segment is laid out as its destination block: every piece it receives (its own too) is a run
 * there. */
static int block_shaped(const sl_array *from, const sl_array *to, const int64_t *ofa, const int64_t *ofb, int r)
{
  for (int q = 0; q < sl_ctx.size; q++) {
    int64_t cnt;
    rowcopy c = recv_piece(from, to, ofa, ofb, r, q, &cnt);
    if (cnt > 0 && !is_run(&c)) return 0;
  }
  return 1;
}

/* Where rank q's piece lands in rank r's segment (elements): its place in r's block when the segment is laid
 * out as the block (shaped: block_shaped for r), else after the pieces of the ranks before q (r's receive order,
 * without r). */
static int64_t place_in(const sl_array *from, const sl_array *to, const int64_t *ofa, const int64_t *ofb, int r, int q,
                        int shaped)
{
  int64_t at = 0, cnt;
  if (shaped) return recv_piece(from, to, ofa, ofb, r, q, &cnt).start;
  for (int k = 0; k < q; k++)
    if (k != r) at += recv_count(from, to, ofa, ofb, r, k);
  return at;
}

starpu_data_handle_t sl_redist_block(const sl_redist *p) { return p && p->shm && p->block ? p->recv : NULL; }

/* The buffers of the MPI transport, on its first application (a plan that takes shared memory never has them). */
static int mpi_buffers(sl_redist *p)
{
  const double zero[2] = {0, 0};
  int rc = SL_SUCCESS;
  p->buffered = 1;
  /* packs and the all-to-all write these in parts: they hold values from the start */
  p->send = sl_buffer(p->nsend, p->el);
  p->recv = sl_buffer(p->nrecv, p->el);
  if (p->send) rc = codelet_vec_submit(SL_VEC_FILL, p->dt, p->send, NULL, NULL, zero, zero);
  if (rc == SL_SUCCESS && p->recv) rc = codelet_vec_submit(SL_VEC_FILL, p->dt, p->recv, NULL, NULL, zero, zero);
  return rc;
}

int sl_redist_share(sl_redist *p, const sl_array *from, const sl_array *to, int rc)
{
  if (!comm_shm_wanted()) return rc;
  int P = sl_ctx.size, me = sl_ctx.rank;
  /* every rank's receive total (the same array on every rank): the segments' sizes */
  size_t *bytes = NULL;
  int64_t *ofa = NULL, *ofb = NULL;
  int *shaped = NULL; /* per rank, block_shaped */
  if (rc == SL_SUCCESS && P < COMM_BARRIER_MAXBUF) { /* the barriers hold up to P + 1 handles */
    bytes = calloc((size_t)P, sizeof(size_t));
    shaped = calloc((size_t)P, sizeof(int));
    ofa = calloc((size_t)P, sizeof(int64_t));
    ofb = calloc((size_t)P, sizeof(int64_t));
    p->peer = calloc((size_t)P, sizeof(starpu_data_handle_t));
    p->fence = calloc((size_t)P + 1, sizeof(starpu_data_handle_t));
  }
  int ok = bytes && shaped && ofa && ofb && p->peer && p->fence;
  if (ok) {
    offsets_of(from, ofa);
    offsets_of(to, ofb);
    for (int r = 0; r < P; r++) {
      int64_t ld[SL_MAX_DIMS], n = 1;
      ldims_of(to, r, ld);
      for (int d = 0; d < to->ndim; d++) n *= ld[d];
      shaped[r] = block_shaped(from, to, ofa, ofb, r);
      if (!shaped[r]) { /* the pieces back to back, without r's own */
        n = 0;
        for (int q = 0; q < P; q++)
          if (q != r) n += recv_count(from, to, ofa, ofb, r, q);
      }
      bytes[r] = (size_t)n * p->el;
    }
    /* a barrier holds a segment as one handle of at most INT_MAX reals (the comm layer's limit) */
    size_t real = p->el / (sl_dtype_is_complex(p->dt) ? 2 : 1);
    for (int r = 0; r < P; r++) ok = ok && bytes[r] / real <= INT_MAX;
  }
  /* a rank that cannot take part (a failure, too many ranks for one barrier) makes every rank keep MPI */
  comm_shm *shm = NULL;
  int got = comm_shm_create(ok ? SL_SUCCESS : SL_E_NOMEM, ok ? bytes : NULL, &shm);
  if (got == SL_SUCCESS && shm) {
    p->shm = shm;
    if (bytes[me] > 0) {
      starpu_vector_data_register(&p->recv, STARPU_MAIN_RAM, (uintptr_t)comm_shm_base(shm, me), (uint32_t)(bytes[me] / p->el), p->el);
      p->fence[p->nfence++] = p->recv;
    }
    p->block = shaped[me];
    /* a block-shaped segment also gets a handle over this rank's own piece's place (peer[me]): when the segment is
     * the destination, the own piece is packed there like the others, between the barriers, so that a copy of
     * the segment made elsewhere (a GPU) never goes back over the pieces the peers wrote */
    for (int r = 0; r < P; r++) {
      int64_t cnt = r == me ? p->pack[me].rows * p->pack[me].len : p->scount[r]; /* (scount leaves out the own piece) */
      if ((r == me && !p->block) || cnt == 0) continue;
      int64_t at = place_in(from, to, ofa, ofb, r, me, shaped[r]);
      starpu_vector_data_register(&p->peer[r], STARPU_MAIN_RAM, (uintptr_t)((char *)comm_shm_base(shm, r) + (size_t)at * p->el),
                                  (uint32_t)cnt, p->el);
      p->fence[p->nfence++] = p->peer[r];
    }
  }
  free(bytes), free(shaped), free(ofa), free(ofb);
  return rc;
}

int sl_redist_create(sl_redist **out, const sl_array *from, const sl_array *to, const char *fn)
{
  SL_CHECK_ARG(from->nparts == 0 && to->nparts == 0, SL_E_INVALID, "%s: stacked arrays are not accepted", fn);
  SL_CHECK_ARG(from->ndim == to->ndim && !memcmp(from->dims, to->dims, sizeof(int64_t) * (size_t)from->ndim) &&
                   from->dtype == to->dtype,
               SL_E_DIMS, "%s: the two layouts differ in dims or dtype", fn);
  SL_CHECK_ARG(from->partition == SL_SCATTER && to->partition == SL_SCATTER && !from->group->mask && !to->group->mask,
               SL_E_DIST, "%s: both layouts must be SL_SCATTER over the whole communicator (no mask)", fn);
  int P = sl_ctx.size, me = sl_ctx.rank, nd = from->ndim, a = from->axis, b = to->axis;
  sl_redist *p = calloc(1, sizeof *p);
  if (!p) return sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  p->dt = from->dtype;
  p->el = from->elsize;
  p->P = P;
  p->me = me;
  p->scount = calloc((size_t)P, sizeof(int64_t));
  p->sdispl = calloc((size_t)P, sizeof(int64_t));
  p->rcount = calloc((size_t)P, sizeof(int64_t));
  p->rdispl = calloc((size_t)P, sizeof(int64_t));
  p->pack = calloc((size_t)P, sizeof(rowcopy));
  p->unpack = calloc((size_t)P, sizeof(rowcopy));
  if (!p->scount || !p->sdispl || !p->rcount || !p->rdispl || !p->pack || !p->unpack) {
    sl_redist_destroy(p);
    return sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  }
  int64_t ns = 0, nr = 0, nself = 0;
  /* first indices along the axes of every rank */
  int64_t *ofa = calloc((size_t)P, sizeof(int64_t)), *ofb = calloc((size_t)P, sizeof(int64_t));
  if (!ofa || !ofb) {
    free(ofa), free(ofb), sl_redist_destroy(p);
    return sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  }
  offsets_of(from, ofa);
  offsets_of(to, ofb);
  for (int r = 0; r < P; r++) {
    int64_t cs, cr;
    /* to r: my source block within r's range along b; from r: r's source block within my destination
     * block (r's range along a, inside my block of local dims to->ldims), which is also what r sends */
    p->pack[r] = piece(from->dims, nd, from->ldims, a, ofa[me], b, ofb[r], to->counts[r], &cs);
    p->unpack[r] = piece(to->dims, nd, to->ldims, b, ofb[me], a, ofa[r], from->counts[r], &cr);
    if (r == me) {
      nself = cs;
      continue;
    }
    p->scount[r] = cs;
    p->rcount[r] = cr;
    p->sdispl[r] = ns;
    p->rdispl[r] = nr;
    ns += cs;
    nr += cr;
  }
  free(ofa), free(ofb);
  /* the pieces that are runs in the source (destination) block: the all-to-all then sends (receives) them in place
   * when the block is one handle */
  int sruns = 1, rruns = 1;
  for (int r = 0; r < P; r++) {
    if (r == me) continue;
    sruns &= p->scount[r] == 0 || is_run(&p->pack[r]);
    rruns &= p->rcount[r] == 0 || is_run(&p->unpack[r]);
  }
  if (sruns && (p->sdirect = calloc((size_t)P, sizeof(int64_t))))
    for (int r = 0; r < P; r++) p->sdirect[r] = r == me || p->scount[r] == 0 ? 0 : p->pack[r].start;
  if (rruns && (p->rdirect = calloc((size_t)P, sizeof(int64_t))))
    for (int r = 0; r < P; r++) p->rdirect[r] = r == me || p->rcount[r] == 0 ? 0 : p->unpack[r].start;
  p->self = sl_buffer(nself, p->el);
  p->nsend = ns, p->nrecv = nr;
  *out = p;
  return SL_SUCCESS;
}

/* The piece a rank keeps, straight from the source to the destination when one of its two row copies is a run or
 * both have rows of one length; else through the self buffer. */
static int keep_own(sl_redist *p, int ns, const starpu_data_handle_t *hs, int nd, const starpu_data_handle_t *hd)
{
  const rowcopy *a = &p->pack[p->me], *b = &p->unpack[p->me];
  if (a->rows * a->len == 0) return SL_SUCCESS;
  if (a->rows == b->rows && a->len == b->len)
    return codelet_rows_submit(nd, hd, STARPU_RW, ns, hs, p->el, a->rows, a->len, a->start, a->stride, b->start, b->stride);
  if (is_run(b))
    return codelet_rows_submit(nd, hd, STARPU_RW, ns, hs, p->el, a->rows, a->len, a->start, a->stride, b->start, a->len);
  if (is_run(a))
    return codelet_rows_submit(nd, hd, STARPU_RW, ns, hs, p->el, b->rows, b->len, a->start, b->len, b->start, b->stride);
  SL_TRY(codelet_rows_submit(1, &p->self, STARPU_W, ns, hs, p->el, a->rows, a->len, a->start, a->stride, 0, a->len));
  return codelet_rows_submit(nd, hd, STARPU_RW, 1, &p->self, p->el, b->rows, b->len, 0, b->len, b->start, b->stride);
}

/* Shared memory: the pieces go straight into the receivers' segments between two barriers. */
static int submit_shared(sl_redist *p, int ns, const starpu_data_handle_t *hs, int nd, const starpu_data_handle_t *hd)
{
  /* the destination is the segment: every piece, this rank's own too, is written in place */
  const int in_place = p->block && nd == 1 && hd[0] == p->recv;
  int rc = comm_barrier(comm_world(), p->dt, p->nfence, p->fence);
  if (rc != SL_SUCCESS) return rc;
  for (int r = 0; r < p->P && rc == SL_SUCCESS; r++) {
    const rowcopy *c = &p->pack[r];
    if (!p->peer[r] || (r == p->me && !in_place)) continue;
    rc = codelet_rows_submit(1, &p->peer[r], STARPU_W, ns, hs, p->el, c->rows, c->len, c->start, c->stride, 0, c->len);
  }
  if (rc == SL_SUCCESS && !in_place) rc = keep_own(p, ns, hs, nd, hd);
  /* the second barrier whatever happened since the first: the other ranks wait for it */
  int brc = comm_barrier(comm_world(), p->dt, p->nfence, p->fence);
  if (rc == SL_SUCCESS) rc = brc;
  if (rc != SL_SUCCESS || in_place) return rc;
  for (int r = 0; r < p->P && rc == SL_SUCCESS; r++) {
    const rowcopy *c = &p->unpack[r];
    if (r == p->me || c->rows * c->len == 0) continue;
    /* a block-shaped segment holds the piece as the destination does, else as one run */
    int64_t at = p->block ? c->start : p->rdispl[r], stride = p->block ? c->stride : c->len;
    rc = codelet_rows_submit(nd, hd, STARPU_RW, 1, &p->recv, p->el, c->rows, c->len, at, stride, c->start, c->stride);
  }
  return rc;
}

int sl_redist_submit(sl_redist *p, int ns, const starpu_data_handle_t *hs, int nd, const starpu_data_handle_t *hd)
{
  if (p->shm) return submit_shared(p, ns, hs, nd, hd);
  /* the all-to-all reads a one-handle source (writes a one-handle destination) in place when every piece there is
   * a run; else the pieces go through the send (receive) buffer */
  int sdirect = p->sdirect && ns == 1, rdirect = p->rdirect && nd == 1;
  int rc = p->buffered ? SL_SUCCESS : mpi_buffers(p);
  for (int r = 0; r < p->P && rc == SL_SUCCESS && !sdirect; r++) {
    const rowcopy *c = &p->pack[r];
    if (r == p->me || c->rows * c->len == 0) continue;
    rc = codelet_rows_submit(1, &p->send, STARPU_RW, ns, hs, p->el, c->rows, c->len, c->start, c->stride, p->sdispl[r], c->len);
  }
  if (rc == SL_SUCCESS) rc = keep_own(p, ns, hs, nd, hd);
  if (rc == SL_SUCCESS && p->P > 1) /* collective: every rank takes part, even with nothing to move */
    rc = comm_alltoallv(comm_world(), p->dt, sdirect ? hs[0] : p->send, p->scount, sdirect ? p->sdirect : p->sdispl,
                        rdirect ? hd[0] : p->recv, p->rcount, rdirect ? p->rdirect : p->rdispl);
  for (int r = 0; r < p->P && rc == SL_SUCCESS && !rdirect; r++) {
    const rowcopy *c = &p->unpack[r];
    if (r == p->me || c->rows * c->len == 0) continue;
    rc = codelet_rows_submit(nd, hd, STARPU_RW, 1, &p->recv, p->el, c->rows, c->len, p->rdispl[r], c->len, c->start, c->stride);
  }
  return rc;
}

int sl_array_redistribute(sl_array *dst, const sl_array *src)
{
  const char *fn = "sl_array_redistribute";
  SL_CHECK_INIT();
  int rc = SL_SUCCESS;
  if (!dst || !src) rc = sl_error(SL_E_INVALID, "%s: argument %d (%s) is NULL", fn, dst ? 2 : 1, dst ? "src" : "dst");
  else if (dst == src) rc = sl_error(SL_E_INVALID, "%s: arguments 1 (dst) and 2 (src) are the same array", fn);
  else if ((rc = sl_array_check_data(fn, dst, "argument 1 (dst)")) == SL_SUCCESS) /* session, storage, not acquired */
    rc = sl_array_check_data(fn, src, "argument 2 (src)");
  sl_redist *p = NULL;
  if (rc == SL_SUCCESS) rc = sl_redist_create(&p, src, dst, fn); /* local: the layouts are compared with the verdict */
  rc = SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 1 (dst: its layout)", rc, dst),
                SL_SAME_LAYOUT("argument 2 (src: its layout)", rc, src));
  starpu_data_handle_t *hs = NULL, *hd = NULL;
  if (rc == SL_SUCCESS) {
    hs = malloc(sizeof *hs * (size_t)(src->nchunks + 1));
    hd = malloc(sizeof *hd * (size_t)(dst->nchunks + 1));
    if (!hs || !hd) rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  }
  for (int c = 0; rc == SL_SUCCESS && c < src->nchunks; c++) hs[c] = sl_array_chunk(src, c);
  for (int c = 0; rc == SL_SUCCESS && c < dst->nchunks; c++) hd[c] = sl_array_chunk(dst, c);
  if (rc == SL_SUCCESS) rc = sl_redist_submit(p, src->nchunks, hs, dst->nchunks, hd);
  free(hs), free(hd);
  sl_redist_destroy(p);
  return rc;
}
