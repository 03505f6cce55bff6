/* Two stencil sums in one task: t = first x, then y = second t, on one chunk per block with no ghost planes
 * (a product of stencil operators such as L^H L on a GPU node, where arrays are one chunk per block): one task
 * instead of two, so an iteration of a solver on the product waits for one dispatch less. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/kernel_stencil.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

typedef struct {
  st_plan first, second;
  int single;
  int64_t n; /* elements of the block */
} pair_args;

static struct starpu_codelet cl_pair;
static struct starpu_perfmodel pm_pair = {.type = STARPU_HISTORY_BASED, .symbol = "sl_stencil_pair"};

/* One segment: the whole block at p. */
static void whole(st_input *in, const void *p, int64_t n)
{
  memset(in, 0, sizeof *in);
  in->nseg = 1;
  in->len[0] = n;
  in->ptr[0] = p;
}

/* Buffers: x (read), t (written, then read), y (written). */
static void unpack(void *buffers[], void **x, void **t, void **y)
{
  *x = (void *)STARPU_VECTOR_GET_PTR(buffers[0]);
  *t = (void *)STARPU_VECTOR_GET_PTR(buffers[1]);
  *y = (void *)STARPU_VECTOR_GET_PTR(buffers[2]);
}

static void pair_cpu(void *buffers[], void *cl_arg)
{
  const pair_args *a = cl_arg;
  void *x, *t, *y;
  unpack(buffers, &x, &t, &y);
  st_input in;
  whole(&in, x, a->n);
  int rc = kernel_stencil(&a->first, a->single, &in, 0, a->n, t);
  whole(&in, t, a->n);
  if (rc == 0) rc = kernel_stencil(&a->second, a->single, &in, 0, a->n, y);
  if (rc != 0) sl_async_error(SL_E_RUNTIME, "sl_stencil_pair: an input element is in no chunk");
}

#ifdef SL_HAVE_CUDA
static void pair_cuda(void *buffers[], void *cl_arg)
{
  const pair_args *a = cl_arg;
  void *x, *t, *y;
  unpack(buffers, &x, &t, &y);
  st_input in;
  whole(&in, x, a->n);
  int rc = kernel_cuda_stencil(&a->first, a->single, &in, 0, a->n, t, starpu_cuda_get_local_stream());
  whole(&in, t, a->n);
  if (rc == cudaSuccess) rc = kernel_cuda_stencil(&a->second, a->single, &in, 0, a->n, y, starpu_cuda_get_local_stream());
  if (rc != cudaSuccess) sl_async_error(SL_E_RUNTIME, "sl_stencil_pair (CUDA): %s", cudaGetErrorString((cudaError_t)rc));
}
#endif

void codelet_stencil_pair_init(void)
{
  starpu_codelet_init(&cl_pair);
  cl_pair.name = "sl_stencil_pair";
  cl_pair.cpu_funcs[0] = pair_cpu;
  cl_pair.cpu_funcs_name[0] = "pair_cpu";
#ifdef SL_HAVE_CUDA
  cl_pair.cuda_funcs[0] = pair_cuda;
  cl_pair.cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
  cl_pair.where = codelet_where();
  cl_pair.nbuffers = 3;
  cl_pair.modes[0] = STARPU_R;
  cl_pair.modes[1] = STARPU_W;
  cl_pair.modes[2] = STARPU_W;
  cl_pair.model = &pm_pair;
}

int codelet_stencil_pair_submit(const void *first, const void *second, sl_dtype dt, starpu_data_handle_t x,
                                starpu_data_handle_t t, starpu_data_handle_t y, int64_t n)
{
  pair_args *a = calloc(1, sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "sl_stencil_pair: out of memory");
  a->first = *(const st_plan *)first;
  a->second = *(const st_plan *)second;
  st_plan_finish(&a->first);
  st_plan_finish(&a->second);
  a->single = dt == SL_FLOAT32 || dt == SL_COMPLEX64;
  a->n = n;
  struct starpu_task *task = codelet_task_create(3);
  if (!task) {
    free(a);
    return sl_error(SL_E_NOMEM, "sl_stencil_pair: out of memory");
  }
  task->cl = &cl_pair;
  task->cl_arg = a;
  task->cl_arg_size = sizeof *a;
  task->cl_arg_free = 1;
  STARPU_TASK_SET_HANDLE(task, x, 0);
  STARPU_TASK_SET_HANDLE(task, t, 1);
  STARPU_TASK_SET_HANDLE(task, y, 2);
  task->flops = (double)n * a->first.ncomp * 5.0 * (a->first.nterms + a->second.nterms);
  return codelet_task_submit(task);
}
