/* The watchdog (STARLOPS_TIMEOUT seconds, off by default): when a rank has waited longer than that in one
 * blocking call of the main thread (an agreement, sl_wait, a host access) or for one collective of the comm
 * layer, it prints what it waits for and aborts the job, so a batch job whose ranks stopped taking part
 * in the same calls ends with a message instead of hanging until its allocation runs out. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "internal.h"

static double limit;           /* seconds; 0: off */
static pthread_t thread;
static int running, stopping;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static const char *waiting;    /* what the main thread waits in, NULL when it does not */
static double since;
static int depth;

double sl_watch_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double sl_watch_limit(void) { return limit; }

void sl_watch_begin(const char *what)
{
  if (limit <= 0) return;
  pthread_mutex_lock(&lock);
  if (depth++ == 0) {
    waiting = what;
    since = sl_watch_now();
  }
  pthread_mutex_unlock(&lock);
}

void sl_watch_end(void)
{
  if (limit <= 0) return;
  pthread_mutex_lock(&lock);
  if (depth > 0 && --depth == 0) waiting = NULL;
  pthread_mutex_unlock(&lock);
}

void sl_watch_expired(const char *what, double waited)
{
  fprintf(stderr, "starlops watchdog: rank %d has waited %.1f s in %s, longer than STARLOPS_TIMEOUT = %g s: another "
          "rank has probably stopped taking part in the same calls (returned early, skipped a collective or "
          "crashed). Aborting the job.\n", sl_ctx.rank, waited, what, limit);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 70);
}

static void *watch_main(void *unused)
{
  pthread_mutex_lock(&lock);
  while (!stopping) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 200000000L; /* five looks a second */
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&wake, &lock, &ts);
    if (!stopping && waiting && sl_watch_now() - since > limit) {
      char what[160];
      snprintf(what, sizeof what, "%s", waiting);
      double waited = sl_watch_now() - since;
      pthread_mutex_unlock(&lock);
      sl_watch_expired(what, waited);
      pthread_mutex_lock(&lock);
    }
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

int sl_watch_start(double seconds)
{
  limit = seconds;
  waiting = NULL;
  depth = 0;
  if (seconds <= 0) return SL_SUCCESS;
  stopping = 0;
  int rc = pthread_create(&thread, NULL, watch_main, NULL);
  if (rc != 0) return sl_error(SL_E_RUNTIME, "sl_init: cannot start the watchdog thread (error %d)", rc);
  running = 1;
  return SL_SUCCESS;
}

void sl_watch_stop(void)
{
  if (running) {
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    running = 0;
  }
  limit = 0;
}
