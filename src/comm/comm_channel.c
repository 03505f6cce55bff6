/* Backend selection (STARLOPS_COMM) and channels (one per communicator the comm layer talks on). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "comm/comm.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int coll_codelet_init(comm_backend b);
int coll_nccl_device(void);
#ifdef SL_HAVE_NCCL
int comm_nccl_create(comm_channel *ch);
void comm_nccl_destroy(comm_channel *ch);
#endif

static comm_backend backend = COMM_BACKEND_MPI;
static comm_channel *world;

static const char *names[] = {"mpi", "mpi-cuda", "nccl"};
const char *comm_backend_name(comm_backend b) { return names[b]; }
comm_backend comm_backend_get(void) { return backend; }
comm_channel *comm_world(void) { return world; }

/* MPIX_Query_cuda_support, looked up at run time: the same binary then runs with Debian's Open MPI (not
 * CUDA-aware) and with a CUDA-aware build of the same ABI. */
static int mpi_cuda_aware(void)
{
  int (*query)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support");
  return query ? query() == 1 : 0;
}

/* 1 when no two ranks of the node drive the same GPU (NCCL refuses that). Collective. */
static int gpus_distinct(void)
{
  uint64_t mine = 0;
#ifdef SL_HAVE_CUDA
  char host[256] = {0}, bus[64] = {0};
  gethostname(host, sizeof host - 1);
  int dev = coll_nccl_device();
  if (dev < 0) {
    int ids[1];
    if (starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, 1) == 1) dev = starpu_worker_get_devid(ids[0]);
  }
  if (dev >= 0 && cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) (void)cudaGetLastError();
  mine = sl_fnv1a(sl_fnv1a(SL_FNV1A_START, host, strlen(host)), bus, strlen(bus)); /* host and bus id */
#endif
  uint64_t *all = malloc(sizeof(uint64_t) * (size_t)sl_ctx.size);
  int ok = all != NULL;
  if (all && MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, sl_ctx.comm) == MPI_SUCCESS) {
    for (int r = 0; r < sl_ctx.size && ok; r++)
      if (r != sl_ctx.rank && all[r] == mine) ok = 0;
  } else {
    ok = 0;
  }
  free(all);
  int every = 0;
  MPI_Allreduce(&ok, &every, 1, MPI_INT, MPI_MIN, sl_ctx.comm);
  return every;
}

static int select_backend(void)
{
  const char *want = sl_ctx.set.comm; /* validated by sl_settings_read */
  /* what every rank can do: [0] CUDA workers, [1] CUDA-aware MPI, [2] NCCL built in */
  int mine[3] = {sl_ctx.ncuda > 0, mpi_cuda_aware(), 0}, all[3];
#ifdef SL_HAVE_NCCL
  mine[2] = 1;
#endif
  SL_CHECK_MPI(MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, sl_ctx.comm));
  int nccl_ok = all[0] && all[2] && gpus_distinct();
  int cuda_ok = all[0] && all[1];
  if (!strcmp(want, "nccl") && !nccl_ok)
    return sl_error(SL_E_BACKEND, "STARLOPS_COMM=nccl is not available: %s",
                    !all[2] ? "starlops was built without NCCL"
                    : !all[0] ? "some rank has no CUDA worker"
                              : "two ranks drive the same GPU (NCCL needs one GPU per rank)");
  if (!strcmp(want, "mpi-cuda") && !cuda_ok)
    return sl_error(SL_E_BACKEND, "STARLOPS_COMM=mpi-cuda is not available: %s",
                    !all[0] ? "some rank has no CUDA worker"
                            : "MPI is not CUDA-aware (MPIX_Query_cuda_support() is not 1 on every rank)");
  if (!strcmp(want, "nccl")) backend = COMM_BACKEND_NCCL;
  else if (!strcmp(want, "mpi-cuda")) backend = COMM_BACKEND_MPI_CUDA;
  else if (!strcmp(want, "mpi")) backend = COMM_BACKEND_MPI;
  else backend = nccl_ok ? COMM_BACKEND_NCCL : (cuda_ok ? COMM_BACKEND_MPI_CUDA : COMM_BACKEND_MPI);
  return SL_SUCCESS;
}

int comm_init(void)
{
  backend = COMM_BACKEND_MPI;
  SL_TRY(select_backend());
  SL_TRY(sl_agree(sl_ctx.comm, coll_codelet_init(backend)));
  SL_TRY(comm_pool_init());
  SL_TRY(sl_agree(sl_ctx.comm, comm_progress_start()));
  SL_TRY(sl_agree(sl_ctx.comm, comm_shm_init()));
  return comm_channel_create(sl_ctx.comm, &world);
}

void comm_shutdown(void)
{
  comm_channel_destroy(world);
  world = NULL;
  comm_progress_stop();
  comm_pool_shutdown();
}

int comm_channel_create(MPI_Comm base, comm_channel **out)
{
  comm_channel *ch = calloc(1, sizeof *ch);
  int rc = ch ? SL_SUCCESS : sl_error(SL_E_NOMEM, "channel: out of memory");
  SL_TRY(sl_agree(base, rc));
  ch->comm = MPI_COMM_NULL;
  int mpi = MPI_Comm_dup(base, &ch->comm);
  if (mpi == MPI_SUCCESS) mpi = MPI_Comm_rank(ch->comm, &ch->rank);
  if (mpi == MPI_SUCCESS) mpi = MPI_Comm_size(ch->comm, &ch->size);
  if (mpi != MPI_SUCCESS) {
    free(ch);
    return sl_error_mpi(mpi, "MPI_Comm_dup", __FILE__, __LINE__);
  }
  if (backend == COMM_BACKEND_MPI_CUDA && world) {
    ch->token = world->token; /* one order for every collective: see exec_device (comm_task.c) */
  } else {
    starpu_void_data_register(&ch->token);
    ch->own_token = 1;
  }
#ifdef SL_HAVE_NCCL
  if (backend == COMM_BACKEND_NCCL) {
    /* no NCCL collective may run while a communicator initialises */
    starpu_task_wait_for_all();
    rc = comm_nccl_create(ch);
    if (rc != SL_SUCCESS) {
      comm_channel_destroy(ch);
      return rc;
    }
  }
#endif
  *out = ch;
  return SL_SUCCESS;
}

void comm_channel_destroy(comm_channel *ch)
{
  if (!ch) return;
  if (ch->token && ch->own_token) starpu_data_unregister(ch->token);
  else if (ch->token) { /* its collectives, which hold the shared token */
    starpu_task_wait_for_all();
    comm_direct_wait();
  }
  comm_blocking_stop(ch);
#ifdef SL_HAVE_NCCL
  comm_nccl_destroy(ch);
#endif
  if (ch->comm != MPI_COMM_NULL) MPI_Comm_free(&ch->comm);
  free(ch);
}
