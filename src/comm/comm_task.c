/* Collective tasks: the codelets of the three backends and the submission of one collective.
 *   host MPI, CPU worker:  MPI on the buffers in main memory;
 *   host MPI, CUDA worker: device -> pinned staging buffer (pool), MPI on it, staging -> device at the end;
 *   CUDA-aware MPI:        MPI on the device buffers (CPU worker: as host MPI);
 *   NCCL:                  NCCL on the worker's stream (STARPU_CUDA_ASYNC), the worker holding the NCCL
 *                          communicator.
 * An MPI codelet posts non-blocking calls, adds one end dependency to its task and returns; the progress
 * thread completes the calls and releases the task, so workers never wait on transfers. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_coll.h"
#include "codelets/codelets.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static struct starpu_codelet cl_coll;
static int nccl_worker = -1;

const char *coll_kind_name(coll_kind k)
{
  static const char *names[K_NKINDS] = {"sl_allreduce", "sl_allgatherv", "sl_bcast", "sl_reduce_scatter",
                                        "sl_alltoallv", "sl_exchange", "sl_barrier"};
  return k < K_NKINDS ? names[k] : "sl_collective";
}

void coll_free(void *arg)
{
  coll *c = arg;
  free(c->counts);
  free(c->displs);
  free(c->scounts);
  free(c->sdispls);
  free(c->pairs);
  free(c->reqs);
  coll_ring_free(c);
  comm_pool_put(c->concat); /* still held when the collective was abandoned on an error */
  free(c);
}

static void take_pointers(coll *c, void *buffers[])
{
  for (int i = 0; i < c->nbuf; i++)
    c->ptr[i] = c->is_vector[i] ? (void *)STARPU_VECTOR_GET_PTR(buffers[i + 1])
                                : (void *)STARPU_VARIABLE_GET_PTR(buffers[i + 1]);
}

static double spin_seconds = 20e-6;

/* Posts c's MPI calls; polls them for a few microseconds (STARLOPS_COMM_SPIN_US, default 20), which
 * finishes small messages without a hand-off, then hands what is left to the progress thread; finish runs
 * once everything completed. Returns 1 when the work was handed over (the task holds an end dependency, or
 * a direct collective completes from the other thread), 0 when it is over. */
