/* Non-stationary 1-D convolution (pylops' NonStationaryConvolve1D) on a block seen as (outer, n, inner) with
 * the convolution along the middle axis: tap t of the filter of sample j (already interpolated between the
 * given centres; L taps, L odd, c = L / 2) is H[j L + t] (sample-major), followed by the same table tap-major,
 * H[n L + t n + j]: the CPU kernel takes H with both (the tap-major one along the last axis), the CUDA kernel
 * the tap-major one (neighbouring threads read neighbouring values). Forward
 * y[k] = sum_s h_(k-s)[s + c] x[k - s]; adjoint x[j] = sum_s conj(h_j[s + c]) y[j + s]; s from -c to c, indices outside 0..n-1 dropped. CPU in
 * kernel_nsconv.c, CUDA in kernel_nsconv.cu and kernel_nsconv_dmma.cu (same semantics). */
#ifndef SL_KERNEL_NSCONV_H
#define SL_KERNEL_NSCONV_H

#include <stdint.h>

#include "starlops.h"

#ifdef __cplusplus
extern "C" {
#endif

void kernel_nsconv(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H,
                   const void *in, void *out);
/** The CPU kernel's independent units of work (groups of rows along the last axis, else output rows (o, k)), and
 *  the kernel on the units [lo, hi) only: the slices of a block for several threads. */
int64_t kernel_nsconv_units(int64_t outer, int64_t n, int64_t inner);
void kernel_nsconv_range(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H,
                         const void *in, void *out, int64_t lo, int64_t hi);
#ifdef SL_HAVE_CUDA
/* rows_kernel: along the last axis, the row kernel instead of the tensor-core or tiled one (STARLOPS_NSCONV_ROWS=1) */
int kernel_cuda_nsconv(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H,
                       const void *in, void *out, int rows_kernel, void *stream);
/* float64 and complex128 with up to 33 taps, along the last axis or with at least 8 values after the axis, on the
 * tensor cores (kernel_nsconv_dmma.cu); cudaErrorNotSupported for anything else */
int kernel_cuda_nsconv_dmma(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, const void *H,
                            const void *in, void *out, void *stream);
#endif

#ifdef __cplusplus
}
#endif
#endif
