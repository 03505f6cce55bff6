/* The collectives of the comm layer: argument checks, then one task each (comm_task.c). The checks are
 * local (no communication per call): callers pass arguments that agree across ranks, and the messages
 * name no rank, so a mistake made alike on every rank is reported alike on every rank. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_coll.h"

static int new_coll(coll **out, coll_kind k, comm_channel *ch, sl_dtype dt, comm_op op, const char *fn)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(ch != NULL, SL_E_INVALID, "%s: argument 1 (channel) is NULL", fn);
  SL_CHECK_ARG(sl_dtype_valid(dt), SL_E_INVALID, "%s: argument 2 (dtype) is not a valid dtype (%d)", fn, (int)dt);
  SL_CHECK_ARG((int)op >= 0 && op < COMM_NOPS, SL_E_INVALID, "%s: the reduction operation is invalid (%d)", fn, (int)op);
  SL_CHECK_ARG(!(sl_dtype_is_complex(dt) && op != COMM_SUM), SL_E_INVALID,
               "%s: max and min are not defined for the complex dtype %s (only sum is)", fn, sl_dtype_name(dt));
  coll *c = calloc(1, sizeof *c);
  if (!c) return sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  c->kind = k;
  c->ch = ch;
  c->dt = dt;
  c->op = op;
  c->unit = sl_dtype_is_complex(dt) ? 2 : 1;
  c->unit_bytes = sl_dtype_size(dt) / (size_t)c->unit;
  c->send = c->recv = -1;
  *out = c;
  return SL_SUCCESS;
}

static int fail(coll *c, int rc)
{
  coll_free(c);
  return rc;
}

/* Adds handle h (NULL: zero elements) with mode; *idx = its buffer index or -1; *nelem = its elements. */
static int add_buf(coll *c, starpu_data_handle_t h, enum starpu_data_access_mode mode, const char *fn,
                   const char *argname, int *idx, int64_t *nelem)
{
  *idx = -1;
  *nelem = 0;
  if (!h) return SL_SUCCESS;
  for (int i = 0; i < c->nbuf; i++)
    if (c->handle[i] == h) {
      c->mode[i] |= mode;
      *idx = i;
      *nelem = c->units[i] / c->unit;
      return SL_SUCCESS;
    }
  SL_CHECK_ARG(c->nbuf < COLL_MAXBUF, SL_E_INVALID, "%s: more than %d buffers in one collective", fn, COLL_MAXBUF);
  SL_CHECK_ARG(starpu_data_get_nb_children(h) == 0, SL_E_INVALID,
               "%s: argument %s is a partitioned handle (pass its pieces)", fn, argname);
  size_t bytes;
  int id = starpu_data_get_interface_id(h);
  if (id == STARPU_VECTOR_INTERFACE_ID) bytes = starpu_vector_get_nx(h) * starpu_vector_get_elemsize(h);
  else if (id == STARPU_VARIABLE_INTERFACE_ID) bytes = starpu_variable_get_elemsize(h);
  else return sl_error(SL_E_INVALID, "%s: argument %s is neither a vector nor a variable handle", fn, argname);
  size_t el = sl_dtype_size(c->dt);
  SL_CHECK_ARG(bytes % el == 0, SL_E_INVALID, "%s: argument %s holds %zu bytes, not a whole number of %s elements",
               fn, argname, bytes, sl_dtype_name(c->dt));
  SL_CHECK_ARG(bytes / c->unit_bytes <= INT_MAX, SL_E_INVALID, "%s: argument %s is too large for one message (%zu bytes)",
               fn, argname, bytes);
  int i = c->nbuf++;
  c->handle[i] = h;
  c->mode[i] = mode;
  c->is_vector[i] = id == STARPU_VECTOR_INTERFACE_ID;
  c->units[i] = (int64_t)(bytes / c->unit_bytes);
  *idx = i;
  *nelem = (int64_t)(bytes / el);
  return SL_SUCCESS;
}

/* Copies n counts (elements) into units; displs (NULL: packed) likewise; checks each block fits in size
 * elements. */
