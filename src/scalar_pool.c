/* The scalars' values: 16-byte slots in pages of their own, pinned (pinned.c) on a rank with CUDA workers, so
 * that a reduction on a GPU copies its result into the scalar's home on the worker's stream without stalling the
 * worker (a copy to pageable memory waits for the stream) and the host reads it with no transfer. Pages are kept
 * until sl_finalize; freed slots are reused. */
#include <pthread.h>

#include "internal.h"

enum { SLOT = 2 * sizeof(double) };

typedef union slot {
  union slot *next; /* free slots */
  double value[2];
} slot;

typedef struct page {
  struct page *next;
} page_head; /* the first slot of each page */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot *free_slots;
static page_head *pages;
static unsigned generation; /* pages freed so far (one per sl_finalize): a scalar of an earlier one is stale */

unsigned sl_scalar_slots_generation(void)
{
  pthread_mutex_lock(&lock);
  unsigned g = generation;
  pthread_mutex_unlock(&lock);
  return g;
}

/* A new page: its slots after the head on the free list (lock held; a slot is zeroed when taken). */
static int grow(void)
{
  const size_t page = sl_pinned_page();
  void *q = sl_pinned_alloc(page);
  if (!q) return 0;
  page_head *h = q;
  h->next = pages;
  pages = h;
  slot *s = q;
  for (size_t i = 1; i < page / SLOT; i++) {
    s[i].next = free_slots;
    free_slots = &s[i];
  }
  return 1;
}

double *sl_scalar_slot_get(void)
{
  pthread_mutex_lock(&lock);
  slot *s = free_slots || grow() ? free_slots : NULL;
  if (s) free_slots = s->next;
  pthread_mutex_unlock(&lock);
  if (!s) return NULL;
  s->value[0] = s->value[1] = 0.0;
  return s->value;
}

void sl_scalar_slot_put(double *v)
{
  if (!v) return;
  slot *s = (slot *)(void *)v;
  pthread_mutex_lock(&lock);
  s->next = free_slots;
  free_slots = s;
  pthread_mutex_unlock(&lock);
}

void sl_scalar_slots_free(void)
{
  pthread_mutex_lock(&lock);
  while (pages) {
    page_head *h = pages;
    pages = h->next;
    sl_pinned_free(h);
  }
  free_slots = NULL;
  generation++;
  pthread_mutex_unlock(&lock);
}
