/* Sparse CSR products on a rank's block: forward y = A x, adjoint x = A^H y, A given by 64-bit row
 * pointers, column indices and values (four dtypes). CPU: a row loop (the adjoint scatters conj(a_ij) y_i
 * into x, zeroed first), on chunks packed when split. CUDA: cuSPARSE SpMV (non-transpose / conjugate
 * transpose) for one chunk per side. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <starpu_cusparse.h>
#endif

typedef struct csr_args {
  codelet_chunks ch; /* chunks of x and of y */
  sl_dtype dt;
  int adjoint;
  int64_t nr, nc, nnz;
} csr_args;

static struct starpu_codelet cl_csr;

/* The row loop on contiguous x (rows_in) and y (rows_out). */
static void csr_cpu_product(const csr_args *m, const int64_t *rp, const int64_t *ci, const void *v, const void *in, void *out)
{
  int64_t rows_out = m->adjoint ? m->nc : m->nr;
  int c = sl_dtype_is_complex(m->dt) ? 2 : 1;
  memset(out, 0, (size_t)rows_out * sl_dtype_size(m->dt));
#define CSR_LOOP(R)                                                                                   \
  do {                                                                                                \
    const R *a = v, *x = in;                                                                          \
    R *y = out;                                                                                       \
    for (int64_t i = 0; i < m->nr; i++)                                                               \
      for (int64_t p = rp[i]; p < rp[i + 1]; p++) {                                                   \
        int64_t j = ci[p];                                                                            \
        if (c == 1) {                                                                                 \
          if (m->adjoint) y[j] += a[p] * x[i];                                                        \
          else y[i] += a[p] * x[j];                                                                   \
        } else {                                                                                      \
          R ar = a[2 * p], ai = m->adjoint ? -a[2 * p + 1] : a[2 * p + 1];                            \
          int64_t o = m->adjoint ? j : i, s = m->adjoint ? i : j;                                     \
          y[2 * o] += ar * x[2 * s] - ai * x[2 * s + 1];                                              \
          y[2 * o + 1] += ar * x[2 * s + 1] + ai * x[2 * s];                                          \
        }                                                                                             \
      }                                                                                               \
  } while (0)
  if (m->dt == SL_FLOAT32 || m->dt == SL_COMPLEX64) CSR_LOOP(float);
  else CSR_LOOP(double);
#undef CSR_LOOP
}

