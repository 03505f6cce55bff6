/* Where a rank's StarPU threads run when several ranks of the communicator share a node.
 *
 * StarPU 1.3 sizes and binds each process's threads as if it had the node to itself: every rank starts one
 * CPU worker per core (less one core it keeps for the StarPU-MPI thread and one per GPU) and binds them to
 * cores 0, 1, ... whatever binding mpirun gave the process. With k ranks on a node, the k ranks' workers share
 * the same cores, k threads to a core. Before StarPU starts, sl_init therefore splits the node's cores between
 * the node's ranks of its communicator (rank r of k gets cores [r C / k, (r + 1) C / k), or core r mod C when
 * there are fewer cores than ranks), sizes the rank's CPU workers to its share (its cores less one per GPU it
 * drives and one kept for its communication threads: starlops' progress and channel threads, which poll
 * during collectives, and StarPU-MPI's thread, which sleeps since starlops moves its data itself; at least
 * one worker), binds its workers, GPU threads and StarPU-MPI thread to its cores, and on nodes with several
 * GPUs gives each rank its own (a contiguous block of GPUs per rank, ranks sharing GPUs when there are more
 * ranks than GPUs).
 *
 * The user's own choices win: STARPU_NCPU / options.ncpus keep the worker count, STARPU_WORKERS_CPUID,
 * STARPU_WORKERS_COREID, STARPU_WORKERS_NOBIND, STARPU_WORKERS_GETBIND, STARPU_NTHREADS_PER_CORE and
 * STARPU_HWLOC_INPUT keep StarPU's binding, STARPU_NCUDA / options.ncuda and STARPU_WORKERS_CUDAID keep the
 * GPUs; STARLOPS_PLACEMENT=starpu leaves all of it to StarPU. One rank on a node of a larger job keeps
 * StarPU's placement; a job of one rank gets a CPU worker on every core not driving a GPU (no core kept for
 * communication threads: one rank has no communication).
 *
 * starlops' own threads (the comm layer's progress thread and channel threads) would inherit the binding of
 * the thread that starts them: mpirun's core of the main thread (Open MPI binds up to two ranks to one core
 * each, core r for rank r, a core of another rank's share), or a worker's core for a channel thread that a
 * collective task starts. They are started on the rank's cores instead (sl_cores_thread_create). */
#define _GNU_SOURCE
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cores.h"
#include "internal.h"

/* The OS CPUs of the rank's cores, for starlops' own threads (comm progress, channel threads): set when the
 * rank's workers are bound by sl_cores_place or by StarPU's default binding. */
static cpu_set_t rank_cpus;
static int have_rank_cpus;

static int env_set(const char *name)
{
  const char *v = getenv(name);
  return v && *v;
}

static int env_on(const char *name) { return env_set(name) && atoi(getenv(name)) != 0; }

/* The user chose how StarPU binds (or describes the machine to StarPU differently). */
static int user_binds(void)
{
  return env_set("STARPU_WORKERS_CPUID") || env_set("STARPU_WORKERS_COREID") || env_on("STARPU_WORKERS_NOBIND") ||
         env_on("STARPU_WORKERS_GETBIND") || env_set("STARPU_NTHREADS_PER_CORE") || env_set("STARPU_HWLOC_INPUT");
}

/* The node's cores as StarPU counts them: hwloc's allowed cores (its PUs when it reports no cores). */
static int topo_cores(hwloc_topology_t topo)
{
  int c = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  return c > 0 ? c : hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
}

static hwloc_obj_t topo_core(hwloc_topology_t topo, int c)
{
  int nc = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  return hwloc_get_obj_by_type(topo, nc > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU, (unsigned)c);
}

