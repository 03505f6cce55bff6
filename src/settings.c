/* Every STARLOPS_* setting, read once by sl_init into the context (docs/install.md#settings lists them):
 * validated here, so a bad value is an error at start-up, never a surprise on a hot path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A whole decimal number from min to max, or an error naming the variable. */
static int parse_count(const char *name, const char *v, unsigned long long min, unsigned long long max,
                       unsigned long long *out)
{
  char *end = NULL;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (!*v || *v == '-' || *v == '+' || errno || *end || n < min || n > max)
    return sl_error(SL_E_INVALID, "sl_init: %s must be a whole number from %llu to %llu, not '%s'", name, min, max, v);
  *out = n;
  return SL_SUCCESS;
}

/* A count (bytes, threads): dflt when the variable is unset or empty, else a whole number from min to max. */
static int parse_whole(const char *name, int64_t dflt, unsigned long long min, unsigned long long max, int64_t *out)
{
  const char *v = getenv(name);
  unsigned long long n = 0;
  *out = dflt;
  if (!v || !*v) return SL_SUCCESS;
  SL_TRY(parse_count(name, v, min, max, &n));
  *out = (int64_t)n;
  return SL_SUCCESS;
}

/* A decimal number from min to max in the given unit ("microseconds"), or an error naming the variable; set
 * says whether the variable was given (unset or empty: *out untouched). */
static int parse_real(const char *name, const char *unit, double min, double max, double *out, int *set)
{
  const char *v = getenv(name);
  if (set) *set = 0;
  if (!v || !*v) return SL_SUCCESS;
  char *end = NULL;
  double x = strtod(v, &end);
  if (*end || !(x >= min && x <= max))
    return sl_error(SL_E_INVALID, "sl_init: %s must be a number of %s from %g to %g, not '%s'", name, unit, min, max, v);
  *out = x;
  if (set) *set = 1;
  return SL_SUCCESS;
}

/* 0 or 1 (unset: dflt). */
static int parse_flag_or(const char *name, int dflt, int *out)
{
  const char *v = getenv(name);
  *out = dflt;
  if (!v || !*v) return SL_SUCCESS;
  if (strcmp(v, "0") && strcmp(v, "1")) return sl_error(SL_E_INVALID, "sl_init: %s must be 0 or 1, not '%s'", name, v);
  *out = v[0] == '1';
  return SL_SUCCESS;
}

/* 0 or 1 (unset: 0). */
static int parse_flag(const char *name, int *out) { return parse_flag_or(name, 0, out); }

