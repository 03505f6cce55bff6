/* Where a rank's StarPU threads run when several ranks of the communicator share a node.
 *
 * StarPU 1.3 sizes and binds each process's threads as if it had the node to itself: every rank starts one
 * CPU worker per core (less one for the StarPU-MPI thread and one per GPU) and binds them to cores 0, 1, ...
 * whatever binding mpirun gave the process. With k ranks on a node, the k ranks' workers share the same
 * cores, k threads to a core. Before StarPU starts, sl_init therefore splits the node's cores between the
 * node's ranks of its communicator (rank r of k gets cores [r C / k, (r + 1) C / k), or core r mod C when
 * there are fewer cores than ranks), sizes the rank's CPU workers to its share (its cores less one for the
 * StarPU-MPI thread and one per CUDA worker, at least one; the communicator's progress and channel threads
 * run beside that thread), binds its workers and its StarPU-MPI thread to
 * its cores, and on nodes with several GPUs gives each rank its own (GPU i to rank i mod k, ranks sharing
 * GPUs when there are more ranks than GPUs).
 *
 * The user's own choices win: STARPU_NCPU / options.ncpus keep the worker count, STARPU_WORKERS_CPUID,
 * STARPU_WORKERS_COREID, STARPU_WORKERS_NOBIND and STARPU_WORKERS_GETBIND keep the binding, STARPU_NCUDA /
 * options.ncuda and STARPU_WORKERS_CUDAID keep the GPUs; STARLOPS_PLACEMENT=starpu leaves all of it to
 * StarPU. One rank on a node of a larger job keeps StarPU's placement; a job of one rank gets a CPU worker on
 * every core not driving a GPU (no core kept for the StarPU-MPI thread, which has nothing to do).
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

/* The node's topology as StarPU sees it: its cores (hwloc's allowed cores) and hardware threads per core
 * (StarPU binds threads by the logical index of a PU, the first PU of core c being c * threads per core). */
typedef struct {
  hwloc_topology_t topo;
  int cores, pus_per_core;
} node_topo;

static int node_load(node_topo *t)
{
  if (hwloc_topology_init(&t->topo) != 0) return -1;
  if (hwloc_topology_load(t->topo) != 0) {
    hwloc_topology_destroy(t->topo);
    return -1;
  }
  int c = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
  int p = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PU);
  if (p <= 0) {
    hwloc_topology_destroy(t->topo);
    return -1;
  }
  t->cores = c > 0 ? c : p; /* no cores reported: StarPU takes PUs as cores too */
  t->pus_per_core = p / t->cores > 0 ? p / t->cores : 1;
  return 0;
}

/* rank_cpus = the OS CPUs of the node's cores [lo, hi) */
static void keep_rank_cpus(const node_topo *t, int lo, int hi)
{
  CPU_ZERO(&rank_cpus);
  int pus = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PU);
  for (int i = lo * t->pus_per_core; i < hi * t->pus_per_core && i < pus; i++) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PU, (unsigned)i);
    if (pu && pu->os_index < CPU_SETSIZE) CPU_SET((int)pu->os_index, &rank_cpus);
  }
  have_rank_cpus = CPU_COUNT(&rank_cpus) > 0;
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

static int user_binds(void)
{
  return env_set("STARPU_WORKERS_CPUID") || env_set("STARPU_WORKERS_COREID") ||
         (env_set("STARPU_WORKERS_NOBIND") && atoi(getenv("STARPU_WORKERS_NOBIND")) != 0) ||
         (env_set("STARPU_WORKERS_GETBIND") && atoi(getenv("STARPU_WORKERS_GETBIND")) != 0);
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

  node_topo t;
  if (node_load(&t) != 0) return SL_SUCCESS; /* no topology: StarPU's own placement */
  int cores = t.cores, ht = t.pus_per_core;
  if (k == 1) {
    /* the node is the rank's: StarPU binds its workers over all of it, starlops' threads may use all of it
     * (not only the core mpirun bound the main thread to, which they would inherit) */
    if (!user_binds()) keep_rank_cpus(&t, 0, cores);
    /* a job of one rank: StarPU-MPI would keep a core for its thread, which starlops never wakes (its
     * transfers are its own comm layer's, and one rank has none); that core gets a worker too */
    int ncuda = want_cuda ? (conf->ncuda >= 0 && conf->ncuda < ngpus ? conf->ncuda : ngpus) : 0;
    if (sl_ctx.size == 1 && conf->ncpus < 0) conf->ncpus = cores - ncuda >= 1 ? cores - ncuda : 1;
    hwloc_topology_destroy(t.topo);
    return SL_SUCCESS;
  }
  int lo = cores >= k ? (int)((int64_t)r * cores / k) : r % cores;
  int hi = cores >= k ? (int)((int64_t)(r + 1) * cores / k) : lo + 1;
  int share = hi - lo;

  /* the rank's GPUs: its own on a node with several, unless the user chose */
  int ncuda = 0;
  if (want_cuda && ngpus > 0) {
    if (conf->ncuda >= 0 || env_set("STARPU_WORKERS_CUDAID") || ngpus == 1) {
      ncuda = conf->ncuda >= 0 && conf->ncuda < ngpus ? conf->ncuda : ngpus;
    } else {
      for (int g = ngpus >= k ? r : r % ngpus; g < ngpus && ncuda < STARPU_NMAXWORKERS; g += k)
        conf->workers_cuda_gpuid[ncuda++] = (unsigned)g;
      conf->use_explicit_workers_cuda_gpuid = 1;
      conf->ncuda = ncuda;
    }
  }
  if (conf->ncpus < 0) conf->ncpus = share - 1 - ncuda >= 1 ? share - 1 - ncuda : 1;
  if (!user_binds()) {
    /* StarPU hands these out in turn (CPU and CUDA workers, then the StarPU-MPI thread), wrapping round the
     * rank's cores when it has more threads than cores; starlops' own threads run on the same cores */
    for (int i = 0; i < STARPU_NMAXWORKERS; i++) conf->workers_bindid[i] = (unsigned)((lo + i % share) * ht);
    conf->use_explicit_workers_bindid = 1;
    sl_ctx.core_lo = lo;
    sl_ctx.core_hi = hi;
    keep_rank_cpus(&t, lo, hi);
  }
  hwloc_topology_destroy(t.topo);
  return SL_SUCCESS;
}