static int take_counts(coll *c, const int64_t *counts, const int64_t *displs, int64_t size, int **ucounts,
                       int **udispls, const char *fn, const char *cname, const char *bufname)
{
  int P = c->ch->size;
  SL_CHECK_ARG(counts != NULL, SL_E_INVALID, "%s: argument %s is NULL", fn, cname);
  *ucounts = malloc(sizeof(int) * (size_t)P);
  *udispls = malloc(sizeof(int) * (size_t)P);
  if (!*ucounts || !*udispls) return sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  int64_t off = 0;
  for (int r = 0; r < P; r++) {
    SL_CHECK_ARG(counts[r] >= 0, SL_E_INVALID, "%s: argument %s[%d] is negative (%lld)", fn, cname, r,
                 (long long)counts[r]);
    int64_t d = displs ? displs[r] : off;
    SL_CHECK_ARG(d >= 0 && d + counts[r] <= size, SL_E_INVALID,
                 "%s: block %d (%lld elements at %lld) does not fit in argument %s (%lld elements)", fn, r,
                 (long long)counts[r], (long long)d, bufname, (long long)size);
    (*ucounts)[r] = (int)(counts[r] * c->unit);
    (*udispls)[r] = (int)(d * c->unit);
    off += counts[r];
  }
  return SL_SUCCESS;
}

static int64_t total(const int64_t *counts, int n)
{
  int64_t t = 0;
  for (int i = 0; i < n; i++) t += counts[i];
  return t;
}

int comm_allreduce(comm_channel *ch, sl_dtype dt, comm_op op, starpu_data_handle_t buf)
{
  return comm_allreduce_n(ch, dt, op, 1, &buf);
}

int comm_allreduce_n(comm_channel *ch, sl_dtype dt, comm_op op, int nbuf, const starpu_data_handle_t *bufs)
{
  const char *fn = "comm_allreduce";
  coll *c = NULL;
  int64_t n;
  int idx;
  SL_TRY(new_coll(&c, K_ALLREDUCE, ch, dt, op, fn));
  int rc = nbuf >= 1 && nbuf <= COLL_MAXBUF && bufs
               ? SL_SUCCESS
               : sl_error(SL_E_INVALID, "%s: %d buffers, not in [1, %d]", fn, nbuf, COLL_MAXBUF);
  for (int i = 0; rc == SL_SUCCESS && i < nbuf; i++) {
    rc = add_buf(c, bufs[i], STARPU_RW, fn, "4 (buf)", &idx, &n);
    if (rc == SL_SUCCESS && idx < 0) rc = sl_error(SL_E_INVALID, "%s: argument 4 (buf) is NULL", fn);
    if (rc == SL_SUCCESS && idx != i) rc = sl_error(SL_E_INVALID, "%s: a buffer is given twice", fn);
  }
  return rc != SL_SUCCESS ? fail(c, rc) : coll_submit(c);
}

int comm_bcast(comm_channel *ch, sl_dtype dt, int root, starpu_data_handle_t buf)
{
  coll *c = NULL;
  int64_t n;
  int idx;
  SL_TRY(new_coll(&c, K_BCAST, ch, dt, COMM_SUM, "comm_bcast"));
  c->root = root;
  int rc = root >= 0 && root < ch->size
               ? SL_SUCCESS
               : sl_error(SL_E_INVALID, "comm_bcast: argument 3 (root) is %d, not in [0, %d)", root, ch->size);
  if (rc == SL_SUCCESS) rc = add_buf(c, buf, STARPU_RW, "comm_bcast", "4 (buf)", &idx, &n);
  if (rc == SL_SUCCESS && idx < 0) rc = sl_error(SL_E_INVALID, "comm_bcast: argument 4 (buf) is NULL");
  return rc != SL_SUCCESS ? fail(c, rc) : coll_submit(c);
}

