/* A loop split over a few threads, for a task that owns more cores than its own (an FFT task running
 * FFTW's threaded plan spreads its element passes the same way): slices of [0, n) run on nt - 1 new
 * threads and the caller, which joins them. A thread that cannot start leaves its slice to the caller. */
#include <pthread.h>

#include "internal.h"

struct slice {
  sl_range_fn fn;
  void *arg;
  int64_t lo, hi;
};

static void *run_slice(void *p)
{
  struct slice *s = p;
  s->fn(s->lo, s->hi, s->arg);
  return NULL;
}

void sl_parallel_for(int nt, int64_t n, sl_range_fn fn, void *arg)
{
  enum { MAXT = 256 };
  if (nt > MAXT) nt = MAXT;
  if (nt > n) nt = (int)n;
  if (nt <= 1) {
    if (n > 0) fn(0, n, arg);
    return;
  }
  struct slice s[MAXT];
  pthread_t th[MAXT];
  int started[MAXT] = {0};
  for (int i = 0; i < nt; i++) s[i] = (struct slice){fn, arg, n * i / nt, n * (i + 1) / nt};
  for (int i = 1; i < nt; i++) started[i] = pthread_create(&th[i], NULL, run_slice, &s[i]) == 0;
  run_slice(&s[0]);
  for (int i = 1; i < nt; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    else run_slice(&s[i]);
  }
}
