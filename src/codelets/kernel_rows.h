/* The CUDA kernel behind the accumulating row copy (codelet_rows.c). */
#ifndef SL_KERNEL_ROWS_H
#define SL_KERNEL_ROWS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** dst[o dst_stride + i] += src[o src_stride + i] for o < rows, i < len, in floats (doubles when dbl), on
 *  stream (a cudaStream_t); returns the cudaError_t. */
int kernel_rows_add_cuda(void *dst, int64_t dst_stride, const void *src, int64_t src_stride, int64_t rows, int64_t len,
                         int dbl, void *stream);

#ifdef __cplusplus
}
#endif
#endif