int sl_settings_read(const sl_options *o)
{
  sl_settings *s = &sl_ctx.set;
  memset(s, 0, sizeof *s);
  if (o->ncpus == 0 || o->ncpus < -1)
    return sl_error(SL_E_INVALID, "sl_init: argument 3 (opts): ncpus must be -1 (StarPU's choice) or >= 1 (starlops runs "
                    "its scalar tasks on CPU workers), got %d", o->ncpus);
  if (o->ncuda < -1)
    return sl_error(SL_E_INVALID, "sl_init: argument 3 (opts): ncuda must be -1 (StarPU's choice) or >= 0, got %d", o->ncuda);
  /* StarPU aborts on some values of its own worker counts: refuse them here with a message */
  unsigned long long n = 0;
  const char *w = getenv("STARPU_NCPU");
  if (w && *w) {
    SL_TRY(parse_count("STARPU_NCPU", w, 1, 4096, &n)); /* starlops runs its scalar tasks on CPU workers */
  }
  w = getenv("STARPU_NCUDA");
  if (w && *w && strcmp(w, "-1")) SL_TRY(parse_count("STARPU_NCUDA", w, 0, 1024, &n));
  const char *v = getenv("STARLOPS_CODELET_WHERE");
  s->where = SL_WHERE_AUTO;
  if (v && *v) {
    if (!strcmp(v, "auto")) s->where = SL_WHERE_AUTO;
    else if (!strcmp(v, "any")) s->where = SL_WHERE_ANY;
    else if (!strcmp(v, "cpu")) s->where = SL_WHERE_CPU;
    else if (!strcmp(v, "cuda")) s->where = SL_WHERE_CUDA;
    else return sl_error(SL_E_INVALID, "sl_init: STARLOPS_CODELET_WHERE must be auto, any, cpu or cuda, not '%s'", v);
  }
  s->chunk_bytes = o->chunk_bytes;
  v = getenv("STARLOPS_CHUNK_BYTES");
  if (s->chunk_bytes == 0 && v && *v) {
    SL_TRY(parse_count("STARLOPS_CHUNK_BYTES", v, 1, (unsigned long long)1 << 50, &n));
    s->chunk_bytes = (size_t)n;
  }
  v = getenv("STARLOPS_MAX_CHUNKS");
  if (v && *v) {
    SL_TRY(parse_count("STARLOPS_MAX_CHUNKS", v, 1, 1 << 20, &n));
    s->max_chunks = (int)n;
  }
  SL_TRY(parse_flag("STARLOPS_STENCIL_NO_OVERLAP", &s->stencil_no_overlap));
  SL_TRY(parse_flag("STARLOPS_STENCIL_GENERIC", &s->stencil_generic));
  SL_TRY(parse_flag("STARLOPS_STENCIL_EDGE_SERIAL", &s->stencil_edge_serial));
  int64_t zk;
  SL_TRY(parse_whole("STARLOPS_STENCIL_ZPLANES", 0, 0, 32, &zk));
  if (zk != 0 && zk != 4 && zk != 8 && zk != 16 && zk != 32)
    return sl_error(SL_E_INVALID, "sl_init: STARLOPS_STENCIL_ZPLANES must be 4, 8, 16 or 32, not %lld", (long long)zk);
  s->stencil_zplanes = (int)zk;
  SL_TRY(parse_whole("STARLOPS_STENCIL_ZROWS", 0, 0, 16, &zk));
  if (zk != 0 && zk != 8 && zk != 16)
    return sl_error(SL_E_INVALID, "sl_init: STARLOPS_STENCIL_ZROWS must be 8 or 16, not %lld", (long long)zk);
  s->stencil_zrows = (int)zk;
  SL_TRY(parse_flag("STARLOPS_SOLVER_NO_FUSE", &s->no_fuse));
  SL_TRY(parse_flag("STARLOPS_NSCONV_ROWS", &s->nsconv_rows));
  SL_TRY(parse_flag("STARLOPS_COMM_STAGE_HOST", &s->comm_stage_host));
  SL_TRY(parse_flag("STARLOPS_COMM_TASKS", &s->comm_tasks));
  SL_TRY(parse_flag("STARLOPS_COMM_GPU_STAGING", &s->comm_gpu_staging));
  int shm;
  SL_TRY(parse_flag_or("STARLOPS_COMM_SHM", 1, &shm));
  s->comm_no_shm = !shm;
  int64_t fail;
  SL_TRY(parse_whole("STARLOPS_COMM_SHM_FAIL_RANK", -1, 0, 1 << 20, &fail));
  s->comm_shm_fail_rank = (int)fail + 1;
  SL_TRY(parse_flag("STARLOPS_GATHER_P2P", &s->gather_p2p));
  v = getenv("STARLOPS_PLACEMENT");
  if (v && *v && strcmp(v, "node") && strcmp(v, "starpu"))
    return sl_error(SL_E_INVALID, "sl_init: STARLOPS_PLACEMENT must be node or starpu, not '%s'", v);
  s->placement_starpu = v && !strcmp(v, "starpu");
  v = getenv("STARLOPS_FFTW_PLANNER");
  if (v && *v && strcmp(v, "measure") && strcmp(v, "estimate"))
    return sl_error(SL_E_INVALID, "sl_init: STARLOPS_FFTW_PLANNER must be measure or estimate, not '%s'", v);
  s->fftw_estimate = v && !strcmp(v, "estimate");
  SL_TRY(parse_flag_or("STARLOPS_FFT_CALLBACKS", 1, &s->fft_callbacks));
  int64_t threads = 0;
  SL_TRY(parse_whole("STARLOPS_FFT_THREADS", 0, 0, 1024, &threads));
  s->fft_threads = (int)threads;
  SL_TRY(parse_whole("STARLOPS_TASK_THREADS", 0, 0, 1024, &threads));
  s->task_threads = (int)threads;
  SL_TRY(parse_whole("STARLOPS_COMM_BLOCKING_BYTES", (int64_t)8 << 20, 0, 1ULL << 50, &s->comm_blocking_bytes));
  SL_TRY(parse_whole("STARLOPS_COMM_RING_BYTES", (int64_t)16 << 10, 0, 1ULL << 50, &s->comm_ring_bytes));
  SL_TRY(parse_whole("STARLOPS_COMM_RING_SEGMENT_BYTES", (int64_t)256 << 10, 1, 1ULL << 40, &s->comm_ring_segment_bytes));
  SL_TRY(parse_whole("STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES", (int64_t)1 << 20, 0, 1ULL << 50, &s->comm_allreduce_blocking_bytes));
  SL_TRY(parse_whole("STARLOPS_COMM_RING_ALLREDUCE_BYTES", (int64_t)16 << 20, 0, 1ULL << 50, &s->comm_ring_allreduce_bytes));
  double us = 0;
  SL_TRY(parse_real("STARLOPS_COMM_SPIN_US", "microseconds", 0, 1e6, &us, &s->comm_spin_set));
  s->comm_spin_s = us * 1e-6;
  /* unset (-1): decided once the rank's workers are known (sl_host_wait_start) */
  SL_TRY(parse_flag_or("STARLOPS_CUDA_WORKER_SPIN", -1, &s->cuda_worker_spin));
  us = -1;
  SL_TRY(parse_real("STARLOPS_WAIT_SPIN_US", "microseconds", 0, 1e6, &us, NULL));
  s->wait_spin_s = us < 0 ? -1 : us * 1e-6;
  SL_TRY(parse_whole("STARLOPS_HOST_CACHE_MB", -1, 0, 1ULL << 40, &s->host_cache_mb));
  SL_TRY(parse_real("STARLOPS_TIMEOUT", "seconds (0: off)", 0, 1e7, &s->timeout_s, NULL));
  v = getenv("STARLOPS_COMM");
  snprintf(s->comm, sizeof s->comm, "%s", v && *v ? v : "auto");
  if (strcmp(s->comm, "auto") && strcmp(s->comm, "mpi") && strcmp(s->comm, "mpi-cuda") && strcmp(s->comm, "nccl"))
    return sl_error(SL_E_INVALID, "STARLOPS_COMM must be auto, mpi, mpi-cuda or nccl, not '%s'", v);
  return SL_SUCCESS;
}

