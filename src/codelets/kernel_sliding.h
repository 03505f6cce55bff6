/* Sliding1D (pylops' Sliding1D with a dense matrix per window) on blocks seen as data (outer, n, inner) and
 * model (outer, nwins, nm, inner): window w covers data rows [w step, w step + nwin); M (nwin x nm, row-major)
 * maps a window's model to its data, T (nwins x nwin, real, in the dtype) tapers it. Forward
 * y[o, w step + q, i] += T[w][q] sum_j M[q][j] x[o, w, j, i] (rows no window covers are 0); adjoint
 * x[o, w, j, i] = sum_q conj(M[q][j]) T[w][q] y[o, w step + q, i]. CPU in kernel_sliding.c, CUDA in
 * kernel_sliding.cu (same semantics). */
#ifndef SL_KERNEL_SLIDING_H
#define SL_KERNEL_SLIDING_H

#include <stdint.h>

#include "starlops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int64_t outer, n, inner, nwins, nm, nwin, step;
} sl_sliding_dims;

void kernel_sliding(sl_dtype dt, int adjoint, const sl_sliding_dims *d, const void *M, const void *T, const void *in, void *out);
#ifdef SL_HAVE_CUDA
int kernel_cuda_sliding(sl_dtype dt, int adjoint, const sl_sliding_dims *d, const void *M, const void *T, const void *in,
                        void *out, void *stream);
#endif

#ifdef __cplusplus
}
#endif
#endif
