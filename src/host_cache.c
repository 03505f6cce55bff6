/* The host allocation cache. StarPU keeps device blocks that a destroyed handle leaves for the next allocation
 * of the same size, but frees main-memory blocks at once; every new block then costs the kernel's first-touch
 * faults when it is first written (about 1.5 us per 4 KiB page on a 2-core virtual machine: 13 ms for the four
 * 8 MiB work vectors of a CG on a new operator, a fifth of a 20-iteration solve at 1000^2). On a rank without a
 * CUDA worker StarPU's main-memory allocations (the home-less chunks of temporaries and work vectors, and the
 * host blocks of the arrays starlops allocates) go
 * through these hooks, which keep freed blocks of at least 1 MiB, up to the cap, and hand the most recent one
 * of the same size and memory node to the next allocation; the oldest go when the cap is passed. Ranks with a
 * CUDA worker (StarPU pins host memory through CUDA) or several NUMA memory nodes (StarPU binds blocks to
 * them) keep StarPU's own allocator. The cap: STARLOPS_HOST_CACHE_MB, unset an eighth of the node's memory (the
 * job's cgroup limit where lower) over the ranks sharing it; 0 turns the cache off. Everything cached is freed
 * when an allocation fails (then the allocation is tried again) and at sl_finalize; nothing else gives it
 * back early (with overcommit an allocation rarely fails: the cap is the bound). A reused block holds its old
 * contents: starlops zero-fills every block it allocates. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

enum { SLOTS = 64, ALIGN = 64 };
#define MIN_BYTES ((size_t)1 << 20)

typedef struct {
  void *p;
  size_t n;
  unsigned node;
  unsigned long stamp; /* when it was freed: the oldest goes first */
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot slots[SLOTS];
static int nslots;
static size_t cached, cap;
static unsigned long clock_;
/* Takes slot i's block out of the cache (lock held). */
static void *take(int i)
{
  void *p = slots[i].p;
  cached -= slots[i].n;
  slots[i] = slots[--nslots];
  return p;
}

static void drop(int i) { free(take(i)); } /* lock held */

static void flush(void)
{
  pthread_mutex_lock(&lock);
  while (nslots > 0) drop(nslots - 1);
  pthread_mutex_unlock(&lock);
}

int sl_host_cache_malloc(unsigned node, void **A, size_t dim, int flags)
{
  (void)flags; /* no pinning: the hooks run only where there is no CUDA worker */
  if (dim >= MIN_BYTES) {
    pthread_mutex_lock(&lock);
    int best = -1;
    for (int i = 0; i < nslots; i++)
      if (slots[i].n == dim && slots[i].node == node && (best < 0 || slots[i].stamp > slots[best].stamp)) best = i;
    if (best >= 0) {
      *A = take(best);
      pthread_mutex_unlock(&lock);
      return 0;
    }
    pthread_mutex_unlock(&lock);
  }
  void *p = NULL;
  if (posix_memalign(&p, ALIGN, dim ? dim : 1) != 0) {
    flush(); /* the cache's blocks back to the system, then once more */
    if (posix_memalign(&p, ALIGN, dim ? dim : 1) != 0) {
      *A = NULL;
      return -ENOMEM;
    }
  }
  *A = p;
  return 0;
}

int sl_host_cache_free(unsigned node, void *A, size_t dim, int flags)
{
  (void)flags;
  if (!A) return 0;
  /* starpu_free passes no size: such a block goes back to the system */
  if (dim < MIN_BYTES || dim > cap) {
    free(A);
    return 0;
  }
  pthread_mutex_lock(&lock);
  while (nslots > 0 && (nslots == SLOTS || cached + dim > cap)) { /* make room: the oldest first */
    int old = 0;
    for (int i = 1; i < nslots; i++)
      if (slots[i].stamp < slots[old].stamp) old = i;
    drop(old);
  }
  slots[nslots++] = (slot){A, dim, node, ++clock_};
  cached += dim;
  pthread_mutex_unlock(&lock);
  return 0;
}

size_t sl_host_cache_bytes(void)
{
  pthread_mutex_lock(&lock);
  size_t b = cached;
  pthread_mutex_unlock(&lock);
  return b;
}

/* A cgroup's memory limit in bytes (v2 memory.max, else v1), 0 where there is none. */
static size_t cgroup_limit(void)
{
  const char *files[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(files[i], "r");
    if (!f) continue;
    unsigned long long v = 0;
    int got = fscanf(f, "%llu", &v); /* "max" (no limit) reads nothing */
    fclose(f);
    if (got == 1 && v > 0) return (size_t)v;
  }
  return 0;
}

/* The default cap: an eighth of the node's memory (the job's cgroup limit where it is lower) over the ranks
 * sharing it. */
static size_t default_cap(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  size_t mem = (size_t)pages * (size_t)page, lim = cgroup_limit();
  if (lim > 0 && lim < mem) mem = lim;
  int k = sl_ctx.node_ranks > 0 ? sl_ctx.node_ranks : 1;
  return mem / 8 / (size_t)k;
}

void sl_host_cache_start(int64_t cap_mb)
{
  cap = cap_mb < 0 ? default_cap() : (size_t)cap_mb << 20;
  sl_ctx.host_cache_bytes = 0;
  /* with several NUMA memory nodes StarPU binds its host blocks to them (hwloc's allocator): left to it */
  if (sl_ctx.ncuda > 0 || starpu_memory_nodes_get_numa_count() > 1 || cap < MIN_BYTES) return;
  starpu_malloc_set_hooks(sl_host_cache_malloc, sl_host_cache_free);
  sl_ctx.host_cache_bytes = cap; /* nonzero: the hooks are installed */
}

void sl_host_cache_stop(void)
{
  if (sl_ctx.host_cache_bytes > 0) starpu_malloc_set_hooks(NULL, NULL);
  sl_ctx.host_cache_bytes = 0;
  flush();
}

void sl_host_cache_set_cap(size_t bytes) /* tests */
{
  pthread_mutex_lock(&lock);
  cap = bytes;
  pthread_mutex_unlock(&lock);
}
