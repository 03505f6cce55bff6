/* The internal communication API (docs/comm.md). Arrays and operators call these and never MPI or NCCL
 * directly. Every collective takes its data handles plus read-write access to its channel's order token,
 * as a StarPU task or (host MPI, no CUDA worker: comm_direct.c) as acquisitions of those handles, so every
 * rank runs one channel's collectives in submission order while independent compute tasks keep running. Three backends sit behind the same calls:
 *   mpi       host MPI: non-blocking MPI on host memory; data that lives on a GPU goes through pinned
 *             staging buffers drawn from a reusable pool;
 *   mpi-cuda  CUDA-aware MPI on device buffers (when MPIX_Query_cuda_support() says so);
 *   nccl      NCCL on the CUDA worker's stream, one GPU per rank.
 * MPI transfers never hold a worker: the codelet posts non-blocking calls and returns, and the progress
 * thread (comm_progress.c) releases the task (a StarPU end dependency), or the data of a collective without
 * a task, when they complete.
 * Buffers are StarPU vector or variable handles; NULL stands for a zero-element block. Counts and
 * displacements are in elements of dt. */
#ifndef SL_COMM_H
#define SL_COMM_H

#include <mpi.h>
#include <starpu.h>

#include "starlops.h"

typedef enum { COMM_SUM, COMM_MAX, COMM_MIN, COMM_NOPS } comm_op;
typedef enum { COMM_BACKEND_MPI, COMM_BACKEND_MPI_CUDA, COMM_BACKEND_NCCL } comm_backend;

/** A communicator of the comm layer: a duplicate used only by collective tasks, its order token, and the
 *  NCCL communicator built on it (NCCL backend). */
typedef struct comm_channel {
  MPI_Comm comm;
  int rank, size;
  starpu_data_handle_t token;
  int own_token; /* 0: shares the whole communicator's token (CUDA-aware MPI) */
  void *nccl; /* ncclComm_t */
  struct comm_blocker *blocker; /* the thread of its large blocking collectives (comm_blocking.c), or NULL */
} comm_channel;

/** One pair of a neighbour exchange: send `send` to `peer` with send_tag, receive `recv` from `peer` with
 *  recv_tag (a message is matched by peer and tag). peer < 0 skips the pair; a NULL send or recv (a
 *  zero-size block) is not posted, so the peer must agree that it is empty. */
typedef struct comm_pair {
  int peer;
  int send_tag, recv_tag;
  starpu_data_handle_t send, recv;
} comm_pair;

/** Selects the backend (STARLOPS_COMM, agreed by every rank), starts the progress thread and creates the
 *  channel of the whole communicator. Collective over sl_ctx.comm; called by sl_init. */
int comm_init(void);
void comm_shutdown(void);
comm_backend comm_backend_get(void);
const char *comm_backend_name(comm_backend b);
/** The channel over the whole communicator. */
comm_channel *comm_world(void);
/** Collective over base: a channel on a duplicate of base (the NCCL communicator is created now, once). */
int comm_channel_create(MPI_Comm base, comm_channel **out);
/** Waits for the channel's collectives, then frees it. */
void comm_channel_destroy(comm_channel *ch);

/** buf = op over the ranks of buf, in place. A complex sum is a sum of real pairs; complex max and min are
 *  refused. */
int comm_allreduce(comm_channel *ch, sl_dtype dt, comm_op op, starpu_data_handle_t buf);
/** The same on nbuf buffers at once, as one collective task (host MPI: one MPI call on their concatenation
 *  in a pool buffer; NCCL: one group; CUDA-aware MPI: one call per buffer) — the chunks of an array. */
int comm_allreduce_n(comm_channel *ch, sl_dtype dt, comm_op op, int nbuf, const starpu_data_handle_t *bufs);
/** recv = the blocks of every rank, rank order, no padding; counts[r] elements from rank r. */
int comm_allgatherv(comm_channel *ch, sl_dtype dt, starpu_data_handle_t send, starpu_data_handle_t recv,
                    const int64_t *counts);
/** buf on every rank = buf of root. */
int comm_bcast(comm_channel *ch, sl_dtype dt, int root, starpu_data_handle_t buf);
/** recv (counts[rank] elements) = block rank of op over the ranks of send (sum of counts elements). */
int comm_reduce_scatter(comm_channel *ch, sl_dtype dt, comm_op op, starpu_data_handle_t send,
                        starpu_data_handle_t recv, const int64_t *counts);
/** MPI_Alltoallv semantics on elements. */
int comm_alltoallv(comm_channel *ch, sl_dtype dt, starpu_data_handle_t send, const int64_t *scounts,
                   const int64_t *sdispls, starpu_data_handle_t recv, const int64_t *rcounts,
                   const int64_t *rdispls);
