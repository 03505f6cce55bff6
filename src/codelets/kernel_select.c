/* CPU index kernels of Restriction (kernel_select.h). */
#include <string.h>

#include "codelets/kernel_select.h"

void kernel_gather(size_t elsize, int64_t n, const int64_t *idx, const void *x, void *y)
{
  for (int64_t k = 0; k < n; k++) memcpy((char *)y + (size_t)k * elsize, (const char *)x + (size_t)idx[k] * elsize, elsize);
}

void kernel_scatter_add(sl_dtype dt, int64_t n, const int64_t *idx, const void *y, void *x)
{
  int c = sl_dtype_is_complex(dt) ? 2 : 1;
  if (dt == SL_FLOAT32 || dt == SL_COMPLEX64) {
    const float *ys = y;
    float *xs = x;
    for (int64_t k = 0; k < n; k++)
      for (int j = 0; j < c; j++) xs[idx[k] * c + j] += ys[k * c + j];
  } else {
    const double *ys = y;
    double *xs = x;
    for (int64_t k = 0; k < n; k++)
      for (int j = 0; j < c; j++) xs[idx[k] * c + j] += ys[k * c + j];
  }
}
