/* Pinned host staging buffers for the host-MPI backend when data lives on a GPU. Buffers come in
 * power-of-two size classes from 4 KiB; a returned buffer goes back on its class's free list, so a steady
 * stream of collectives allocates nothing after its first calls. Pinned (pinned.c) when the rank has CUDA
 * workers, for fast asynchronous device copies. */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"
#include "comm/comm.h"

enum { MIN_SHIFT = 12, NCLASSES = 40 };

typedef struct pool_buf {
  struct pool_buf *next; /* free list of its class */
  struct pool_buf *all;  /* every buffer, for shutdown */
  void *ptr;
  int cls;
  int in_use;
} pool_buf;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pool_buf *free_list[NCLASSES];
static pool_buf *all_bufs;
static long n_allocated, n_served;

static int size_class(size_t bytes)
{
  int c = 0;
  while (((size_t)1 << (MIN_SHIFT + c)) < bytes && c < NCLASSES - 1) c++;
  return c;
}

int comm_pool_init(void)
{
  n_allocated = n_served = 0;
  return SL_SUCCESS;
}

void *comm_pool_get(size_t bytes)
{
  int c = size_class(bytes);
  pthread_mutex_lock(&lock);
  n_served++;
  pool_buf *b = free_list[c];
  if (b) free_list[c] = b->next;
  pthread_mutex_unlock(&lock);
  if (!b) {
    b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->cls = c;
    b->ptr = sl_pinned_alloc((size_t)1 << (MIN_SHIFT + c));
    if (!b->ptr) {
      free(b);
      return NULL;
    }
    pthread_mutex_lock(&lock);
    n_allocated++;
    b->all = all_bufs;
    all_bufs = b;
    pthread_mutex_unlock(&lock);
  }
  b->in_use = 1;
  return b->ptr;
}

void comm_pool_put(void *p)
{
  if (!p) return;
  pthread_mutex_lock(&lock);
  for (pool_buf *b = all_bufs; b; b = b->all)
    if (b->ptr == p && b->in_use) {
      b->in_use = 0;
      b->next = free_list[b->cls];
      free_list[b->cls] = b;
      break;
    }
  pthread_mutex_unlock(&lock);
}

void comm_pool_stats(long *allocated, long *served)
{
  pthread_mutex_lock(&lock);
  if (allocated) *allocated = n_allocated;
  if (served) *served = n_served;
  pthread_mutex_unlock(&lock);
}

void comm_pool_shutdown(void)
{
  pthread_mutex_lock(&lock);
  while (all_bufs) {
    pool_buf *b = all_bufs;
    all_bufs = b->all;
    sl_pinned_free(b->ptr);
    free(b);
  }
  for (int c = 0; c < NCLASSES; c++) free_list[c] = NULL;
  pthread_mutex_unlock(&lock);
}
