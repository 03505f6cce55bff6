/* Patch2D with a dense matrix per patch (pylops' Patch2D with a non-separable operator: a Radon transform, any
 * matrix) on blocks seen as data (A, n0, B, n1, C) and model (A, nw0, nop0, B, nw1, nop1, C): patch (w0, w1)
 * covers rows [w0 s0, w0 s0 + nwin0) x [w1 s1, w1 s1 + nwin1); M ((nwin0 nwin1) x (nop0 nop1), row-major:
 * row q0 nwin1 + q1, column j0 nop1 + j1) maps a patch's model to its data, T0 (nw0 x nwin0) and T1 (nw1 x
 * nwin1) taper it (real values in the dtype). Forward
 *   y[a, w0 s0 + q0, b, w1 s1 + q1, c] += T0[w0][q0] T1[w1][q1] sum_{j0, j1} M[q0 q1][j0 j1] x[a, w0, j0, b, w1, j1, c]
 * (rows no patch covers are 0); adjoint
 *   x[a, w0, j0, b, w1, j1, c] = sum_{q0, q1} conj(M[q0 q1][j0 j1]) T0[w0][q0] T1[w1][q1] y[a, w0 s0 + q0, b, w1 s1 + q1, c].
 * Along the first patch axis the buffers may be a window of the global axis (a distributed axis with its
 * ghost layers): buffer patch w0 is the global patch W = p0 + w0 (T0 holds all nwtot of them; patches with W
 * outside [0, nwtot) contribute nothing), which covers buffer rows [W s0 - r0, W s0 - r0 + nwin0); rows outside
 * [0, n0) are not in the buffer (the forward skips them; the adjoint reads only its own patches' rows, which
 * the buffer holds). p0 = r0 = 0 and nwtot = nw0 when the buffers hold the whole axis.
 * acc = 1 (forward): the patches' sum is added into the data already there instead of replacing it (the
 * ghost windows' share of a distributed axis, added after the rank's own windows wrote the block).
 * ident = 1: M is the identity (nop0 = nwin0, nop1 = nwin1; the model holds the patches themselves, as another
 * operator produced them) and the tables start at T0: the kernels add the tapered patches into the data (the
 * adjoint cuts them out) directly, with no product and no work space.
 * CPU in kernel_patch.c, CUDA in kernel_patch.cu (same semantics). */
#ifndef SL_KERNEL_PATCH_H
#define SL_KERNEL_PATCH_H

#include <stdint.h>

#include "starlops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int64_t A, n0, B, n1, C;
  int64_t nw0, nop0, nwin0, s0;
  int64_t nw1, nop1, nwin1, s1;
  int64_t r0, p0, nwtot; /* the buffers' origins along the first patch axis, and its patches */
  int64_t ident;         /* 1: M is the identity and not in the tables */
  int64_t acc;           /* 1 (forward only): add into the data instead of writing it */
} sl_patch_dims;

/** Patches times trailing elements: the columns of the GEMMs (BLAS and cuBLAS take them as int). */
static inline int64_t sl_patch_columns(const sl_patch_dims *d) { return d->A * d->B * d->nw0 * d->nw1 * d->C; }
/** The windows run along one axis (Sliding1D, or Patch2D with one patch and one window along its second axis). */
static inline int sl_patch_one_axis(const sl_patch_dims *d) { return d->B == 1 && d->nw1 == 1 && d->nwin1 == 1; }
/** Elements of the data and of the model blocks. */
static inline int64_t sl_patch_data_size(const sl_patch_dims *d) { return d->A * d->n0 * d->B * d->n1 * d->C; }
static inline int64_t sl_patch_model_size(const sl_patch_dims *d)
{
  return d->A * d->nw0 * d->nop0 * d->B * d->nw1 * d->nop1 * d->C;
}

/** Elements of kernel_patch's work space: one outer index's patches as the columns of two matrices (0 when
 *  ident). */
static inline int64_t kernel_patch_work(const sl_patch_dims *d)
{
  return d->ident ? 0 : (d->nop0 * d->nop1 + d->nwin0 * d->nwin1) * d->B * d->nw0 * d->nw1 * d->C;
}
/** tables: M (unless ident), then T0, then T1, in the dtype; work: kernel_patch_work elements, or NULL (then
 *  allocated for the call). Returns 0, or -1 when its work space cannot be allocated. */
int kernel_patch(sl_dtype dt, int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out, void *work);
/** The same on the outer indices [a0, a1) only (each is independent of the others): a slice for one thread. */
int kernel_patch_range(sl_dtype dt, int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out,
                       void *work, int64_t a0, int64_t a1);
#ifdef SL_HAVE_CUDA
/** Elements of the work space of kernel_cuda_patch_gemm (el bytes each): every patch's model and data as the
 *  columns of two matrices; 0 with M the identity or where kernel_cuda_patch_fused_fits. */
int64_t kernel_cuda_patch_work(const sl_patch_dims *d, size_t el);
/** The same operator through cuBLAS: the patches' model coefficients gathered as columns, one GEMM with M (M^H
 *  for the adjoint), the tapered patch data summed where patches overlap (every output written once); windows
 *  along one axis with 16 or more trailing elements instead take one strided batched GEMM over the windows on
 *  the model in place (their data in the work space); handle a cublasHandle_t, work kernel_cuda_patch_work
 *  elements on the device. */
int kernel_cuda_patch_gemm(sl_dtype dt, int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out,
                           void *work, void *handle, void *stream);
/** Whether kernel_cuda_patch_fused takes these dims with elements of el bytes (patches over the last two axes, B =
 *  C = 1, M at most 64 x 64 and its shared memory at most 96 KB, 8 or more patches along the second axis);
 *  kernel_cuda_patch_gemm then calls it and needs no work space. */
int kernel_cuda_patch_fused_fits(const sl_patch_dims *d, size_t el);
/** The same operator in one kernel per way (kernel_patch_fused.cu): M in shared memory, the patches' model (data)
 *  read straight from the input, the products on the tensor cores for float64, the data added with atomic adds
 *  (the model written once); for dims with patches (sl_patch_columns > 0), as kernel_cuda_patch_gemm calls it. */
int kernel_cuda_patch_fused(sl_dtype dt, int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out,
                            void *stream);
#endif

#ifdef __cplusplus
}
#endif
#endif
