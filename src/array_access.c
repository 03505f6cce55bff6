/* Host access to an array's local block and ghost layers (waits for the tasks that write them). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static enum starpu_data_access_mode starpu_mode(sl_access m)
{
  return m == SL_READ ? STARPU_R : (m == SL_WRITE ? STARPU_W : STARPU_RW);
}

/* Copies between the chunks (acquired on the host) and the staged host view, in order (to_stage: which way). */
static void stage_copy(sl_array *a, int to_stage)
{
  char *p = a->stage;
  for (int c = 0; c < a->nchunks; c++) {
    size_t n = starpu_vector_get_nx(a->chunk_h[c]) * a->elsize;
    void *chunk = (void *)starpu_data_get_local_ptr(a->chunk_h[c]);
    memcpy(to_stage ? p : chunk, to_stage ? chunk : p, n);
    p += n;
  }
}

/* The host view of a placed block of several chunks (each its own home-less handle): one contiguous buffer,
 * filled from the chunks unless the mode is write-only; stage_out writes it back unless it was read-only. */
static int stage_in(sl_array *a, sl_access mode)
{
  a->stage = malloc((size_t)a->nlocal * a->elsize);
  if (!a->stage) return sl_error(SL_E_NOMEM, "sl_array_acquire: cannot allocate the %zu-byte host view of argument 1 (a)",
                                 (size_t)a->nlocal * a->elsize);
  a->stage_mode = mode;
  if (mode != SL_WRITE) stage_copy(a, 1);
  return SL_SUCCESS;
}

static void stage_out(sl_array *a)
{
  if (a->stage_mode != SL_READ) stage_copy(a, 0);
  free(a->stage);
  a->stage = NULL;
}

int sl_array_acquire(sl_array *a, sl_access mode, void **ptr)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_array_acquire: argument 1 (a) is NULL");
  SL_TRY(sl_array_check_session("sl_array_acquire", a, "argument 1 (a)"));
  SL_CHECK_PLAIN("sl_array_acquire", a);
  SL_CHECK_ARG(mode >= SL_READ && mode <= SL_READ_WRITE, SL_E_INVALID,
               "sl_array_acquire: argument 2 (mode) must be SL_READ, SL_WRITE or SL_READ_WRITE");
  SL_CHECK_ARG(ptr != NULL, SL_E_INVALID, "sl_array_acquire: argument 3 (ptr) is NULL");
  SL_TRY(sl_array_check_data("sl_array_acquire", a, "argument 1 (a)")); /* storage, not acquired already */
  sl_watch_begin("sl_array_acquire (the tasks writing the array, collectives included)");
  int rc = 0;
  for (int c = 0; c < a->nchunks && rc == 0; c++) rc = starpu_data_acquire(sl_array_chunk(a, c), starpu_mode(mode));
  sl_watch_end();
  if (rc != 0) return sl_error_starpu(rc, "starpu_data_acquire", __FILE__, __LINE__);
  a->acquired = 1;
  if (a->chunk_h) { /* home-less chunks live apart: the host sees them through a staged copy */
    rc = stage_in(a, mode);
    if (rc != SL_SUCCESS) {
      sl_array_release(a);
      return rc;
    }
    *ptr = a->stage;
  } else {
    /* a placed block of one chunk gets its host copy from StarPU on acquire */
    *ptr = a->placed ? (void *)starpu_data_get_local_ptr(a->handle) : a->data;
  }
  return sl_async_error_take();
}

int sl_array_release(sl_array *a)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_array_release: argument 1 (a) is NULL");
  SL_TRY(sl_array_check_session("sl_array_release", a, "argument 1 (a)"));
  SL_CHECK_ARG(a->acquired, SL_E_STATE, "sl_array_release: argument 1 (a) is not acquired");
  if (a->stage) stage_out(a);
  for (int c = 0; c < a->nchunks; c++) starpu_data_release(sl_array_chunk(a, c));
  a->acquired = 0;
  return SL_SUCCESS;
}

int sl_array_acquire_ghosts(sl_array *a, void **lo, void **hi)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_array_acquire_ghosts: argument 1 (a) is NULL");
  SL_TRY(sl_array_check_session("sl_array_acquire_ghosts", a, "argument 1 (a)"));
  SL_CHECK_PLAIN("sl_array_acquire_ghosts", a);
  SL_CHECK_ARG(!a->ghosts_acquired, SL_E_STATE, "sl_array_acquire_ghosts: the ghosts of argument 1 (a) are already "
               "acquired; release them first");
  a->ghosts_acquired = 1;
  void **out[2] = {lo, hi};
  for (int s = 0; s < 2; s++) {
    if (a->ghost_handle[s]) SL_CHECK_STARPU(starpu_data_acquire(a->ghost_handle[s], STARPU_RW));
    if (out[s]) *out[s] = a->ghost[s];
  }
  return SL_SUCCESS;
}

int sl_array_release_ghosts(sl_array *a)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_array_release_ghosts: argument 1 (a) is NULL");
  SL_TRY(sl_array_check_session("sl_array_release_ghosts", a, "argument 1 (a)"));
  SL_CHECK_ARG(a->ghosts_acquired, SL_E_STATE, "sl_array_release_ghosts: the ghosts of argument 1 (a) are not acquired "
               "(sl_array_acquire_ghosts first)");
  a->ghosts_acquired = 0;
  for (int s = 0; s < 2; s++)
    if (a->ghost_handle[s]) starpu_data_release(a->ghost_handle[s]);
  return SL_SUCCESS;
}
