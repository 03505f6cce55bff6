/* The stencil codelet: one task per output chunk, reading the input chunks its rows reach (any number: past
 * StarPU's STARPU_NMAXBUFS the task's handles are dynamic arrays) and, only near the block's ends along the
 * distributed axis, the ghost planes; so the interior tasks run while the boundary planes are exchanged. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/kernel_stencil.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

typedef struct {
  st_plan plan;
  int single;
  int has_lo, has_hi;
  int nin;
  int64_t start[ST_MAX_SEGS]; /* first element of each input chunk */
  int64_t s, e;               /* the output chunk's elements */
} stencil_args;

static struct starpu_codelet cl_stencil;
static struct starpu_perfmodel pm_stencil = {.type = STARPU_HISTORY_BASED, .symbol = "sl_stencil"};

/* Buffers: [ghost lo] [ghost hi] inputs... output. */
static void *unpack(void *buffers[], const stencil_args *a, st_input *in)
{
  memset(in, 0, sizeof *in);
  int i = 0;
  if (a->has_lo) in->glo = (const void *)STARPU_VECTOR_GET_PTR(buffers[i++]);
  if (a->has_hi) in->ghi = (const void *)STARPU_VECTOR_GET_PTR(buffers[i++]);
  in->nseg = a->nin;
  for (int k = 0; k < a->nin; k++, i++) {
    in->start[k] = a->start[k];
    in->len[k] = (int64_t)STARPU_VECTOR_GET_NX(buffers[i]);
    in->ptr[k] = (const void *)STARPU_VECTOR_GET_PTR(buffers[i]);
  }
  return (void *)STARPU_VECTOR_GET_PTR(buffers[i]);
}

static void stencil_cpu(void *buffers[], void *cl_arg)
{
  const stencil_args *a = cl_arg;
  st_input in;
  void *y = unpack(buffers, a, &in);
  if (kernel_stencil(&a->plan, a->single, &in, a->s, a->e, y) != 0)
    sl_async_error(SL_E_RUNTIME, "sl_stencil: an input element is in none of the task's chunks");
}

#ifdef SL_HAVE_CUDA
static void stencil_cuda(void *buffers[], void *cl_arg)
{
  const stencil_args *a = cl_arg;
  st_input in;
  void *y = unpack(buffers, a, &in);
  int rc = kernel_cuda_stencil(&a->plan, a->single, &in, a->s, a->e, y, starpu_cuda_get_local_stream());
  if (rc != cudaSuccess) sl_async_error(SL_E_RUNTIME, "sl_stencil (CUDA): %s", cudaGetErrorString((cudaError_t)rc));
}
#endif

void codelet_stencil_init(void)
{
  starpu_codelet_init(&cl_stencil);
  cl_stencil.name = "sl_stencil";
  cl_stencil.cpu_funcs[0] = stencil_cpu;
  cl_stencil.cpu_funcs_name[0] = "stencil_cpu";
#ifdef SL_HAVE_CUDA
  cl_stencil.cuda_funcs[0] = stencil_cuda;
  cl_stencil.cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
  cl_stencil.where = codelet_where();
  cl_stencil.nbuffers = STARPU_VARIABLE_NBUFFERS;
  cl_stencil.model = &pm_stencil;
}

int codelet_stencil_submit(const void *plan_, sl_dtype dt, starpu_data_handle_t glo, starpu_data_handle_t ghi,
                           int nin, const starpu_data_handle_t *in, const int64_t *start, starpu_data_handle_t out,
                           int64_t s, int64_t e)
{
  const st_plan *plan = plan_;
  if (nin > ST_MAX_SEGS) return sl_error(SL_E_INVALID, "sl_stencil: a task would read %d chunks (at most %d)", nin, ST_MAX_SEGS);
  stencil_args *a = calloc(1, sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "sl_stencil: out of memory");
  a->plan = *plan;
  st_plan_finish(&a->plan);
  a->single = dt == SL_FLOAT32 || dt == SL_COMPLEX64;
  a->has_lo = glo != NULL;
  a->has_hi = ghi != NULL;
  a->nin = nin;
  memcpy(a->start, start, sizeof(int64_t) * (size_t)nin);
  a->s = s;
  a->e = e;
  int nb = a->has_lo + a->has_hi + nin + 1, i = 0;
  struct starpu_task *t = codelet_task_create(nb);
  if (!t) {
    free(a);
    return sl_error(SL_E_NOMEM, "sl_stencil: out of memory");
  }
  t->cl = &cl_stencil;
  t->cl_arg = a;
  t->cl_arg_size = sizeof *a;
  t->cl_arg_free = 1;
  starpu_data_handle_t reads[2 + ST_MAX_SEGS];
  int nr = 0;
  if (glo) reads[nr++] = glo;
  if (ghi) reads[nr++] = ghi;
  for (int k = 0; k < nin; k++) reads[nr++] = in[k];
  for (; i < nr; i++) {
    STARPU_TASK_SET_HANDLE(t, reads[i], i);
    STARPU_TASK_SET_MODE(t, STARPU_R, i);
  }
  STARPU_TASK_SET_HANDLE(t, out, i);
  STARPU_TASK_SET_MODE(t, STARPU_W, i);
  t->flops = (double)(e - s) * plan->ncomp * 5.0 * plan->nterms;
  return codelet_task_submit(t);
}