static void csr_cpu(void *buffers[], void *arg)
{
  const csr_args *m = arg;
  size_t el = sl_dtype_size(m->dt);
  int has_a = m->nnz > 0, first_x = has_a ? 3 : 1;
  const int64_t *rp = (const int64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
  const int64_t *ci = has_a ? (const int64_t *)STARPU_VECTOR_GET_PTR(buffers[1]) : NULL;
  const void *v = has_a ? (const void *)STARPU_VECTOR_GET_PTR(buffers[2]) : NULL;
  int64_t rows_in = m->adjoint ? m->nr : m->nc, rows_out = m->adjoint ? m->nc : m->nr;
  void *xbuf = NULL, *ybuf = NULL, *X = NULL, *Y = NULL;
  static const double zero[2] = {0, 0};
  if (m->ch.nin == 1) X = (void *)STARPU_VECTOR_GET_PTR(buffers[first_x]);
  else if (m->ch.nin > 1 && (X = codelet_chunks_flat(buffers, first_x, m->ch.nin, el))) { /* in place */
  } else if (m->ch.nin > 1 && (xbuf = malloc((size_t)rows_in * el))) codelet_chunks_copy(buffers, first_x, m->ch.nin, X = xbuf, el, 0);
  if (m->ch.nout == 1) Y = (void *)STARPU_VECTOR_GET_PTR(buffers[first_x + m->ch.nin]);
  else if (!(Y = codelet_chunks_flat(buffers, first_x + m->ch.nin, m->ch.nout, el))) Y = ybuf = malloc((size_t)rows_out * el);
  if (!Y || (m->ch.nin > 1 && !X)) {
    sl_async_error(SL_E_NOMEM, "CSR: out of memory packing chunks");
  } else {
    csr_cpu_product(m, rp, ci, v, X ? X : (const void *)zero, Y);
    if (ybuf) codelet_chunks_copy(buffers, first_x + m->ch.nin, m->ch.nout, ybuf, el, 1);
  }
  free(xbuf);
  free(ybuf);
}

#ifdef SL_HAVE_CUDA
static void csr_cuda(void *buffers[], void *arg)
{
  const csr_args *m = arg;
  cudaStream_t s = starpu_cuda_get_local_stream();
  int has_a = m->nnz > 0, first_x = has_a ? 3 : 1;
  void *Y = (void *)STARPU_VECTOR_GET_PTR(buffers[first_x + m->ch.nin]);
  int64_t rows_out = m->adjoint ? m->nc : m->nr, rows_in = m->adjoint ? m->nr : m->nc;
  if (!has_a || m->ch.nin == 0) {
    cudaError_t e = cudaMemsetAsync(Y, 0, (size_t)rows_out * sl_dtype_size(m->dt), s);
    if (e != cudaSuccess) sl_async_error(SL_E_RUNTIME, "CSR (CUDA): %s", cudaGetErrorString(e));
    return;
  }
  static const cudaDataType types[4] = {CUDA_R_32F, CUDA_R_64F, CUDA_C_32F, CUDA_C_64F};
  cudaDataType t = types[m->dt];
  cusparseHandle_t h = starpu_cusparse_get_local_handle();
  cusparseSpMatDescr_t A = NULL;
  cusparseDnVecDescr_t vx = NULL, vy = NULL;
  const double one_d[2] = {1, 0}, zero_d[2] = {0, 0};
  const float one_s[2] = {1, 0}, zero_s[2] = {0, 0};
  int single = m->dt == SL_FLOAT32 || m->dt == SL_COMPLEX64;
  const void *alpha = single ? (const void *)one_s : (const void *)one_d, *beta = single ? (const void *)zero_s : (const void *)zero_d;
  /* cuSPARSE refuses the conjugate transpose of a real matrix: the plain transpose is the same there */
  cusparseOperation_t op = !m->adjoint ? CUSPARSE_OPERATION_NON_TRANSPOSE
                           : (sl_dtype_is_complex(m->dt) ? CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE : CUSPARSE_OPERATION_TRANSPOSE);
  size_t wbytes = 0;
  void *work = NULL;
  cusparseStatus_t st = cusparseSetStream(h, s);
  if (st == CUSPARSE_STATUS_SUCCESS)
    st = cusparseCreateCsr(&A, m->nr, m->nc, m->nnz, (void *)STARPU_VECTOR_GET_PTR(buffers[0]),
                           (void *)STARPU_VECTOR_GET_PTR(buffers[1]), (void *)STARPU_VECTOR_GET_PTR(buffers[2]),
                           CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, t);
  if (st == CUSPARSE_STATUS_SUCCESS) st = cusparseCreateDnVec(&vx, rows_in, (void *)STARPU_VECTOR_GET_PTR(buffers[first_x]), t);
  if (st == CUSPARSE_STATUS_SUCCESS) st = cusparseCreateDnVec(&vy, rows_out, Y, t);
  if (st == CUSPARSE_STATUS_SUCCESS)
    st = cusparseSpMV_bufferSize(h, op, alpha, A, vx, beta, vy, t, CUSPARSE_SPMV_ALG_DEFAULT, &wbytes);
  if (st == CUSPARSE_STATUS_SUCCESS && wbytes > 0 && cudaMallocAsync(&work, wbytes, s) != cudaSuccess)
    st = CUSPARSE_STATUS_ALLOC_FAILED;
  if (st == CUSPARSE_STATUS_SUCCESS) st = cusparseSpMV(h, op, alpha, A, vx, beta, vy, t, CUSPARSE_SPMV_ALG_DEFAULT, work);
  if (work) cudaFreeAsync(work, s);
  if (vx) cusparseDestroyDnVec(vx);
  if (vy) cusparseDestroyDnVec(vy);
  if (A) cusparseDestroySpMat(A);
  if (st != CUSPARSE_STATUS_SUCCESS) sl_async_error(SL_E_RUNTIME, "CSR (cuSPARSE SpMV): %s", cusparseGetErrorString(st));
}

#endif

void codelet_csr_init(void)
{
#ifdef SL_HAVE_CUDA
  codelet_chunked_init(&cl_csr, "sl_csr", csr_cpu, csr_cuda);
#else
  codelet_chunked_init(&cl_csr, "sl_csr", csr_cpu, NULL);
#endif
}

int codelet_csr_submit(sl_dtype dt, int adjoint, int64_t nr, int64_t nc, int64_t nnz, starpu_data_handle_t rowptr,
                       starpu_data_handle_t colind, starpu_data_handle_t vals, int nx, const starpu_data_handle_t *x,
                       int ny, const starpu_data_handle_t *y)
{
  if (ny == 0) return SL_SUCCESS;
  csr_args *m = malloc(sizeof *m);
  if (!m) return sl_error(SL_E_NOMEM, "CSR: out of memory");
  *m = (csr_args){{nx, ny}, dt, adjoint, nr, nc, nnz};
  const starpu_data_handle_t mats[3] = {rowptr, colind, vals};
  return codelet_chunked_submit(&cl_csr, m, sizeof *m, nnz > 0 ? 3 : 1, mats, x, y,
                                2.0 * (double)nnz * (sl_dtype_is_complex(dt) ? 4.0 : 1.0), "CSR");
}
