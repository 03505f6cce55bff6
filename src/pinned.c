/* Host memory that a GPU copies to or from without staging: page-aligned ordinary memory, pinned with
 * cudaHostRegister on a rank with CUDA workers (memory from cudaHostAlloc gave wrong results between two ranks
 * on one node with Open MPI's shared-memory transport; registered anonymous pages behave like any other memory
 * for MPI). Where registration fails the pages stay pageable: slower copies, same results. */
#include <stdlib.h>

#include "internal.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

void *sl_pinned_alloc(size_t bytes)
{
  void *q = NULL;
  if (posix_memalign(&q, 4096, bytes) != 0) return NULL;
#ifdef SL_HAVE_CUDA
  if (sl_ctx.ncuda > 0 && cudaHostRegister(q, bytes, cudaHostRegisterPortable) != cudaSuccess) (void)cudaGetLastError();
#endif
  return q;
}

void sl_pinned_free(void *p)
{
  if (!p) return;
#ifdef SL_HAVE_CUDA
  if (sl_ctx.ncuda > 0 && cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
#endif
  free(p);
}
