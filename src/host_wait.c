/* How the rank's threads wait for short tasks on a GPU. With StarPU's blocking drivers an idle worker sleeps
 * on a condition variable and the main thread sleeps in every wait, so a task that takes 0.1 ms on the GPU
 * pays two thread wake-ups besides StarPU's dispatch: the CUDA worker's when the task is submitted, and the
 * main thread's when it ends. By default both poll instead on ranks whose compute codelets run on CUDA workers
 * (the CUDA worker on any rank that has one), and neither on CPU-only ranks, where a polling main thread takes a
 * core from the workers that run the tasks it waits for (docs/gpu.md#waiting-for-short-tasks):
 *  - STARLOPS_CUDA_WORKER_SPIN=1: a CUDA worker never sleeps, while CPU workers keep sleeping. Where the rank
 *    has a core for each CUDA driver besides its CPU workers, polling the scheduler costs them nothing; where
 *    it has fewer cores, the polling thread shares a core with a CPU worker;
 *  - STARLOPS_WAIT_SPIN_US: the main thread polls that long in sl_wait, sl_scalar_get and a solver's
 *    convergence test before it sleeps (unset: a budget from the rank's recent waits, below). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "internal.h"

/* A short pause between two polls: about a microsecond. */
static void poll_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
  for (int i = 0; i < 32; i++) __builtin_ia32_pause();
#elif defined(__aarch64__)
  for (int i = 0; i < 32; i++) __asm__ volatile("yield");
#else
  sched_yield();
#endif
}

/* StarPU asks its progression hooks whether the calling worker may sleep: a CUDA worker may not. */
static unsigned cuda_worker_may_sleep(void *arg)
{
  (void)arg;
  int id = starpu_worker_get_id();
  return !(id >= 0 && starpu_worker_get_type(id) == STARPU_CUDA_WORKER);
}

static int hook = -1;

/* The main thread's poll where STARLOPS_WAIT_SPIN_US is unset and the compute codelets run on CUDA workers: 1.5
 * times the rank's recent waits (halved in weight at each wait), at least WAIT_SPIN_MIN_S (longer than the round
 * trip of a short GPU task, about 0.07 ms). A wait that outlasts its poll sleeps and pays a wake-up of 15-20 us
 * (H100 node, StarPU's condition variable; up to 0.2 ms in some processes): the stencils' forward and adjoint of
 * 0.8 ms, a reduction of 256 MiB, an FFT of 2048^2 all outlast a fixed 0.1 ms. Waits are short on a GPU rank while
 * its compute is on the GPU, and its CPU workers idle, so the core the poll takes costs little there. Where that
 * budget passes WAIT_SPIN_MAX_S the waits are long enough for a wake-up to be a few per mille of them, and the poll
 * falls back to WAIT_SPIN_MIN_S rather than hold a core for most of each wait. A wait counts as at most twice
 * WAIT_SPIN_MAX_S, so that one long wait among short ones moves the budget for a wait or two only. */
#define WAIT_SPIN_MIN_S 100e-6
#define WAIT_SPIN_MAX_S 4e-3
static int spin_adapts;        /* STARLOPS_WAIT_SPIN_US unset where the compute runs on CUDA workers */
static _Atomic double recent_s; /* the rank's recent waits, smoothed */

static double spin_budget(void)
{
  if (!spin_adapts) return sl_ctx.set.wait_spin_s;
  const double b = 1.5 * atomic_load_explicit(&recent_s, memory_order_relaxed);
  return b < WAIT_SPIN_MIN_S || b > WAIT_SPIN_MAX_S ? WAIT_SPIN_MIN_S : b;
}

/* a wait that found work pending took s seconds */
static void waited(double s)
{
  if (!spin_adapts) return;
  if (s > 2 * WAIT_SPIN_MAX_S) s = 2 * WAIT_SPIN_MAX_S;
  const double r = atomic_load_explicit(&recent_s, memory_order_relaxed);
  atomic_store_explicit(&recent_s, r > 0 ? 0.5 * (r + s) : s, memory_order_relaxed);
}

