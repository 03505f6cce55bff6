/* Sliding1D (pylops' Sliding1D with a dense matrix per window) on blocks seen as data (outer, n, inner) and
 * model (outer, nwins, nm, inner): buffer window w is the global window W = w0 + w, which covers the global
 * data rows [W step, W step + nwin), buffer rows [W step - r0, ...); M (nwin x nm, row-major) maps a
 * window's model to its data, T (nwtot x nwin, real, in the dtype, every window) tapers it. Forward
 * y[o, W step - r0 + q, i] += T[W][q] sum_j M[q][j] x[o, w, j, i] over the buffer's windows with 0 <= W <
 * nwtot, rows in [0, n) only (rows no window covers are 0); adjoint x[o, w, j, i] = sum_q conj(M[q][j])
 * T[W][q] y[o, W step - r0 + q, i] over the rows in the buffer. With r0 = w0 = 0 and nwtot = nwins the
 * blocks hold the whole axis; along the distributed axis the buffers carry the ghost windows (forward) or
 * ghost rows (adjoint) a rank's block needs. CPU in kernel_sliding.c, CUDA in kernel_sliding.cu (same
 * semantics). */
#ifndef SL_KERNEL_SLIDING_H
#define SL_KERNEL_SLIDING_H

#include <stdint.h>

#include "starlops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int64_t outer, n, inner, nwins, nm, nwin, step;
  int64_t r0, w0, nwtot;
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
