/* Strided row copies between a block and the global array (or a ghost layer): rows of row_len elements,
 * with the given row strides in elements. */
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