int sl_host_wait_adapts(void) { return spin_adapts; }

int sl_host_wait_start(void)
{
  sl_settings *s = &sl_ctx.set;
  if (s->cuda_worker_spin < 0) s->cuda_worker_spin = sl_ctx.ncuda > 0;
  /* the main thread polls by default only where the compute runs on the GPUs: with CPU workers running the
   * tasks it waits for, it would take a core from them */
  spin_adapts = 0;
  if (s->wait_spin_s < 0) {
    spin_adapts = sl_ctx.ncuda > 0 && sl_ctx.where == STARPU_CUDA;
    s->wait_spin_s = spin_adapts ? WAIT_SPIN_MIN_S : 0;
    atomic_store_explicit(&recent_s, 0.0, memory_order_relaxed);
  }
  if (sl_ctx.ncuda == 0 || !s->cuda_worker_spin || hook >= 0) return SL_SUCCESS;
  hook = starpu_progression_hook_register(cuda_worker_may_sleep, NULL);
  if (hook < 0)
    return sl_error(SL_E_RUNTIME, "sl_init: STARLOPS_CUDA_WORKER_SPIN=1 needs a StarPU progression hook, and all of "
                    "StarPU's hook slots are taken");
  starpu_wake_all_blocked_workers(); /* a CUDA worker asleep since start-up learns it may no longer sleep */
  return SL_SUCCESS;
}

void sl_host_wait_stop(void)
{
  if (hook >= 0) starpu_progression_hook_deregister(hook);
  hook = -1;
}

int sl_host_wait_tasks(void)
{
  const double budget = spin_budget();
  if (budget <= 0 || starpu_task_nsubmitted() == 0) return starpu_task_wait_for_all();
  const double t0 = sl_watch_now();
  do poll_pause();
  while (starpu_task_nsubmitted() > 0 && sl_watch_now() - t0 < budget);
  int rc = starpu_task_wait_for_all();
  waited(sl_watch_now() - t0);
  return rc;
}

/* One acquisition: the callback marks it done and wakes the main thread if it went to sleep. */
typedef struct {
  atomic_int done;
  pthread_mutex_t lock;
  pthread_cond_t cond;
} acquisition;

static void acquired(void *arg)
{
  acquisition *a = arg;
  pthread_mutex_lock(&a->lock);
  atomic_store_explicit(&a->done, 1, memory_order_release);
  pthread_cond_signal(&a->cond);
  pthread_mutex_unlock(&a->lock);
}

int sl_host_acquire(starpu_data_handle_t h, enum starpu_data_access_mode mode)
{
  const double budget = spin_budget();
  if (budget <= 0) return starpu_data_acquire(h, mode);
  acquisition a;
  atomic_init(&a.done, 0);
  int err = pthread_mutex_init(&a.lock, NULL);
  if (err) return -err;
  if ((err = pthread_cond_init(&a.cond, NULL))) {
    pthread_mutex_destroy(&a.lock);
    return -err;
  }
  const double t0 = sl_watch_now();
  int rc = starpu_data_acquire_cb(h, mode, acquired, &a);
  if (rc == 0) {
    const int pending = !atomic_load_explicit(&a.done, memory_order_acquire);
    while (!atomic_load_explicit(&a.done, memory_order_acquire) && sl_watch_now() - t0 < budget) poll_pause();
    /* the callback holds the lock from its store to its unlock: once we hold it, it no longer uses a */
    pthread_mutex_lock(&a.lock);
    while (!atomic_load_explicit(&a.done, memory_order_acquire)) pthread_cond_wait(&a.cond, &a.lock);
    pthread_mutex_unlock(&a.lock);
    if (pending) waited(sl_watch_now() - t0);
  }
  pthread_cond_destroy(&a.cond);
  pthread_mutex_destroy(&a.lock);
  return rc;
}
