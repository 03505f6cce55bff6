/* The task of the windowed operators (Patch2D with a dense matrix per patch; Sliding1D, whose windows are
 * patches of nwin x 1 samples): the tables (one fixed handle: M, T0, T1), a rank's input block as its chunks
 * (along a distributed axis with its ghost layer as one more input: before the model's chunks, after the
 * data's), the output chunks, and the scratch handle where a task needs it. The CPU version packs several
 * chunks into the scratch space (StarPU keeps it between tasks) and runs BLAS GEMMs (kernel_patch.c); the CUDA
 * version takes one output chunk and one input chunk, or one chunk and its ghost layer, which it packs at the
 * start of the scratch space, and runs one cuBLAS GEMM in the rest (kernel_patch.cu). With M the identity
 * (windows themselves) and one chunk each way, no ghost layer, nothing needs it and the task goes without:
 * StarPU would otherwise allocate the data's and the model's size on the worker's node for nothing. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/kernel_patch.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <starpu_cublas_v2.h>
#endif

typedef struct patch_args {
  codelet_chunks ch;
  sl_dtype dt;
  int adjoint;
  int ghost; /* 1: one of the inputs is a ghost layer */
  sl_patch_dims d;
} patch_args;

static struct starpu_codelet cl_patch;

/* One slice of the outer indices: the caller's work space is the task's, a helper's its own. */
typedef struct patch_job {
  const patch_args *a;
  const void *tables, *in;
  void *out, *work;
  int failed;
} patch_job;

static void patch_slice(int64_t lo, int64_t hi, void *p)
{
  patch_job *j = p;
  void *w = sl_helper_scratch((size_t)kernel_patch_work(&j->a->d) * sl_dtype_size(j->a->dt));
  if (kernel_patch_range(j->a->dt, j->a->adjoint, &j->a->d, j->tables, j->in, j->out, w ? w : j->work, lo, hi) != 0)
    j->failed = 1;
}

static void patch_cpu(void *buffers[], void *arg)
{
  const patch_args *a = arg;
  size_t el = sl_dtype_size(a->dt);
  const char *tables = (const char *)STARPU_VECTOR_GET_PTR(buffers[0]);
  const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
  void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin]);
  const int iw = 1 + a->ch.nin + a->ch.nout; /* the scratch handle, when the task has it */
  char *scratch = (int)STARPU_TASK_GET_NBUFFERS(starpu_task_get_current()) > iw ? (char *)STARPU_VECTOR_GET_PTR(buffers[iw]) : NULL;
  char *flat = NULL, *fin = NULL, *fout = NULL;
  if (a->ch.nin != 1 || a->ch.nout != 1) { /* several chunks (or a ghost layer): one buffer each way, in place
                                             * when the chunks lie back to back, else packed in the scratch space */
    flat = scratch;
    fin = codelet_chunks_flat(buffers, 1, a->ch.nin, el);
    fout = codelet_chunks_flat(buffers, 1 + a->ch.nin, a->ch.nout, el);
    if (!fin) codelet_chunks_copy(buffers, 1, a->ch.nin, flat, el, 0);
    in = fin ? fin : flat;
    out = fout ? fout : flat + (size_t)(a->adjoint ? sl_patch_data_size(&a->d) : sl_patch_model_size(&a->d)) * el;
  }
  /* the products' work space after the packing space (StarPU keeps it between tasks: no new pages per call) */
  void *work = scratch ? scratch + (size_t)(sl_patch_data_size(&a->d) + sl_patch_model_size(&a->d)) * el : NULL;
  /* a rank's block is one task: its outer indices over the rank's cores (sl_task_threads) */
  const sl_patch_dims *d = &a->d;
  double ops = a->d.ident ? (double)sl_patch_model_size(d) : (double)sl_patch_columns(d) * (double)(d->nop0 * d->nop1) *
                                                             (double)(d->nwin0 * d->nwin1);
  patch_job j = {a, tables, in, out, work, 0};
  sl_parallel_for(sl_task_threads(ops), d->A, patch_slice, &j);
  if (j.failed) sl_async_error(SL_E_NOMEM, "Patch2D/Sliding1D: no work space for the patches' products");
  if (flat && !fout) codelet_chunks_copy(buffers, 1 + a->ch.nin, a->ch.nout, out, el, 1);
}