int sl_cores_plan(hwloc_topology_t topo, int k, int r, sl_cores_share *out)
{
  int cores = topo_cores(topo);
  if (cores <= 0 || k < 1 || r < 0 || r >= k) return -1;
  out->lo = cores >= k ? (int)((int64_t)r * cores / k) : r % cores;
  out->hi = cores >= k ? (int)((int64_t)(r + 1) * cores / k) : out->lo + 1;
  CPU_ZERO(&out->cpus);
  if (out->hi - out->lo > SL_CORES_MAX) out->hi = out->lo + SL_CORES_MAX;
  for (int c = out->lo; c < out->hi; c++) {
    hwloc_obj_t core = topo_core(topo, c);
    if (!core || !core->cpuset) return -1;
    /* StarPU binds a thread by the logical index of a PU: the core's first PU (cores need not all have as
     * many hardware threads) */
    hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, 0);
    if (!pu) return -1;
    out->bindid[c - out->lo] = pu->logical_index;
    unsigned id;
    hwloc_bitmap_foreach_begin(id, core->cpuset)
      if (id < CPU_SETSIZE) CPU_SET((int)id, &out->cpus);
    hwloc_bitmap_foreach_end();
  }
  return 0;
}

/* The CUDA workers StarPU starts when the GPUs are left to it: conf->ncuda (the user's count) if set and
 * below the device count, else every device. */
static int user_gpus(const struct starpu_conf *conf, int ngpus)
{
  return conf->ncuda >= 0 && conf->ncuda < ngpus ? conf->ncuda : ngpus;
}

int sl_cores_thread_create(pthread_t *th, const char *name, void *(*fn)(void *), void *arg)
{
  int rc = -1;
  if (have_rank_cpus) {
    pthread_attr_t at;
    if (pthread_attr_init(&at) == 0) {
      rc = pthread_attr_setaffinity_np(&at, sizeof rank_cpus, &rank_cpus);
      if (rc == 0) rc = pthread_create(th, &at, fn, arg);
      pthread_attr_destroy(&at);
    }
  }
  if (rc != 0) rc = pthread_create(th, NULL, fn, arg); /* the cores refused (a cpuset): the creator's binding */
  if (rc == 0) (void)pthread_setname_np(*th, name); /* shown by top -H, gdb and /proc (15 characters at most) */
  return rc;
}

/* conf's GPUs for node rank r of k on a node of ngpus GPUs: GPUs [r G / k, (r + 1) G / k), a contiguous block
 * per rank, or GPU floor(r G / k) when there are more ranks than GPUs (neighbouring ranks share one); the
 * user's count or devices when set. Returns the rank's CUDA workers. */
static int place_gpus(struct starpu_conf *conf, int k, int r, int ngpus, int bind)
{
  int cudaid = env_set("STARPU_WORKERS_CUDAID");
  if (conf->ncuda >= 0 || cudaid) { /* the user's GPUs */
    int n = user_gpus(conf, ngpus);
    if (bind && !cudaid) { /* StarPU's own devices 0..n-1, named so that it binds their threads in the rank's list */
      for (int i = 0; i < n; i++) conf->workers_cuda_gpuid[i] = (unsigned)i;
      conf->use_explicit_workers_cuda_gpuid = 1;
    }
    return n;
  }
  int g0 = (int)((int64_t)r * ngpus / k);
  int g1 = ngpus >= k ? (int)((int64_t)(r + 1) * ngpus / k) : g0 + 1;
  int n = 0;
  for (int g = g0; g < g1 && n < STARPU_NMAXWORKERS; g++) conf->workers_cuda_gpuid[n++] = (unsigned)g;
  /* explicit devices also stop StarPU from binding a GPU's thread to the core nearest the GPU (a core of
   * another rank, or one of this rank's workers' cores listed twice) */
  conf->use_explicit_workers_cuda_gpuid = 1;
  conf->ncuda = n;
  return n;
}

