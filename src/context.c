/* sl_init / sl_finalize: MPI, StarPU, StarPU-MPI, cuBLAS, tracing, and the runtime's shared handles. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

struct sl_context sl_ctx;
_Thread_local uint64_t sl_trace_tag;
static const char *sched_name = "default";

void sl_options_default(sl_options *opts)
{
  memset(opts, 0, sizeof *opts);
  opts->comm = MPI_COMM_NULL;
  opts->ncpus = -1;
  opts->ncuda = -1;
}

/* Number of CUDA devices visible to this process (0 without a driver or a device). */
static int cuda_device_count(void)
{
#ifdef SL_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
#else
  return 0;
#endif
}

static int setup_tracing(const sl_options *o)
{
  const char *dir = o->trace_dir ? o->trace_dir : getenv("STARLOPS_TRACE");
  if (!dir || !*dir) {
    /* An FxT-enabled StarPU 1.3 traces by default; starlops traces only when asked. */
    setenv("STARPU_FXT_TRACE", "0", 1);
    return SL_SUCCESS;
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return sl_error(SL_E_IO, "sl_init: cannot create the trace directory '%s': %s", dir, strerror(errno));
  setenv("STARPU_FXT_TRACE", "1", 1);
  setenv("STARPU_FXT_PREFIX", dir, 1);
  sl_ctx.tracing = 1;
  const char *region = getenv("STARLOPS_TRACE_REGION");
  if (o->trace_region || (region && atoi(region) == 1)) {
    sl_ctx.trace_region = 1;
    starpu_fxt_autostart_profiling(0); /* before StarPU starts */
  }
  return SL_SUCCESS;
}

static int start_mpi(int *argc, char ***argv, const sl_options *o)
{
  int inited = 0, provided = 0, finalized = 0;
  SL_CHECK_MPI(MPI_Finalized(&finalized));
  if (finalized) return sl_error(SL_E_STATE, "sl_init: MPI has been finalised; starlops needs it running (sl_finalize "
                                 "finalises MPI when sl_init started it)");
  SL_CHECK_MPI(MPI_Initialized(&inited));
  if (inited) {
    SL_CHECK_MPI(MPI_Query_thread(&provided));
  } else {
    SL_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    sl_ctx.own_mpi = 1;
  }
  if (provided < MPI_THREAD_MULTIPLE)
    return sl_error(SL_E_BACKEND, "sl_init: MPI provides thread level %d, starlops needs MPI_THREAD_MULTIPLE "
                    "(initialise MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...))", provided);
  MPI_Comm base = o->comm == MPI_COMM_NULL ? MPI_COMM_WORLD : o->comm;
  SL_CHECK_MPI(MPI_Comm_dup(base, &sl_ctx.comm));
  SL_CHECK_MPI(MPI_Comm_rank(sl_ctx.comm, &sl_ctx.rank));
  SL_CHECK_MPI(MPI_Comm_size(sl_ctx.comm, &sl_ctx.size));
  return SL_SUCCESS;
}

/* OpenBLAS's own threads would compete with the StarPU workers (each already a core) and are not safe to
 * enter from several workers at once: one thread per call, unless the user set OPENBLAS_NUM_THREADS. */
void openblas_set_num_threads(int n);

static int start_starpu(int *argc, char ***argv, const sl_options *o)
{
  if (!getenv("OPENBLAS_NUM_THREADS")) openblas_set_num_threads(1);
  struct starpu_conf conf;
  SL_CHECK_STARPU(starpu_conf_init(&conf));
  if (o->ncpus >= 0) conf.ncpus = o->ncpus;
  if (o->ncuda >= 0) conf.ncuda = o->ncuda;
  const char *env_ncuda = getenv("STARPU_NCUDA");
  int want_cuda = o->ncuda != 0 && !(o->ncuda < 0 && env_ncuda && atoi(env_ncuda) == 0);
  int ngpus = want_cuda ? cuda_device_count() : 0;
  int rc = sl_agree(sl_ctx.comm, sl_cores_place(&conf, want_cuda, ngpus));
  if (rc != SL_SUCCESS) { /* StarPU not started: leave MPI as a failed setting does */
    MPI_Comm_free(&sl_ctx.comm);
    if (sl_ctx.own_mpi) MPI_Finalize();
    return rc;
  }
  const char *env_sched = getenv("STARPU_SCHED");
  if (env_sched && *env_sched) {
    sched_name = env_sched;
  } else if (want_cuda && ngpus > 0) {
    sched_name = "dmdas";
    conf.sched_policy_name = sched_name;
  }
  SL_CHECK_STARPU(starpu_mpi_init_conf(argc, argv, 0, sl_ctx.comm, &conf));
  sl_ctx.ncpu = (int)starpu_cpu_worker_get_count();
  sl_ctx.ncuda = (int)starpu_cuda_worker_get_count();
  if (sl_ctx.ncuda > 0) {
    starpu_cublas_init();
    starpu_cusparse_init();
  }
  return SL_SUCCESS;
}

/* Stops everything sl_init started, in reverse order (also after a failed sl_init). */
static void teardown(void)
{
  starpu_task_wait_for_all();
  comm_direct_wait();
  sl_watch_stop();
  sl_codelets_shutdown();
  sl_host_wait_stop();
  sl_group_free_all();
  comm_shutdown();
  if (sl_ctx.ncuda > 0) {
    starpu_cusparse_shutdown();
    starpu_cublas_shutdown();
  }
  starpu_mpi_shutdown();
  sl_scalar_slots_free();
  sl_host_cache_stop();
  MPI_Comm_free(&sl_ctx.comm);
  if (sl_ctx.own_mpi) MPI_Finalize();
  sl_ctx.initialized = 0;
}

static unsigned sessions; /* sl_init calls that got past the first check */

unsigned sl_session(void) { return sessions; }

int sl_init(int *argc, char ***argv, const sl_options *opts)
{
  if (sl_ctx.initialized) return sl_error(SL_E_STATE, "sl_init: starlops is already initialised");
  sessions++;
  sl_options defaults;
  sl_options_default(&defaults);
  const sl_options *o = opts ? opts : &defaults;
  memset(&sl_ctx, 0, sizeof sl_ctx);
  SL_TRY(start_mpi(argc, argv, o));
  /* one agreement: every rank's verdict on its settings, and the settings every rank must share */
  int rc = sl_settings_read(o);
  if (rc == SL_SUCCESS) rc = setup_tracing(o);
  const sl_settings *s = &sl_ctx.set;
  rc = SL_AGREE("sl_init", rc, SL_SAME_I("STARLOPS_CODELET_WHERE", s->where),
                SL_SAME_I("STARLOPS_CHUNK_BYTES (or options.chunk_bytes)", s->chunk_bytes),
                SL_SAME_I("STARLOPS_MAX_CHUNKS", s->max_chunks), sl_same_s("STARLOPS_COMM", s->comm),
                SL_SAME_I("STARLOPS_STENCIL_NO_OVERLAP", s->stencil_no_overlap),
                SL_SAME_I("STARLOPS_STENCIL_GENERIC", s->stencil_generic),
                SL_SAME_I("STARLOPS_SOLVER_NO_FUSE", s->no_fuse),
                SL_SAME_I("STARLOPS_COMM_STAGE_HOST", s->comm_stage_host),
                SL_SAME_I("STARLOPS_COMM_TASKS", s->comm_tasks),
                SL_SAME_I("STARLOPS_COMM_GPU_STAGING", s->comm_gpu_staging),
                SL_SAME_I("STARLOPS_COMM_SHM", !s->comm_no_shm),
                SL_SAME_I("STARLOPS_COMM_SHM_FAIL_RANK", s->comm_shm_fail_rank),
                SL_SAME_I("STARLOPS_GATHER_P2P", s->gather_p2p),
                SL_SAME_I("STARLOPS_FFTW_PLANNER", s->fftw_estimate),
                SL_SAME_I("STARLOPS_FFT_CALLBACKS", s->fft_callbacks),
                SL_SAME_I("STARLOPS_PLACEMENT", s->placement_starpu),
                SL_SAME_I("STARLOPS_FFT_THREADS", s->fft_threads),
                SL_SAME_I("STARLOPS_TASK_THREADS", s->task_threads),
                SL_SAME_I("STARLOPS_COMM_BLOCKING_BYTES", s->comm_blocking_bytes),
                SL_SAME_I("STARLOPS_COMM_RING_BYTES", s->comm_ring_bytes),
                SL_SAME_I("STARLOPS_COMM_RING_SEGMENT_BYTES", s->comm_ring_segment_bytes),
                SL_SAME_I("STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES", s->comm_allreduce_blocking_bytes),
                SL_SAME_I("STARLOPS_COMM_RING_ALLREDUCE_BYTES", s->comm_ring_allreduce_bytes),
                SL_SAME_I("STARLOPS_TRACE (set on some ranks only)", sl_ctx.tracing),
                SL_SAME_I("STARLOPS_TRACE_REGION", sl_ctx.trace_region));
  if (rc != SL_SUCCESS) {
    MPI_Comm_free(&sl_ctx.comm);
    if (sl_ctx.own_mpi) MPI_Finalize();
    return rc;
  }
  SL_TRY(start_starpu(argc, argv, o));
  sl_settings_place();
  sl_host_cache_start(s->host_cache_mb);
  rc = sl_agree(sl_ctx.comm, sl_host_wait_start());
  if (rc == SL_SUCCESS) rc = sl_agree(sl_ctx.comm, sl_codelets_init());
  if (rc == SL_SUCCESS) rc = sl_agree(sl_ctx.comm, sl_watch_start(s->timeout_s));
  if (rc == SL_SUCCESS) rc = comm_init();
  if (rc != SL_SUCCESS) { /* leave nothing running; MPI stays up when the program had started it */
    teardown();
    return rc;
  }
  sl_tag_reset();
  sl_ctx.initialized = 1;
  if (o->verbose) SL_TRY(sl_info_print(stdout));
  return SL_SUCCESS;
}

int sl_finalize(void)
{
  SL_CHECK_INIT();
  int rc = sl_wait();
  teardown();
  return rc;
}

int sl_initialized(void) { return sl_ctx.initialized; }

int sl_trace_begin(void)
{
  SL_CHECK_INIT();
  if (!sl_ctx.tracing || !sl_ctx.trace_region) return SL_SUCCESS;
  SL_CHECK_STARPU(starpu_task_wait_for_all()); /* earlier tasks stay out of the region */
  comm_direct_wait();
  starpu_fxt_start_profiling();
  return SL_SUCCESS;
}

int sl_trace_end(void)
{
  SL_CHECK_INIT();
  if (!sl_ctx.tracing || !sl_ctx.trace_region) return SL_SUCCESS;
  SL_CHECK_STARPU(starpu_task_wait_for_all());
  comm_direct_wait();
  starpu_fxt_stop_profiling();
  return SL_SUCCESS;
}

int sl_trace_event(const char *text)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(text != NULL, SL_E_INVALID, "sl_trace_event: argument 1 (text) is NULL");
  if (sl_ctx.tracing) starpu_fxt_trace_user_event_string(text);
  return SL_SUCCESS;
}