int comm_allgatherv(comm_channel *ch, sl_dtype dt, starpu_data_handle_t send, starpu_data_handle_t recv,
                    const int64_t *counts)
{
  const char *fn = "comm_allgatherv";
  coll *c = NULL;
  int64_t ns, nr;
  SL_TRY(new_coll(&c, K_ALLGATHERV, ch, dt, COMM_SUM, fn));
  int rc = add_buf(c, send, STARPU_R, fn, "3 (send)", &c->send, &ns);
  if (rc == SL_SUCCESS) rc = add_buf(c, recv, STARPU_W, fn, "4 (recv)", &c->recv, &nr);
  if (rc == SL_SUCCESS && c->send >= 0 && c->send == c->recv)
    rc = sl_error(SL_E_INVALID, "%s: arguments 3 (send) and 4 (recv) are the same handle", fn);
  if (rc == SL_SUCCESS) rc = take_counts(c, counts, NULL, nr, &c->counts, &c->displs, fn, "5 (counts)", "4 (recv)");
  if (rc == SL_SUCCESS && ns != counts[ch->rank])
    rc = sl_error(SL_E_INVALID, "%s: argument 3 (send) holds %lld elements, counts[this rank] says %lld", fn,
                  (long long)ns, (long long)counts[ch->rank]);
  if (rc == SL_SUCCESS && nr != total(counts, ch->size))
    rc = sl_error(SL_E_INVALID, "%s: argument 4 (recv) holds %lld elements, the counts add up to %lld", fn,
                  (long long)nr, (long long)total(counts, ch->size));
  return rc != SL_SUCCESS ? fail(c, rc) : coll_submit(c);
}

int comm_reduce_scatter(comm_channel *ch, sl_dtype dt, comm_op op, starpu_data_handle_t send,
                        starpu_data_handle_t recv, const int64_t *counts)
{
  const char *fn = "comm_reduce_scatter";
  coll *c = NULL;
  int64_t ns, nr;
  SL_TRY(new_coll(&c, K_REDUCE_SCATTER, ch, dt, op, fn));
  int rc = add_buf(c, send, STARPU_R, fn, "4 (send)", &c->send, &ns);
  if (rc == SL_SUCCESS) rc = add_buf(c, recv, STARPU_W, fn, "5 (recv)", &c->recv, &nr);
  if (rc == SL_SUCCESS && c->send >= 0 && c->send == c->recv)
    rc = sl_error(SL_E_INVALID, "%s: arguments 4 (send) and 5 (recv) are the same handle", fn);
  if (rc == SL_SUCCESS) rc = take_counts(c, counts, NULL, ns, &c->counts, &c->displs, fn, "6 (counts)", "4 (send)");
  if (rc == SL_SUCCESS && ns != total(counts, ch->size))
    rc = sl_error(SL_E_INVALID, "%s: argument 4 (send) holds %lld elements, the counts add up to %lld", fn,
                  (long long)ns, (long long)total(counts, ch->size));
  if (rc == SL_SUCCESS && nr != counts[ch->rank])
    rc = sl_error(SL_E_INVALID, "%s: argument 5 (recv) holds %lld elements, counts[this rank] says %lld", fn,
                  (long long)nr, (long long)counts[ch->rank]);
  return rc != SL_SUCCESS ? fail(c, rc) : coll_submit(c);
}

int comm_alltoallv(comm_channel *ch, sl_dtype dt, starpu_data_handle_t send, const int64_t *scounts,
                   const int64_t *sdispls, starpu_data_handle_t recv, const int64_t *rcounts,
                   const int64_t *rdispls)
{
  const char *fn = "comm_alltoallv";
  coll *c = NULL;
  int64_t ns, nr;
  SL_TRY(new_coll(&c, K_ALLTOALLV, ch, dt, COMM_SUM, fn));
  int rc = add_buf(c, send, STARPU_R, fn, "3 (send)", &c->send, &ns);
  /* read-write: elements of recv outside the blocks keep their values wherever the data lives */
  if (rc == SL_SUCCESS) rc = add_buf(c, recv, STARPU_RW, fn, "6 (recv)", &c->recv, &nr);
  if (rc == SL_SUCCESS && c->send >= 0 && c->send == c->recv)
    rc = sl_error(SL_E_INVALID, "%s: arguments 3 (send) and 6 (recv) are the same handle", fn);
  if (rc == SL_SUCCESS) rc = take_counts(c, scounts, sdispls, ns, &c->scounts, &c->sdispls, fn, "4 (scounts)", "3 (send)");
  if (rc == SL_SUCCESS) rc = take_counts(c, rcounts, rdispls, nr, &c->counts, &c->displs, fn, "7 (rcounts)", "6 (recv)");
  return rc != SL_SUCCESS ? fail(c, rc) : coll_submit(c);
}

