/* The description of one collective task, shared by the comm sources (not by the rest of starlops). */
#ifndef SL_COMM_COLL_H
#define SL_COMM_COLL_H

#include "internal.h"
#include "comm/comm.h"

typedef enum { K_ALLREDUCE, K_ALLGATHERV, K_BCAST, K_REDUCE_SCATTER, K_ALLTOALLV, K_EXCHANGE, K_BARRIER, K_NKINDS } coll_kind;

enum { COLL_MAXBUF = 64 };

typedef struct comm_ring comm_ring;

typedef struct coll_pair {
  int peer, send_tag, recv_tag;
  int send, recv;         /* buffer indices, -1 for none */
  int scount, rcount;     /* in units */
} coll_pair;

/** The task's argument. Counts and displacements are in units: real elements (a complex element is two). */
typedef struct coll {
  coll_kind kind;
  comm_channel *ch;
  sl_dtype dt;
  comm_op op;
  int root;
  int unit;               /* units per element: 2 for complex */
  size_t unit_bytes;
  int nbuf;               /* data buffers (the token comes first in the task and is not counted) */
  starpu_data_handle_t handle[COLL_MAXBUF];
  enum starpu_data_access_mode mode[COLL_MAXBUF];
  int is_vector[COLL_MAXBUF];
  int64_t units[COLL_MAXBUF]; /* units held by each buffer */
  int send, recv;         /* buffer indices (-1: a zero-size block) */
  int *counts, *displs;   /* allgatherv, reduce-scatter: per rank; alltoallv: receive side */
  int *scounts, *sdispls; /* alltoallv: send side */
  int npairs;
  coll_pair *pairs;
  /* while running */
  void *concat;           /* allreduce of several buffers on the CPU: one pool buffer holding them all */
  int64_t concat_units;
  void *ptr[COLL_MAXBUF];
  void *stage[COLL_MAXBUF];
  void *dev[COLL_MAXBUF];
  int devid;
  MPI_Request *reqs;
  comm_ring *ring;        /* a ring allreduce or reduce-scatter in progress (comm_ring.c) */
  comm_pending pending;
  int direct;             /* 1: no task: the data acquired by StarPU callbacks (comm_direct.c) */
  int acquires_left;      /* direct: acquisitions not yet granted */
} coll;

/** Posts the non-blocking MPI calls of c on the buffers c->ptr (host or, CUDA-aware, device); sets *nreq
 *  to the requests posted (also on failure). */
int coll_post_mpi(coll *c, int *nreq);
/** The blocking MPI calls of c (CUDA-aware MPI on device buffers: Open MPI 4.1's non-blocking collectives
 *  reduce device buffers on the host and crash; its blocking ones stage them). */
int coll_run_mpi_blocking(coll *c);
#ifdef SL_HAVE_NCCL
/** Enqueues the NCCL calls of c on stream (a cudaStream_t). */
int coll_post_nccl(coll *c, void *stream);
#endif
/** The bytes that decide whether c is a blocking call on its channel thread (comm_blocking.c): the same on every rank; -1 for
 *  the kinds that are never blocking. */
int64_t coll_blocking_size(const coll *c);
/** Whether c (host buffers in c->ptr or c->concat) runs as a ring of point-to-point messages
 *  (comm_ring.c): an allreduce or reduce-scatter of STARLOPS_COMM_RING_BYTES or more per rank on 2 or more
 *  ranks. */
int coll_ring_wanted(const coll *c);
/** Posts the ring's first step into c->reqs; *nreq = the requests to wait on. */
int coll_ring_start(coll *c, int *nreq);
/** Called when the requests of a step completed: reduces, posts the next step; returns its request count,
 *  or 0 when the collective is complete. */
int coll_ring_advance(void *c);
/** Releases a ring's buffers (a collective abandoned on an error). */
void coll_ring_free(coll *c);
/** MPI requests c can post at most. */
int coll_max_requests(const coll *c);
const char *coll_kind_name(coll_kind k);

/** Validates nothing; builds the task (token RW, then c's buffers) and submits it, or submits c as a direct
 *  collective (comm_direct.c). Takes c. */
int coll_submit(coll *c);
/** Runs c on host buffers (c->ptr set): posts, polls briefly, hands over the rest. Returns 1 when handed
 *  over, 0 when c is over. */
int coll_run_host(coll *c);
/** Whether c can run without a task: comm_direct_enabled() and sequentially consistent handles. */
int coll_direct_wanted(const coll *c);
/** (c->reqs allocated.) Acquires c's token and buffers in main memory (StarPU callbacks, in submission order) and runs c from the
 *  callback of the last one; no worker is involved. Takes c. */
int coll_submit_direct(coll *c);
/** The end of a direct collective: releases its data, frees it (from any thread). */
void coll_direct_done(void *c);
void coll_free(void *c);

#endif