int sl_wait(void)
{
  SL_CHECK_INIT();
  sl_watch_begin("sl_wait (the tasks submitted so far, collectives included)");
  int rc = sl_host_wait_tasks();
  /* the collectives without a task (comm_direct.c), then the tasks their ends let run */
  if (comm_direct_wait() && rc == 0) rc = sl_host_wait_tasks();
  sl_watch_end();
  if (rc != 0) return sl_error_starpu(rc, "starpu_task_wait_for_all", __FILE__, __LINE__);
  return sl_async_error_take();
}

int sl_rank(void) { return sl_ctx.rank; }
int sl_size(void) { return sl_ctx.size; }
MPI_Comm sl_comm(void) { return sl_ctx.comm; }
int sl_ncpu_workers(void) { return sl_ctx.ncpu; }
int sl_ncuda_workers(void) { return sl_ctx.ncuda; }
const char *sl_comm_backend_name(void) { return comm_backend_name(comm_backend_get()); }

int sl_info_print(FILE *out)
{
  SL_CHECK_INIT();
  int mine[4] = {sl_ctx.ncpu, sl_ctx.ncuda, sl_ctx.core_lo, sl_ctx.core_hi};
  int *all = NULL;
  if (sl_ctx.rank == 0) {
    all = malloc(sizeof(int) * 4 * (size_t)sl_ctx.size);
    if (!all) return sl_error(SL_E_NOMEM, "sl_info_print: out of memory");
  }
  int rc = MPI_Gather(mine, 4, MPI_INT, all, 4, MPI_INT, 0, sl_ctx.comm);
  if (rc != MPI_SUCCESS) {
    free(all);
    return sl_error_mpi(rc, "MPI_Gather", __FILE__, __LINE__);
  }
  if (sl_ctx.rank == 0 && out) {
    fprintf(out, "starlops %s\n", SL_VERSION_STRING);
    fprintf(out, "  ranks:        %d\n", sl_ctx.size);
    for (int r = 0; r < sl_ctx.size; r++) {
      const int *a = all + 4 * r;
      fprintf(out, "  rank %-3d      %d CPU workers, %d CUDA workers", r, a[0], a[1]);
      if (a[2] < 0) fprintf(out, ", threads placed by StarPU\n");
      else if (a[3] - a[2] == 1) fprintf(out, ", threads on core %d\n", a[2]);
      else fprintf(out, ", threads on cores %d-%d\n", a[2], a[3] - 1);
    }
    fprintf(out, "  scheduler:    %s\n", sched_name);
    fprintf(out, "  comm backend: %s\n", sl_comm_backend_name());
    fprintf(out, "  placement:    compute codelets on %s%s\n",
            sl_ctx.where == STARPU_CUDA ? "CUDA workers" : (sl_ctx.where == STARPU_CPU ? "CPU workers" : "any worker"),
            sl_ctx.set.where == SL_WHERE_AUTO ? " (auto)" : " (STARLOPS_CODELET_WHERE)");
    fprintf(out, "  chunk bytes:  %zu (at most %d chunks per block)\n", sl_ctx.chunk_bytes, sl_ctx.max_chunks);
    /* rank 0's (docs/gpu.md#waiting-for-short-tasks) */
    fprintf(out, "  waits:        ");
    if (sl_ctx.ncuda > 0) fprintf(out, "idle CUDA workers %s; ", sl_ctx.set.cuda_worker_spin > 0 ? "poll" : "sleep");
    if (sl_host_wait_adapts()) fprintf(out, "the main thread polls 1.5x its recent waits (0.1 ms, up to 4 ms), then sleeps\n");
    else if (sl_ctx.set.wait_spin_s > 0) fprintf(out, "the main thread polls %.0f us, then sleeps\n", sl_ctx.set.wait_spin_s * 1e6);
    else fprintf(out, "the main thread sleeps at once\n");
    if (sl_ctx.host_cache_bytes > 0)
      fprintf(out, "  host cache:   freed blocks of 1 MiB and more kept up to %.0f MiB\n", sl_ctx.host_cache_bytes / 1048576.0);
    else
      fprintf(out, "  host cache:   off%s\n",
              sl_ctx.ncuda > 0 ? " (StarPU's allocator: a CUDA worker)"
              : starpu_memory_nodes_get_numa_count() > 1 ? " (StarPU's allocator: several NUMA nodes)" : "");
#ifdef SL_HAVE_CUDA
    const char *cuda = "yes";
#else
    const char *cuda = "no";
#endif
#ifdef SL_HAVE_NCCL
    const char *nccl = "yes";
#else
    const char *nccl = "no";
#endif
#ifdef STARPU_USE_FXT
    const char *fxt = "yes";
#else
    const char *fxt = "no";
#endif
    fprintf(out, "  build:        CUDA %s, NCCL %s, FxT %s, StarPU %d.%d.%d\n", cuda, nccl, fxt,
            STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
    fprintf(out, "  tracing:      %s\n", sl_ctx.tracing ? getenv("STARPU_FXT_PREFIX") : "off");
    fflush(out);
  }
  free(all);
  return SL_SUCCESS;
}
