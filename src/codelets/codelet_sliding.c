/* Sliding1D's task: the matrix and the tapers (one fixed handle: M then T), a rank's input block as its chunks
 * (along the distributed axis with its ghost layer as one more input: before the model's chunks, after the
 * data's), the output chunks; several chunks are packed into the worker's scratch buffer (StarPU keeps it
 * between tasks), one chunk each is used in place. The CUDA version takes one output chunk and one input
 * chunk, or one chunk and its ghost layer, which it packs on the device. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/kernel_sliding.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

typedef struct sliding_args {
  codelet_chunks ch;
  sl_dtype dt;
  int adjoint;
  int ghost; /* 1: one of the inputs is a ghost layer */
  sl_sliding_dims d;
} sliding_args;

static struct starpu_codelet cl_sliding;

static void sliding_cpu(void *buffers[], void *arg)
{
  const sliding_args *a = arg;
  size_t el = sl_dtype_size(a->dt);
  const char *M = (const char *)STARPU_VECTOR_GET_PTR(buffers[0]), *T = M + (size_t)(a->d.nwin * a->d.nm) * el;
  if (a->ch.nin == 1 && a->ch.nout == 1) {
    kernel_sliding(a->dt, a->adjoint, &a->d, M, T, (const void *)STARPU_VECTOR_GET_PTR(buffers[1]),
                   (void *)STARPU_VECTOR_GET_PTR(buffers[2]));
    return;
  }
  int64_t nd = a->d.outer * a->d.n * a->d.inner, nmod = a->d.outer * a->d.nwins * a->d.nm * a->d.inner;
  char *in = (char *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin + a->ch.nout]);
  char *out = in + (size_t)(a->adjoint ? nd : nmod) * el;
  codelet_chunks_copy(buffers, 1, a->ch.nin, in, el, 0);
  kernel_sliding(a->dt, a->adjoint, &a->d, M, T, in, out);
  codelet_chunks_copy(buffers, 1 + a->ch.nin, a->ch.nout, out, el, 1);
}

#ifdef SL_HAVE_CUDA
static void sliding_cuda(void *buffers[], void *arg)
{
  const sliding_args *a = arg;
  size_t el = sl_dtype_size(a->dt);
  const char *M = (const char *)STARPU_VECTOR_GET_PTR(buffers[0]), *T = M + (size_t)(a->d.nwin * a->d.nm) * el;
  cudaStream_t s = starpu_cuda_get_local_stream();
  const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
  void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin]);
  cudaError_t e = cudaSuccess;
  if (a->ch.nin == 2) { /* a chunk and its ghost layer: one buffer in the scratch space */
    char *flat = (char *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin + a->ch.nout]);
    size_t b0 = (size_t)STARPU_VECTOR_GET_NX(buffers[1]) * el, b1 = (size_t)STARPU_VECTOR_GET_NX(buffers[2]) * el;
    e = cudaMemcpyAsync(flat, in, b0, cudaMemcpyDeviceToDevice, s);
    if (e == cudaSuccess) e = cudaMemcpyAsync(flat + b0, (const void *)STARPU_VECTOR_GET_PTR(buffers[2]), b1, cudaMemcpyDeviceToDevice, s);
    in = flat;
  }
  if (e == cudaSuccess) e = (cudaError_t)kernel_cuda_sliding(a->dt, a->adjoint, &a->d, M, T, in, out, s);
  if (e != cudaSuccess) sl_async_error(SL_E_RUNTIME, "Sliding1D (CUDA): %s", cudaGetErrorString(e));
}

/* CUDA takes one output chunk and one input chunk (or one chunk and its ghost layer); with the compute codelets
 * forced onto CUDA, the CPUs take only the tasks CUDA cannot. */
static int sliding_can_execute(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
  const sliding_args *a = task->cl_arg;
  int cuda_can = a->ch.nin <= 1 + a->ghost && a->ch.nout == 1;
  if (starpu_worker_get_type((int)workerid) == STARPU_CUDA_WORKER) return cuda_can;
  return !(codelet_where() == STARPU_CUDA && cuda_can);
}
#endif

void codelet_sliding_init(void)
{
#ifdef SL_HAVE_CUDA
  codelet_chunked_init(&cl_sliding, "sl_sliding", sliding_cpu, sliding_cuda);
  cl_sliding.can_execute = sliding_can_execute;
#else
  codelet_chunked_init(&cl_sliding, "sl_sliding", sliding_cpu, NULL);
#endif
}

int codelet_sliding_submit(sl_dtype dt, int adjoint, const void *dims, starpu_data_handle_t tables, starpu_data_handle_t scratch,
                           int nin, const starpu_data_handle_t *in, int ghost, int nout, const starpu_data_handle_t *out)
{
  const sl_sliding_dims *d = dims;
  if (nout == 0) return SL_SUCCESS;
  sliding_args *a = malloc(sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "Sliding1D: out of memory");
  *a = (sliding_args){{nin, nout}, dt, adjoint, ghost, *d};
  double flops = 2.0 * (double)(d->outer * d->nwins * d->nwin * d->nm * d->inner) * (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return codelet_chunked_submit_scratch(&cl_sliding, a, sizeof *a, tables, scratch, in, out, flops, "Sliding1D");
}
