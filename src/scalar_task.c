/* Scalar tasks: small tasks that compute on variables of doubles (sl_scalar values, solver states), so the
 * coefficients of a solver's next vector operations are computed on the task graph, not on the host. Any
 * function runs on a CPU worker (sl_stask_submit); the steps of solvers/solver_prog.h also run on a CUDA
 * worker (sl_prog_submit), one GPU thread, so a solve on the GPU keeps its scalars there. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "codelets/codelets.h"
#include "solvers/solver_internal.h"

struct stask_args {
  sl_stask_fn fn;
  size_t size;
  _Alignas(16) unsigned char arg[];
};

static struct starpu_codelet cl_stask, cl_prog;

struct prog_args {
  int p;
  sl_prog_arg a;
};
static double one_value[SL_ONE_DOUBLES];
static starpu_data_handle_t one_handle;

static void stask_cpu(void *buffers[], void *cl_arg)
{
  const struct stask_args *sa = cl_arg;
  int nb = STARPU_TASK_GET_NBUFFERS(starpu_task_get_current());
  double *v[nb > 0 ? nb : 1];
  for (int i = 0; i < nb; i++) v[i] = (double *)STARPU_VARIABLE_GET_PTR(buffers[i]);
  sa->fn(v, sa->size ? sa->arg : NULL);
}

static int prog_buffers(void *buffers[], double **v)
{
  int nb = STARPU_TASK_GET_NBUFFERS(starpu_task_get_current());
  for (int i = 0; i < nb && i < SL_PROG_MAXBUF; i++) v[i] = (double *)STARPU_VARIABLE_GET_PTR(buffers[i]);
  return nb < SL_PROG_MAXBUF ? nb : SL_PROG_MAXBUF;
}

static void prog_cpu(void *buffers[], void *cl_arg)
{
  const struct prog_args *pa = cl_arg;
  double *v[SL_PROG_MAXBUF] = {NULL};
  prog_buffers(buffers, v);
  sl_prog_run(pa->p, v, pa->a);
}

#ifdef SL_HAVE_CUDA
static void prog_cuda(void *buffers[], void *cl_arg)
{
  const struct prog_args *pa = cl_arg;
  double *v[SL_PROG_MAXBUF] = {NULL};
  int n = prog_buffers(buffers, v);
  int rc = kernel_cuda_prog(pa->p, v, n, pa->a, starpu_cuda_get_local_stream());
  if (rc != 0) sl_async_error(SL_E_RUNTIME, "solver step %d (CUDA): error %d", pa->p, rc);
}
#endif

void sl_stask_init(void)
{
  starpu_codelet_init(&cl_prog);
  cl_prog.name = "sl_scalar";
  cl_prog.cpu_funcs[0] = prog_cpu;
  cl_prog.cpu_funcs_name[0] = "prog_cpu";
#ifdef SL_HAVE_CUDA
  cl_prog.cuda_funcs[0] = prog_cuda;
  cl_prog.cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
  cl_prog.nbuffers = STARPU_VARIABLE_NBUFFERS;
  cl_prog.where = STARPU_CPU | STARPU_CUDA;
  starpu_codelet_init(&cl_stask);
  cl_stask.name = "sl_scalar";
  cl_stask.cpu_funcs[0] = stask_cpu;
  cl_stask.cpu_funcs_name[0] = "stask_cpu";
  cl_stask.nbuffers = STARPU_VARIABLE_NBUFFERS;
  cl_stask.where = STARPU_CPU;
  for (int i = 0; i < SL_ONE_DOUBLES; i += 2) one_value[i] = 1.0;
  starpu_variable_data_register(&one_handle, STARPU_MAIN_RAM, (uintptr_t)one_value, sizeof one_value);
}

void sl_stask_shutdown(void)
{
  if (one_handle) starpu_data_unregister(one_handle);
  one_handle = NULL;
}

starpu_data_handle_t sl_one_handle(void) { return one_handle; }

/* Submits a scalar task of codelet cl with its argument block (malloc'ed, freed with the task) on the n
 * handles h, where: the workers it may run on. */
static int submit(struct starpu_codelet *cl, void *arg, size_t size, uint32_t where, int n, const starpu_data_handle_t *h,
                  const enum starpu_data_access_mode *modes)
{
  struct starpu_task *t = arg ? codelet_task_create(n) : NULL;
  if (!t) {
    free(arg);
    return sl_error(SL_E_NOMEM, "%s: out of memory", cl->name);
  }
  t->cl = cl;
  t->cl_arg = arg;
  t->cl_arg_size = size;
  t->cl_arg_free = 1;
  t->priority = STARPU_MAX_PRIO; /* on the critical path of every iteration */
  t->where = (int32_t)where;
  for (int i = 0; i < n; i++) {
    STARPU_TASK_SET_HANDLE(t, h[i], i);
    STARPU_TASK_SET_MODE(t, modes[i], i);
  }
  return codelet_task_submit(t);
}

int sl_stask_submit(sl_stask_fn fn, const void *arg, size_t size, int n, const starpu_data_handle_t *h,
                    const enum starpu_data_access_mode *modes)
{
  struct stask_args *sa = malloc(sizeof *sa + size);
  if (sa) {
    sa->fn = fn;
    sa->size = size;
    if (size) memcpy(sa->arg, arg, size);
  }
  return submit(&cl_stask, sa, sizeof *sa + size, STARPU_CPU, n, h, modes);
}

int sl_prog_submit(int on_device, int p, sl_prog_arg a, int n, const starpu_data_handle_t *h,
                   const enum starpu_data_access_mode *modes)
{
  struct prog_args *pa = malloc(sizeof *pa);
  if (pa) *pa = (struct prog_args){p, a};
#ifdef SL_HAVE_CUDA
  uint32_t where = on_device && sl_ctx.ncuda > 0 ? STARPU_CUDA : STARPU_CPU;
#else
  (void)on_device;
  uint32_t where = STARPU_CPU;
#endif
  return submit(&cl_prog, pa, sizeof *pa, where, n, h, modes);
}