int sl_cores_place(struct starpu_conf *conf, int want_cuda, int ngpus)
{
  sl_ctx.core_lo = sl_ctx.core_hi = -1;
  MPI_Comm node;
  SL_CHECK_MPI(MPI_Comm_split_type(sl_ctx.comm, MPI_COMM_TYPE_SHARED, sl_ctx.rank, MPI_INFO_NULL, &node));
  int r = 0, k = 1;
  int rc = MPI_Comm_rank(node, &r);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(node, &k);
  MPI_Comm_free(&node);
  if (rc != MPI_SUCCESS) return sl_error_mpi(rc, "MPI_Comm_rank/size (node communicator)", __FILE__, __LINE__);
  sl_ctx.node_rank = r;
  sl_ctx.node_ranks = k;
  have_rank_cpus = 0;
  if (sl_ctx.set.placement_starpu) return SL_SUCCESS;

  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return SL_SUCCESS; /* no topology: StarPU's own placement */
  sl_cores_share sh;
  if (hwloc_topology_load(topo) != 0 || sl_cores_plan(topo, k == 1 ? 1 : k, k == 1 ? 0 : r, &sh) != 0) {
    hwloc_topology_destroy(topo);
    return SL_SUCCESS;
  }
  hwloc_topology_destroy(topo);
  int bind = !user_binds();
  if (k == 1) {
    /* the node is the rank's: StarPU binds its workers over all of it, starlops' threads may use all of it
     * (not only the core mpirun bound the main thread to, which they would inherit) */
    if (bind) {
      rank_cpus = sh.cpus;
      have_rank_cpus = 1;
    }
    /* a job of one rank: StarPU-MPI would keep a core for its thread, which starlops never wakes (its
     * transfers are its own comm layer's, and one rank has none); that core gets a worker too */
    int ncuda = want_cuda ? user_gpus(conf, ngpus) : 0;
    int cores = sh.hi - sh.lo;
    if (sl_ctx.size == 1 && conf->ncpus < 0) {
      conf->ncpus = cores - ncuda >= 1 ? cores - ncuda : 1;
      /* every core has a thread: the sleeping StarPU-MPI thread stays unbound (bound, StarPU would put it on
       * a worker's core and warn that this degrades performance) */
      if (bind) setenv("STARPU_MPI_NOBIND", "1", 0);
    }
    return SL_SUCCESS;
  }

  /* a rank that drives a GPU beside other ranks keeps StarPU's placement: on a 16-core H100 node, 2 ranks
   * sharing the GPU ran CG, CGLS and LSQR iterations 1.2-2.3x slower in their halves of the cores
   * (docs/benchmarks.md); the CPU-only ranks were faster in theirs. On a node of several GPUs it still drives
   * its own block of them (not yet run on such a node). */
  if (want_cuda && ngpus > 0 && user_gpus(conf, ngpus) > 0) {
    if (ngpus > 1) (void)place_gpus(conf, k, r, ngpus, 0);
    return SL_SUCCESS;
  }
  int share = sh.hi - sh.lo;
  int ncuda = want_cuda && ngpus > 0 ? place_gpus(conf, k, r, ngpus, bind) : 0;
  if (conf->ncpus < 0) conf->ncpus = share - 1 - ncuda >= 1 ? share - 1 - ncuda : 1;
  if (!bind) return SL_SUCCESS;
  /* StarPU hands these out in turn (CPU workers, GPU threads, then the StarPU-MPI thread), wrapping round the
   * rank's cores when it has more threads than cores; starlops' own threads run on the same cores */
  for (int i = 0; i < STARPU_NMAXWORKERS; i++) conf->workers_bindid[i] = sh.bindid[i % share];
  conf->use_explicit_workers_bindid = 1;
  /* no core left for the StarPU-MPI thread (it sleeps: starlops moves its data itself): left unbound, where
   * StarPU would bind it over a worker and warn that this degrades performance */
  if (conf->ncpus + ncuda >= share) setenv("STARPU_MPI_NOBIND", "1", 0);
  sl_ctx.core_lo = sh.lo;
  sl_ctx.core_hi = sh.hi;
  rank_cpus = sh.cpus;
  have_rank_cpus = 1;
  return SL_SUCCESS;
}
