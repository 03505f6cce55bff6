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
  int ghost;               /* 1: one of the inputs is a ghost layer */
  int64_t in_off, out_off; /* where the task's input and output start in the buffers taken back to back */
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

/* Elements of the chunks buffers[first..first+n). */
static size_t chunks_size(void *buffers[], int first, int n)
{
  size_t e = 0;
  for (int i = 0; i < n; i++) e += STARPU_VECTOR_GET_NX(buffers[first + i]);
  return e;
}

/* The chunks buffers[first..first+n) from element skip on, copied back to back into dst. */
static void chunks_tail(void *buffers[], int first, int n, size_t skip, char *dst, size_t el)
{
  skip *= el;
  for (int i = 0; i < n; i++) {
    size_t bytes = (size_t)STARPU_VECTOR_GET_NX(buffers[first + i]) * el;
    if (skip >= bytes) {
      skip -= bytes;
      continue;
    }
    memcpy(dst, (const char *)STARPU_VECTOR_GET_PTR(buffers[first + i]) + skip, bytes - skip);
    dst += bytes - skip;
    skip = 0;
  }
}

static void patch_cpu(void *buffers[], void *arg)
{
  const patch_args *a = arg;
  size_t el = sl_dtype_size(a->dt);
  const char *tables = (const char *)STARPU_VECTOR_GET_PTR(buffers[0]);
  const char *in = (const char *)STARPU_VECTOR_GET_PTR(buffers[1]);
  char *out = (char *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin]);
  const int iw = 1 + a->ch.nin + a->ch.nout; /* the scratch handle, when the task has it */
  char *scratch = (int)STARPU_TASK_GET_NBUFFERS(starpu_task_get_current()) > iw ? (char *)STARPU_VECTOR_GET_PTR(buffers[iw]) : NULL;
  /* the scratch space: the inputs' packing space, the outputs', then the products' work space (StarPU keeps it
   * between tasks: no new pages per call) */
  const size_t nin_el = chunks_size(buffers, 1, a->ch.nin), nout_el = chunks_size(buffers, 1 + a->ch.nin, a->ch.nout);
  char *packed_out = NULL;
  if (a->ch.nin != 1) { /* several chunks (or a ghost layer): in place when they lie back to back, else the
                         * task's part of them packed at the start of the scratch space */
    const char *fin = codelet_chunks_flat(buffers, 1, a->ch.nin, el);
    if (!fin) chunks_tail(buffers, 1, a->ch.nin, (size_t)a->in_off, scratch, el);
    in = fin ? fin + (size_t)a->in_off * el : scratch;
  } else {
    in += (size_t)a->in_off * el;
  }
  if (a->ch.nout != 1) { /* the same for the outputs, after the inputs' packing space */
    char *fout = codelet_chunks_flat(buffers, 1 + a->ch.nin, a->ch.nout, el);
    if (!fout) {
      packed_out = scratch + nin_el * el;
      if (a->ch.rw) codelet_chunks_copy(buffers, 1 + a->ch.nin, a->ch.nout, packed_out, el, 0);
    }
    out = fout ? fout : packed_out;
  }
  out += (size_t)a->out_off * el;
  void *work = scratch ? scratch + (nin_el + nout_el) * el : NULL;
  /* a rank's block is one task: its outer indices over the rank's cores (sl_task_threads) */
  const sl_patch_dims *d = &a->d;
  double ops = a->d.ident ? (double)sl_patch_model_size(d) : (double)sl_patch_columns(d) * (double)(d->nop0 * d->nop1) *
                                                             (double)(d->nwin0 * d->nwin1);
  patch_job j = {a, tables, in, out, work, 0};
  sl_parallel_for(sl_task_threads(ops), d->A, patch_slice, &j);
  if (j.failed) sl_async_error(SL_E_NOMEM, "Patch2D/Sliding1D: no work space for the patches' products");
  if (packed_out) codelet_chunks_copy(buffers, 1 + a->ch.nin, a->ch.nout, packed_out, el, 1);
}

#ifdef SL_HAVE_CUDA
static void patch_cuda(void *buffers[], void *arg)
{
  const patch_args *a = arg;
  size_t el = sl_dtype_size(a->dt);
  const void *tables = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
  cudaStream_t s = starpu_cuda_get_local_stream();
  const char *in = (const char *)STARPU_VECTOR_GET_PTR(buffers[1]);
  char *out = (char *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin]) + (size_t)a->out_off * el;
  const int iw = 1 + a->ch.nin + a->ch.nout; /* the scratch handle, when the task has it */
  char *work = (int)STARPU_TASK_GET_NBUFFERS(starpu_task_get_current()) > iw ? (char *)STARPU_VECTOR_GET_PTR(buffers[iw]) : NULL;
  cudaError_t e = cudaSuccess;
  if (a->ch.nin == 2) { /* a chunk and its ghost layer: the task's part of them as one buffer at the start of
                         * the scratch space */
    size_t skip = (size_t)a->in_off * el, at = 0;
    for (int i = 1; i <= 2 && e == cudaSuccess; i++) {
      size_t b = (size_t)STARPU_VECTOR_GET_NX(buffers[i]) * el, from = skip < b ? skip : b;
      if (b > from) e = cudaMemcpyAsync(work + at, (const char *)STARPU_VECTOR_GET_PTR(buffers[i]) + from, b - from, cudaMemcpyDeviceToDevice, s);
      at += b - from;
      skip -= from;
    }
    in = work;
    work += at;
  } else {
    in += (size_t)a->in_off * el;
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
                         int nin, const starpu_data_handle_t *in, int ghost, int nout, const starpu_data_handle_t *out,
                         const codelet_patch_part *part)
{
  const sl_patch_dims *d = dims;
  if (nout == 0) return SL_SUCCESS;
  patch_args *a = calloc(1, sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "Patch2D: out of memory");
  *a = (patch_args){.ch = {nin, nout, part ? part->rw : 0}, .dt = dt, .adjoint = adjoint, .ghost = ghost,
                    .in_off = part ? part->in_off : 0, .out_off = part ? part->out_off : 0, .d = *d};
  double flops = d->ident ? 2.0 * (double)sl_patch_model_size(d) /* a taper and an add per patch sample */
                           : 2.0 * (double)(d->A * d->B * d->nw0 * d->nw1 * d->nwin0 * d->nwin1 * d->nop0 * d->nop1 * d->C) *
                               (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return codelet_chunked_submit_work(&cl_patch, a, sizeof *a, tables, scratch, !d->ident || ghost, in, out, flops, "Patch2D");
}

int64_t codelet_patch_work(const void *dims, int64_t packing, size_t el)
{
  int64_t cpu = kernel_patch_work(dims);
#ifdef SL_HAVE_CUDA
  int64_t cuda = kernel_cuda_patch_work(dims, el);
  return packing + (cuda > cpu ? cuda : cpu);
#else
  return packing + cpu;
#endif
}
