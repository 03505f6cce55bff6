/* sl_array_fill_random: reproducible uniform values, independent of the workers. */
#include <stdint.h>

#include "internal.h"

/* Fills a's local block with uniform values in [-1, 1) from seed and the block's place: the rank within
 * its group for scattered arrays (so replicas of masked arrays agree), nothing for replicated ones. */
int sl_array_fill_random(sl_array *a, unsigned seed)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_array_fill_random: argument 1 (a) is NULL");
  for (int i = 0; i < a->nparts; i++) SL_TRY(sl_array_fill_random(a->parts[i], seed + 7919u * (unsigned)(i + 1)));
  if (a->nparts) return SL_SUCCESS;
  void *p = NULL;
  SL_TRY(sl_array_acquire(a, SL_WRITE, &p));
  int place = a->partition == SL_BROADCAST ? 0 : a->group->rank + 1;
  uint64_t s = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)seed << 32) ^ (uint64_t)place * 0xbf58476d1ce4e5b9ULL;
  int64_t n = sl_array_local_size(a) * (sl_dtype_is_complex(sl_array_dtype(a)) ? 2 : 1);
  int single = sl_array_dtype(a) == SL_FLOAT32 || sl_array_dtype(a) == SL_COMPLEX64;
  for (int64_t i = 0; p && i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    double v = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    if (single) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
  }
  return sl_array_release(a);
}

