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
#ifdef SL_HAVE_CUDA
#include <cublas_v2.h>
#include <starpu_cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

typedef struct matmul_args {
  sl_dtype dt;
  int adjoint;
  int64_t nr, nc, nrhs;
  int64_t nbatch; /* independent products: A, X and Y hold nbatch consecutive blocks (Fredholm1) */
  int nx, ny; /* chunks of the input and of the output */
} matmul_args;

static struct starpu_codelet cl_matmul;
static struct starpu_perfmodel pm_matmul = {.type = STARPU_HISTORY_BASED, .symbol = "sl_matmul"};

/* Y (rows_out x nrhs) = op(A) X (rows_in x nrhs) on contiguous host buffers. */
static void cpu_product(const matmul_args *m, const void *A, const void *X, void *Y)
{
  int nr = (int)m->nr, nc = (int)m->nc, k = (int)m->nrhs;
  int rows_out = m->adjoint ? nc : nr, inner = m->adjoint ? nr : nc;
  if (rows_out == 0 || k == 0) return;
  if (inner == 0) {
    memset(Y, 0, (size_t)rows_out * (size_t)k * sl_dtype_size(m->dt));
    return;
  }
  enum CBLAS_TRANSPOSE op = m->adjoint ? (sl_dtype_is_complex(m->dt) ? CblasConjTrans : CblasTrans) : CblasNoTrans;
  const float one_s[2] = {1, 0}, zero_s[2] = {0, 0};
  const double one_d[2] = {1, 0}, zero_d[2] = {0, 0};
  switch (m->dt) {
  case SL_FLOAT32:
    if (k == 1) cblas_sgemv(CblasRowMajor, op, nr, nc, 1.0f, A, nc, X, 1, 0.0f, Y, 1);
    else cblas_sgemm(CblasRowMajor, op, CblasNoTrans, rows_out, k, inner, 1.0f, A, nc, X, k, 0.0f, Y, k);
    break;
  case SL_FLOAT64:
    if (k == 1) cblas_dgemv(CblasRowMajor, op, nr, nc, 1.0, A, nc, X, 1, 0.0, Y, 1);
    else cblas_dgemm(CblasRowMajor, op, CblasNoTrans, rows_out, k, inner, 1.0, A, nc, X, k, 0.0, Y, k);
    break;
  case SL_COMPLEX64:
    if (k == 1) cblas_cgemv(CblasRowMajor, op, nr, nc, one_s, A, nc, X, 1, zero_s, Y, 1);
    else cblas_cgemm(CblasRowMajor, op, CblasNoTrans, rows_out, k, inner, one_s, A, nc, X, k, zero_s, Y, k);
    break;
  default:
    if (k == 1) cblas_zgemv(CblasRowMajor, op, nr, nc, one_d, A, nc, X, 1, zero_d, Y, 1);
    else cblas_zgemm(CblasRowMajor, op, CblasNoTrans, rows_out, k, inner, one_d, A, nc, X, k, zero_d, Y, k);
    break;
  }
}

/* Copies between the chunks buffers[first..first+n) and one contiguous buffer (to_chunks: which way). */
static void pack(void *buffers[], int first, int n, void *flat, size_t el, int to_chunks)
{
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    size_t bytes = (size_t)STARPU_VECTOR_GET_NX(buffers[first + i]) * el;
    void *p = (void *)STARPU_VECTOR_GET_PTR(buffers[first + i]);
    if (to_chunks) memcpy(p, (char *)flat + off, bytes);
    else memcpy((char *)flat + off, p, bytes);
    off += bytes;
  }
}

