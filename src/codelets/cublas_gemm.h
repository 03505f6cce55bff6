/* One cuBLAS entry for the GEMMs of the CUDA codelets, in the four dtypes: C = op_a(A) op_b(B) (column-major,
 * alpha 1, beta 0), one GEMM when nb = 1 and nb strided batched GEMMs otherwise (the strides sa, sb, sc in
 * elements). The handle and its stream are the caller's (StarPU's per-worker cuBLAS handle). MatrixMult and
 * Patch2D use it. */
#ifndef SL_CUBLAS_GEMM_H
#define SL_CUBLAS_GEMM_H

#ifdef SL_HAVE_CUDA
#include <cublas_v2.h>
#include <stdint.h>

#include "starlops.h"

#ifdef __cplusplus
extern "C" {
#endif

cublasStatus_t sl_cublas_gemms(cublasHandle_t h, sl_dtype dt, cublasOperation_t oa, cublasOperation_t ob, int64_t m,
                               int64_t n, int64_t k, const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb,
                               int64_t sb, void *C, int64_t ldc, int64_t sc, int64_t nb);

#ifdef __cplusplus
}
#endif
#endif
#endif
