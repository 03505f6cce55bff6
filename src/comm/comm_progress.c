/* The progress thread: completes the non-blocking MPI calls that collectives posted, then has their tasks
 * released (their end dependency) or, for a collective without a task (comm_direct.c), releases its data,
 * so no worker waits on a transfer. It polls while requests are pending (yielding the core between polls,
 * sleeping once nothing has completed for a while) and sleeps on a condition variable when there are none.
 * A task's release must happen on a worker thread (a task's termination runs the scheduler's post-exec
 * hook, which dmda runs per worker), so the thread submits a tiny top-priority task that releases it; a
 * data release runs only codelet-less tasks (no hook) and happens here. */
#include <pthread.h>
#include <stdio.h>
#include <sched.h>
#include <time.h>

#include "internal.h"
#include "comm/comm.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static pthread_t thread;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static comm_pending *incoming;
static int stopping, running;

enum { SPIN_POLLS = 20000, NAP_NS = 20000 };

static struct starpu_codelet cl_release;

static void release_func(void *buffers[], void *arg) { starpu_task_end_dep_release((struct starpu_task *)arg); }

void comm_progress_complete(comm_pending *p)
{
  if (p->finish) p->finish(p->arg);
  if (p->done) { /* a direct collective: no task to release */
    p->done(p->arg);
    return;
  }
  struct starpu_task *target = p->task; /* p lives in the target's arguments: gone once it is released */
  struct starpu_task *t = starpu_task_create();
  t->cl = &cl_release;
  t->cl_arg = target;
  t->priority = STARPU_MAX_PRIO;
  t->name = "sl_comm_release";
  if (starpu_task_submit(t) != 0) {
    /* cannot happen short of a shutdown; release here rather than leak the collective */
    starpu_task_destroy(t);
    starpu_task_end_dep_release(target);
  }
}

static void *progress_main(void *unused)
{
#ifdef SL_HAVE_CUDA
  /* a CUDA context on this thread: a CUDA-aware MPI checks buffer pointers against it while progressing */
  int ids[1];
  if (starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, 1) == 1 &&
      cudaSetDevice(starpu_worker_get_devid(ids[0])) != cudaSuccess)
    (void)cudaGetLastError();
#endif
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
      if (done && rc == MPI_SUCCESS && p->advance) {
        p->nreq = p->advance(p->arg);
        done = p->nreq == 0;
        if (!done) progressed = 1;
      }
      if (!done) {
        double limit = sl_watch_limit(), waited = limit > 0 ? sl_watch_now() - p->posted : 0;
        if (limit > 0 && waited > limit) {
          char what[128];
          snprintf(what, sizeof what, "the comm layer's %s (posted, not yet completed)", p->what ? p->what : "collective");
          sl_watch_expired(what, waited);
        }
        pp = &p->next;
        continue;
      }
      *pp = p->next;
      comm_progress_complete(p);
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
  starpu_codelet_init(&cl_release);
  cl_release.name = "sl_comm_release";
  cl_release.cpu_funcs[0] = release_func;
  cl_release.cuda_funcs[0] = release_func;
  cl_release.nbuffers = 0;
  stopping = 0;
  incoming = NULL;
  int rc = sl_cores_thread_create(&thread, "sl-progress", progress_main, NULL);
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
