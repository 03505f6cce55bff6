/* Restriction's task: forward y = x[idx], adjoint x = 0 then x[idx] += y, on a rank's local block given as
 * its chunks. The CPU version maps each index to its chunk; the CUDA version takes one chunk per side
 * (can_execute), like MatrixMult's. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/kernel_select.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

typedef struct select_args {
  sl_dtype dt;
  int adjoint;
  int64_t n; /* selected elements */
  int nin, nout;
} select_args;

static struct starpu_codelet cl_select;

/* Element pos of the logical vector made of buffers[first..first+nb). */
static char *element(void *buffers[], int first, int nb, int64_t pos, size_t el)
{
  for (int i = 0; i < nb; i++) {
    int64_t nx = (int64_t)STARPU_VECTOR_GET_NX(buffers[first + i]);
    if (pos < nx) return (char *)STARPU_VECTOR_GET_PTR(buffers[first + i]) + (size_t)pos * el;
    pos -= nx;
  }
  return NULL;
}

static void select_cpu(void *buffers[], void *arg)
{
  const select_args *s = arg;
  size_t el = sl_dtype_size(s->dt);
  const int64_t *idx = s->n > 0 ? (const int64_t *)STARPU_VECTOR_GET_PTR(buffers[0]) : NULL;
  int first_in = s->n > 0 ? 1 : 0, first_out = first_in + s->nin;
  if (s->adjoint)
    for (int i = 0; i < s->nout; i++)
      memset((void *)STARPU_VECTOR_GET_PTR(buffers[first_out + i]), 0, (size_t)STARPU_VECTOR_GET_NX(buffers[first_out + i]) * el);
  if (s->nin == 1 && s->nout == 1) { /* contiguous: the kernels */
    const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[first_in]);
    void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[first_out]);
    if (s->adjoint) kernel_scatter_add(s->dt, s->n, idx, in, out);
    else kernel_gather(el, s->n, idx, in, out);
    return;
  }
  for (int64_t k = 0; k < s->n; k++) { /* one element at a time across chunks */
    if (s->adjoint) {
      char *dst = element(buffers, first_out, s->nout, idx[k], el), *src = element(buffers, first_in, s->nin, k, el);
      if (dst && src) kernel_scatter_add(s->dt, 1, (const int64_t[]){0}, src, dst);
    } else {
      char *dst = element(buffers, first_out, s->nout, k, el), *src = element(buffers, first_in, s->nin, idx[k], el);
      if (dst && src) memcpy(dst, src, el);
    }
  }
}

#ifdef SL_HAVE_CUDA
static void select_cuda(void *buffers[], void *arg)
{
  const select_args *s = arg;
  cudaStream_t st = starpu_cuda_get_local_stream();
  size_t el = sl_dtype_size(s->dt);
  int first_in = s->n > 0 ? 1 : 0, first_out = first_in + s->nin;
  void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[first_out]);
  int rc = cudaSuccess;
  if (s->adjoint) rc = cudaMemsetAsync(out, 0, (size_t)STARPU_VECTOR_GET_NX(buffers[first_out]) * el, st);
  if (rc == cudaSuccess && s->n > 0) {
    const int64_t *idx = (const int64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[first_in]);
    rc = s->adjoint ? kernel_cuda_scatter_add(s->dt, s->n, idx, in, out, st) : kernel_cuda_gather(el, s->n, idx, in, out, st);
  }
  if (rc != cudaSuccess) sl_async_error(SL_E_RUNTIME, "Restriction (CUDA): %s", cudaGetErrorString((cudaError_t)rc));
}

static int select_can_execute(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
  const select_args *s = task->cl_arg;
  if (starpu_worker_get_type((int)workerid) != STARPU_CUDA_WORKER) return 1;
  return s->nin <= 1 && s->nout == 1;
}
#endif

void codelet_select_init(void)
{
  starpu_codelet_init(&cl_select);
  cl_select.name = "sl_select";
  cl_select.cpu_funcs[0] = select_cpu;
#ifdef SL_HAVE_CUDA
  cl_select.cuda_funcs[0] = select_cuda;
  cl_select.cuda_flags[0] = STARPU_CUDA_ASYNC;
  cl_select.can_execute = select_can_execute;
#endif
  cl_select.where = codelet_where();
  cl_select.nbuffers = STARPU_VARIABLE_NBUFFERS;
}

int codelet_select_submit(sl_dtype dt, int adjoint, int64_t n, starpu_data_handle_t idx, int nin,
                          const starpu_data_handle_t *in, int nout, const starpu_data_handle_t *out)
{
  if (nout == 0) return SL_SUCCESS;
  int nb = (n > 0 ? 1 : 0) + nin + nout;
  select_args *s = malloc(sizeof *s);
  struct starpu_task *t = s ? codelet_task_create(nb) : NULL;
  if (!t) {
    free(s);
    return sl_error(SL_E_NOMEM, "Restriction: out of memory");
  }
  *s = (select_args){dt, adjoint, n, nin, nout};
  t->cl = &cl_select;
  t->cl_arg = s;
  t->cl_arg_size = sizeof *s;
  t->cl_arg_free = 1;
  int i = 0;
  if (n > 0) {
    STARPU_TASK_SET_HANDLE(t, idx, i);
    STARPU_TASK_SET_MODE(t, STARPU_R, i++);
  }
  for (int j = 0; j < nin; j++) {
    STARPU_TASK_SET_HANDLE(t, in[j], i);
    STARPU_TASK_SET_MODE(t, STARPU_R, i++);
  }
  for (int j = 0; j < nout; j++) {
    STARPU_TASK_SET_HANDLE(t, out[j], i);
    STARPU_TASK_SET_MODE(t, STARPU_W, i++);
  }
  return codelet_task_submit(t);
}
