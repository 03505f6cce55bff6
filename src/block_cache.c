/* Host blocks of arrays, kept for reuse: a destroyed array's block (pinned by StarPU where CUDA workers are
 * present) goes to a small cache and the next array of the same byte size takes it, so a sequence of
 * operators and solves of one size allocates, pins and page-faults its blocks once. The cache holds at most
 * SL_BLOCK_CACHE_BLOCKS blocks and SL_BLOCK_CACHE_BYTES bytes (oldest given back first) and is emptied at
 * sl_finalize. */
#include <pthread.h>
#include <string.h>

#include "internal.h"

#define SL_BLOCK_CACHE_BLOCKS 16
#define SL_BLOCK_CACHE_BYTES ((size_t)2 << 30)

static struct {
  void *p;
  size_t bytes;
} cache[SL_BLOCK_CACHE_BLOCKS];
static int ncached;
static size_t cached_bytes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int sl_block_alloc(void **p, size_t bytes)
{
  pthread_mutex_lock(&lock);
  for (int i = ncached - 1; i >= 0; i--)
    if (cache[i].bytes == bytes) {
      *p = cache[i].p;
      cached_bytes -= bytes;
      memmove(&cache[i], &cache[i + 1], (size_t)(ncached - i - 1) * sizeof cache[0]);
      ncached--;
      pthread_mutex_unlock(&lock);
      return 0;
    }
  pthread_mutex_unlock(&lock);
  return starpu_malloc(p, bytes);
}

void sl_block_free(void *p, size_t bytes)
{
  if (!p) return;
  if (bytes > SL_BLOCK_CACHE_BYTES / 4 || !sl_ctx.initialized) {
    starpu_free(p);
    return;
  }
  pthread_mutex_lock(&lock);
  while (ncached > 0 && (ncached == SL_BLOCK_CACHE_BLOCKS || cached_bytes + bytes > SL_BLOCK_CACHE_BYTES)) {
    starpu_free(cache[0].p); /* the oldest */
    cached_bytes -= cache[0].bytes;
    memmove(&cache[0], &cache[1], (size_t)(ncached - 1) * sizeof cache[0]);
    ncached--;
  }
  cache[ncached].p = p;
  cache[ncached].bytes = bytes;
  ncached++;
  cached_bytes += bytes;
  pthread_mutex_unlock(&lock);
}

void sl_block_cache_empty(void)
{
  pthread_mutex_lock(&lock);
  for (int i = 0; i < ncached; i++) starpu_free(cache[i].p);
  ncached = 0;
  cached_bytes = 0;
  pthread_mutex_unlock(&lock);
}
