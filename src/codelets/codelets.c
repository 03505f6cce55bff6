/* Registration and teardown of every codelet family. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"

void codelet_reduce_shutdown(void);

/* Where the compute codelets run (sl_settings_place: the GPUs when a rank has CUDA workers, unless
 * STARLOPS_CODELET_WHERE says otherwise); the combine tasks stay on the CPU. */
uint32_t codelet_where(void) { return sl_ctx.where; }

int sl_codelets_init(void)
{
  if (sl_ctx.set.where == SL_WHERE_CUDA && sl_ctx.ncuda == 0)
    return sl_error(SL_E_BACKEND, "STARLOPS_CODELET_WHERE=cuda, but this rank has no CUDA worker");
  codelet_vec_init();
  codelet_reduce_init();
  codelet_krylov_init();
  codelet_rows_init();
  codelet_matmul_init();
  codelet_select_init();
  codelet_nsconv_init();
  codelet_patch_init();
  codelet_csr_init();
  codelet_stencil_init();
  codelet_stencil_pair_init();
  codelet_fft_init();
  sl_stask_init();
  return SL_SUCCESS;
}

void sl_codelets_shutdown(void)
{
  codelet_reduce_shutdown();
  codelet_fft_shutdown();
  sl_parallel_shutdown();
  sl_stask_shutdown();
}

struct starpu_task *codelet_task_create(int nb)
{
  struct starpu_task *t = starpu_task_create();
  if (!t) return NULL;
  t->nbuffers = nb;
  if (nb > STARPU_NMAXBUFS) {
    t->dyn_handles = malloc(sizeof(starpu_data_handle_t) * (size_t)nb);
    t->dyn_modes = malloc(sizeof(enum starpu_data_access_mode) * (size_t)nb);
    if (!t->dyn_handles || !t->dyn_modes) {
      starpu_task_destroy(t); /* frees what was allocated */
      return NULL;
    }
  }
  return t;
}

int codelet_task_submit(struct starpu_task *t)
{
  if (sl_ctx.tracing) t->tag_id = sl_trace_tag; /* block coordinates for the trace (use_tag stays 0) */
  int rc = starpu_task_submit(t);
  if (rc == 0) return SL_SUCCESS;
  t->destroy = 0; /* a task StarPU did not take is ours to free */
  starpu_task_destroy(t);
  return sl_error_starpu(rc, "starpu_task_submit", __FILE__, __LINE__);
}