/* Where the compute codelets run and how blocks are cut, once the workers are known. With CUDA workers and
 * no STARLOPS_CODELET_WHERE (auto), compute codelets run on the GPUs: every one has a CUDA implementation,
 * and the memory-bound ones (all but dense products) run several times faster there than on all the
 * cores together, while an uncalibrated scheduler would send large chunks to CPU workers. Blocks then get
 * one chunk per GPU (StarPU runs a task on one worker; more chunks only add task overhead). */
void sl_settings_place(void)
{
  sl_settings *s = &sl_ctx.set;
  int where = s->where;
  if (where == SL_WHERE_AUTO) where = sl_ctx.ncuda > 0 ? SL_WHERE_CUDA : SL_WHERE_ANY;
  if (where == SL_WHERE_CUDA && sl_ctx.ncuda == 0) where = SL_WHERE_CPU;
  sl_ctx.where = where == SL_WHERE_CUDA ? STARPU_CUDA : (where == SL_WHERE_CPU ? STARPU_CPU : STARPU_CPU | STARPU_CUDA);
  sl_ctx.chunk_bytes = s->chunk_bytes ? s->chunk_bytes : (size_t)4 << 20;
  int workers = sl_ctx.where == STARPU_CUDA ? sl_ctx.ncuda : sl_ctx.ncpu + sl_ctx.ncuda;
  sl_ctx.max_chunks = s->max_chunks ? s->max_chunks
                      : sl_ctx.where == STARPU_CUDA ? (workers > 0 ? workers : 1)
                                                    : 2 * (workers > 0 ? workers : 1);
}
