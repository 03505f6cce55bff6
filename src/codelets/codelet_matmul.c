/* Dense local matrix products: Y = A X (forward) or Y = A^H X (adjoint), A row-major nr x nc, X and Y
 * row-major with nrhs columns, in the four dtypes. CPU: CBLAS (gemv when nrhs = 1, gemm otherwise).
 * CUDA: cuBLAS gemm on the row-major data seen as column-major transposes. X and Y are the chunks of
 * distributed arrays (nbatch independent products back to back for Fredholm1: a loop on the CPU, strided
 * batched gemm on the GPU): one chunk each is used in place; several are packed into contiguous buffers on the
 * CPU (the CUDA implementation takes only the one-chunk case). */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/cublas_gemm.h"
#ifdef SL_HAVE_CUDA
#include <starpu_cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

typedef struct matmul_args {
  codelet_chunks ch; /* chunks of X and of Y */
  sl_dtype dt;
  int adjoint;
  int64_t nr, nc, nrhs;
  int64_t nbatch; /* independent products: A, X and Y hold nbatch consecutive blocks (Fredholm1) */
} matmul_args;

static struct starpu_codelet cl_matmul;
static struct starpu_perfmodel pm_matmul = {.type = STARPU_HISTORY_BASED, .symbol = "sl_matmul"};

/* Rows [lo, hi) of Y (rows_out x nrhs) = op(A) X (rows_in x nrhs) on contiguous host buffers: rows of A
 * (forward) or columns of A (adjoint), so that threads can share one product. */
static void cpu_rows(const matmul_args *m, const void *A, const void *X, void *Y, int64_t lo, int64_t hi)
{
  int nr = (int)m->nr, nc = (int)m->nc, k = (int)m->nrhs, rows = (int)(hi - lo);
  int inner = m->adjoint ? nr : nc;
  size_t el = sl_dtype_size(m->dt);
  if (rows == 0 || k == 0) return;
  Y = (char *)Y + (size_t)(lo * k) * el;
  if (inner == 0) {
    memset(Y, 0, (size_t)rows * (size_t)k * el);
    return;
  }
  /* forward: A's rows [lo, hi); adjoint: its columns [lo, hi), a nr x rows block of leading dimension nc */
  A = (const char *)A + (size_t)(m->adjoint ? lo : lo * nc) * el;
  int ar = m->adjoint ? nr : rows, ac = m->adjoint ? rows : nc;
  enum CBLAS_TRANSPOSE op = m->adjoint ? (sl_dtype_is_complex(m->dt) ? CblasConjTrans : CblasTrans) : CblasNoTrans;
  const float one_s[2] = {1, 0}, zero_s[2] = {0, 0};
  const double one_d[2] = {1, 0}, zero_d[2] = {0, 0};
  switch (m->dt) {
  case SL_FLOAT32:
    if (k == 1) cblas_sgemv(CblasRowMajor, op, ar, ac, 1.0f, A, nc, X, 1, 0.0f, Y, 1);
    else cblas_sgemm(CblasRowMajor, op, CblasNoTrans, rows, k, inner, 1.0f, A, nc, X, k, 0.0f, Y, k);
    break;
  case SL_FLOAT64:
    if (k == 1) cblas_dgemv(CblasRowMajor, op, ar, ac, 1.0, A, nc, X, 1, 0.0, Y, 1);
    else cblas_dgemm(CblasRowMajor, op, CblasNoTrans, rows, k, inner, 1.0, A, nc, X, k, 0.0, Y, k);
    break;
  case SL_COMPLEX64:
    if (k == 1) cblas_cgemv(CblasRowMajor, op, ar, ac, one_s, A, nc, X, 1, zero_s, Y, 1);
    else cblas_cgemm(CblasRowMajor, op, CblasNoTrans, rows, k, inner, one_s, A, nc, X, k, zero_s, Y, k);
    break;
  default:
    if (k == 1) cblas_zgemv(CblasRowMajor, op, ar, ac, one_d, A, nc, X, 1, zero_d, Y, 1);
    else cblas_zgemm(CblasRowMajor, op, CblasNoTrans, rows, k, inner, one_d, A, nc, X, k, zero_d, Y, k);
    break;
  }
}