static int run_mpi(coll *c, void (*finish)(void *))
{
  /* the path depends on the collective's size and the agreed settings only, so every rank takes the same:
   * an allreduce of STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES (1 MiB) or more, below
   * STARLOPS_COMM_RING_ALLREDUCE_BYTES (16 MiB), is Open MPI's blocking call on the channel's thread (faster
   * than the ring there); else the ring where it applies; else a blocking call from
   * STARLOPS_COMM_BLOCKING_BYTES; else non-blocking calls */
  const sl_settings *set = &sl_ctx.set;
  int64_t size = coll_blocking_size(c);
  int mid_allreduce = c->kind == K_ALLREDUCE && set->comm_allreduce_blocking_bytes > 0 && size >= set->comm_allreduce_blocking_bytes &&
                      size < set->comm_ring_allreduce_bytes;
  int ring = !mid_allreduce && coll_ring_wanted(c);
  if (mid_allreduce || (!ring && set->comm_blocking_bytes > 0 && size >= set->comm_blocking_bytes)) { /* the channel's thread */
    struct starpu_task *task = c->direct ? NULL : starpu_task_get_current();
    if (task) starpu_task_end_dep_add(task, 1);
    c->pending = (comm_pending){.task = task, .done = c->direct ? coll_direct_done : NULL, .finish = finish, .arg = c,
                                .what = coll_kind_name(c->kind), .posted = sl_watch_now()};
    int rc = comm_blocking_add(c->ch, &c->pending);
    if (rc == SL_SUCCESS) return 1;
    sl_async_error(rc, "%s: %s", coll_kind_name(c->kind), sl_last_error());
    if (task) starpu_task_end_dep_release(task);
    return 0;
  }
  for (int i = 0; i < coll_max_requests(c); i++) c->reqs[i] = MPI_REQUEST_NULL;
  int nreq = 0, done = 0;
  int rc = ring ? coll_ring_start(c, &nreq) : coll_post_mpi(c, &nreq);
  if (rc != SL_SUCCESS) sl_async_error(rc, "%s: %s", coll_kind_name(c->kind), sl_last_error());
  double t0 = sl_watch_now();
  while (nreq > 0) {
    if (MPI_Testall(nreq, c->reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) break;
    if (done && ring) {
      nreq = coll_ring_advance(c);
      done = nreq == 0;
    }
    if (done || sl_watch_now() - t0 > spin_seconds) break;
  }
  if (nreq == 0 || done) {
    if (finish) finish(c);
    return 0;
  }
  struct starpu_task *task = c->direct ? NULL : starpu_task_get_current();
  if (task) starpu_task_end_dep_add(task, 1);
  c->pending = (comm_pending){.task = task, .done = c->direct ? coll_direct_done : NULL, .nreq = nreq, .reqs = c->reqs,
                              .finish = finish, .arg = c, .advance = ring ? coll_ring_advance : NULL,
                              .what = coll_kind_name(c->kind), .posted = sl_watch_now()};
  comm_progress_add(&c->pending);
  return 1;
}

static int stage_host; /* STARLOPS_COMM_STAGE_HOST=1: CPU workers stage too (tests the staging logic) */

static void finish_staged_host(void *arg)
{
  coll *c = arg;
  for (int i = 0; i < c->nbuf; i++) {
    if ((c->mode[i] & STARPU_W) && c->stage[i]) memcpy(c->dev[i], c->stage[i], (size_t)c->units[i] * c->unit_bytes);
    comm_pool_put(c->stage[i]);
    c->stage[i] = NULL;
  }
}

/* An allreduce of several buffers: their values go back from the concatenation. */
static void finish_concat(void *arg)
{
  coll *c = arg;
  size_t off = 0;
  for (int i = 0; i < c->nbuf; i++) {
    size_t bytes = (size_t)c->units[i] * c->unit_bytes;
    memcpy(c->ptr[i], (char *)c->concat + off, bytes);
    off += bytes;
  }
  comm_pool_put(c->concat);
  c->concat = NULL;
}

int coll_run_host(coll *c)
{
  if (c->kind == K_ALLREDUCE && c->nbuf > 1) { /* one collective for all the buffers, through the pool */
    c->concat_units = 0;
    for (int i = 0; i < c->nbuf; i++) c->concat_units += c->units[i];
    c->concat = comm_pool_get((size_t)c->concat_units * c->unit_bytes);
    if (c->concat) {
      size_t off = 0;
      for (int i = 0; i < c->nbuf; i++) {
        size_t bytes = (size_t)c->units[i] * c->unit_bytes;
        memcpy((char *)c->concat + off, c->ptr[i], bytes);
        off += bytes;
      }
      return run_mpi(c, finish_concat);
    } /* no staging memory: one collective per buffer */
  }
  if (!stage_host) return run_mpi(c, NULL);
  for (int i = 0; i < c->nbuf; i++) {
    size_t bytes = (size_t)c->units[i] * c->unit_bytes;
    c->dev[i] = c->ptr[i];
    c->stage[i] = bytes ? comm_pool_get(bytes) : NULL;
    if (bytes && !c->stage[i]) {
      sl_async_error(SL_E_NOMEM, "%s: no staging buffer of %zu bytes", coll_kind_name(c->kind), bytes);
      for (int j = 0; j < i; j++) comm_pool_put(c->stage[j]);
      return 0;
    }
    if (bytes && (c->mode[i] & STARPU_R)) memcpy(c->stage[i], c->dev[i], bytes);
    if (bytes) c->ptr[i] = c->stage[i];
  }
  return run_mpi(c, finish_staged_host);
}

static void exec_host(void *buffers[], void *arg)
{
  coll *c = arg;
  take_pointers(c, buffers);
  (void)coll_run_host(c);
}

#ifdef SL_HAVE_CUDA
static void cuda_fail(const char *what, cudaError_t e, const coll *c)
{
  sl_async_error(SL_E_RUNTIME, "%s: %s: %s", coll_kind_name(c->kind), what, cudaGetErrorString(e));
}

/* A non-blocking stream of the progress thread per device, for the copies back from staging. */
static cudaStream_t progress_stream(int dev)
{
  static __thread cudaStream_t streams[STARPU_MAXCUDADEVS];
  if (!streams[dev] && cudaStreamCreateWithFlags(&streams[dev], cudaStreamNonBlocking) != cudaSuccess) {
    (void)cudaGetLastError();
    streams[dev] = 0;
  }
  return streams[dev];
}

static void finish_staged(void *arg)
{
  coll *c = arg;
  cudaError_t e = cudaSetDevice(c->devid);
  cudaStream_t s = e == cudaSuccess ? progress_stream(c->devid) : 0;
  for (int i = 0; i < c->nbuf && e == cudaSuccess; i++)
    if ((c->mode[i] & STARPU_W) && c->stage[i])
      e = cudaMemcpyAsync(c->dev[i], c->stage[i], (size_t)c->units[i] * c->unit_bytes, cudaMemcpyHostToDevice, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) cuda_fail("copy from the staging buffer", e, c);
  for (int i = 0; i < c->nbuf; i++) {
    comm_pool_put(c->stage[i]);
    c->stage[i] = NULL;
  }
}

static void exec_staged(void *buffers[], void *arg)
{
  coll *c = arg;
  take_pointers(c, buffers);
  cudaStream_t s = starpu_cuda_get_local_stream();
  cudaError_t e = cudaGetDevice(&c->devid);
  for (int i = 0; i < c->nbuf && e == cudaSuccess; i++) {
    c->dev[i] = c->ptr[i];
    c->stage[i] = NULL;
    size_t bytes = (size_t)c->units[i] * c->unit_bytes;
    if (bytes == 0) continue;
    c->stage[i] = comm_pool_get(bytes);
    if (!c->stage[i]) {
      sl_async_error(SL_E_NOMEM, "%s: no pinned staging buffer of %zu bytes", coll_kind_name(c->kind), bytes);
      e = cudaErrorMemoryAllocation;
      break;
    }
    if (c->mode[i] & STARPU_R) e = cudaMemcpyAsync(c->stage[i], c->dev[i], bytes, cudaMemcpyDeviceToHost, s);
    c->ptr[i] = c->stage[i];
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) {
    cuda_fail("copy to the staging buffer", e, c);
    for (int i = 0; i < c->nbuf; i++) comm_pool_put(c->stage[i]);
    return;
  }
  (void)run_mpi(c, finish_staged);
}

/* CUDA-aware MPI on device buffers, with blocking calls: Open MPI 4.1's non-blocking collectives are not
 * CUDA-aware for reductions (libnbc reduces on the host: a segfault on an H200), its blocking ones stage
 * device buffers. The CUDA worker is held for the transfer; every channel shares one order token in this
 * backend, so all ranks run all their collectives in one consistent order and no two blocked workers can
 * wait on each other. */
static void exec_device(void *buffers[], void *arg)
{
  coll *c = arg;
  take_pointers(c, buffers);
  cudaError_t e = cudaStreamSynchronize(starpu_cuda_get_local_stream());
  if (e != cudaSuccess) {
    cuda_fail("stream synchronisation", e, c);
    return;
  }
  int rc = coll_run_mpi_blocking(c);
  if (rc != SL_SUCCESS) sl_async_error(rc, "%s: %s", coll_kind_name(c->kind), sl_last_error());
}
#endif

#ifdef SL_HAVE_NCCL
static void exec_nccl(void *buffers[], void *arg)
{
  coll *c = arg;
  take_pointers(c, buffers);
  int rc = coll_post_nccl(c, starpu_cuda_get_local_stream());
  if (rc != SL_SUCCESS) sl_async_error(rc, "%s: %s", coll_kind_name(c->kind), sl_last_error());
}
#endif

int coll_codelet_init(comm_backend b)
{
  stage_host = sl_ctx.set.comm_stage_host;
  if (sl_ctx.set.comm_spin_set) spin_seconds = sl_ctx.set.comm_spin_s;
  struct starpu_codelet *cl = &cl_coll;
  starpu_codelet_init(cl);
  cl->name = "sl_collective";
  cl->nbuffers = STARPU_VARIABLE_NBUFFERS;
  cl->where = codelet_where();
  /* Host MPI on GPU data: by default the comm task runs on a CPU worker and StarPU stages the data in its
   * pinned, cached main-memory replicates. starlops' own staging (exec_staged: device -> pool -> MPI ->
   * device) is behind STARLOPS_COMM_GPU_STAGING=1: with two ranks on one H200 it gave wrong results in the
   * stress test (a few small float collectives), not yet explained (docs/comm.md). */
  if (b == COMM_BACKEND_MPI && !sl_ctx.set.comm_gpu_staging) cl->where = STARPU_CPU;
  cl->cpu_funcs[0] = exec_host;
#ifdef SL_HAVE_CUDA
  cl->cuda_funcs[0] = b == COMM_BACKEND_MPI_CUDA ? exec_device : exec_staged;
#endif
  if (b == COMM_BACKEND_NCCL) {
#ifdef SL_HAVE_NCCL
    cl->cpu_funcs[0] = NULL;
    cl->cuda_funcs[0] = exec_nccl;
    cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
    cl->where = STARPU_CUDA;
    int ids[1];
    if (starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, 1) != 1)
      return sl_error(SL_E_BACKEND, "STARLOPS_COMM=nccl: this rank has no CUDA worker");
    nccl_worker = ids[0];
#else
    return sl_error(SL_E_BACKEND, "STARLOPS_COMM=nccl: starlops was built without NCCL");
#endif
  }
  return SL_SUCCESS;
}

