/* The object behind the windowed operators (Sliding1D, Patch2D with a dense matrix per patch): the patch
 * kernels' buffers for each direction, the windows' split along the distributed axis, the tables and the
 * scratch handle; its apply (one patch task per rank, after the ghost exchange along the distributed axis)
 * and its release. The constructors fill it and call sl_windowed_scratch. */
#include <limits.h>
#include <stdlib.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"

static void windowed_free(void *p)
{
  sl_windowed *c = p;
  sl_kept_free(&c->tables);
  sl_window_split_free(&c->split);
  if (c->scratch) starpu_data_unregister_submit(c->scratch);
  free(c);
}

static const sl_patch_dims *dims(const sl_windowed *c, sl_op_mode mode) { return mode == SL_ADJOINT ? &c->da : &c->d; }

static int windowed_submit(sl_op *op, sl_op_mode mode, sl_array *y, int nx, const starpu_data_handle_t *hx, int ny,
                           const starpu_data_handle_t *hy)
{
  sl_windowed *c = op->data;
  return codelet_patch_submit(op->dtype, mode == SL_ADJOINT, dims(c, mode), c->tables.h, c->scratch, nx, hx, 0, ny, hy, NULL);
}

static int windowed_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  sl_windowed *c = op->data;
  if (c->split.on) return sl_window_split_apply(&c->split, op, mode, x, y, dims(c, mode), c->tables.h, c->scratch);
  return sl_op_apply_chunked(op, mode, x, y, windowed_submit);
}

const sl_op_ops sl_windowed_ops = {windowed_apply, NULL, windowed_free, NULL};

void sl_windowed_free(sl_windowed *c)
{
  if (c) windowed_free(c);
}

int sl_windowed_scratch(sl_windowed *c, const char *fn, size_t el)
{
  /* the packing space (several chunks; the data with its ghost rows and the model with its ghost windows along
   * the distributed axis) and the CUDA version's GEMM work space, for the larger of the two directions */
  int64_t wf = codelet_patch_work(&c->d, sl_patch_data_size(&c->d) + sl_patch_model_size(&c->d), el);
  int64_t wa = codelet_patch_work(&c->da, sl_patch_data_size(&c->da) + sl_patch_model_size(&c->da), el), work = wf > wa ? wf : wa;
  if (work > (int64_t)UINT32_MAX || sl_patch_columns(&c->d) > INT_MAX || sl_patch_columns(&c->da) > INT_MAX)
    return sl_error(SL_E_DIMS, "%s: a rank's work space (%lld elements, %lld patch columns) is above 2^32 elements or 2^31 "
                    "columns: use more ranks", fn, (long long)work, (long long)sl_patch_columns(&c->d));
  starpu_vector_data_register(&c->scratch, -1, 0, (uint32_t)(work > 0 ? work : 1), el);
  return SL_SUCCESS;
}