/** Paired sends and receives (halos). Tags must be in [0, 32767]. */
int comm_exchange(comm_channel *ch, sl_dtype dt, int npairs, const comm_pair *pairs);
/** A barrier ordered like the other collectives that takes read-write access to nbuf handles (vectors or
 *  variables of dt, at most 64) and moves nothing: the tasks before it on those handles are over on every
 *  rank once it completes anywhere (used around writes into other ranks' shared memory). Host MPI only: the
 *  other backends refuse it (SL_E_BACKEND). */
enum { COMM_BARRIER_MAXBUF = 64 };
int comm_barrier(comm_channel *ch, sl_dtype dt, int nbuf, const starpu_data_handle_t *bufs);

/* ---- memory shared by the ranks of one node (comm_shm.c) ----------------------------------------- */
typedef struct comm_shm comm_shm;
/** Collective over sl_ctx.comm, called by comm_init: whether every rank runs on one node. */
int comm_shm_init(void);
/** Whether shared segments are used: host MPI, 2 or more ranks all on one node, STARLOPS_COMM_SHM not 0
 *  (and neither of the staging test settings). The same on every rank. */
int comm_shm_wanted(void);
/** Collective over sl_ctx.comm, made by every rank with its own rc (returned unchanged): rank r's segment of
 *  bytes[r] bytes (the same array on every rank), mapped by every rank. *out is NULL on every rank when
 *  comm_shm_wanted() is 0, when rc fails on a rank or when a segment cannot be made or mapped. */
int comm_shm_create(int rc, const size_t *bytes, comm_shm **out);
/** This process's address of rank's segment (NULL when it is empty). */
void *comm_shm_base(const comm_shm *s, int rank);
/** Unmaps the segments (local; the memory goes when every rank has unmapped it). */
void comm_shm_destroy(comm_shm *s);

/* ---- pieces shared by the comm sources ---------------------------------------------------------- */
/** Pinned host staging buffers, reused: comm_pool_get rounds up to a size class and allocates only when
 *  that class has no free buffer. */
int comm_pool_init(void);
void comm_pool_shutdown(void);
void *comm_pool_get(size_t bytes);
void comm_pool_put(void *p);
/** Buffers the pool allocated so far and requests it served (for tests and benchmarks). */
void comm_pool_stats(long *allocated, long *served);

/** Work the progress thread waits on: when every request has completed it calls advance(arg) (if any),
 *  which may post more; once nothing more is posted it calls finish(arg) (if any), then releases task's
 *  end dependency. */
typedef struct comm_pending {
  struct comm_pending *next;
  struct starpu_task *task;
  int nreq;
  MPI_Request *reqs;
  void (*finish)(void *arg);
  void *arg;
  void (*done)(void *arg); /* if set: called after finish instead of releasing a task (no task) */
  int (*advance)(void *arg); /* if set: called when the requests completed; returns the requests it posted
                                next into reqs, 0 when the work is over */
  const char *what;     /* the collective, for the watchdog */
  double posted;        /* when it was handed over (sl_watch_now) */
} comm_pending;
int comm_progress_start(void);
void comm_progress_stop(void);
/** Hands p to the progress thread (its task, if any, must already hold one end dependency). */
void comm_progress_add(comm_pending *p);
/** Runs p's finish, then releases its task's end dependency, or calls its done (from any thread). */
void comm_progress_complete(comm_pending *p);
/** Whether this rank's host-MPI collectives run without a task (comm_direct.c): host MPI, no CUDA worker,
 *  one memory node, not traced, STARLOPS_COMM_TASKS and STARLOPS_COMM_STAGE_HOST unset. */
int comm_direct_enabled(void);
/** Waits until every direct collective (comm_direct.c) is over; returns 1 if one was still running. sl_wait
 *  and the shutdown call it after starpu_task_wait_for_all, which does not see them. */
int comm_direct_wait(void);
/** Wakes the threads waiting in comm_direct_wait to take a newly queued blocking call (comm_blocking_help). */
void comm_direct_kick(void);

typedef struct comm_blocker comm_blocker;
/** Hands p (whose arg is a collective) to ch's own thread, which makes the blocking MPI call and then
 *  completes p; the thread starts on first use. Its task, if any, must already hold one end dependency. */
int comm_blocking_add(comm_channel *ch, comm_pending *p);
/** Takes one queued blocking call of a collective without a task (any channel) and makes it in the calling
 *  thread; 1 if there was one. */
int comm_blocking_help(void);
/** Stops ch's thread (after its collectives: the channel's token is gone). */
void comm_blocking_stop(comm_channel *ch);

#endif
