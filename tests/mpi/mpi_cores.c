/* Where a rank's StarPU threads run when several ranks share a node. Usage: mpi_cores MODE [NCPU]
 *   node:    the node's cores split between its ranks: rank r of k owns the cores [r C / k, (r + 1) C / k)
 *            (core r mod C when C < k); its CPU workers and StarPU-MPI thread are each bound to one PU of
 *            its cores, distinct cores while there are enough; NCPU given: that many CPU workers (the user's
 *            STARPU_NCPU), else max(1, its cores - 1 - CUDA workers); a job of one rank: StarPU's binding, a
 *            CPU worker on every core not driving a GPU
 *   starpu:  STARLOPS_PLACEMENT=starpu: StarPU's placement (the first CPU worker on the node's first core)
 *   nobind:  STARPU_WORKERS_NOBIND=1: worker count as in node (StarPU's for a rank that drives a GPU beside
 *            other ranks), the threads left with the binding the program started with (mpirun's)
 * The expected cores come from hwloc and the node communicator here; the bindings are read back from
 * /proc/self/task (the kernel's view of each thread). */
#define _GNU_SOURCE
#include <dirent.h>
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include <starpu.h>

/* The OS CPU numbers a thread of this process may run on, from /proc/self/task/<tid>/status. */
static int thread_cpus(const char *tid, cpu_set_t *set)
{
  char path[320], line[4096];
  snprintf(path, sizeof path, "/proc/self/task/%s/status", tid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int found = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Cpus_allowed_list:", 18)) continue;
    CPU_ZERO(set);
    char *p = line + 18;
    while (*p) {
      while (*p == ' ' || *p == '\t' || *p == ',') p++;
      if (*p < '0' || *p > '9') break;
      long a = strtol(p, &p, 10), b = a;
      if (*p == '-') b = strtol(p + 1, &p, 10);
      for (long c = a; c <= b; c++) CPU_SET((int)c, set);
    }
    found = 0;
  }
  fclose(f);
  return found;
}