int coll_nccl_device(void) { return nccl_worker >= 0 ? starpu_worker_get_devid(nccl_worker) : -1; }

int coll_submit(coll *c)
{
  c->reqs = malloc(sizeof(MPI_Request) * (size_t)(coll_max_requests(c) > 0 ? coll_max_requests(c) : 1));
  if (!c->reqs) {
    coll_free(c);
    return sl_error(SL_E_NOMEM, "collective: out of memory");
  }
  if (coll_direct_wanted(c)) return coll_submit_direct(c);
  int nb = c->nbuf + 1;
  struct starpu_task *t = codelet_task_create(nb);
  if (!t) {
    coll_free(c);
    return sl_error(SL_E_NOMEM, "collective: out of memory");
  }
  t->cl = &cl_coll;
  t->name = coll_kind_name(c->kind);
  t->cl_arg = c;
  t->callback_func = coll_free; /* after the task terminated, so after the progress thread let go of c */
  t->callback_arg = c;
  STARPU_TASK_SET_HANDLE(t, c->ch->token, 0);
  STARPU_TASK_SET_MODE(t, STARPU_RW, 0);
  for (int i = 0; i < c->nbuf; i++) {
    STARPU_TASK_SET_HANDLE(t, c->handle[i], i + 1);
    STARPU_TASK_SET_MODE(t, c->mode[i], i + 1);
  }
  if (nccl_worker >= 0) {
    t->execute_on_a_specific_worker = 1;
    t->workerid = (unsigned)nccl_worker;
  }
  int rc = starpu_task_submit(t);
  if (rc != 0) {
    t->callback_func = NULL;
    starpu_task_destroy(t);
    coll_free(c);
    return sl_error_starpu(rc, "starpu_task_submit", __FILE__, __LINE__);
  }
  return SL_SUCCESS;
}
