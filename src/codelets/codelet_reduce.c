/* Codelets of the reductions: a partial per chunk (CPU or CUDA), then one CPU task that combines the
 * partials into the scalar; the array layer then allreduces the scalar through the comm layer and, for
 * p-norms, takes the root in one more small task. A partial (or the scalar, for one chunk) that the host or a
 * CPU task reads next is written in main memory even by a CUDA task, which copies it there on its stream. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"

struct reduce_args {
  sl_dtype dt;
  sl_red_kind k;
  double p, root_p;
};

struct combine_args {
  sl_red_kind k;
  double root_p;
};

/* [host][two]: host 1, the result in main memory (see reduce_cuda); 0, where the task runs */
static struct starpu_codelet cl_reduce[2][2], cl_combine, cl_root;
static struct starpu_perfmodel pm_reduce = {.type = STARPU_HISTORY_BASED, .symbol = "sl_reduce"};
static starpu_data_handle_t scratch; /* device workspace of the CUDA reductions */

/* The buffers of a partial reduction: x, [y], partial, scratch. */
struct reduce_bufs {
  int64_t n;
  const void *x, *y;
  double *out, *work;
};

static struct reduce_bufs unpack(void *buffers[], const struct reduce_args *ra)
{
  int two = ra->k == SL_RED_DOT || ra->k == SL_RED_VDOT;
  return (struct reduce_bufs){
    .n = (int64_t)STARPU_VECTOR_GET_NX(buffers[0]),
    .x = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]),
    .y = two ? (const void *)STARPU_VECTOR_GET_PTR(buffers[1]) : NULL,
    .out = (double *)STARPU_VARIABLE_GET_PTR(buffers[two ? 2 : 1]),
    .work = (double *)STARPU_VECTOR_GET_PTR(buffers[two ? 3 : 2]),
  };
}

static void take_root(double root_p, double *v)
{
  if (root_p == 2.0) v[0] = sqrt(v[0]);
  else if (root_p != 0.0 && root_p != 1.0) v[0] = pow(v[0], 1.0 / root_p);
}

static void reduce_cpu(void *buffers[], void *cl_arg)
{
  const struct reduce_args *ra = cl_arg;
  struct reduce_bufs b = unpack(buffers, ra);
  kernel_reduce(ra->dt, ra->k, b.n, b.x, b.y, ra->p, b.out);
  take_root(ra->root_p, b.out);
}

#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
/* The result on the device (reduce_cuda), or in main memory (reduce_cuda_host: the codelet's specific node),
 * summed into the scratch's last two doubles and copied on the worker's stream, so the task ends with the value
 * on the host. */
static void reduce_into(void *buffers[], const struct reduce_args *ra, int host)
{
  struct reduce_bufs b = unpack(buffers, ra);
  cudaStream_t st = starpu_cuda_get_local_stream();
  double *dev = host ? b.work + SL_CUDA_REDUCE_SCRATCH_DOUBLES : b.out;
  int rc = kernel_cuda_reduce(ra->dt, ra->k, b.n, b.x, b.y, ra->p, ra->root_p, b.work, dev, st);
  if (rc == cudaSuccess && host) rc = cudaMemcpyAsync(b.out, dev, 2 * sizeof(double), cudaMemcpyDeviceToHost, st);
  if (rc != cudaSuccess) sl_async_error(SL_E_RUNTIME, "sl_reduce (CUDA): %s", cudaGetErrorString((cudaError_t)rc));
}
static void reduce_cuda(void *buffers[], void *cl_arg) { reduce_into(buffers, cl_arg, 0); }
static void reduce_cuda_host(void *buffers[], void *cl_arg) { reduce_into(buffers, cl_arg, 1); }
#endif

static void combine_cpu(void *buffers[], void *cl_arg)
{
  const struct combine_args *ca = cl_arg;
  struct starpu_task *task = starpu_task_get_current();
  int nb = STARPU_TASK_GET_NBUFFERS(task);
  double *out = (double *)STARPU_VARIABLE_GET_PTR(buffers[0]); /* scalar, partials... */
  double acc[2];
  sl_red_identity(ca->k, acc);
  for (int i = 1; i < nb; i++) sl_red_combine(ca->k, acc, (const double *)STARPU_VARIABLE_GET_PTR(buffers[i]));
  take_root(ca->root_p, acc);
  out[0] = acc[0];
  out[1] = acc[1];
}

static void root_cpu(void *buffers[], void *cl_arg)
{
  const struct combine_args *ca = cl_arg;
  take_root(ca->root_p, (double *)STARPU_VARIABLE_GET_PTR(buffers[0]));
}

static void init_combine(struct starpu_codelet *cl, const char *name)
{
  starpu_codelet_init(cl);
  cl->name = name;
  cl->cpu_funcs[0] = combine_cpu;
  cl->nbuffers = STARPU_VARIABLE_NBUFFERS;
}