static void matmul_cpu(void *buffers[], void *arg)
{
  const matmul_args *m = arg;
  size_t el = sl_dtype_size(m->dt);
  const void *A = m->nr * m->nc > 0 ? (const void *)STARPU_VECTOR_GET_PTR(buffers[0]) : NULL;
  int64_t rows_in = m->adjoint ? m->nr : m->nc, rows_out = m->adjoint ? m->nc : m->nr;
  void *X = NULL, *Y = NULL, *xbuf = NULL, *ybuf = NULL;
  int first_x = m->nr * m->nc > 0 ? 1 : 0, first_y = first_x + m->nx;
  if (m->nx == 1) X = (void *)STARPU_VECTOR_GET_PTR(buffers[first_x]);
  else if (m->nx > 1 && (xbuf = malloc((size_t)(rows_in * m->nrhs * m->nbatch) * el))) pack(buffers, first_x, m->nx, X = xbuf, el, 0);
  if (m->ny == 1) Y = (void *)STARPU_VECTOR_GET_PTR(buffers[first_y]);
  else if (m->ny > 1) Y = ybuf = malloc((size_t)(rows_out * m->nrhs * m->nbatch) * el);
  if ((m->nx > 1 && !xbuf) || (m->ny > 1 && !ybuf)) {
    sl_async_error(SL_E_NOMEM, "MatrixMult: out of memory packing %d and %d chunks", m->nx, m->ny);
  } else if (Y) {
    size_t sa = (size_t)(m->nr * m->nc) * el, sx = (size_t)(rows_in * m->nrhs) * el, sy = (size_t)(rows_out * m->nrhs) * el;
    for (int64_t b = 0; b < m->nbatch; b++) {
      if (X) cpu_product(m, A ? (const char *)A + b * sa : NULL, (const char *)X + b * sx, (char *)Y + b * sy);
      else memset((char *)Y + b * sy, 0, sy); /* this rank's input block is empty */
    }
    if (ybuf) pack(buffers, first_y, m->ny, ybuf, el, 1);
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
  void *Y = (void *)STARPU_VECTOR_GET_PTR(buffers[first_x + m->nx]);
  int rows_out = m->adjoint ? nc : nr, inner = m->adjoint ? nr : nc;
  cudaStream_t s = starpu_cuda_get_local_stream();
  if (inner == 0 || m->nx == 0) {
    cudaError_t e = cudaMemsetAsync(Y, 0, (size_t)rows_out * (size_t)k * (size_t)m->nbatch * sl_dtype_size(m->dt), s);
    if (e != cudaSuccess) sl_async_error(SL_E_RUNTIME, "MatrixMult (CUDA): %s", cudaGetErrorString(e));
    return;
  }
  const void *A = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
  const void *X = (const void *)STARPU_VECTOR_GET_PTR(buffers[first_x]);
  /* row-major Y = A X is column-major Y^T = X^T A^T; Y = A^H X is Y^T = X^T conj(A) = X^T op_C(A^T) */
  cublasOperation_t opa = m->adjoint ? (sl_dtype_is_complex(m->dt) ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
  const float one_s[2] = {1, 0}, zero_s[2] = {0, 0};
  const double one_d[2] = {1, 0}, zero_d[2] = {0, 0};
  long long sa = (long long)nr * nc, sx = (long long)inner * k, sy = (long long)rows_out * k;
  int nb = (int)m->nbatch;
  cublasStatus_t st;
  switch (m->dt) {
  case SL_FLOAT32:
    st = cublasSgemmStridedBatched(h, CUBLAS_OP_N, opa, k, rows_out, inner, one_s, X, k, sx, A, nc, sa, zero_s, Y, k,
                                   sy, nb);
    break;
  case SL_FLOAT64:
    st = cublasDgemmStridedBatched(h, CUBLAS_OP_N, opa, k, rows_out, inner, one_d, X, k, sx, A, nc, sa, zero_d, Y, k,
                                   sy, nb);
    break;
  case SL_COMPLEX64:
    st = cublasCgemmStridedBatched(h, CUBLAS_OP_N, opa, k, rows_out, inner, (const cuComplex *)one_s, X, k, sx, A, nc,
                                   sa, (const cuComplex *)zero_s, Y, k, sy, nb);
    break;
  default:
    st = cublasZgemmStridedBatched(h, CUBLAS_OP_N, opa, k, rows_out, inner, (const cuDoubleComplex *)one_d, X, k, sx, A,
                                   nc, sa, (const cuDoubleComplex *)zero_d, Y, k, sy, nb);
    break;
  }
  if (st != CUBLAS_STATUS_SUCCESS) sl_async_error(SL_E_RUNTIME, "MatrixMult (cuBLAS gemm): status %d", (int)st);
}

/* The CUDA version works on one chunk of input and one of output. */
static int matmul_can_execute(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
  const matmul_args *m = task->cl_arg;
  if (starpu_worker_get_type((int)workerid) != STARPU_CUDA_WORKER) return 1;
  return m->nx <= 1 && m->ny == 1;
}
#endif

void codelet_matmul_init(void)
{
  starpu_codelet_init(&cl_matmul);
  cl_matmul.name = "sl_matmul";
  cl_matmul.cpu_funcs[0] = matmul_cpu;
#ifdef SL_HAVE_CUDA
  cl_matmul.cuda_funcs[0] = matmul_cuda;
  cl_matmul.cuda_flags[0] = STARPU_CUDA_ASYNC;
  cl_matmul.can_execute = matmul_can_execute;
#endif
  cl_matmul.where = codelet_where();
  cl_matmul.nbuffers = STARPU_VARIABLE_NBUFFERS;
  cl_matmul.model = &pm_matmul;
}

int codelet_matmul_submit(sl_dtype dt, int adjoint, int64_t nr, int64_t nc, int64_t nrhs, int64_t nbatch,
                          starpu_data_handle_t A, int nx, const starpu_data_handle_t *x, int ny,
                          const starpu_data_handle_t *y)
{
  if (ny == 0) return SL_SUCCESS; /* nothing to write on this rank */
  int nb = (A ? 1 : 0) + nx + ny;
  matmul_args *m = malloc(sizeof *m);
  struct starpu_task *t = m ? codelet_task_create(nb) : NULL;
  if (!t) {
    free(m);
    return sl_error(SL_E_NOMEM, "MatrixMult: out of memory");
  }
  *m = (matmul_args){dt, adjoint, nr, nc, nrhs, nbatch, nx, ny};
  t->cl = &cl_matmul;
  t->cl_arg = m;
  t->cl_arg_size = sizeof *m;
  t->cl_arg_free = 1;
  int i = 0;
  if (A) {
    STARPU_TASK_SET_HANDLE(t, A, i);
    STARPU_TASK_SET_MODE(t, STARPU_R, i++);
  }
  for (int j = 0; j < nx; j++) {
    STARPU_TASK_SET_HANDLE(t, x[j], i);
    STARPU_TASK_SET_MODE(t, STARPU_R, i++);
  }
  for (int j = 0; j < ny; j++) {
    STARPU_TASK_SET_HANDLE(t, y[j], i);
    STARPU_TASK_SET_MODE(t, STARPU_W, i++);
  }
  t->flops = 2.0 * (double)nr * (double)nc * (double)nrhs * (double)nbatch * (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return codelet_task_submit(t);
}
