/* NonStationaryConvolve1D's task: the filter table (fixed: sample-major for the CPU, then tap-major for CUDA),
 * a rank's block as its input chunks, the output chunks. One chunk each: the kernel on the buffers; several (the CPU only): packed into one buffer each. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/kernel_nsconv.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

typedef struct nsconv_args {
  codelet_chunks ch;
  sl_dtype dt;
  int adjoint;
  int64_t outer, n, inner, L;
} nsconv_args;

static struct starpu_codelet cl_nsconv;

/* The kernel on one slice of the block's units, for sl_parallel_for. */
typedef struct nsconv_job {
  const nsconv_args *a;
  const void *H, *in;
  void *out;
} nsconv_job;

static void nsconv_slice(int64_t lo, int64_t hi, void *p)
{
  const nsconv_job *j = p;
  const nsconv_args *a = j->a;
  kernel_nsconv_range(a->dt, a->adjoint, a->outer, a->n, a->inner, a->L, j->H, j->in, j->out, lo, hi);
}

/* The block on the rank's cores: it is one task per rank (sl_task_threads). */
static void nsconv_run(const nsconv_args *a, const void *H, const void *in, void *out)
{
  nsconv_job j = {a, H, in, out};
  double work = (double)(a->outer * a->n * a->inner) * (double)a->L;
  sl_parallel_for(sl_task_threads(work), kernel_nsconv_units(a->outer, a->n, a->inner), nsconv_slice, &j);
}

static void nsconv_cpu(void *buffers[], void *arg)
{
  const nsconv_args *a = arg;
  size_t el = sl_dtype_size(a->dt), bytes = (size_t)(a->outer * a->n * a->inner) * el;
  const void *H = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
  if (a->ch.nin == 1 && a->ch.nout == 1) {
    nsconv_run(a, H, (const void *)STARPU_VECTOR_GET_PTR(buffers[1]), (void *)STARPU_VECTOR_GET_PTR(buffers[2]));
    return;
  }
  /* several chunks: in place when they lie back to back, else packed into the worker's scratch buffer (StarPU
   * keeps it between tasks) */
  char *flat = (char *)STARPU_VECTOR_GET_PTR(buffers[1 + a->ch.nin + a->ch.nout]);
  char *fin = codelet_chunks_flat(buffers, 1, a->ch.nin, el), *fout = codelet_chunks_flat(buffers, 1 + a->ch.nin, a->ch.nout, el);
  char *in = fin ? fin : flat, *out = fout ? fout : flat + bytes;
  if (!fin) codelet_chunks_copy(buffers, 1, a->ch.nin, in, el, 0);
  nsconv_run(a, H, in, out);
  if (!fout) codelet_chunks_copy(buffers, 1 + a->ch.nin, a->ch.nout, out, el, 1);
}

#ifdef SL_HAVE_CUDA
static void nsconv_cuda(void *buffers[], void *arg)
{
  const nsconv_args *a = arg;
  const char *H = (const char *)STARPU_VECTOR_GET_PTR(buffers[0]) + (size_t)(a->n * a->L) * sl_dtype_size(a->dt); /* tap-major */
  int rc = kernel_cuda_nsconv(a->dt, a->adjoint, a->outer, a->n, a->inner, a->L, H,
                              (const void *)STARPU_VECTOR_GET_PTR(buffers[1]), (void *)STARPU_VECTOR_GET_PTR(buffers[2]),
                              sl_ctx.set.nsconv_rows, starpu_cuda_get_local_stream());
  if (rc != cudaSuccess) sl_async_error(SL_E_RUNTIME, "NonStationaryConvolve1D (CUDA): %s", cudaGetErrorString((cudaError_t)rc));
}
#endif

void codelet_nsconv_init(void)
{
#ifdef SL_HAVE_CUDA
  codelet_chunked_init(&cl_nsconv, "sl_nsconv", nsconv_cpu, nsconv_cuda);
#else
  codelet_chunked_init(&cl_nsconv, "sl_nsconv", nsconv_cpu, NULL);
#endif
}

int codelet_nsconv_submit(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, starpu_data_handle_t H,
                          starpu_data_handle_t scratch, int nin, const starpu_data_handle_t *in, int nout,
                          const starpu_data_handle_t *out)
{
  if (nout == 0) return SL_SUCCESS;
  nsconv_args *a = malloc(sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "NonStationaryConvolve1D: out of memory");
  *a = (nsconv_args){{nin, nout, 0}, dt, adjoint, outer, n, inner, L};
  double flops = 2.0 * (double)(outer * n * inner) * (double)L * (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return codelet_chunked_submit_scratch(&cl_nsconv, a, sizeof *a, H, scratch, in, out, flops, "NonStationaryConvolve1D");
}
