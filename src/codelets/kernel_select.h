/* Index kernels of Restriction on raw local buffers: y[k] = x[idx[k]] and x[idx[k]] += y[k]. CPU in
 * kernel_select.c, CUDA in kernel_select.cu (same semantics; scatter-add uses atomics on the GPU). */
#ifndef SL_KERNEL_SELECT_H
#define SL_KERNEL_SELECT_H

#include <stdint.h>

#include "starlops.h"

#ifdef __cplusplus
extern "C" {
#endif

/** y[k] = x[idx[k]] for k < n (elements of elsize bytes). */
void kernel_gather(size_t elsize, int64_t n, const int64_t *idx, const void *x, void *y);
/** x[idx[k]] += y[k] for k < n (duplicates accumulate). */
void kernel_scatter_add(sl_dtype dt, int64_t n, const int64_t *idx, const void *y, void *x);
int kernel_cuda_gather(size_t elsize, int64_t n, const int64_t *idx, const void *x, void *y, void *stream);
int kernel_cuda_scatter_add(sl_dtype dt, int64_t n, const int64_t *idx, const void *y, void *x, void *stream);

#ifdef __cplusplus
}
#endif
#endif
