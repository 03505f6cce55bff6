/* Codelets of the element-wise vector operations: CPU and CUDA functions unpack the chunk and call the
 * kernels of kernel_vec; one codelet per operation, named for traces and performance models. */
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

struct vec_args {
  sl_vec_op op;
  sl_dtype dt;
  codelet_vec_params p;
};

static const struct {
  const char *name;
  int nbuffers;
  enum starpu_data_access_mode modes[5];
} vec_ops[SL_VEC_NOPS] = {
  [SL_VEC_FILL] = {"sl_fill", 1, {STARPU_W}},
  [SL_VEC_SCALE] = {"sl_scale", 1, {STARPU_RW}},
  [SL_VEC_AXPBY] = {"sl_axpby", 2, {STARPU_RW, STARPU_R}},
  [SL_VEC_AXPY0] = {"sl_axpy0", 2, {STARPU_W, STARPU_R}},
  [SL_VEC_MUL] = {"sl_mul", 3, {STARPU_W, STARPU_R, STARPU_R}},
  [SL_VEC_CONJ] = {"sl_conj", 2, {STARPU_W, STARPU_R}},
  [SL_VEC_COPY] = {"sl_copy", 2, {STARPU_W, STARPU_R}},
  [SL_VEC_AXPBYS] = {"sl_axpbys", 4, {STARPU_RW, STARPU_R, STARPU_R, STARPU_R}},
  [SL_VEC_SCALES] = {"sl_scales", 2, {STARPU_RW, STARPU_R}},
  [SL_VEC_THRESH] = {"sl_threshold", 2, {STARPU_W, STARPU_R}},
  [SL_VEC_RANDOM] = {"sl_random", 1, {STARPU_W}},
  [SL_VEC_AXPYS2] = {"sl_axpys2", 5, {STARPU_RW, STARPU_R, STARPU_RW, STARPU_R, STARPU_R}},
  [SL_VEC_CLIP] = {"sl_clip", 2, {STARPU_W, STARPU_R}},
  [SL_VEC_ABS2] = {"sl_abs2", 2, {STARPU_W, STARPU_R}},
  [SL_VEC_ABS2ACC] = {"sl_abs2acc", 2, {STARPU_RW, STARPU_R}},
  [SL_VEC_GROUP] = {"sl_group", 3, {STARPU_W, STARPU_R, STARPU_R}},
};

static struct starpu_codelet cl_vec[SL_VEC_NOPS];
static struct starpu_perfmodel pm_vec[SL_VEC_NOPS];

/* Vector buffers (the first `nvec`) and scalar buffers (variables of doubles) of a task. */
static int nvectors(sl_vec_op op)
{
  return op == SL_VEC_AXPBYS ? 2 : op == SL_VEC_SCALES ? 1 : op == SL_VEC_AXPYS2 ? 4 : vec_ops[op].nbuffers;
}

static void unpack(void *buffers[], const struct vec_args *va, void *p[5])
{
  int nv = nvectors(va->op);
  for (int i = 0; i < vec_ops[va->op].nbuffers; i++)
    p[i] = i < nv ? (void *)STARPU_VECTOR_GET_PTR(buffers[i]) : (void *)STARPU_VARIABLE_GET_PTR(buffers[i]);
}

