/* CPU Patch2D with a dense matrix per patch: one body (real or complex through C's complex types) for the four
 * dtypes. The patches of one outer index a are one matrix product: their model coefficients gathered as the
 * columns (b, w0, w1, c) of X (K x cols), Y = M X (Q x cols) by BLAS, then tapered and added into the data; the
 * adjoint gathers the tapered data patches into Y and takes X = M^H Y. Windows along the last axis skip the
 * model-side gather: the model block is X^T, so Y^T = X^T M^T straight from it (adjoint: conj(X^T) = conj(Y^T) M
 * straight into it). Windows along another axis with C trailing elements (traces; C >= 32, or 4 <= C and
 * 8 C >= K) skip both gathers: window w0's model block is a K x C matrix, so one GEMM per window reads (writes)
 * it in place. With M the identity (ident) the model's patches are tapered and added straight into the data
 * (the adjoint cuts them out straight into the model). The work space is the caller's (the task's scratch
 * space) or allocated per call. */
#include <cblas.h>
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/kernel_patch.h"

/* C (rows x cols) = op(A) B, A row-major Q x K (op: none, or the conjugate transpose), one call per dtype */
#define GEMM_REAL(FN, T)                                                                                            \
  static void gemm_##T(int adj, int64_t rows, int64_t cols, int64_t inner, const T *A, int64_t lda, const T *B, T *C) \
  {                                                                                                                 \
    FN(CblasRowMajor, adj ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)rows, (int)cols, (int)inner, 1, A, (int)lda, B, \
       (int)cols, 0, C, (int)cols);                                                                                 \
  }                                                                                                                 \
  static void gemmr_##T(int trans, int64_t rows, int64_t cols, int64_t inner, const T *A, const T *M, int64_t ldm, T *C) \
  {                                                                                                                 \
    FN(CblasRowMajor, CblasNoTrans, trans ? CblasTrans : CblasNoTrans, (int)rows, (int)cols, (int)inner, 1, A,      \
       (int)inner, M, (int)ldm, 0, C, (int)cols);                                                                   \
  }                                                                                                                 \
  static inline T conj_##T(T v) { return v; }
#define GEMM_CPLX(FN, T, NAME, CONJ)                                                                                \
  static void gemm_##NAME(int adj, int64_t rows, int64_t cols, int64_t inner, const T *A, int64_t lda, const T *B, T *C) \
  {                                                                                                                 \
    const T one = 1, zero = 0;                                                                                      \
    FN(CblasRowMajor, adj ? CblasConjTrans : CblasNoTrans, CblasNoTrans, (int)rows, (int)cols, (int)inner, &one, A, \
       (int)lda, B, (int)cols, &zero, C, (int)cols);                                                                \
  }                                                                                                                 \
  static void gemmr_##NAME(int trans, int64_t rows, int64_t cols, int64_t inner, const T *A, const T *M, int64_t ldm, T *C) \
  {                                                                                                                 \
    const T one = 1, zero = 0;                                                                                      \
    FN(CblasRowMajor, CblasNoTrans, trans ? CblasTrans : CblasNoTrans, (int)rows, (int)cols, (int)inner, &one, A,   \
       (int)inner, M, (int)ldm, &zero, C, (int)cols);                                                               \
  }                                                                                                                 \
  static inline T conj_##NAME(T v) { return CONJ(v); }

/* C = op(A) B (gemm_), C = A op(M) with op none or the transpose (gemmr_), and the conjugate, per dtype */
GEMM_REAL(cblas_sgemm, float)
GEMM_REAL(cblas_dgemm, double)
GEMM_CPLX(cblas_cgemm, float complex, cfloat, conjf)
GEMM_CPLX(cblas_zgemm, double complex, cdouble, conj)

/* X's columns from the model's patches of outer index a (back: the model from X), a patch row (j0, w0) at a
 * time along its columns w1 */
