/* Status codes, the per-thread last-error message, and agreement of verdicts across ranks. */
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"

#define SL_MSG_LEN 512
static _Thread_local char last_msg[SL_MSG_LEN];

const char *sl_strerror(int code)
{
  switch (code) {
  case SL_SUCCESS: return "SL_SUCCESS: success";
  case SL_E_INVALID: return "SL_E_INVALID: invalid argument";
  case SL_E_DIMS: return "SL_E_DIMS: dimension mismatch";
  case SL_E_DTYPE: return "SL_E_DTYPE: dtype mismatch or unsupported dtype";
  case SL_E_DIST: return "SL_E_DIST: distribution mismatch";
  case SL_E_NOMEM: return "SL_E_NOMEM: out of memory";
  case SL_E_BACKEND: return "SL_E_BACKEND: backend unavailable";
  case SL_E_COMM: return "SL_E_COMM: communication failure";
  case SL_E_IO: return "SL_E_IO: input/output failure";
  case SL_E_FORMAT: return "SL_E_FORMAT: malformed file";
  case SL_E_STATE: return "SL_E_STATE: wrong library state";
  case SL_E_RUNTIME: return "SL_E_RUNTIME: runtime (StarPU/CUDA) failure";
  case SL_E_NUMERIC: return "SL_E_NUMERIC: non-finite value (NaN or Inf)";
  default: return "unknown starlops status code";
  }
}

const char *sl_last_error(void) { return last_msg; }

int sl_error_set(int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_msg, sizeof last_msg, fmt ? fmt : "", ap);
  va_end(ap);
  return code;
}

int sl_error_mpi(int rc, const char *call, const char *file, int line)
{
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "MPI error %d", rc);
  return sl_error(SL_E_COMM, "%s failed (%s:%d): %s", call, file, line, msg);
}

int sl_error_starpu(int rc, const char *call, const char *file, int line)
{
  return sl_error(rc == -ENOMEM ? SL_E_NOMEM : SL_E_RUNTIME, "%s failed (%s:%d): %s", call, file, line,
                  strerror(rc < 0 ? -rc : rc));
}

int sl_error_stale(const char *fn, const char *what)
{
  return sl_error(SL_E_STATE, "%s%s%s was created before the last sl_finalize, which released it; make it again", fn ? fn : "",
                  fn ? ": " : "", what);
}

/* Errors raised inside tasks (which cannot return them) wait here for the next synchronisation. */
static pthread_mutex_t async_lock = PTHREAD_MUTEX_INITIALIZER;
static int async_code;
static char async_msg[SL_MSG_LEN];

void sl_async_error(int code, const char *fmt, ...)
{
  pthread_mutex_lock(&async_lock);
  if (async_code == SL_SUCCESS) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(async_msg, sizeof async_msg, fmt, ap);
    va_end(ap);
    async_code = code;
  }
  pthread_mutex_unlock(&async_lock);
}

int sl_async_error_take(void)
{
  pthread_mutex_lock(&async_lock);
  int code = async_code;
  if (code != SL_SUCCESS) sl_error(code, "%s", async_msg);
  async_code = SL_SUCCESS;
  pthread_mutex_unlock(&async_lock);
  return code;
}
