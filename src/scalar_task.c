/* Scalar tasks: small CPU tasks that compute on variables of doubles (sl_scalar values, solver states), so
 * the coefficients of a solver's next vector operations are computed on the task graph, not on the host. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "codelets/codelets.h"

struct stask_args {
  sl_stask_fn fn;
  size_t size;
  _Alignas(16) unsigned char arg[];
};

static struct starpu_codelet cl_stask;
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

void sl_stask_init(void)
{
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

int sl_stask_submit(sl_stask_fn fn, const void *arg, size_t size, int n, const starpu_data_handle_t *h,
                    const enum starpu_data_access_mode *modes)
{
  struct stask_args *sa = malloc(sizeof *sa + size);
  if (!sa) return sl_error(SL_E_NOMEM, "scalar task: out of memory");
  sa->fn = fn;
  sa->size = size;
  if (size) memcpy(sa->arg, arg, size);
  struct starpu_task *t = codelet_task_create(n);
  if (!t) {
    free(sa);
    return sl_error(SL_E_NOMEM, "scalar task: out of memory");
  }
  t->cl = &cl_stask;
  t->cl_arg = sa;
  t->cl_arg_size = sizeof *sa + size;
  t->cl_arg_free = 1;
  t->priority = STARPU_MAX_PRIO; /* on the critical path of every iteration */
  for (int i = 0; i < n; i++) {
    STARPU_TASK_SET_HANDLE(t, h[i], i);
    STARPU_TASK_SET_MODE(t, modes[i], i);
  }
  return codelet_task_submit(t);
}
