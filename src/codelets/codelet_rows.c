/* A strided row copy between two logical vectors, each the concatenation of one or more vector handles
 * (an array's chunks, a ghost layer, a message buffer): row o (0 <= o < rows) copies row_len elements from
 * logical position src_start + o src_stride to dst_start + o dst_stride, or adds them there (accumulate:
 * the adjoint of a halo). Packs and unpacks halo planes and redistribution blocks for the comm layer.
 * CPU: memcpy (or an add loop) per contiguous piece; CUDA: one cudaMemcpy2DAsync (or one add kernel) when
 * each side is a single buffer, else one call per piece. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "codelets/kernel_rows.h"
#endif

static struct starpu_codelet cl_rows;

typedef struct rows_args {
  int ndst, nsrc;
  int acc; /* 0: copy; 1: add, in floats; 2: add, in doubles */
  size_t elsize;
  int64_t rows, row_len, src_start, src_stride, dst_start, dst_stride;
} rows_args;

/* Piece: the buffer index and offset of logical position pos, and how many elements follow in it. */
static void locate(void *buffers[], int first, int n, int64_t pos, int *buf, int64_t *off, int64_t *avail)
{
  *buf = first;
  *off = 0;
  *avail = 0;
  for (int i = 0; i < n; i++) {
    int64_t nx = (int64_t)STARPU_VECTOR_GET_NX(buffers[first + i]);
    if (pos < nx || i == n - 1) {
      *buf = first + i;
      *off = pos;
      *avail = nx - pos;
      return;
    }
    pos -= nx;
  }
}

/* Calls piece(dst, src, bytes, ctx) for every contiguous piece of the copy. */
static int for_pieces(void *buffers[], const rows_args *ra, int (*piece)(char *, const char *, size_t, void *), void *ctx)
{
  for (int64_t o = 0; o < ra->rows; o++) {
    int64_t s = ra->src_start + o * ra->src_stride, d = ra->dst_start + o * ra->dst_stride, left = ra->row_len;
    while (left > 0) {
      int sb, db;
      int64_t so, sa, dof, da;
      locate(buffers, ra->ndst, ra->nsrc, s, &sb, &so, &sa);
      locate(buffers, 0, ra->ndst, d, &db, &dof, &da);
      int64_t len = left < sa ? left : sa;
      if (da < len) len = da;
      if (len <= 0) return -1; /* out of the buffers: a bug in the caller */
      int rc = piece((char *)STARPU_VECTOR_GET_PTR(buffers[db]) + (size_t)dof * ra->elsize,
                     (const char *)STARPU_VECTOR_GET_PTR(buffers[sb]) + (size_t)so * ra->elsize,
                     (size_t)len * ra->elsize, ctx);
      if (rc != 0) return rc;
      s += len;
      d += len;
      left -= len;
    }
  }
  return 0;
}

static int host_piece(char *d, const char *s, size_t bytes, void *ctx)
{
  int acc = *(const int *)ctx;
  if (acc == 0) memcpy(d, s, bytes);
  else if (acc == 1)
    for (size_t i = 0; i < bytes / sizeof(float); i++) ((float *)d)[i] += ((const float *)s)[i];
  else
    for (size_t i = 0; i < bytes / sizeof(double); i++) ((double *)d)[i] += ((const double *)s)[i];
  return 0;
}

static void rows_cpu(void *buffers[], void *arg)
{
  const rows_args *ra = arg;
  if (for_pieces(buffers, ra, host_piece, (void *)&ra->acc) != 0)
    sl_async_error(SL_E_RUNTIME, "sl_rows: copy out of bounds");
}

#ifdef SL_HAVE_CUDA
typedef struct device_ctx {
  cudaStream_t stream;
  int acc;
} device_ctx;

static int device_piece(char *d, const char *s, size_t bytes, void *ctx)
{
  const device_ctx *c = ctx;
  if (c->acc) {
    size_t unit = c->acc == 1 ? sizeof(float) : sizeof(double);
    return kernel_rows_add_cuda(d, 0, s, 0, 1, (int64_t)(bytes / unit), c->acc == 2, (void *)c->stream);
  }
  return (int)cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, c->stream);
}