static void vec_cpu(void *buffers[], void *cl_arg)
{
  const struct vec_args *va = cl_arg;
  const codelet_vec_params *q = &va->p;
  int64_t n = (int64_t)STARPU_VECTOR_GET_NX(buffers[0]);
  void *p[5] = {NULL, NULL, NULL, NULL, NULL};
  unpack(buffers, va, p);
  double ca[2], cb[2];
  switch (va->op) {
  case SL_VEC_FILL: kernel_fill(va->dt, n, p[0], q->a); break;
  case SL_VEC_SCALE: kernel_scale(va->dt, n, p[0], q->a); break;
  case SL_VEC_AXPBY:
  case SL_VEC_AXPY0: kernel_axpby(va->dt, n, p[0], p[1], q->a, q->b); break;
  case SL_VEC_MUL: kernel_mul(va->dt, n, p[0], p[1], p[2]); break;
  case SL_VEC_CONJ: kernel_conj(va->dt, n, p[0], p[1]); break;
  case SL_VEC_COPY:
    if (p[0] != p[1]) memcpy(p[0], p[1], (size_t)n * sl_dtype_size(va->dt));
    break;
  case SL_VEC_AXPBYS:
    sl_cmul2(q->a, (const double *)p[2] + q->ia, ca);
    sl_cmul2(q->b, (const double *)p[3] + q->ib, cb);
    kernel_axpby(va->dt, n, p[0], p[1], ca, cb);
    break;
  case SL_VEC_SCALES:
    sl_cmul2(q->a, (const double *)p[1] + q->ia, ca);
    kernel_scale(va->dt, n, p[0], ca);
    break;
  case SL_VEC_THRESH: kernel_threshold(va->dt, n, p[0], p[1], q->kind, q->t); break;
  case SL_VEC_CLIP: kernel_clip(va->dt, n, p[0], p[1], q->kind, q->a[0], q->b[0], q->t); break;
  case SL_VEC_ABS2:
  case SL_VEC_ABS2ACC: kernel_abs2(va->dt, n, p[0], p[1], va->op == SL_VEC_ABS2ACC); break;
  case SL_VEC_GROUP: kernel_group(va->dt, n, p[0], p[1], p[2], q->kind, q->t); break;
  case SL_VEC_RANDOM: kernel_random(va->dt, n, p[0], q->key, q->off); break;
  case SL_VEC_AXPYS2: {
    const double one[2] = {1, 0};
    sl_cmul2(q->a, (const double *)p[4] + q->ia, ca);
    sl_cmul2(q->b, (const double *)p[4] + q->ib, cb);
    kernel_axpby(va->dt, n, p[0], p[1], ca, one);
    kernel_axpby(va->dt, n, p[2], p[3], cb, one);
    break;
  }
  default: break;
  }
}

#ifdef SL_HAVE_CUDA
static void vec_cuda(void *buffers[], void *cl_arg)
{
  const struct vec_args *va = cl_arg;
  const codelet_vec_params *q = &va->p;
  int64_t n = (int64_t)STARPU_VECTOR_GET_NX(buffers[0]);
  void *p[5] = {NULL, NULL, NULL, NULL, NULL};
  unpack(buffers, va, p);
  cudaStream_t s = starpu_cuda_get_local_stream();
  int rc = cudaSuccess;
  switch (va->op) {
  case SL_VEC_FILL: rc = kernel_cuda_fill(va->dt, n, p[0], q->a, s); break;
  case SL_VEC_SCALE: rc = kernel_cuda_scale(va->dt, n, p[0], q->a, s); break;
  case SL_VEC_AXPBY:
  case SL_VEC_AXPY0: rc = kernel_cuda_axpby(va->dt, n, p[0], p[1], q->a, q->b, s); break;
  case SL_VEC_MUL: rc = kernel_cuda_mul(va->dt, n, p[0], p[1], p[2], s); break;
  case SL_VEC_CONJ: rc = kernel_cuda_conj(va->dt, n, p[0], p[1], s); break;
  case SL_VEC_COPY:
    if (p[0] != p[1]) rc = cudaMemcpyAsync(p[0], p[1], (size_t)n * sl_dtype_size(va->dt), cudaMemcpyDeviceToDevice, s);
    break;
  case SL_VEC_AXPBYS:
    rc = kernel_cuda_axpbys(va->dt, n, p[0], p[1], q->a, q->b, (const double *)p[2] + q->ia,
                            (const double *)p[3] + q->ib, s);
    break;
  case SL_VEC_SCALES: rc = kernel_cuda_scales(va->dt, n, p[0], q->a, (const double *)p[1] + q->ia, s); break;
  case SL_VEC_THRESH: rc = kernel_cuda_threshold(va->dt, n, p[0], p[1], q->kind, q->t, s); break;
  case SL_VEC_CLIP: rc = kernel_cuda_clip(va->dt, n, p[0], p[1], q->kind, q->a[0], q->b[0], q->t, s); break;
  case SL_VEC_ABS2:
  case SL_VEC_ABS2ACC: rc = kernel_cuda_abs2(va->dt, n, p[0], p[1], va->op == SL_VEC_ABS2ACC, s); break;
  case SL_VEC_GROUP: rc = kernel_cuda_group(va->dt, n, p[0], p[1], p[2], q->kind, q->t, s); break;
  case SL_VEC_RANDOM: rc = kernel_cuda_random(va->dt, n, p[0], q->key, q->off, s); break;
  case SL_VEC_AXPYS2: {
    const double one[2] = {1, 0};
    rc = kernel_cuda_axpbys(va->dt, n, p[0], p[1], q->a, one, (const double *)p[4] + q->ia, NULL, s);
    if (rc == cudaSuccess)
      rc = kernel_cuda_axpbys(va->dt, n, p[2], p[3], q->b, one, (const double *)p[4] + q->ib, NULL, s);
    break;
  }
  default: break;
  }
  if (rc != cudaSuccess)
    sl_async_error(SL_E_RUNTIME, "%s (CUDA): %s", vec_ops[va->op].name, cudaGetErrorString((cudaError_t)rc));
}
#endif

