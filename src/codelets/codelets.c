/* Registration and teardown of every codelet family. */
#include "codelets/codelets.h"

void codelet_reduce_shutdown(void);

int sl_codelets_init(void)
{
  codelet_vec_init();
  codelet_reduce_init();
  return SL_SUCCESS;
}

void sl_codelets_shutdown(void) { codelet_reduce_shutdown(); }

int codelet_task_submit(struct starpu_task *t)
{
  int rc = starpu_task_submit(t);
  if (rc == 0) return SL_SUCCESS;
  starpu_task_destroy(t);
  return sl_error_starpu(rc, "starpu_task_submit", __FILE__, __LINE__);
}
