/* Sparse CSR products on a rank's block: forward y = A x, adjoint x = A^H y, A given by 64-bit row
 * pointers, column indices and values (four dtypes). CPU: a row loop (the adjoint scatters conj(a_ij) y_i
 * into x, zeroed first), on chunks packed when split. CUDA: cuSPARSE SpMV (non-transpose / conjugate
 * transpose) for one chunk per side. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <starpu_cusparse.h>
#endif

/* The block transposed (CSR of A^T: for each column its rows and values, rows increasing), made by the CPU task
 * the first time an adjoint runs on several threads: the adjoint is then a loop over columns that threads can
 * share, where the row loop scatters into x. */
struct csr_trans {
  pthread_mutex_t lock;
  int state; /* 0: not built, 1: built, -1: no memory for it */
  int64_t *cp, *ri;
  void *v;
};

csr_trans *codelet_csr_trans_new(void)
{
  csr_trans *t = calloc(1, sizeof *t);
  if (t) pthread_mutex_init(&t->lock, NULL);
  return t;
}

void codelet_csr_trans_free(csr_trans *t)
{
  if (!t) return;
  pthread_mutex_destroy(&t->lock);
  free(t->cp), free(t->ri), free(t->v);
  free(t);
}

typedef struct csr_args {
  codelet_chunks ch; /* chunks of x and of y */
  sl_dtype dt;
  int adjoint;
  int64_t nr, nc, nnz;
  csr_trans *trans; /* NULL: none kept */
} csr_args;

static struct starpu_codelet cl_csr;

/* Builds t from the block (once; counting sort by column). Returns 1 when t is usable. */
static int trans_ready(csr_trans *t, const csr_args *m, const int64_t *rp, const int64_t *ci, const void *v)
{
  if (!t) return 0;
  pthread_mutex_lock(&t->lock);
  if (t->state == 0) {
    size_t el = sl_dtype_size(m->dt);
    t->cp = calloc((size_t)m->nc + 1, sizeof(int64_t));
    t->ri = malloc((size_t)m->nnz * sizeof(int64_t) + 1);
    t->v = malloc((size_t)m->nnz * el + 1);
    int64_t *next = malloc(((size_t)m->nc + 1) * sizeof(int64_t));
    if (t->cp && t->ri && t->v && next) {
      for (int64_t p = 0; p < m->nnz; p++) t->cp[ci[p] + 1]++;
      for (int64_t j = 0; j < m->nc; j++) t->cp[j + 1] += t->cp[j];
      memcpy(next, t->cp, ((size_t)m->nc + 1) * sizeof(int64_t));
      for (int64_t i = 0; i < m->nr; i++)
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
          int64_t q = next[ci[p]]++;
          t->ri[q] = i;
          memcpy((char *)t->v + (size_t)q * el, (const char *)v + (size_t)p * el, el);
        }
      t->state = 1;
    } else {
      free(t->cp), free(t->ri), free(t->v);
      t->cp = t->ri = NULL, t->v = NULL;
      t->state = -1; /* the row loop on one thread stays available */
    }
    free(next);
  }
  int ok = t->state == 1;
  pthread_mutex_unlock(&t->lock);
  return ok;
}

/* Output rows [lo, hi) of a row loop: y_i = sum_p op(a_p) x_(col p) over the rows of (rp, ci, a); conj: the
 * conjugates of the values (the adjoint through the transposed block). */
static void csr_rows(sl_dtype dt, int conj, const int64_t *rp, const int64_t *ci, const void *v, const void *in, void *out,
                     int64_t lo, int64_t hi)
{
  int c = sl_dtype_is_complex(dt) ? 2 : 1;
#define CSR_ROWS(R)                                                                                   \
  do {                                                                                                \
    const R *a = v, *x = in;                                                                          \
    R *y = out;                                                                                       \
    for (int64_t i = lo; i < hi; i++) {                                                               \
      if (c == 1) {                                                                                   \
        R s = 0;                                                                                      \
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) s += a[p] * x[ci[p]];                             \
        y[i] = s;                                                                                     \
      } else {                                                                                        \
        R sr = 0, si = 0;                                                                             \
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {                                                 \
          R ar = a[2 * p], ai = conj ? -a[2 * p + 1] : a[2 * p + 1];                                  \
          int64_t j = ci[p];                                                                          \
          sr += ar * x[2 * j] - ai * x[2 * j + 1];                                                    \
          si += ar * x[2 * j + 1] + ai * x[2 * j];                                                    \
        }                                                                                             \
        y[2 * i] = sr, y[2 * i + 1] = si;                                                             \
      }                                                                                               \
    }                                                                                                 \
  } while (0)
  if (dt == SL_FLOAT32 || dt == SL_COMPLEX64) CSR_ROWS(float);
  else CSR_ROWS(double);
