/* A 64-bit StarPU-MPI tag allocator. StarPU 1.3 has none, and a tag may be registered once per process.
 * Every rank allocates in the same (SPMD) order, so the same call returns the same tags everywhere. */
#include <stdatomic.h>

#include "internal.h"

/* Tags below this are left to the application. */
#define SL_TAG_BASE ((int64_t)1 << 40)
static _Atomic int64_t next_tag = SL_TAG_BASE;

void sl_tag_reset(void) { atomic_store(&next_tag, SL_TAG_BASE); }

int sl_tag_alloc(int64_t count, int64_t *first)
{
  SL_CHECK_ARG(first != NULL, SL_E_INVALID, "sl_tag_alloc: argument 2 (first) is NULL");
  SL_CHECK_ARG(count > 0, SL_E_INVALID, "sl_tag_alloc: argument 1 (count) must be > 0, got %lld",
               (long long)count);
  int64_t t = atomic_fetch_add(&next_tag, count);
  SL_CHECK_ARG(t <= INT64_MAX - count, SL_E_INVALID, "sl_tag_alloc: the 64-bit tag space is exhausted");
  *first = t;
  return SL_SUCCESS;
}