static void rows_cuda(void *buffers[], void *arg)
{
  const rows_args *ra = arg;
  device_ctx ctx = {starpu_cuda_get_local_stream(), ra->acc};
  cudaStream_t stream = ctx.stream;
  int rc;
  if (ra->ndst == 1 && ra->nsrc == 1 && ra->acc) {
    size_t el = ra->elsize;
    int64_t u = (int64_t)(el / (ra->acc == 1 ? sizeof(float) : sizeof(double)));
    rc = kernel_rows_add_cuda((char *)STARPU_VECTOR_GET_PTR(buffers[0]) + (size_t)ra->dst_start * el, ra->dst_stride * u,
                              (const char *)STARPU_VECTOR_GET_PTR(buffers[1]) + (size_t)ra->src_start * el,
                              ra->src_stride * u, ra->rows, ra->row_len * u, ra->acc == 2, (void *)stream);
  } else if (ra->ndst == 1 && ra->nsrc == 1) {
    size_t el = ra->elsize;
    rc = (int)cudaMemcpy2DAsync((char *)STARPU_VECTOR_GET_PTR(buffers[0]) + (size_t)ra->dst_start * el,
                                (size_t)ra->dst_stride * el,
                                (const char *)STARPU_VECTOR_GET_PTR(buffers[1]) + (size_t)ra->src_start * el,
                                (size_t)ra->src_stride * el, (size_t)ra->row_len * el, (size_t)ra->rows,
                                cudaMemcpyDeviceToDevice, stream);
  } else {
    rc = for_pieces(buffers, ra, device_piece, &ctx);
  }
  if (rc != 0) sl_async_error(SL_E_RUNTIME, "sl_rows (CUDA): copy failed (%d)", rc);
}
#endif

void codelet_rows_init(void)
{
  starpu_codelet_init(&cl_rows);
  cl_rows.name = "sl_rows";
  cl_rows.cpu_funcs[0] = rows_cpu;
#ifdef SL_HAVE_CUDA
  cl_rows.cuda_funcs[0] = rows_cuda;
  cl_rows.cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
  cl_rows.where = codelet_where();
  cl_rows.nbuffers = STARPU_VARIABLE_NBUFFERS;
}

int codelet_rows_submit(int ndst, const starpu_data_handle_t *dst, enum starpu_data_access_mode dst_mode, int nsrc,
                        const starpu_data_handle_t *src, size_t elsize, int64_t rows, int64_t row_len,
                        int64_t src_start, int64_t src_stride, int64_t dst_start, int64_t dst_stride)
{
  return codelet_rows_submit_acc(0, ndst, dst, dst_mode, nsrc, src, elsize, rows, row_len, src_start, src_stride,
                                 dst_start, dst_stride);
}

int codelet_rows_submit_acc(int acc, int ndst, const starpu_data_handle_t *dst, enum starpu_data_access_mode dst_mode,
                            int nsrc, const starpu_data_handle_t *src, size_t elsize, int64_t rows, int64_t row_len,
                            int64_t src_start, int64_t src_stride, int64_t dst_start, int64_t dst_stride)
{
  if (rows == 0 || row_len == 0) return SL_SUCCESS;
  if (rows == 1) src_stride = dst_stride = row_len;
  int nb = ndst + nsrc;
  rows_args *ra = malloc(sizeof *ra);
  struct starpu_task *t = ra ? codelet_task_create(nb) : NULL;
  if (!t) {
    free(ra);
    return sl_error(SL_E_NOMEM, "row copy: out of memory");
  }
  *ra = (rows_args){ndst, nsrc, acc, elsize, rows, row_len, src_start, src_stride, dst_start, dst_stride};
  t->cl = &cl_rows;
  t->cl_arg = ra;
  t->cl_arg_size = sizeof *ra;
  t->cl_arg_free = 1;
  for (int i = 0; i < nb; i++) {
    STARPU_TASK_SET_HANDLE(t, i < ndst ? dst[i] : src[i - ndst], i);
    STARPU_TASK_SET_MODE(t, i < ndst ? dst_mode : STARPU_R, i);
  }
  return codelet_task_submit(t);
}