static void thread_name(const char *tid, char *name, size_t n)
{
  char path[320];
  snprintf(path, sizeof path, "/proc/self/task/%s/comm", tid);
  name[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f) return;
  if (fgets(name, (int)n, f)) name[strcspn(name, "\n")] = 0;
  fclose(f);
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "node";
  int want_ncpu = argc > 2 ? atoi(argv[2]) : -1;
  cpu_set_t start; /* the binding mpirun gave the program, before starlops starts */
  CPU_ZERO(&start);
  if (sched_getaffinity(0, sizeof start, &start) != 0) CPU_ZERO(&start);
  mc_init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int r = 0, k = 1;
  MPI_Comm_rank(node, &r);
  MPI_Comm_size(node, &k);
  MPI_Comm_free(&node);

  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  if (cores <= 0) cores = pus;
  int lo = cores >= k ? r * cores / k : r % cores, hi = cores >= k ? (r + 1) * cores / k : lo + 1;
  /* every OS CPU number of the rank's cores, and of the node's first core */
  cpu_set_t mine, first;
  CPU_ZERO(&mine);
  CPU_ZERO(&first);
  for (int c = 0; c < cores; c++) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, cores == pus ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE, (unsigned)c);
    unsigned id;
    hwloc_bitmap_foreach_begin(id, core->cpuset)
      if (c >= lo && c < hi) CPU_SET((int)id, &mine);
      if (c == 0) CPU_SET((int)id, &first);
    hwloc_bitmap_foreach_end();
  }
  cpu_set_t all_cpus;
  CPU_ZERO(&all_cpus);
  for (int i = 0; i < pus; i++) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
    CPU_SET((int)pu->os_index, &all_cpus);
  }
  hwloc_topology_destroy(topo);

  int ncpu = (int)starpu_cpu_worker_get_count(), ncuda = (int)starpu_cuda_worker_get_count();
  /* a rank driving a GPU beside other ranks keeps StarPU's placement: its worker count, and its binding */
  int gpu_shared = k > 1 && ncuda > 0;
  if (gpu_shared && !strcmp(mode, "node")) mode = "starpu";
  int share = hi - lo;
  int placed = k > 1 && strcmp(mode, "starpu") != 0 && !gpu_shared;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1 && strcmp(mode, "starpu") != 0) {
    /* a job of one rank: a CPU worker on every core not driving a GPU */
    int expect = want_ncpu > 0 ? want_ncpu : (cores - ncuda >= 1 ? cores - ncuda : 1);
    CHECK(ncpu == expect, "one rank: %d CPU workers, expected %d (cores %d, CUDA workers %d)", ncpu, expect, cores, ncuda);
  }
  if (placed) {
    int expect = want_ncpu > 0 ? want_ncpu : (share - 1 - ncuda >= 1 ? share - 1 - ncuda : 1);
    CHECK(ncpu == expect, "rank %d (node rank %d of %d, cores %d-%d): %d CPU workers, expected %d", rank, r, k, lo,
          hi - 1, ncpu, expect);
  }

  /* a collective, so that a channel thread starts (run with STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES=1: the
   * allreduce blocks on the channel's own thread), started by a worker's task */
  int64_t n = 1001;
  sl_dist dist = sl_dist_scatter(0);
  sl_array *x = NULL;
  sl_scalar *dot = NULL;
  CHECK_OK(sl_array_create(&x, 1, &n, SL_FLOAT64, &dist));
  CHECK_OK(sl_scalar_create(&dot, SL_FLOAT64));
  CHECK_OK(sl_array_fill(x, (sl_cscalar){2, 0}));
  CHECK_OK(sl_array_dot(x, x, dot));
  double v = 0;
  CHECK_OK(sl_scalar_get(dot, &v));
  CHECK(v == 4.0 * (double)n, "dot: %g, expected %g", v, 4.0 * (double)n);
  sl_scalar_destroy(&dot);
  sl_array_destroy(&x);
  /* starlops' own threads: on the rank's cores (its share, or the node when alone and StarPU binds) */
  int own_threads = 0;

  /* each StarPU thread's binding */
  DIR *d = opendir("/proc/self/task");
  CHECK(d != NULL, "cannot list /proc/self/task");
  int nworkers = 0, nmpi = 0, on_first = 0;
  cpu_set_t used;
  CPU_ZERO(&used);
  int distinct = 1;
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char name[64];
    thread_name(e->d_name, name, sizeof name);
    int worker = !strncmp(name, "CPU ", 4), mpi = !strcmp(name, "MPI");
    if (!strcmp(name, "sl-progress") || !strcmp(name, "sl-channel")) {
      cpu_set_t set;
      own_threads++;
      CHECK(thread_cpus(e->d_name, &set) == 0, "rank %d: no Cpus_allowed_list for thread %s", rank, name);
      if (!strcmp(mode, "node") && size == 1)
        CHECK(CPU_EQUAL(&set, &all_cpus), "rank %d: thread '%s' is not on every core of the node", rank, name);
      else if (placed && strcmp(mode, "nobind"))
        CHECK(CPU_EQUAL(&set, &mine), "rank %d (cores %d-%d): thread '%s' is not on exactly the rank's cores", rank, lo,
              hi - 1, name);
      continue;
    }
    if (!worker && !mpi) continue;
    cpu_set_t set;
    CHECK(thread_cpus(e->d_name, &set) == 0, "rank %d: no Cpus_allowed_list for thread %s", rank, name);
    int n = CPU_COUNT(&set);
    cpu_set_t inter;
    CPU_AND(&inter, &set, &mine);
    if (!strcmp(mode, "nobind")) {
      CHECK(CPU_EQUAL(&set, &start), "rank %d: thread '%s' is bound to %d CPUs, not left with the program's binding "
            "(%d CPUs) under STARPU_WORKERS_NOBIND=1", rank, name, n, CPU_COUNT(&start));
    } else if (placed && mpi && ncpu + ncuda >= share) {
      /* no core left for it: the StarPU-MPI thread (asleep) stays with the program's binding */
      CHECK(CPU_EQUAL(&set, &start), "rank %d (cores %d-%d, %d CPU workers): the StarPU-MPI thread is bound to %d CPUs, "
            "not left with the program's binding", rank, lo, hi - 1, ncpu, n);
    } else if (placed) {
      CHECK(n == 1 && CPU_COUNT(&inter) == 1, "rank %d (cores %d-%d): thread '%s' bound to %d CPUs, %d of them its own", rank,
            lo, hi - 1, name, n, CPU_COUNT(&inter));
      if (worker) {
        cpu_set_t again;
        CPU_AND(&again, &used, &set);
        if (CPU_COUNT(&again)) distinct = 0;
        CPU_OR(&used, &used, &set);
      }
    } else if (worker && !strcmp(name, "CPU 0")) {
      CPU_AND(&inter, &set, &first);
      on_first = n == 1 && CPU_COUNT(&inter) == 1;
    }
    nworkers += worker;
    nmpi += mpi;
  }
  if (d) closedir(d);
  CHECK(nworkers == ncpu, "rank %d: %d threads named 'CPU n', %d CPU workers", rank, nworkers, ncpu);
  CHECK(nmpi == 1, "rank %d: %d StarPU-MPI threads", rank, nmpi);
  CHECK(own_threads == (size > 1 && getenv("STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES") ? 2 : 1),
        "rank %d: %d threads named sl-progress or sl-channel", rank, own_threads);
  if (placed && !strcmp(mode, "node") && ncpu <= share)
    CHECK(distinct, "rank %d (cores %d-%d): two of its %d CPU workers share a core", rank, lo, hi - 1, ncpu);
  if (!strcmp(mode, "starpu"))
    CHECK(on_first, "rank %d: under STARLOPS_PLACEMENT=starpu its first CPU worker is not on the node's first core", rank);
  /* how the main thread waits, as starlops_info prints it: STARLOPS_WAIT_SPIN_US where set; unset, a poll that
   * follows the rank's waits where the compute codelets run on CUDA workers, else it sleeps at once */
  double dflt_cache = mc_host_cache_default_bytes(); /* collective */
  char *info = NULL;
  size_t info_len = 0;
  FILE *f = open_memstream(&info, &info_len);
  CHECK(f && sl_info_print(f) == SL_SUCCESS, "sl_info_print: %s", sl_last_error());
  if (f) fclose(f);
  if (rank == 0 && info) {
    const char *us = getenv("STARLOPS_WAIT_SPIN_US"), *where = getenv("STARLOPS_CODELET_WHERE");
    int on_gpu = sl_ncuda_workers() > 0 && (!where || !*where || !strcmp(where, "auto") || !strcmp(where, "cuda"));
    double poll = us && *us ? atof(us) : 0;
    char want[96];
    if (poll > 0) snprintf(want, sizeof want, "the main thread polls %.0f us, then sleeps", poll);
    else if (!(us && *us) && on_gpu) snprintf(want, sizeof want, "the main thread polls 1.5x its recent waits (0.1 ms, up to 4 ms), then sleeps");
    else snprintf(want, sizeof want, "the main thread sleeps at once");
    CHECK(strstr(info, want), "starlops_info's waits: '%s' not in\n%s", want, info);
    /* the host allocation cache: STARLOPS_HOST_CACHE_MB where set, unset an eighth of the node's memory over
     * the ranks on it; off on a rank with a CUDA worker and with 0 */
    const char *mb = getenv("STARLOPS_HOST_CACHE_MB");
    double cap = mb && *mb ? atof(mb) : dflt_cache / 1048576.0;
    if (sl_ncuda_workers() == 0 && cap >= 1)
      snprintf(want, sizeof want, "host cache:   freed blocks of 1 MiB and more kept up to %.0f MiB", cap);
    else snprintf(want, sizeof want, "host cache:   off");
    CHECK(strstr(info, want), "starlops_info's host cache: '%s' not in\n%s", want, info);
  }
  free(info);
  if (rank == 0)
    printf("mpi_cores %s: %d rank(s) on the node, %d cores; rank 0 has %d CPU workers on cores %d-%d\n", mode, k, cores,
           ncpu, lo, hi - 1);
  return mc_finish("mpi_cores");
}
