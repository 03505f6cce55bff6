/* Host memory that a GPU copies to or from without staging: ordinary memory aligned to the system's pages, pinned
 * with cudaHostRegister on a rank with CUDA workers (memory from cudaHostAlloc gave wrong results between two ranks
 * on one node with Open MPI's shared-memory transport; registered anonymous pages behave like any other memory
 * for MPI). The registration runs on the device of the rank's first CUDA worker, so that a rank given another GPU
 * than the first opens no context on the first. Where registration fails, or STARPU_DISABLE_PINNING is set (as for
 * StarPU's own allocations), the pages stay pageable: slower copies, same results. */
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

size_t sl_pinned_page(void)
{
  long pg = sysconf(_SC_PAGESIZE);
  return pg > 4096 ? (size_t)pg : 4096;
}

#ifdef SL_HAVE_CUDA
/* The device of the rank's first CUDA worker, looked up at each registration (StarPU running) and kept for the
 * unregistrations, which may come after StarPU has stopped (the scalars' pages at sl_finalize). */
static int reg_dev = -1;

/* (un)registers p on reg_dev, the calling thread's device restored after */
static void registration(void *p, size_t bytes, int reg)
{
  int ids[1], prev = -1;
  if (reg)
    __atomic_store_n(&reg_dev, starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, 1) == 1 ? starpu_worker_get_devid(ids[0]) : -1,
                     __ATOMIC_RELAXED);
  const int dev = __atomic_load_n(&reg_dev, __ATOMIC_RELAXED);
  if (dev >= 0 && (cudaGetDevice(&prev) != cudaSuccess || (prev != dev && cudaSetDevice(dev) != cudaSuccess))) prev = -1;
  cudaError_t rc = reg ? cudaHostRegister(p, bytes, cudaHostRegisterPortable) : cudaHostUnregister(p);
  if (rc != cudaSuccess) (void)cudaGetLastError(); /* stays pageable (or was never pinned) */
  if (prev >= 0 && prev != dev && cudaSetDevice(prev) != cudaSuccess) (void)cudaGetLastError();
}
#endif

void *sl_pinned_alloc(size_t bytes)
{
  void *q = NULL;
  if (posix_memalign(&q, sl_pinned_page(), bytes) != 0) return NULL;
#ifdef SL_HAVE_CUDA
  if (sl_ctx.ncuda > 0 && starpu_get_env_number("STARPU_DISABLE_PINNING") <= 0) registration(q, bytes, 1);
#endif
  return q;
}

void sl_pinned_free(void *p)
{
  if (!p) return;
#ifdef SL_HAVE_CUDA
  if (sl_ctx.ncuda > 0) registration(p, 0, 0);
#endif
  free(p);
}
