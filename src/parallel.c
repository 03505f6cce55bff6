/* A loop split over a few threads, for a task that owns more cores than its own: a CPU task that is a rank's whole
 * block (an FFT, NonStationaryConvolve1D) runs slices of [0, n) on helper threads and on the calling worker,
 * which joins them. The helpers are a pool made on first use, one per CPU worker of the rank and each bound to
 * that worker's core when StarPU binds its workers (a thread started by a bound worker would inherit its one
 * core, and the slices would queue there); a call uses the helpers of the other workers' cores, whose workers
 * are idle while such a task runs. One loop at a time: a call made while another runs (two such tasks at once)
 * runs its slices on its own thread. FFTW's threaded plans run their parallel loops here too. */
#define _GNU_SOURCE
#include <fftw3.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "internal.h"

enum { MAXT = 256 };

typedef struct helper {
  pthread_t th;
  int cpu;     /* OS index of the core it is bound to, -1: not bound */
  int started;
} helper;

static struct {
  pthread_mutex_t busy;          /* held by the loop running */
  pthread_mutex_t lock;          /* guards the fields below */
  pthread_cond_t go, done;
  int nhelpers, stop;
  unsigned long generation;      /* one per loop */
  int pending;                   /* helpers still running their slice */
  sl_range_fn fn;
  void *arg;
  int64_t n;
  int nt;
  int slot[MAXT];                /* helper index -> slice (0: none this loop) */
  helper h[MAXT];
} pool = {.busy = PTHREAD_MUTEX_INITIALIZER, .lock = PTHREAD_MUTEX_INITIALIZER, .go = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

/* A helper's own work space (sl_helper_scratch), kept between loops and freed when the helper stops. */
static __thread int is_helper;
static __thread void *own_scratch;
static __thread size_t own_bytes;

void *sl_helper_scratch(size_t bytes)
{
  if (!is_helper) return NULL;
  if (own_bytes < bytes) {
    free(own_scratch);
    own_scratch = malloc(bytes);
    own_bytes = own_scratch ? bytes : 0;
  }
  return own_scratch;
}

static void *helper_main(void *p)
{
  int me = (int)(intptr_t)p;
  is_helper = 1;
  unsigned long seen = 0;
  pthread_mutex_lock(&pool.lock);
  for (;;) {
    while (!pool.stop && pool.generation == seen) pthread_cond_wait(&pool.go, &pool.lock);
    if (pool.stop) break;
    seen = pool.generation;
    int s = pool.slot[me];
    if (s == 0) continue;
    sl_range_fn fn = pool.fn;
    void *arg = pool.arg;
    int64_t n = pool.n, nt = pool.nt;
    pthread_mutex_unlock(&pool.lock);
    fn(n * s / nt, n * (s + 1) / nt, arg);
    pthread_mutex_lock(&pool.lock);
    if (--pool.pending == 0) pthread_cond_signal(&pool.done);
  }
  pthread_mutex_unlock(&pool.lock);
  free(own_scratch);
  own_scratch = NULL, own_bytes = 0;
  return NULL;
}

/* The OS index of each CPU worker's core when StarPU binds its workers (else -1). */
static void worker_cpus(int *cpus, int n)
{
  const char *nobind = getenv("STARPU_WORKERS_NOBIND");
  int bound = !(nobind && atoi(nobind) != 0);
  int ids[MAXT], k = 0;
  int nw = starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids, MAXT);
  for (int i = 0; i < n; i++) cpus[i] = -1;
  for (int i = 0; bound && i < nw && k < n; i++) {
    int b = starpu_worker_get_bindid(ids[i]);
    cpus[k++] = b >= 0 ? starpu_get_pu_os_index((unsigned)b) : -1;
  }
}

