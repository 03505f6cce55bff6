/* Memory shared by the ranks of one node: each rank's segment is a POSIX shared-memory object that every
 * other rank maps too, so a rank can write straight into another's buffer (the redistributions' all-to-all,
 * array_redistribute.c). A segment is created, reserved with posix_fallocate (a full /dev/shm fails here,
 * not later with SIGBUS on first touch) and mapped by its rank; the others map it once every rank has
 * created its own; the name is removed once every rank has mapped it, so nothing is left behind and the
 * memory goes when the last rank unmaps it. Creation is collective and agreed: every rank gets the segments
 * or none does (then the caller takes MPI). Destruction is local. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "comm/comm_coll.h"

struct comm_shm {
  int P;
  void **base;    /* this process's address of each rank's segment (NULL: empty or not mapped) */
  size_t *bytes;
};

static int one_node = -1; /* every rank of sl_ctx.comm on one node, each with one main-memory node: 1, 0, or -1
                             before comm_shm_init */
static long job_key;      /* rank 0's process id: the segments' names differ between jobs on one node */
static unsigned long seq; /* segments created so far, the same on every rank (creation is collective) */

int comm_shm_init(void)
{
  MPI_Comm node = MPI_COMM_NULL;
  int nsize = 0, size = 0;
  long key = (long)getpid();
  int rc = MPI_Comm_split_type(sl_ctx.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(node, &nsize);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(sl_ctx.comm, &size);
  if (rc == MPI_SUCCESS) rc = MPI_Bcast(&key, 1, MPI_LONG, 0, sl_ctx.comm);
  /* one main-memory node per rank: with several (STARPU_USE_NUMA) a task on another NUMA node's worker would
   * read and write its own copy of a segment, never the segment itself */
  int mine = nsize == size && starpu_memory_nodes_get_numa_count() == 1, all = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, sl_ctx.comm);
  if (rc != MPI_SUCCESS) return sl_error_mpi(rc, "comm_shm_init", __FILE__, __LINE__);
  one_node = all;
  job_key = key;
  return SL_SUCCESS;
}

int comm_shm_wanted(void)
{
  return one_node == 1 && sl_ctx.size > 1 && comm_backend_get() == COMM_BACKEND_MPI && !sl_ctx.set.comm_no_shm &&
         !sl_ctx.set.comm_gpu_staging && !sl_ctx.set.comm_stage_host;
}

static void shm_name(char *name, size_t n, unsigned long s, int rank)
{
  snprintf(name, n, "/starlops-%ld-%lu-%d", job_key, s, rank);
}

static void *map(int fd, size_t bytes)
{
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? NULL : p;
}

void comm_shm_destroy(comm_shm *s)
{
  if (!s) return;
  for (int r = 0; s->base && s->bytes && r < s->P; r++)
    if (s->base[r]) munmap(s->base[r], s->bytes[r]);
  free(s->base);
  free(s->bytes);
  free(s);
}

/* Every rank's ok (0 or 1) ANDed; the MPI call's failure counts as 0. */
static int all_ok(int ok)
{
  int all = 0;
  if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, sl_ctx.comm) != MPI_SUCCESS) return 0;
  return all;
}

int comm_shm_create(int rc, const size_t *bytes, comm_shm **out)
{
  *out = NULL;
  unsigned long s = seq++;
  if (!comm_shm_wanted()) return rc;
  int P = sl_ctx.size, me = sl_ctx.rank;
  char own[96], name[96];
  shm_name(own, sizeof own, s, me);
  comm_shm *sh = calloc(1, sizeof *sh);
  int ok = rc == SL_SUCCESS && sh, created = 0;
  if (sh) {
    sh->P = P;
    sh->base = calloc((size_t)P, sizeof(void *));
    sh->bytes = calloc((size_t)P, sizeof(size_t));
    ok = ok && sh->base && sh->bytes;
  }
  if (sl_ctx.set.comm_shm_fail_rank == me + 1) ok = 0; /* the test hook: this rank cannot make its segment */
  /* this rank's segment */
  if (ok && bytes[me] > 0) {
    int fd = shm_open(own, O_CREAT | O_EXCL | O_RDWR, 0600);
    created = fd >= 0;
    ok = created && ftruncate(fd, (off_t)bytes[me]) == 0 && posix_fallocate(fd, 0, (off_t)bytes[me]) == 0 &&
         (sh->base[me] = map(fd, bytes[me])) != NULL;
    if (sh->base[me]) sh->bytes[me] = bytes[me];
    if (fd >= 0) close(fd);
  }
  /* the others' segments, once every rank has its own (two agreements, made by every rank alike) */
  ok = all_ok(ok);
  for (int r = 0; ok && r < P; r++) {
    if (r == me || bytes[r] == 0) continue;
    shm_name(name, sizeof name, s, r);
    int fd = shm_open(name, O_RDWR, 0600);
    sh->base[r] = fd >= 0 ? map(fd, bytes[r]) : NULL;
    if (sh->base[r]) sh->bytes[r] = bytes[r];
    if (fd >= 0) close(fd);
    ok = sh->base[r] != NULL;
  }
  ok = all_ok(ok);
  if (created) shm_unlink(own); /* every rank that needed it has mapped it, or none will use it */
  if (!ok) {
    comm_shm_destroy(sh);
    return rc;
  }
  *out = sh;
  return rc;
}

void *comm_shm_base(const comm_shm *s, int rank) { return s->base[rank]; }