int comm_exchange(comm_channel *ch, sl_dtype dt, int npairs, const comm_pair *pairs)
{
  const char *fn = "comm_exchange";
  coll *c = NULL;
  SL_TRY(new_coll(&c, K_EXCHANGE, ch, dt, COMM_SUM, fn));
  int rc = SL_SUCCESS;
  if (npairs < 0 || npairs > COLL_MAXBUF / 2)
    rc = sl_error(SL_E_INVALID, "%s: argument 3 (npairs) is %d, not in [0, %d]", fn, npairs, COLL_MAXBUF / 2);
  else if (npairs > 0 && !pairs)
    rc = sl_error(SL_E_INVALID, "%s: argument 4 (pairs) is NULL", fn);
  if (rc == SL_SUCCESS && npairs > 0) {
    c->pairs = calloc((size_t)npairs, sizeof *c->pairs);
    if (!c->pairs) rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  }
  c->npairs = npairs;
  for (int i = 0; i < npairs && rc == SL_SUCCESS; i++) {
    const comm_pair *p = &pairs[i];
    coll_pair *q = &c->pairs[i];
    int64_t ns, nr;
    q->peer = p->peer;
    q->send_tag = p->send_tag;
    q->recv_tag = p->recv_tag;
    if (p->peer >= ch->size)
      rc = sl_error(SL_E_INVALID, "%s: pairs[%d].peer is %d, not below the channel size %d", fn, i, p->peer, ch->size);
    else if (p->send_tag < 0 || p->send_tag > 32767 || p->recv_tag < 0 || p->recv_tag > 32767)
      rc = sl_error(SL_E_INVALID, "%s: pairs[%d]: tags must be in [0, 32767]", fn, i);
    if (rc == SL_SUCCESS) rc = add_buf(c, p->send, STARPU_R, fn, "4 (pairs[].send)", &q->send, &ns);
    if (rc == SL_SUCCESS) rc = add_buf(c, p->recv, STARPU_W, fn, "4 (pairs[].recv)", &q->recv, &nr);
    if (rc == SL_SUCCESS && q->recv >= 0 && (c->mode[q->recv] & STARPU_R) && p->peer >= 0)
      rc = sl_error(SL_E_INVALID, "%s: pairs[%d].recv is also sent", fn, i);
    q->scount = (int)(ns * c->unit);
    q->rcount = (int)(nr * c->unit);
  }
  return rc != SL_SUCCESS ? fail(c, rc) : coll_submit(c);
}

int comm_barrier(comm_channel *ch, sl_dtype dt, int nbuf, const starpu_data_handle_t *bufs)
{
  const char *fn = "comm_barrier";
  coll *c = NULL;
  int64_t n;
  int idx;
  SL_CHECK_ARG(comm_backend_get() == COMM_BACKEND_MPI, SL_E_BACKEND, "%s: only the host-MPI backend has it", fn);
  SL_TRY(new_coll(&c, K_BARRIER, ch, dt, COMM_SUM, fn));
  int rc = nbuf >= 0 && nbuf <= COMM_BARRIER_MAXBUF && nbuf <= COLL_MAXBUF && (nbuf == 0 || bufs)
               ? SL_SUCCESS
               : sl_error(SL_E_INVALID, "%s: %d buffers, not in [0, %d]", fn, nbuf, COMM_BARRIER_MAXBUF);
  for (int i = 0; rc == SL_SUCCESS && i < nbuf; i++) rc = add_buf(c, bufs[i], STARPU_RW, fn, "4 (bufs)", &idx, &n);
  return rc != SL_SUCCESS ? fail(c, rc) : coll_submit(c);
}