#undef CSR_ROWS
}

/* The adjoint on one thread: the row loop scattering conj(a_ij) y_i into x. */
static void csr_scatter(const csr_args *m, const int64_t *rp, const int64_t *ci, const void *v, const void *in, void *out)
{
  int c = sl_dtype_is_complex(m->dt) ? 2 : 1;
  memset(out, 0, (size_t)m->nc * sl_dtype_size(m->dt));
#define CSR_SCATTER(R)                                                                                \
  do {                                                                                                \
    const R *a = v, *x = in;                                                                          \
    R *y = out;                                                                                       \
    for (int64_t i = 0; i < m->nr; i++)                                                               \
      for (int64_t p = rp[i]; p < rp[i + 1]; p++) {                                                   \
        int64_t j = ci[p];                                                                            \
        if (c == 1) {                                                                                 \
          y[j] += a[p] * x[i];                                                                        \
        } else {                                                                                      \
          R ar = a[2 * p], ai = -a[2 * p + 1];                                                        \
          y[2 * j] += ar * x[2 * i] - ai * x[2 * i + 1];                                              \
          y[2 * j + 1] += ar * x[2 * i + 1] + ai * x[2 * i];                                          \
        }                                                                                             \
      }                                                                                               \
  } while (0)
  if (m->dt == SL_FLOAT32 || m->dt == SL_COMPLEX64) CSR_SCATTER(float);
  else CSR_SCATTER(double);
#undef CSR_SCATTER
}

typedef struct csr_job {
  sl_dtype dt;
  int conj;
  const int64_t *rp, *ci;
  const void *v, *in;
  void *out;
} csr_job;

static void csr_slice(int64_t lo, int64_t hi, void *p)
{
  const csr_job *j = p;
  csr_rows(j->dt, j->conj, j->rp, j->ci, j->v, j->in, j->out, lo, hi);
}

/* The product on contiguous x (rows_in) and y (rows_out): a rank's block is one task, so on the rank's cores
 * (sl_task_threads): the forward's rows split; the adjoint's columns through the transposed block. */
static void csr_cpu_product(const csr_args *m, const int64_t *rp, const int64_t *ci, const void *v, const void *in, void *out)
{
  int nt = sl_task_threads(2.0 * (double)m->nnz + (double)(m->nr + m->nc));
  if (!m->adjoint) {
    csr_job j = {m->dt, 0, rp, ci, v, in, out};
    if (m->nr > 0) sl_parallel_for(nt, m->nr, csr_slice, &j);
    return;
  }
  if (nt > 1 && m->nnz > 0 && trans_ready(m->trans, m, rp, ci, v)) {
    csr_job j = {m->dt, 1, m->trans->cp, m->trans->ri, m->trans->v, in, out};
    sl_parallel_for(nt, m->nc, csr_slice, &j);
    return;
  }
  csr_scatter(m, rp, ci, v, in, out);
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
                       starpu_data_handle_t colind, starpu_data_handle_t vals, csr_trans *trans, int nx,
                       const starpu_data_handle_t *x, int ny, const starpu_data_handle_t *y)
{
  if (ny == 0) return SL_SUCCESS;
  csr_args *m = malloc(sizeof *m);
  if (!m) return sl_error(SL_E_NOMEM, "CSR: out of memory");
  *m = (csr_args){{nx, ny, 0}, dt, adjoint, nr, nc, nnz, trans};
  const starpu_data_handle_t mats[3] = {rowptr, colind, vals};
  return codelet_chunked_submit(&cl_csr, m, sizeof *m, nnz > 0 ? 3 : 1, mats, x, y,
                                2.0 * (double)nnz * (sl_dtype_is_complex(dt) ? 4.0 : 1.0), "CSR");
}
