/* sl_cublas_gemms: see cublas_gemm.h. */
#ifdef SL_HAVE_CUDA
#include <cuComplex.h>

#include "codelets/cublas_gemm.h"

cublasStatus_t sl_cublas_gemms(cublasHandle_t h, sl_dtype dt, cublasOperation_t oa, cublasOperation_t ob, int64_t m,
                               int64_t n, int64_t k, const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb,
                               int64_t sb, void *C, int64_t ldc, int64_t sc, int64_t nb)
{
  static const float one_s[2] = {1, 0}, zero_s[2] = {0, 0};
  static const double one_d[2] = {1, 0}, zero_d[2] = {0, 0};
  const int m_ = (int)m, n_ = (int)n, k_ = (int)k, la = (int)lda, lb = (int)ldb, lc = (int)ldc, nb_ = (int)nb;
  const long long sa_ = sa, sb_ = sb, sc_ = sc;
#define G_(U, F, one, zero)                                                                                            \
  return nb == 1 ? cublas##F##gemm(h, oa, ob, m_, n_, k_, (const U *)one, (const U *)A, la, (const U *)B, lb,          \
                                   (const U *)zero, (U *)C, lc)                                                        \
                 : cublas##F##gemmStridedBatched(h, oa, ob, m_, n_, k_, (const U *)one, (const U *)A, la, sa_,         \
                                                 (const U *)B, lb, sb_, (const U *)zero, (U *)C, lc, sc_, nb_)
  if (dt == SL_FLOAT32) G_(float, S, one_s, zero_s);
  if (dt == SL_FLOAT64) G_(double, D, one_d, zero_d);
  if (dt == SL_COMPLEX64) G_(cuComplex, C, one_s, zero_s);
  G_(cuDoubleComplex, Z, one_d, zero_d);
#undef G_
}
#endif