/* Grows the pool to n helpers (under pool.busy); returns how many there are. */
static int grow(int n)
{
  if (n > MAXT) n = MAXT;
  if (pool.nhelpers >= n) return pool.nhelpers;
  int cpus[MAXT];
  worker_cpus(cpus, n);
  for (int i = pool.nhelpers; i < n; i++) {
    pthread_attr_t at;
    int ok = pthread_attr_init(&at) == 0;
    pool.h[i].cpu = cpus[i];
    if (ok && cpus[i] >= 0 && cpus[i] < CPU_SETSIZE) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[i], &set);
      if (pthread_attr_setaffinity_np(&at, sizeof set, &set) != 0) pool.h[i].cpu = -1;
    }
    pool.h[i].started = ok && pthread_create(&pool.h[i].th, &at, helper_main, (void *)(intptr_t)i) == 0;
    if (ok) pthread_attr_destroy(&at);
    if (!pool.h[i].started && pool.h[i].cpu >= 0) { /* a core this process may not use: unbound then */
      pool.h[i].cpu = -1;
      pool.h[i].started = pthread_create(&pool.h[i].th, NULL, helper_main, (void *)(intptr_t)i) == 0;
    }
    if (!pool.h[i].started) break;
    pool.nhelpers = i + 1;
  }
  return pool.nhelpers;
}

/* The OS index of the calling thread's core when it is bound to exactly one, else -1. */
static int own_cpu(void)
{
  cpu_set_t set;
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) return -1;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) return c;
  return -1;
}

int sl_threads_for(int forced, double work, double from)
{
  if (forced > 0) return forced;
  return work >= from && sl_ctx.ncpu > 1 ? sl_ctx.ncpu : 1;
}

int sl_task_threads(double work) { return sl_threads_for(sl_ctx.set.task_threads, work, (double)(1 << 18)); }

void sl_parallel_for(int nt, int64_t n, sl_range_fn fn, void *arg)
{
  if (nt > MAXT) nt = MAXT;
  if (nt > n) nt = (int)n;
  if (nt <= 1 || pthread_mutex_trylock(&pool.busy) != 0) { /* one slice, or another loop holds the pool */
    if (n > 0) fn(0, n, arg);
    return;
  }
  /* helpers: one per CPU worker (bound to its core), more when more threads are asked for; the caller's own
   * core's helper sits this loop out */
  int want = sl_ctx.ncpu > nt ? sl_ctx.ncpu : nt;
  int have = grow(want), mine = own_cpu(), used = 0;
  pthread_mutex_lock(&pool.lock);
  for (int i = 0; i < have; i++) {
    pool.slot[i] = 0;
    if (used + 1 < nt && !(mine >= 0 && pool.h[i].cpu == mine)) pool.slot[i] = ++used;
  }
  int slices = used + 1; /* helpers that could not start leave their share to the caller */
  pool.fn = fn, pool.arg = arg, pool.n = n, pool.nt = slices;
  pool.pending = used;
  pool.generation++;
  pthread_cond_broadcast(&pool.go);
  pthread_mutex_unlock(&pool.lock);
  fn(0, n / slices, arg);
  pthread_mutex_lock(&pool.lock);
  while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.lock);
  pthread_mutex_unlock(&pool.lock);
  pthread_mutex_unlock(&pool.busy);
}

/* FFTW's parallel loops (fftw_threads_set_callback): its njobs jobs as the slices of one loop. */
struct fftw_jobs {
  void *(*work)(char *);
  char *data;
  size_t elsize;
};
static void fftw_slice(int64_t lo, int64_t hi, void *p)
{
  const struct fftw_jobs *j = p;
  for (int64_t i = lo; i < hi; i++) j->work(j->data + (size_t)i * j->elsize);
}
static void fftw_loop(void *(*work)(char *), char *jobdata, size_t elsize, int njobs, void *data)
{
  (void)data;
  struct fftw_jobs j = {work, jobdata, elsize};
  sl_parallel_for(njobs, njobs, fftw_slice, &j);
}

void sl_parallel_init(void)
{
  fftw_threads_set_callback(fftw_loop, NULL);
  fftwf_threads_set_callback(fftw_loop, NULL);
}

void sl_parallel_shutdown(void)
{
  fftw_threads_set_callback(NULL, NULL);
  fftwf_threads_set_callback(NULL, NULL);
  pthread_mutex_lock(&pool.busy);
  pthread_mutex_lock(&pool.lock);
  pool.stop = 1;
  pthread_cond_broadcast(&pool.go);
  pthread_mutex_unlock(&pool.lock);
  for (int i = 0; i < pool.nhelpers; i++)
    if (pool.h[i].started) pthread_join(pool.h[i].th, NULL);
  pool.nhelpers = 0;
  pool.stop = 0;
  pool.generation = 0;
  pthread_mutex_unlock(&pool.busy);
}