#define MODEL_COLUMNS(model, back)                                                                                  \
  for (int64_t j0 = 0; j0 < d->nop0; j0++)                                                                          \
    for (int64_t j1 = 0; j1 < d->nop1; j1++)                                                                        \
      for (int64_t b = 0; b < d->B; b++)                                                                            \
        for (int64_t w0 = 0; w0 < d->nw0; w0++) {                                                                   \
          __typeof__(X) xc = X + (j0 * d->nop1 + j1) * cols + (b * d->nw0 + w0) * d->nw1 * C;                       \
          const int64_t mo = a * ma + w0 * mw0 + j0 * mj0 + b * mb + j1 * mj1;                                      \
          if (C == 1) /* (one element per sample: the loop along w1 innermost) */                                   \
            for (int64_t w1 = 0; w1 < d->nw1; w1++) {                                                               \
              if (back) ((__typeof__(X))(model))[mo + w1 * mw1] = xc[w1];                                           \
              else xc[w1] = (model)[mo + w1 * mw1];                                                                 \
            }                                                                                                       \
          else                                                                                                      \
            for (int64_t w1 = 0; w1 < d->nw1; w1++)                                                                 \
              for (int64_t c = 0; c < C; c++) {                                                                     \
                if (back) ((__typeof__(X))(model))[mo + w1 * mw1 + c] = xc[w1 * C + c];                             \
                else xc[w1 * C + c] = (model)[mo + w1 * mw1 + c];                                                   \
              }                                                                                                     \
        }

/* Window w0 of the buffer along the first patch axis (windows along one axis): its global index W, its first
 * buffer row r, the samples [lo, hi) of it inside the buffer (none when W is outside [0, nwtot)), its taper tw */
#define WINDOW_SPAN(w0)                                                                                             \
  const int64_t W = d->p0 + (w0), r = W * d->s0 - d->r0;                                                            \
  int64_t lo = r < 0 ? -r : 0, hi = d->n0 - r < Q ? d->n0 - r : Q;                                                  \
  if (W < 0 || W >= d->nwtot) lo = hi = 0;                                                                          \
  __typeof__(t0) tw = t0 + W * d->nwin0;