typedef struct matmul_job {
  const matmul_args *m;
  const void *A, *X;
  void *Y;
} matmul_job;

static void matmul_slice(int64_t lo, int64_t hi, void *p)
{
  const matmul_job *j = p;
  cpu_rows(j->m, j->A, j->X, j->Y, lo, hi);
}

/* Elements past the end of a packed input: OpenBLAS 0.3.21's Haswell zgemv kernels read one complex element
 * beyond x (OpenBLAS issue 4013); the packed copy keeps zeros there */
enum { XPAD = 4 };

/* One product on the rank's cores: a rank's MatrixMult is one task (sl_task_threads), its output rows split.
 * Complex matrix-vector products read x through a padded copy (the over-read above; x is one row of A's size). */
static void cpu_product(const matmul_args *m, const void *A, const void *X, void *Y)
{
  int64_t rows_out = m->adjoint ? m->nc : m->nr, rows_in = m->adjoint ? m->nr : m->nc;
  int nt = sl_task_threads((double)(m->nr * m->nc) * (double)m->nrhs);
  void *xpad = NULL;
  if (m->nrhs == 1 && sl_dtype_is_complex(m->dt) && rows_in > 0) {
    size_t el = sl_dtype_size(m->dt);
    if (!(xpad = calloc((size_t)(rows_in + XPAD), el))) nt = 1; /* no memory: x itself, one whole-matrix call */
    else memcpy(xpad, X, (size_t)rows_in * el);
  }
  matmul_job j = {m, A, xpad ? xpad : X, Y};
  sl_parallel_for(nt, rows_out, matmul_slice, &j);
  free(xpad);
}

static void matmul_cpu(void *buffers[], void *arg)
{
  const matmul_args *m = arg;
  size_t el = sl_dtype_size(m->dt);
  const void *A = m->nr * m->nc > 0 ? (const void *)STARPU_VECTOR_GET_PTR(buffers[0]) : NULL;
  int64_t rows_in = m->adjoint ? m->nr : m->nc, rows_out = m->adjoint ? m->nc : m->nr;
  void *X = NULL, *Y = NULL, *xbuf = NULL, *ybuf = NULL;
  int first_x = m->nr * m->nc > 0 ? 1 : 0, first_y = first_x + m->ch.nin;
  if (m->ch.nin == 1) X = (void *)STARPU_VECTOR_GET_PTR(buffers[first_x]);
  else if (m->ch.nin > 1 && (X = codelet_chunks_flat(buffers, first_x, m->ch.nin, el))) { /* in place */
  } else if (m->ch.nin > 1 && (xbuf = malloc((size_t)(rows_in * m->nrhs * m->nbatch + XPAD) * el))) {
    codelet_chunks_copy(buffers, first_x, m->ch.nin, X = xbuf, el, 0);
    memset((char *)xbuf + (size_t)(rows_in * m->nrhs * m->nbatch) * el, 0, XPAD * el);
  }
  if (m->ch.nout == 1) Y = (void *)STARPU_VECTOR_GET_PTR(buffers[first_y]);
  else if (m->ch.nout > 1 && (Y = codelet_chunks_flat(buffers, first_y, m->ch.nout, el))) { /* in place */
  } else if (m->ch.nout > 1) Y = ybuf = malloc((size_t)(rows_out * m->nrhs * m->nbatch) * el);
  if ((m->ch.nin > 1 && !X) || (m->ch.nout > 1 && !Y)) {
    sl_async_error(SL_E_NOMEM, "MatrixMult: out of memory packing %d and %d chunks", m->ch.nin, m->ch.nout);
  } else if (Y) {
    size_t sa = (size_t)(m->nr * m->nc) * el, sx = (size_t)(rows_in * m->nrhs) * el, sy = (size_t)(rows_out * m->nrhs) * el;
    for (int64_t b = 0; b < m->nbatch; b++) {
      if (X) cpu_product(m, A ? (const char *)A + b * sa : NULL, (const char *)X + b * sx, (char *)Y + b * sy);
      else memset((char *)Y + b * sy, 0, sy); /* this rank's input block is empty */
    }
    if (ybuf) codelet_chunks_copy(buffers, first_y, m->ch.nout, ybuf, el, 1);
  }
  free(xbuf);
  free(ybuf);
}

