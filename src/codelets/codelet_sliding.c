/* The windowed operators' task: Sliding1D (kernel_sliding.h) or Patch2D with a dense matrix per patch
 * (kernel_patch.h). Sliding1D's task: the matrix and the tapers (one fixed handle: M then T), a rank's input block as its chunks
 * (along the distributed axis with its ghost layer as one more input: before the model's chunks, after the
 * data's), the output chunks; several chunks are packed into the worker's scratch buffer (StarPU keeps it
 * between tasks), one chunk each is used in place. The CUDA version takes one output chunk and one input
 * chunk, or one chunk and its ghost layer, which it packs on the device. A patch task is the same with its
 * tables (M, T0, T1) and no ghost layer. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/kernel_patch.h"
#include "codelets/kernel_sliding.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <starpu_cublas_v2.h>
#endif

typedef struct sliding_args {
  codelet_chunks ch;
  sl_dtype dt;
  int adjoint;
  int ghost; /* 1: one of the inputs is a ghost layer */
  int patch; /* 1: Patch2D (pd), 0: Sliding1D (d) */
  sl_sliding_dims d;
  sl_patch_dims pd;
} sliding_args;

/* elements of the data and of the model buffers */
static int64_t data_size(const sliding_args *a) { return a->patch ? sl_patch_data_size(&a->pd) : a->d.outer * a->d.n * a->d.inner; }
static int64_t model_size(const sliding_args *a)
{
  return a->patch ? sl_patch_model_size(&a->pd) : a->d.outer * a->d.nwins * a->d.nm * a->d.inner;
}

static void run_cpu(const sliding_args *a, const char *tables, const void *in, void *out)
{
  size_t el = sl_dtype_size(a->dt);
  if (a->patch && kernel_patch(a->dt, a->adjoint, &a->pd, tables, in, out) != 0)
    sl_async_error(SL_E_NOMEM, "Patch2D: no work space for a row of patches");
  if (!a->patch) kernel_sliding(a->dt, a->adjoint, &a->d, tables, tables + (size_t)(a->d.nwin * a->d.nm) * el, in, out);
}

static struct starpu_codelet cl_sliding;

static void sliding_cpu(void *buffers[], void *arg)
{
  const sliding_args *a = arg;
  size_t el = sl_dtype_size(a->dt);
  const char *tables = (const char *)STARPU_VECTOR_GET_PTR(buffers[0]);
  if (a->ch.nin == 1 && a->ch.nout == 1) {
    run_cpu(a, tables, (const void *)STARPU_VECTOR_GET_PTR(buffers[1]), (void *)STARPU_VECTOR_GET_PTR(buffers[2]));
    return;
  }
  char *in = (char *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin + a->ch.nout]);
  char *out = in + (size_t)(a->adjoint ? data_size(a) : model_size(a)) * el;
  codelet_chunks_copy(buffers, 1, a->ch.nin, in, el, 0);
  run_cpu(a, tables, in, out);
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
  if (e == cudaSuccess && a->patch)
    e = (cudaError_t)kernel_cuda_patch_gemm(a->dt, a->adjoint, &a->pd, M, in, out,
                                            (void *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin + a->ch.nout]),
                                            starpu_cublas_get_local_handle(), s);
  else if (e == cudaSuccess) e = (cudaError_t)kernel_cuda_sliding(a->dt, a->adjoint, &a->d, M, T, in, out, s);
  if (e != cudaSuccess) sl_async_error(SL_E_RUNTIME, "%s (CUDA): %s", a->patch ? "Patch2D" : "Sliding1D", cudaGetErrorString(e));
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

static int submit(sliding_args *a, starpu_data_handle_t tables, starpu_data_handle_t scratch, const starpu_data_handle_t *in,
                  const starpu_data_handle_t *out, double flops, const char *what)
{
  if (a->patch) /* the CUDA version's GEMM work space is the scratch handle */
    return codelet_chunked_submit_work(&cl_sliding, a, sizeof *a, tables, scratch, in, out, flops, what);
  return codelet_chunked_submit_scratch(&cl_sliding, a, sizeof *a, tables, scratch, in, out, flops, what);
}

int codelet_sliding_submit(sl_dtype dt, int adjoint, const void *dims, starpu_data_handle_t tables, starpu_data_handle_t scratch,
                           int nin, const starpu_data_handle_t *in, int ghost, int nout, const starpu_data_handle_t *out)
{
  const sl_sliding_dims *d = dims;
  if (nout == 0) return SL_SUCCESS;
  sliding_args *a = calloc(1, sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "Sliding1D: out of memory");
  *a = (sliding_args){.ch = {nin, nout}, .dt = dt, .adjoint = adjoint, .ghost = ghost, .d = *d};
  double flops = 2.0 * (double)(d->outer * d->nwins * d->nwin * d->nm * d->inner) * (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return submit(a, tables, scratch, in, out, flops, "Sliding1D");
}

int codelet_patch_submit(sl_dtype dt, int adjoint, const void *dims, starpu_data_handle_t tables, starpu_data_handle_t scratch,
                         int nin, const starpu_data_handle_t *in, int nout, const starpu_data_handle_t *out)
{
  const sl_patch_dims *d = dims;
  if (nout == 0) return SL_SUCCESS;
  sliding_args *a = calloc(1, sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "Patch2D: out of memory");
  *a = (sliding_args){.ch = {nin, nout}, .dt = dt, .adjoint = adjoint, .patch = 1, .pd = *d};
  double flops = 2.0 * (double)(d->A * d->B * d->nw0 * d->nw1 * d->nwin0 * d->nwin1 * d->nop0 * d->nop1 * d->C) *
                 (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return submit(a, tables, scratch, in, out, flops, "Patch2D");
}
