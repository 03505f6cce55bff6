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
  codelet_chunks ch; /* chunks of the input and of the output */
  sl_dtype dt;
  int adjoint;
  int64_t n; /* selected elements */
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
  int first_in = s->n > 0 ? 1 : 0, first_out = first_in + s->ch.nin;
  if (s->adjoint)
    for (int i = 0; i < s->ch.nout; i++)
      memset((void *)STARPU_VECTOR_GET_PTR(buffers[first_out + i]), 0, (size_t)STARPU_VECTOR_GET_NX(buffers[first_out + i]) * el);
  if (s->ch.nin == 1 && s->ch.nout == 1) { /* contiguous: the kernels */
    const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[first_in]);
    void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[first_out]);
    if (s->adjoint) kernel_scatter_add(s->dt, s->n, idx, in, out);
    else kernel_gather(el, s->n, idx, in, out);
    return;
  }
  for (int64_t k = 0; k < s->n; k++) { /* one element at a time across chunks */
    if (s->adjoint) {
      char *dst = element(buffers, first_out, s->ch.nout, idx[k], el), *src = element(buffers, first_in, s->ch.nin, k, el);
      if (dst && src) kernel_scatter_add(s->dt, 1, (const int64_t[]){0}, src, dst);
    } else {
      char *dst = element(buffers, first_out, s->ch.nout, k, el), *src = element(buffers, first_in, s->ch.nin, idx[k], el);
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
  int first_in = s->n > 0 ? 1 : 0, first_out = first_in + s->ch.nin;
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

#endif

void codelet_select_init(void)
{
#ifdef SL_HAVE_CUDA
  codelet_chunked_init(&cl_select, "sl_select", select_cpu, select_cuda);
#else
  codelet_chunked_init(&cl_select, "sl_select", select_cpu, NULL);
#endif
}

int codelet_select_submit(sl_dtype dt, int adjoint, int64_t n, starpu_data_handle_t idx, int nin,
                          const starpu_data_handle_t *in, int nout, const starpu_data_handle_t *out)
{
  if (nout == 0) return SL_SUCCESS;
  select_args *s = malloc(sizeof *s);
  if (!s) return sl_error(SL_E_NOMEM, "Restriction: out of memory");
  *s = (select_args){{nin, nout, 0}, dt, adjoint, n};
  return codelet_chunked_submit(&cl_select, s, sizeof *s, n > 0 ? 1 : 0, &idx, in, out, 0.0, "Restriction");
}