void codelet_reduce_init(void)
{
  for (int h = 0; h < 2; h++)
  for (int i = 0; i < 2; i++) {
    struct starpu_codelet *cl = &cl_reduce[h][i];
    starpu_codelet_init(cl);
    cl->name = "sl_reduce";
    cl->cpu_funcs[0] = reduce_cpu;
#ifdef SL_HAVE_CUDA
    cl->cuda_funcs[0] = h ? reduce_cuda_host : reduce_cuda;
    cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
    cl->model = &pm_reduce;
    cl->where = codelet_where();
    int nb = 0;
    for (int j = 0; j <= i; j++) cl->modes[nb++] = STARPU_R;
    cl->modes[nb++] = STARPU_W;
    cl->modes[nb++] = STARPU_SCRATCH;
    cl->nbuffers = nb;
#ifdef SL_HAVE_CUDA
    if (h) { /* the result in main memory wherever the task runs */
      cl->specific_nodes = 1;
      for (int j = 0; j < nb; j++) cl->nodes[j] = STARPU_SPECIFIC_NODE_LOCAL;
      cl->nodes[nb - 2] = STARPU_SPECIFIC_NODE_CPU;
    }
#endif
  }
  init_combine(&cl_combine, "sl_combine");
  starpu_codelet_init(&cl_root);
  cl_root.name = "sl_root";
  cl_root.cpu_funcs[0] = root_cpu;
  cl_root.nbuffers = 1;
  cl_root.modes[0] = STARPU_RW;
  /* the blocks' partial sums, then the result before its copy to the host */
  starpu_vector_data_register(&scratch, -1, 0, SL_CUDA_REDUCE_SCRATCH_DOUBLES + 2, sizeof(double));
}

starpu_data_handle_t codelet_reduce_scratch(void) { return scratch; }

void codelet_reduce_shutdown(void)
{
  if (scratch) starpu_data_unregister(scratch);
  scratch = NULL;
}

int codelet_reduce_submit(sl_dtype dt, sl_red_kind k, double p, double root_p, starpu_data_handle_t x,
                          starpu_data_handle_t y, starpu_data_handle_t partial, int host)
{
  struct reduce_args *ra = malloc(sizeof *ra);
  if (!ra) return sl_error(SL_E_NOMEM, "reduction: out of memory");
  *ra = (struct reduce_args){dt, k, p, root_p};
  int two = k == SL_RED_DOT || k == SL_RED_VDOT;
  struct starpu_task *t = starpu_task_create();
  t->cl = &cl_reduce[host != 0][two];
  t->cl_arg = ra;
  t->cl_arg_size = sizeof *ra;
  t->cl_arg_free = 1;
  int i = 0;
  STARPU_TASK_SET_HANDLE(t, x, i++);
  if (two) STARPU_TASK_SET_HANDLE(t, y, i++);
  STARPU_TASK_SET_HANDLE(t, partial, i++);
  STARPU_TASK_SET_HANDLE(t, scratch, i++);
  t->flops = (double)starpu_vector_get_nx(x) * (two ? 2.0 : 1.0) * (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return codelet_task_submit(t);
}

int codelet_combine_submit(sl_red_kind k, double root_p, int nparts, const starpu_data_handle_t *parts,
                           starpu_data_handle_t scalar)
{
  int nb = nparts + 1;
  struct combine_args *ca = malloc(sizeof *ca);
  struct starpu_task *t = ca ? codelet_task_create(nb) : NULL;
  if (!t) {
    free(ca);
    return sl_error(SL_E_NOMEM, "reduction: out of memory");
  }
  *ca = (struct combine_args){k, root_p};
  t->cl = &cl_combine;
  t->cl_arg = ca;
  t->cl_arg_size = sizeof *ca;
  t->cl_arg_free = 1;
  STARPU_TASK_SET_HANDLE(t, scalar, 0);
  STARPU_TASK_SET_MODE(t, STARPU_W, 0);
  for (int j = 0; j < nparts; j++) {
    STARPU_TASK_SET_HANDLE(t, parts[j], j + 1);
    STARPU_TASK_SET_MODE(t, STARPU_R, j + 1);
  }
  return codelet_task_submit(t);
}

int codelet_root_submit(double root_p, starpu_data_handle_t scalar)
{
  if (root_p == 0.0 || root_p == 1.0) return SL_SUCCESS;
  struct combine_args *ca = malloc(sizeof *ca);
  struct starpu_task *t = ca ? starpu_task_create() : NULL;
  if (!t) {
    free(ca);
    return sl_error(SL_E_NOMEM, "reduction: out of memory");
  }
  *ca = (struct combine_args){SL_RED_SUM, root_p};
  t->cl = &cl_root;
  t->cl_arg = ca;
  t->cl_arg_size = sizeof *ca;
  t->cl_arg_free = 1;
  t->handles[0] = scalar;
  return codelet_task_submit(t);
}
