/* Large collectives on host MPI as blocking calls, one thread per channel. A non-blocking collective of
 * Open MPI (libnbc) moves a few MiB at half the bandwidth of the blocking call, whose algorithms are tuned;
 * so from STARLOPS_COMM_BLOCKING_BYTES (8 MiB by default; 0: never) the task hands its collective to its
 * channel's thread, which makes the blocking call and then has the task released as the progress thread
 * does (allreduce and reduce-scatter above the ring's threshold take the ring instead, comm_ring.c). No worker is held, and the progress thread keeps completing the other channels' requests. Order
 * is safe: a channel's collectives run one at a time in submission order on every rank (its order token),
 * and its thread takes them first in, first out; each channel has its own thread, so a call blocked on one
 * communicator never delays another's. The size that decides is the same on every rank (the reduced or
 * gathered vector), and so is the threshold (agreed by sl_init): among the CPU workers' collectives a
 * blocking call never meets a non-blocking one. (The CUDA-aware backend's device path is blocking at every
 * size, comm_task.c; its CPU path takes this file's rule.)
 *
 * A thread waiting for the direct collectives (comm_direct_wait: sl_wait) takes a queued call of a collective
 * without a task from a channel's queue and makes it itself (comm_blocking_help), saving the wake-up of the
 * channel's thread and the one of the waiter when it is over. It takes at most one call at a time, and a channel has at most one
 * call queued (its order token is held until the call is over), so a channel's calls stay in order and every
 * other channel keeps its own thread. */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"
#include "comm/comm_coll.h"

struct comm_blocker {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  comm_pending *head, *tail;
  int stopping;
  comm_blocker *next; /* the list of every channel's blocker (comm_blocking_help) */
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static comm_blocker *list;

/* Makes p's blocking call and completes p. */
static void run_one(comm_pending *p)
{
  coll *c = p->arg;
  int rc = coll_run_mpi_blocking(c);
  if (rc != SL_SUCCESS) sl_async_error(rc, "%s: %s", coll_kind_name(c->kind), sl_last_error());
  comm_progress_complete(p);
}

/* b's first queued call, taken off its queue (b->lock held), or NULL; direct_only: only a collective without a
 * task (one whose completion needs no worker's CUDA context nor a release task). */
static comm_pending *pop(comm_blocker *b, int direct_only)
{
  comm_pending *p = b->head;
  if (p && direct_only && !p->done) p = NULL;
  if (p) {
    b->head = p->next;
    if (!b->head) b->tail = NULL;
  }
  return p;
}

static comm_pending *take(comm_blocker *b, int direct_only)
{
  pthread_mutex_lock(&b->lock);
  comm_pending *p = pop(b, direct_only);
  pthread_mutex_unlock(&b->lock);
  return p;
}

int comm_blocking_help(void)
{
  comm_pending *p = NULL;
  pthread_mutex_lock(&list_lock);
  for (comm_blocker *b = list; b && !p; b = b->next) p = take(b, 1);
  pthread_mutex_unlock(&list_lock);
  int got = p != NULL; /* p is gone once run */
  if (p) run_one(p);
  return got;
}

static void *blocker_main(void *arg)
{
  comm_blocker *b = arg;
  for (;;) {
    pthread_mutex_lock(&b->lock);
    while (!b->head && !b->stopping) pthread_cond_wait(&b->wake, &b->lock);
    comm_pending *p = pop(b, 0);
    pthread_mutex_unlock(&b->lock);
    if (!p) break;
    run_one(p);
  }
  return NULL;
}

int comm_blocking_add(comm_channel *ch, comm_pending *p)
{
  if (!ch->blocker) {
    comm_blocker *b = calloc(1, sizeof *b);
    if (!b) return sl_error(SL_E_NOMEM, "collective: out of memory");
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->wake, NULL);
    int rc = sl_cores_thread_create(&b->thread, "sl-channel", blocker_main, b); /* not on the core of the worker that starts it */
    if (rc != 0) {
      free(b);
      return sl_error(SL_E_RUNTIME, "collective: cannot start the channel's thread (error %d)", rc);
    }
    ch->blocker = b;
    pthread_mutex_lock(&list_lock);
    b->next = list;
    list = b;
    pthread_mutex_unlock(&list_lock);
  }
  comm_blocker *b = ch->blocker;
  p->next = NULL;
  pthread_mutex_lock(&b->lock);
  if (b->tail) b->tail->next = p;
  else b->head = p;
  b->tail = p;
  pthread_cond_signal(&b->wake);
  pthread_mutex_unlock(&b->lock);
  comm_direct_kick();
  return SL_SUCCESS;
}

void comm_blocking_stop(comm_channel *ch)
{
  comm_blocker *b = ch->blocker;
  if (!b) return;
  pthread_mutex_lock(&list_lock);
  for (comm_blocker **q = &list; *q; q = &(*q)->next)
    if (*q == b) {
      *q = b->next;
      break;
    }
  pthread_mutex_unlock(&list_lock);
  pthread_mutex_lock(&b->lock);
  b->stopping = 1;
  pthread_cond_signal(&b->wake);
  pthread_mutex_unlock(&b->lock);
  pthread_join(b->thread, NULL);
  pthread_mutex_destroy(&b->lock);
  pthread_cond_destroy(&b->wake);
  free(b);
  ch->blocker = NULL;
}
