/* The progress thread: completes the non-blocking MPI calls that collective tasks posted, then releases
 * those tasks (their end dependency), so no worker waits on a transfer. It polls while requests are
 * pending (yielding the core between polls, sleeping once nothing has completed for a while) and sleeps on
 * a condition variable when there are none. */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "internal.h"
#include "comm/comm.h"

static pthread_t thread;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static comm_pending *incoming;
static int stopping, running;

enum { SPIN_POLLS = 20000, NAP_NS = 20000 };

static void complete(comm_pending *p)
{
  if (p->finish) p->finish(p->arg);
  starpu_task_end_dep_release(p->task); /* may free p (it lives in the task's arguments) */
}

static void *progress_main(void *unused)
{
  comm_pending *active = NULL;
  long idle_polls = 0;
  for (;;) {
    pthread_mutex_lock(&lock);
    while (!active && !incoming && !stopping) pthread_cond_wait(&wake, &lock);
    if (!active && !incoming && stopping) {
      pthread_mutex_unlock(&lock);
      break;
    }
    while (incoming) { /* oldest first */
      comm_pending *p = incoming;
      incoming = p->next;
      p->next = active;
      active = p;
    }
    pthread_mutex_unlock(&lock);
    int progressed = 0;
    for (comm_pending **pp = &active; *pp;) {
      comm_pending *p = *pp;
      int done = 0;
      int rc = MPI_Testall(p->nreq, p->reqs, &done, MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) {
        sl_async_error(SL_E_COMM, "collective: MPI_Testall failed (MPI error %d)", rc);
        done = 1;
      }
      if (!done) {
        pp = &p->next;
        continue;
      }
      *pp = p->next;
      complete(p);
      progressed = 1;
    }
    idle_polls = progressed ? 0 : idle_polls + 1;
    if (!active) continue;
    if (idle_polls < SPIN_POLLS) {
      sched_yield();
    } else {
      struct timespec ts = {0, NAP_NS};
      nanosleep(&ts, NULL);
    }
  }
  return NULL;
}

int comm_progress_start(void)
{
  stopping = 0;
  incoming = NULL;
  int rc = pthread_create(&thread, NULL, progress_main, NULL);
  if (rc != 0) return sl_error(SL_E_RUNTIME, "sl_init: cannot start the communication progress thread (error %d)", rc);
  running = 1;
  return SL_SUCCESS;
}

void comm_progress_stop(void)
{
  if (!running) return;
  pthread_mutex_lock(&lock);
  stopping = 1;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
  pthread_join(thread, NULL);
  running = 0;
}

void comm_progress_add(comm_pending *p)
{
  pthread_mutex_lock(&lock);
  p->next = incoming;
  incoming = p;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
}
