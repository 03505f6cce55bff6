/* The codelets that read an operator's own data (fixed handles), read the chunks of an input array and
 * write the chunks of an output array (MatrixMult/Fredholm1, CSR, Restriction) share one task layout
 * (fixed, inputs, outputs), one CUDA restriction (one chunk per side) and one packing of split chunks. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"

void codelet_chunks_copy(void *buffers[], int first, int n, void *flat, size_t el, int to_chunks)
{
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    size_t bytes = (size_t)STARPU_VECTOR_GET_NX(buffers[first + i]) * el;
    void *p = (void *)STARPU_VECTOR_GET_PTR(buffers[first + i]);
    if (to_chunks) memcpy(p, (char *)flat + off, bytes);
    else memcpy((char *)flat + off, p, bytes);
    off += bytes;
  }
}

void *codelet_chunks_flat(void *buffers[], int first, int n, size_t el)
{
  char *start = NULL, *next = NULL;
  for (int i = 0; i < n; i++) {
    size_t bytes = (size_t)STARPU_VECTOR_GET_NX(buffers[first + i]) * el;
    char *p = (char *)STARPU_VECTOR_GET_PTR(buffers[first + i]);
    if (bytes == 0) continue; /* an empty chunk has no place */
    if (!start) start = p;
    else if (p != next) return NULL;
    next = p + bytes;
  }
  return start;
}

#ifdef SL_HAVE_CUDA
/* The CUDA implementations take one chunk of input (or none) and one of output. With the compute codelets
 * forced onto CUDA (STARLOPS_CODELET_WHERE=cuda), the CPUs take only the tasks CUDA cannot. */
static int one_chunk_each(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
  const codelet_chunks *c = task->cl_arg;
  int cuda_can = c->nin <= 1 && c->nout == 1;
  if (starpu_worker_get_type((int)workerid) == STARPU_CUDA_WORKER) return cuda_can;
  return !(codelet_where() == STARPU_CUDA && cuda_can);
}
#endif

void codelet_chunked_init(struct starpu_codelet *cl, const char *name, starpu_cpu_func_t cpu, starpu_cuda_func_t cuda)
{
  starpu_codelet_init(cl);
  cl->name = name;
  cl->cpu_funcs[0] = cpu;
#ifdef SL_HAVE_CUDA
  cl->cuda_funcs[0] = cuda;
  cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
  cl->can_execute = one_chunk_each;
#endif
  cl->where = codelet_where() | STARPU_CPU; /* the CPU fallback of the multi-chunk tasks */
  cl->nbuffers = STARPU_VARIABLE_NBUFFERS;
}

/* The task: nfixed read handles, the input chunks (read), the output chunks (written; read and written when
 * the arguments' rw is set), and, when scratch is
 * given and a side has several chunks (or always), the scratch handle (the worker's packing and work space). */
static int submit(struct starpu_codelet *cl, void *args, size_t args_size, int nfixed, const starpu_data_handle_t *fixed,
                  starpu_data_handle_t scratch, int always, const starpu_data_handle_t *in, const starpu_data_handle_t *out,
                  double flops, const char *what)
{
  const codelet_chunks *c = args;
  int packed = scratch && (always || c->nin > 1 || c->nout > 1);
  struct starpu_task *t = codelet_task_create(nfixed + c->nin + c->nout + packed);
  if (!t) {
    free(args);
    return sl_error(SL_E_NOMEM, "%s: out of memory", what);
  }
  t->cl = cl;
  t->cl_arg = args;
  t->cl_arg_size = args_size;
  t->cl_arg_free = 1;
  t->flops = flops;
  int i = 0;
  for (int j = 0; j < nfixed; j++, i++) {
    STARPU_TASK_SET_HANDLE(t, fixed[j], i);
    STARPU_TASK_SET_MODE(t, STARPU_R, i);
  }
  for (int j = 0; j < c->nin; j++, i++) {
    STARPU_TASK_SET_HANDLE(t, in[j], i);
    STARPU_TASK_SET_MODE(t, STARPU_R, i);
  }
  for (int j = 0; j < c->nout; j++, i++) {
    STARPU_TASK_SET_HANDLE(t, out[j], i);
    STARPU_TASK_SET_MODE(t, c->rw ? STARPU_RW : STARPU_W, i);
  }
  if (packed) {
    STARPU_TASK_SET_HANDLE(t, scratch, i);
    STARPU_TASK_SET_MODE(t, STARPU_SCRATCH, i);
  }
  return codelet_task_submit(t);
}

int codelet_chunked_submit(struct starpu_codelet *cl, void *args, size_t args_size, int nfixed,
                           const starpu_data_handle_t *fixed, const starpu_data_handle_t *in,
                           const starpu_data_handle_t *out, double flops, const char *what)
{
  return submit(cl, args, args_size, nfixed, fixed, NULL, 0, in, out, flops, what);
}

int codelet_chunked_submit_scratch(struct starpu_codelet *cl, void *args, size_t args_size, starpu_data_handle_t fixed,
                                   starpu_data_handle_t scratch, const starpu_data_handle_t *in,
                                   const starpu_data_handle_t *out, double flops, const char *what)
{
  return submit(cl, args, args_size, fixed ? 1 : 0, &fixed, scratch, 0, in, out, flops, what);
}

int codelet_chunked_submit_work(struct starpu_codelet *cl, void *args, size_t args_size, starpu_data_handle_t fixed,
                                starpu_data_handle_t work, int always, const starpu_data_handle_t *in,
                                const starpu_data_handle_t *out, double flops, const char *what)
{
  return submit(cl, args, args_size, fixed ? 1 : 0, &fixed, work, always, in, out, flops, what);
}