#ifdef SL_HAVE_CUDA
static void matmul_cuda(void *buffers[], void *arg)
{
  const matmul_args *m = arg;
  cublasHandle_t h = starpu_cublas_get_local_handle();
  int nr = (int)m->nr, nc = (int)m->nc, k = (int)m->nrhs;
  int first_x = m->nr * m->nc > 0 ? 1 : 0;
  void *Y = (void *)STARPU_VECTOR_GET_PTR(buffers[first_x + m->ch.nin]);
  int rows_out = m->adjoint ? nc : nr, inner = m->adjoint ? nr : nc;
  cudaStream_t s = starpu_cuda_get_local_stream();
  if (inner == 0 || m->ch.nin == 0) {
    cudaError_t e = cudaMemsetAsync(Y, 0, (size_t)rows_out * (size_t)k * (size_t)m->nbatch * sl_dtype_size(m->dt), s);
    if (e != cudaSuccess) sl_async_error(SL_E_RUNTIME, "MatrixMult (CUDA): %s", cudaGetErrorString(e));
    return;
  }
  const void *A = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
  const void *X = (const void *)STARPU_VECTOR_GET_PTR(buffers[first_x]);
  /* row-major Y = A X is column-major Y^T = X^T A^T; Y = A^H X is Y^T = X^T conj(A) = X^T op_C(A^T) */
  cublasOperation_t opa = m->adjoint ? (sl_dtype_is_complex(m->dt) ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
  const int64_t sa = m->nr * m->nc, sx = (int64_t)inner * k, sy = (int64_t)rows_out * k;
  cublasStatus_t st = sl_cublas_gemms(h, m->dt, CUBLAS_OP_N, opa, k, rows_out, inner, X, k, sx, A, nc, sa, Y, k, sy,
                                      m->nbatch);
  if (st != CUBLAS_STATUS_SUCCESS) sl_async_error(SL_E_RUNTIME, "MatrixMult (cuBLAS gemm): status %d", (int)st);
}

#endif

void codelet_matmul_init(void)
{
#ifdef SL_HAVE_CUDA
  codelet_chunked_init(&cl_matmul, "sl_matmul", matmul_cpu, matmul_cuda);
#else
  codelet_chunked_init(&cl_matmul, "sl_matmul", matmul_cpu, NULL);
#endif
  cl_matmul.model = &pm_matmul;
}

int codelet_matmul_submit(sl_dtype dt, int adjoint, int64_t nr, int64_t nc, int64_t nrhs, int64_t nbatch,
                          starpu_data_handle_t A, int nx, const starpu_data_handle_t *x, int ny,
                          const starpu_data_handle_t *y)
{
  if (ny == 0) return SL_SUCCESS; /* nothing to write on this rank */
  matmul_args *m = malloc(sizeof *m);
  if (!m) return sl_error(SL_E_NOMEM, "MatrixMult: out of memory");
  *m = (matmul_args){{nx, ny, 0}, dt, adjoint, nr, nc, nrhs, nbatch};
  double flops = 2.0 * (double)nr * (double)nc * (double)nrhs * (double)nbatch * (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return codelet_chunked_submit(&cl_matmul, m, sizeof *m, A ? 1 : 0, &A, x, y, flops, "MatrixMult");
}
