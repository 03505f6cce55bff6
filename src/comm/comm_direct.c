/* Host-MPI collectives without a task. A collective task costs StarPU's round trip (submission, a worker
 * woken to run it, its termination: 20-40 us on a CPU worker) on top of the MPI call. When no CUDA worker
 * may hold the data, the comm layer instead acquires the channel's order token and the buffers in main
 * memory with starpu_data_acquire_on_node_cb, in submission order (the sequential consistency tasks get),
 * and runs the collective from the callback of the last acquisition: in the submitting thread when the data
 * is ready, else in the thread that finished its producer. What is left after the short poll goes to the
 * progress or channel thread as for a task, which releases the data at the end (as StarPU-MPI does for its
 * transfers); later tasks on the data wait for that release, so the graph keeps its order. The token is
 * held from before the post to after completion, so a channel's collectives still run one at a time, in
 * submission order, on every rank. starpu_task_wait_for_all does not see these: sl_wait and the shutdown
 * also wait here (comm_direct_wait). STARLOPS_COMM_TASKS=1, and tracing, keep every collective a task. */
#include <pthread.h>
#include <stdlib.h>

#include "comm/comm_coll.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static long inflight;
static unsigned long kicks; /* blocking calls queued (comm_direct_kick) */
static int sleepers;        /* threads asleep in comm_direct_wait */

int comm_direct_enabled(void)
{
  const sl_settings *set = &sl_ctx.set;
  /* traced runs keep the tasks: the trace shows each collective as one (docs/tracing.md); with several
   * memory nodes (STARPU_USE_NUMA) an acquisition in main memory may need a copy a worker makes */
  return !set->comm_tasks && !set->comm_stage_host && !sl_ctx.tracing && sl_ctx.ncuda == 0 &&
         comm_backend_get() == COMM_BACKEND_MPI && starpu_memory_nodes_get_count() == 1;
}

int coll_direct_wanted(const coll *c)
{
  if (!comm_direct_enabled()) return 0;
  /* a handle outside sequential consistency is locked when it is free, not in submission order: holding
   * some handles while waiting for it could deadlock against a task that takes them in another order */
  if (!starpu_data_get_sequential_consistency_flag(c->ch->token)) return 0;
  for (int i = 0; i < c->nbuf; i++)
    if (!starpu_data_get_sequential_consistency_flag(c->handle[i])) return 0;
  return 1;
}

void coll_direct_done(void *arg)
{
  coll *c = arg;
  for (int i = 0; i < c->nbuf; i++) starpu_data_release_on_node(c->handle[i], STARPU_MAIN_RAM);
  starpu_data_release_on_node(c->ch->token, STARPU_MAIN_RAM);
  coll_free(c);
  pthread_mutex_lock(&lock);
  if (--inflight == 0) pthread_cond_broadcast(&idle);
  pthread_mutex_unlock(&lock);
}

/* StarPU's callback for one granted acquisition; the last one runs the collective. */
static void acquired(void *arg)
{
  coll *c = arg;
  if (__atomic_sub_fetch(&c->acquires_left, 1, __ATOMIC_ACQ_REL) != 0) return;
  for (int i = 0; i < c->nbuf; i++) c->ptr[i] = starpu_data_handle_to_pointer(c->handle[i], STARPU_MAIN_RAM);
  if (!coll_run_host(c)) coll_direct_done(c);
}

int coll_submit_direct(coll *c)
{
  c->direct = 1;
  c->acquires_left = c->nbuf + 1;
  pthread_mutex_lock(&lock);
  inflight++;
  pthread_mutex_unlock(&lock);
  /* the token first, as in a task; c may be gone once the last call returned */
  int n = c->nbuf;
  starpu_data_handle_t handle[COLL_MAXBUF];
  enum starpu_data_access_mode mode[COLL_MAXBUF];
  for (int i = 0; i < n; i++) {
    handle[i] = c->handle[i];
    mode[i] = c->mode[i];
  }
  int rc = starpu_data_acquire_on_node_cb(c->ch->token, STARPU_MAIN_RAM, STARPU_RW, acquired, c);
  for (int i = 0; i < n && rc == 0; i++) rc = starpu_data_acquire_on_node_cb(handle[i], STARPU_MAIN_RAM, mode[i], acquired, c);
  /* StarPU 1.3 returns 0 or asserts: a failure here cannot be undone (some acquisitions are queued) */
  if (rc != 0) return sl_error_starpu(rc, "starpu_data_acquire_on_node_cb", __FILE__, __LINE__);
  return SL_SUCCESS;
}

void comm_direct_kick(void)
{
  pthread_mutex_lock(&lock);
  kicks++;
  if (sleepers) pthread_cond_broadcast(&idle);
  pthread_mutex_unlock(&lock);
}

int comm_direct_wait(void)
{
  pthread_mutex_lock(&lock);
  int waited = inflight > 0;
  while (inflight > 0) {
    /* a large collective queued for its channel's thread is made here, by the thread that waits for it */
    unsigned long k = kicks;
    pthread_mutex_unlock(&lock);
    int ran = comm_blocking_help();
    pthread_mutex_lock(&lock);
    if (ran || kicks != k || inflight == 0) continue;
    sleepers++;
    pthread_cond_wait(&idle, &lock);
    sleepers--;
  }
  pthread_mutex_unlock(&lock);
  return waited;
}
