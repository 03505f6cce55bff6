/* sl_array_fill_random: reproducible uniform values, independent of the workers and of the chunking. */
#include <stdint.h>

#include "internal.h"
#include "codelets/codelets.h"

/* Fills a's local block with uniform values in [-1, 1) from seed and the block's place (the rank within its
 * group for scattered arrays, so replicas of masked arrays agree; nothing for replicated ones): one task
 * per chunk, each value a hash of the key and its position in the block, so the values do not depend on
 * where the tasks run or how the block is cut. */
static int fill(sl_array *a, unsigned seed)
{
  for (int i = 0; i < a->nparts; i++) SL_TRY(fill(a->parts[i], seed + 7919u * (unsigned)(i + 1)));
  if (a->nparts) return SL_SUCCESS;
  int place = a->partition == SL_BROADCAST ? 0 : a->group->rank + 1;
  codelet_vec_params p = {.key = 0};
  p.key = ((uint64_t)seed << 32) ^ (uint64_t)place * 0xd1b54a32d192ed03ULL;
  int ncomp = sl_dtype_is_complex(a->dtype) ? 2 : 1;
  for (int c = 0; c < a->nchunks; c++) {
    starpu_data_handle_t h = sl_array_chunk(a, c);
    sl_trace_block(0, c);
    SL_TRY(codelet_vec_submit_p(SL_VEC_RANDOM, a->dtype, (starpu_data_handle_t[4]){h, NULL, NULL, NULL}, &p));
    p.off += (int64_t)starpu_vector_get_nx(h) * ncomp;
  }
  return SL_SUCCESS;
}

/* Whether a (or a part of it) is replicated: a full copy per rank, or replicas over a mask's groups (the group
 * read only in this session: an older array's group is freed) */
static int replicated(const sl_array *a)
{
  for (int i = 0; i < a->nparts; i++)
    if (replicated(a->parts[i])) return 1;
  return !a->nparts && (a->partition == SL_BROADCAST || (a->session == sl_session() && a->group && a->group->mask));
}

int sl_array_fill_random(sl_array *a, unsigned seed)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_array_fill_random: argument 1 (a) is NULL");
  int rc = sl_array_check_data("sl_array_fill_random", a, "argument 1 (a)"); /* a and its parts: session, storage, not acquired */
  /* with a replicated array (or part): collective, the verdict on every part and the seed agreed once, so that
   * the replicas hold the same values and no rank fills while another has returned */
  if (replicated(a)) rc = SL_AGREE("sl_array_fill_random", rc, SL_SAME_I("argument 2 (seed), for a replicated array", seed));
  SL_TRY(rc);
  return fill(a, seed);
}