#define PATCH_BODY(T, NAME)                                                                                         \
  const int64_t K = d->nop0 * d->nop1, Q = d->nwin0 * d->nwin1, C = d->C, cols = d->B * d->nw0 * d->nw1 * C;        \
  const int ident = d->ident != 0;                                                                                  \
  const T *m = tables, *t0 = m + (ident ? 0 : Q * K), *t1 = t0 + d->nwtot * d->nwin0, *x = in;                      \
  T *y = out;                                                                                                       \
  /* data (a, r0, b, r1, c) and model (a, w0, j0, b, w1, j1, c), row-major; columns (b, w0, w1, c) */               \
  const int64_t dr1 = C, db = d->n1 * C, dr0 = d->B * db, da = d->n0 * dr0;                                         \
  const int64_t mj1 = C, mw1 = d->nop1 * C, mb = d->nw1 * mw1, mj0 = d->B * mb, mw0 = d->nop0 * mj0, ma = d->nw0 * mw0; \
  if (!adjoint && !d->acc) memset(y + a0 * da, 0, sizeof(T) * (size_t)((a1 - a0) * da)); /* outer indices [a0, a1) */ \
  if (sl_patch_one_axis(d) && C == 1) { /* windows along the last axis: data runs along q0 */                        \
    /* With M the identity the model holds the windows; otherwise the model block is X^T (a window's coefficients */ \
    /* contiguous), so Y^T = X^T M^T and conj(X^T) = conj(Y^T) M need no gather on the model side. Either way a */  \
    /* window's Q samples are a row: of the model (identity) or of Y^T. */                                          \
    T *YT = ident ? NULL : work ? (T *)work : malloc(sizeof(T) * (size_t)(Q * d->nw0 + 1));                         \
    if (!ident && !YT) return -1;                                                                                   \
    const T t1v = t1[0];                                                                                            \
    for (int64_t a = a0; a < a1; a++) {                                                                            \
      if (!ident && !adjoint) gemmr_##NAME(1, d->nw0, Q, K, x + a * ma, m, K, YT);                                  \
      const T *win = ident ? x + a * ma : YT; /* forward: the windows' samples */                                   \
      T *cut = ident ? y + a * ma : YT;       /* adjoint: where the tapered windows go */                           \
      for (int64_t w0 = 0; w0 < d->nw0; w0++) {                                                                     \
        WINDOW_SPAN(w0)                                                                                             \
        if (!adjoint) {                                                                                             \
          T *yd = y + a * da + r;                                                                                   \
          for (int64_t q = lo; q < hi; q++) yd[q] += tw[q] * t1v * win[w0 * Q + q];                                 \
        } else {                                                                                                    \
          const T *xd = x + a * da + r;                                                                             \
          T *cw = cut + w0 * Q;                                                                                     \
          for (int64_t q = 0; q < lo; q++) cw[q] = 0;                                                               \
          if (ident)                                                                                                \
            for (int64_t q = lo; q < hi; q++) cw[q] = tw[q] * t1v * xd[q];                                          \
          else                                                                                                      \
            for (int64_t q = lo; q < hi; q++) cw[q] = conj_##NAME(tw[q] * t1v * xd[q]);                             \
          for (int64_t q = hi > lo ? hi : lo; q < Q; q++) cw[q] = 0;                                                \
        }                                                                                                           \
      }                                                                                                             \
      if (!ident && adjoint) {                                                                                      \
        T *xm = y + a * ma;                                                                                         \
        gemmr_##NAME(0, d->nw0, K, Q, YT, m, K, xm);                                                                \
        for (int64_t k = 0; k < d->nw0 * K; k++) xm[k] = conj_##NAME(xm[k]);                                        \
      }                                                                                                             \
    }                                                                                                               \
    if (YT != work) free(YT);                                                                                       \
    return 0;                                                                                                       \
  }                                                                                                                 \
  if (!ident && sl_patch_one_axis(d) && C >= 4 && (C >= 32 || 8 * C >= K)) {                                         \
    /* windows along one axis with C trailing elements (traces): window w0's model block is X_w0 (K x C, */          \
    /* row-major) itself, so one GEMM per window, Y_w0 = M X_w0 (adjoint X_w0 = M^H Y_w0), reads (writes) the */   \
    /* model in place, with no gather of the whole model into columns; Y_w0's rows are runs of C data elements. */  \
    /* (With few columns against K the GEMMs run slowly: then the gather and one GEMM are faster.) */              \
    T *YW = work ? (T *)work : malloc(sizeof(T) * (size_t)(Q * C + 1));                                            \
    if (!YW) return -1;                                                                                              \
    const T t1v = t1[0];                                                                                            \
    for (int64_t a = a0; a < a1; a++)                                                                              \
      for (int64_t w0 = 0; w0 < d->nw0; w0++) {                                                                     \
        WINDOW_SPAN(w0)                                                                                             \
        if (!adjoint) {                                                                                             \
          if (hi <= lo) continue;                                                                                   \
          gemm_##NAME(0, Q, C, K, m, K, x + a * ma + w0 * mw0, YW);                                                 \
          for (int64_t q = lo; q < hi; q++) {                                                                       \
            const T f = tw[q] * t1v;                                                                                \
            T *yr = y + a * da + (r + q) * dr0;                                                                     \
            const T *yw = YW + q * C;                                                                               \
            for (int64_t c = 0; c < C; c++) yr[c] += f * yw[c];                                                     \
          }                                                                                                         \
        } else {                                                                                                    \
          for (int64_t q = 0; q < Q; q++) {                                                                         \
            T *yw = YW + q * C;                                                                                     \
            if (q < lo || q >= hi) {                                                                                \
              for (int64_t c = 0; c < C; c++) yw[c] = 0;                                                            \
              continue;                                                                                             \
            }                                                                                                       \
            const T f = tw[q] * t1v;                                                                                \
            const T *xr = x + a * da + (r + q) * dr0;                                                               \
            for (int64_t c = 0; c < C; c++) yw[c] = f * xr[c];                                                      \
          }                                                                                                         \
          gemm_##NAME(1, K, C, Q, m, K, YW, y + a * ma + w0 * mw0);                                                 \
        }                                                                                                           \
      }                                                                                                             \
    if (YW != work) free(YW);                                                                                       \
    return 0;                                                                                                       \
  }                                                                                                                 \
  if (ident) { /* the model holds the patches: one pass in the model's order (a, w0, q0, b, w1, q1, c), a patch */  \
    /* row's samples (q1, c) one run in the model and in the data */                                               \
    for (int64_t a = a0; a < a1; a++)                                                                              \
      for (int64_t w0 = 0; w0 < d->nw0; w0++)                                                                       \
        for (int64_t q0 = 0; q0 < d->nwin0; q0++) {                                                                 \
          const int64_t W = d->p0 + w0, r = W * d->s0 - d->r0 + q0; /* global patch, buffer row */                  \
          const int inside = W >= 0 && W < d->nwtot && r >= 0 && r < d->n0;                                         \
          const T tr = inside ? t0[W * d->nwin0 + q0] : 0;                                                          \
          for (int64_t b = 0; b < d->B; b++)                                                                        \
            for (int64_t w1 = 0; w1 < d->nw1; w1++) {                                                               \
              const int64_t mo = a * ma + w0 * mw0 + q0 * mj0 + b * mb + w1 * mw1;                                  \
              const int64_t o = a * da + r * dr0 + b * db + w1 * d->s1 * dr1;                                      \
              const T *tq = t1 + w1 * d->nwin1;                                                                     \
              if (!adjoint && !inside) continue;                                                                    \
              if (adjoint && !inside) {                                                                             \
                for (int64_t k = 0; k < d->nwin1 * C; k++) y[mo + k] = 0;                                           \
              } else if (C == 1) {                                                                                  \
                if (!adjoint)                                                                                       \
                  for (int64_t q1 = 0; q1 < d->nwin1; q1++) y[o + q1] += tr * tq[q1] * x[mo + q1];                  \
                else                                                                                                \
                  for (int64_t q1 = 0; q1 < d->nwin1; q1++) y[mo + q1] = tr * tq[q1] * x[o + q1];                   \
              } else {                                                                                              \
                for (int64_t q1 = 0; q1 < d->nwin1; q1++) {                                                         \
                  const T tw = tr * tq[q1];                                                                         \
                  if (!adjoint)                                                                                     \
                    for (int64_t c = 0; c < C; c++) y[o + q1 * C + c] += tw * x[mo + q1 * C + c];                   \
                  else                                                                                              \
                    for (int64_t c = 0; c < C; c++) y[mo + q1 * C + c] = tw * x[o + q1 * C + c];                    \
                }                                                                                                   \
              }                                                                                                     \
            }                                                                                                       \
        }                                                                                                           \
    return 0;                                                                                                       \
  }                                                                                                                 \
  T *X = work ? (T *)work : malloc(sizeof(T) * (size_t)((K + Q) * cols + 1)), *Y = X + K * cols;                    \
  if (!X) return -1;                                                                                                \
  for (int64_t a = a0; a < a1; a++) {                                                                              \
    if (!adjoint) {                                                                                                 \
      MODEL_COLUMNS(x, 0);                                                                                          \
      gemm_##NAME(0, Q, cols, K, m, K, X, Y);                                                                       \
    }                                                                                                               \
    /* the tapered overlap-add (or the tapered gather): per patch row (q0, w0) its row's taper and bounds, then */  \
    /* along the patch columns w1 of each (b, q1) with no other index work */                                       \
    for (int64_t q0 = 0; q0 < d->nwin0; q0++)                                                                       \
      for (int64_t w0 = 0; w0 < d->nw0; w0++) {                                                                     \
        const int64_t W = d->p0 + w0, r = W * d->s0 - d->r0 + q0; /* global patch, buffer row */                    \
        const int inside = W >= 0 && W < d->nwtot && r >= 0 && r < d->n0;                                           \
        const T tr = inside ? t0[W * d->nwin0 + q0] : 0;                                                            \
        for (int64_t b = 0; b < d->B; b++)                                                                          \
          for (int64_t q1 = 0; q1 < d->nwin1; q1++) {                                                               \
            T *yq = Y + (q0 * d->nwin1 + q1) * cols + (b * d->nw0 + w0) * d->nw1 * C;                               \
            const T *tq = t1 + q1;                                                                                  \
            const int64_t o = a * da + r * dr0 + b * db + q1 * dr1, so = d->s1 * dr1;                               \
            if (!adjoint) {                                                                                         \
              if (inside && C == 1)                                                                                 \
                for (int64_t w1 = 0; w1 < d->nw1; w1++) y[o + w1 * so] += tr * tq[w1 * d->nwin1] * yq[w1];          \
              else if (inside)                                                                                      \
                for (int64_t w1 = 0; w1 < d->nw1; w1++) {                                                           \
                  const T tw = tr * tq[w1 * d->nwin1];                                                              \
                  for (int64_t c = 0; c < C; c++) y[o + w1 * so + c] += tw * yq[w1 * C + c];                        \
                }                                                                                                   \
            } else if (inside && C == 1) { /* x is the data, Y the tapered patches here */                          \
              for (int64_t w1 = 0; w1 < d->nw1; w1++) yq[w1] = tr * tq[w1 * d->nwin1] * x[o + w1 * so];             \
            } else if (inside) {                                                                                    \
              for (int64_t w1 = 0; w1 < d->nw1; w1++) {                                                             \
                const T tw = tr * tq[w1 * d->nwin1];                                                                \
                for (int64_t c = 0; c < C; c++) yq[w1 * C + c] = tw * x[o + w1 * so + c];                           \
              }                                                                                                     \
            } else {                                                                                                \
              for (int64_t k = 0; k < d->nw1 * C; k++) yq[k] = 0;                                                   \
            }                                                                                                       \
          }                                                                                                         \
      }                                                                                                             \
    if (adjoint) {                                                                                                  \
      gemm_##NAME(1, K, cols, Q, m, K, Y, X);                                                                       \
      MODEL_COLUMNS(y, 1);                                                                                          \
    }                                                                                                               \
  }                                                                                                                 \
  if (X != work) free(X);                                                                                           \
  return 0;

static int patch_s(int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out, void *work,
                   int64_t a0, int64_t a1)
{
  PATCH_BODY(float, float)
}
static int patch_d(int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out, void *work,
                   int64_t a0, int64_t a1)
{
  PATCH_BODY(double, double)
}
static int patch_c(int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out, void *work,
                   int64_t a0, int64_t a1)
{
  PATCH_BODY(float complex, cfloat)
}
static int patch_z(int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out, void *work,
                   int64_t a0, int64_t a1)
{
  PATCH_BODY(double complex, cdouble)
}

int kernel_patch_range(sl_dtype dt, int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out,
                       void *work, int64_t a0, int64_t a1)
{
  static int (*const f[])(int, const sl_patch_dims *, const void *, const void *, void *, void *, int64_t, int64_t) = {
    patch_s, patch_d, patch_c, patch_z};
  return f[dt](adjoint, d, tables, in, out, work, a0, a1);
}

int kernel_patch(sl_dtype dt, int adjoint, const sl_patch_dims *d, const void *tables, const void *in, void *out, void *work)
{
  return kernel_patch_range(dt, adjoint, d, tables, in, out, work, 0, d->A);
}