#ifdef SL_HAVE_CUDA
static void patch_cuda(void *buffers[], void *arg)
{
  const patch_args *a = arg;
  size_t el = sl_dtype_size(a->dt);
  const void *tables = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
  cudaStream_t s = starpu_cuda_get_local_stream();
  const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
  void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin]);
  const int iw = 1 + a->ch.nin + a->ch.nout; /* the scratch handle, when the task has it */
  char *work = (int)STARPU_TASK_GET_NBUFFERS(starpu_task_get_current()) > iw ? (char *)STARPU_VECTOR_GET_PTR(buffers[iw]) : NULL;
  cudaError_t e = cudaSuccess;
  if (a->ch.nin == 2) { /* a chunk and its ghost layer: one buffer at the start of the scratch space */
    size_t b0 = (size_t)STARPU_VECTOR_GET_NX(buffers[1]) * el, b1 = (size_t)STARPU_VECTOR_GET_NX(buffers[2]) * el;
    e = cudaMemcpyAsync(work, in, b0, cudaMemcpyDeviceToDevice, s);
    if (e == cudaSuccess) e = cudaMemcpyAsync(work + b0, (const void *)STARPU_VECTOR_GET_PTR(buffers[2]), b1, cudaMemcpyDeviceToDevice, s);
    in = work;
    work += b0 + b1;
  }
  if (e == cudaSuccess)
    e = (cudaError_t)kernel_cuda_patch_gemm(a->dt, a->adjoint, &a->d, tables, in, out, work, starpu_cublas_get_local_handle(), s);
  if (e != cudaSuccess) sl_async_error(SL_E_RUNTIME, "Patch2D/Sliding1D (CUDA): %s", cudaGetErrorString(e));
}

/* CUDA takes one output chunk and one input chunk (or one chunk and its ghost layer); with the compute codelets
 * forced onto CUDA, the CPUs take only the tasks CUDA cannot. */
static int patch_can_execute(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
  const patch_args *a = task->cl_arg;
  int cuda_can = a->ch.nin <= 1 + a->ghost && a->ch.nout == 1;
  if (starpu_worker_get_type((int)workerid) == STARPU_CUDA_WORKER) return cuda_can;
  return !(codelet_where() == STARPU_CUDA && cuda_can);
}
#endif

void codelet_patch_init(void)
{
#ifdef SL_HAVE_CUDA
  codelet_chunked_init(&cl_patch, "sl_patch", patch_cpu, patch_cuda);
  cl_patch.can_execute = patch_can_execute;
#else
  codelet_chunked_init(&cl_patch, "sl_patch", patch_cpu, NULL);
#endif
}

int codelet_patch_submit(sl_dtype dt, int adjoint, const void *dims, starpu_data_handle_t tables, starpu_data_handle_t scratch,
                         int nin, const starpu_data_handle_t *in, int ghost, int nout, const starpu_data_handle_t *out)
{
  const sl_patch_dims *d = dims;
  if (nout == 0) return SL_SUCCESS;
  patch_args *a = calloc(1, sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "Patch2D: out of memory");
  *a = (patch_args){.ch = {nin, nout}, .dt = dt, .adjoint = adjoint, .ghost = ghost, .d = *d};
  double flops = d->ident ? 2.0 * (double)sl_patch_model_size(d) /* a taper and an add per patch sample */
                           : 2.0 * (double)(d->A * d->B * d->nw0 * d->nw1 * d->nwin0 * d->nwin1 * d->nop0 * d->nop1 * d->C) *
                               (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return codelet_chunked_submit_work(&cl_patch, a, sizeof *a, tables, scratch, !d->ident || ghost, in, out, flops, "Patch2D");
}

int64_t codelet_patch_work(const void *dims, int64_t packing)
{
  int64_t cpu = kernel_patch_work(dims);
#ifdef SL_HAVE_CUDA
  int64_t cuda = kernel_cuda_patch_work(dims);
  return packing + (cuda > cpu ? cuda : cpu);
#else
  return packing + cpu;
#endif
}
