/* Strided row copies between a block and the global array (or a ghost layer): rows of row_len elements,
 * with the given row strides in elements; and the scratch buffers that task pipelines copy through. */
#include <string.h>

#include "internal.h"

void sl_copy_rows(void *dst, int64_t dst_stride, const void *src, int64_t src_stride, int64_t rows,
                  int64_t row_len, size_t elsize)
{
  if (rows <= 0 || row_len <= 0) return;
  char *d = dst;
  const char *s = src;
  for (int64_t r = 0; r < rows; r++)
    memcpy(d + (size_t)(r * dst_stride) * elsize, s + (size_t)(r * src_stride) * elsize, (size_t)row_len * elsize);
}

starpu_data_handle_t sl_buffer(int64_t n, size_t el)
{
  starpu_data_handle_t h = NULL;
  if (n > 0) starpu_vector_data_register(&h, -1, 0, (uint32_t)n, el);
  return h;
}

starpu_data_handle_t sl_buffer_space(int64_t n, size_t el)
{
  const int64_t k = n / (int64_t)UINT32_MAX + 1; /* elements per registered element */
  return sl_buffer((n + k - 1) / k, el * (size_t)k);
}