void codelet_vec_init(void)
{
  for (int op = 0; op < SL_VEC_NOPS; op++) {
    struct starpu_perfmodel *pm = &pm_vec[op];
    memset(pm, 0, sizeof *pm);
    pm->type = STARPU_HISTORY_BASED;
    pm->symbol = vec_ops[op].name;
    struct starpu_codelet *cl = &cl_vec[op];
    starpu_codelet_init(cl);
    cl->name = vec_ops[op].name;
    cl->cpu_funcs[0] = vec_cpu;
    cl->cpu_funcs_name[0] = "vec_cpu";
#ifdef SL_HAVE_CUDA
    cl->cuda_funcs[0] = vec_cuda;
    cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
    cl->nbuffers = vec_ops[op].nbuffers;
    for (int i = 0; i < cl->nbuffers; i++) cl->modes[i] = vec_ops[op].modes[i];
    cl->model = pm;
    cl->where = codelet_where();
  }
}

int codelet_vec_submit_p(sl_vec_op op, sl_dtype dt, const starpu_data_handle_t *h, const codelet_vec_params *p)
{
  struct vec_args *va = malloc(sizeof *va);
  if (!va) return sl_error(SL_E_NOMEM, "%s: out of memory", vec_ops[op].name);
  *va = (struct vec_args){.op = op, .dt = dt, .p = *p};
  struct starpu_task *t = starpu_task_create();
  t->cl = &cl_vec[op];
  t->cl_arg = va;
  t->cl_arg_size = sizeof *va;
  t->cl_arg_free = 1;
  for (int i = 0; i < vec_ops[op].nbuffers; i++) STARPU_TASK_SET_HANDLE(t, h[i], i);
  double n = (double)starpu_vector_get_nx(h[0]);
  t->flops = n * (sl_dtype_is_complex(dt) ? 4.0 : 1.0);
  return codelet_task_submit(t);
}

int codelet_vec_submit(sl_vec_op op, sl_dtype dt, starpu_data_handle_t h0, starpu_data_handle_t h1,
                       starpu_data_handle_t h2, const double a[2], const double b[2])
{
  codelet_vec_params p = {.ia = 0};
  if (a) memcpy(p.a, a, sizeof p.a);
  if (b) memcpy(p.b, b, sizeof p.b);
  return codelet_vec_submit_p(op, dt, (starpu_data_handle_t[4]){h0, h1, h2, NULL}, &p);
}
