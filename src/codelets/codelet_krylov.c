/* Fused steps of a Krylov iteration on a block of one chunk: a reduction into the solver's state, the
 * coefficient step of solvers/solver_prog.h, then the vector updates that use the coefficient, all in one
 * task (on a GPU: kernels queued on the worker's stream, the scalars never leaving the device). A solve on
 * a single block thus runs an iteration in a few tasks instead of one per operation. Used when the vectors
 * are one chunk on one rank (no allreduce between the reduction and the step). */
#include <stdlib.h>

#include "codelets/codelets.h"
#include "solvers/solver_prog.h"

struct krylov_args {
  sl_krylov_op op;
  sl_dtype dt;
  sl_prog_arg rec; /* SL_KRY_CG_BETA: the history row */
};

static struct starpu_codelet cl_krylov[SL_KRY_NOPS];
static struct starpu_perfmodel pm_krylov[SL_KRY_NOPS];
static const char *const names[SL_KRY_NOPS] = {"sl_cg_update"};
/* buffers after (state RW, ring RW): the vectors, then the reduction's device scratch */
static const int nvec[SL_KRY_NOPS] = {4};
static const enum starpu_data_access_mode vmodes[SL_KRY_NOPS][4] = {
  {STARPU_RW, STARPU_R, STARPU_RW, STARPU_RW}, /* c, Ac, x, r */
};

struct krylov_bufs {
  int64_t n;
  double *state, *ring, *work;
  void *v[4];
};

static struct krylov_bufs unpack(void *buffers[], sl_krylov_op op)
{
  struct krylov_bufs b = {.n = (int64_t)STARPU_VECTOR_GET_NX(buffers[2]),
                          .state = (double *)STARPU_VARIABLE_GET_PTR(buffers[0]),
                          .ring = (double *)STARPU_VARIABLE_GET_PTR(buffers[1]),
                          .work = (double *)STARPU_VECTOR_GET_PTR(buffers[2 + nvec[op]])};
  for (int i = 0; i < nvec[op]; i++) b.v[i] = (void *)STARPU_VECTOR_GET_PTR(buffers[2 + i]);
  return b;
}

static void krylov_cpu(void *buffers[], void *cl_arg)
{
  const struct krylov_args *ka = cl_arg;
  struct krylov_bufs b = unpack(buffers, ka->op);
  double *red = b.state + slot(S_RED), *const step[2] = {b.state, red}, *const rec[2] = {b.state, b.ring};
  const double one[2] = {1, 0};
  sl_prog_arg none = {0, 0, 0, 0.0};
  /* red = c^H A c; alpha; x += alpha c; r -= alpha A c; red = ||r||^2; beta; the history row; c = r + beta c */
  kernel_reduce(ka->dt, SL_RED_VDOT, b.n, b.v[0], b.v[1], 2.0, red);
  sl_prog_run(SL_PROG_CG_ALPHA, step, none);
  kernel_axpby(ka->dt, b.n, b.v[2], b.v[0], b.state + slot(CG_ALPHA), one);
  kernel_axpby(ka->dt, b.n, b.v[3], b.v[1], b.state + slot(CG_MALPHA), one);
  kernel_reduce(ka->dt, SL_RED_ABSPOW, b.n, b.v[3], NULL, 2.0, red);
  sl_prog_run(SL_PROG_CG_BETA, step, none);
  sl_prog_run(SL_PROG_RECORD, rec, ka->rec);
  kernel_axpby(ka->dt, b.n, b.v[0], b.v[3], one, b.state + slot(CG_BETA));
}

#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
static void krylov_cuda(void *buffers[], void *cl_arg)
{
  const struct krylov_args *ka = cl_arg;
  struct krylov_bufs b = unpack(buffers, ka->op);
  void *s = starpu_cuda_get_local_stream();
  double *red = b.state + slot(S_RED), *const step[2] = {b.state, red}, *const rec[2] = {b.state, b.ring};
  const double one[2] = {1, 0};
  sl_prog_arg none = {0, 0, 0, 0.0};
  int rc = kernel_cuda_reduce(ka->dt, SL_RED_VDOT, b.n, b.v[0], b.v[1], 2.0, b.work, red, s);
  if (rc == cudaSuccess) rc = kernel_cuda_prog(SL_PROG_CG_ALPHA, step, 2, none, s);
  if (rc == cudaSuccess) rc = kernel_cuda_axpbys(ka->dt, b.n, b.v[2], b.v[0], one, one, b.state + slot(CG_ALPHA), NULL, s);
  if (rc == cudaSuccess) rc = kernel_cuda_axpbys(ka->dt, b.n, b.v[3], b.v[1], one, one, b.state + slot(CG_MALPHA), NULL, s);
  if (rc == cudaSuccess) rc = kernel_cuda_reduce(ka->dt, SL_RED_ABSPOW, b.n, b.v[3], NULL, 2.0, b.work, red, s);
  if (rc == cudaSuccess) rc = kernel_cuda_prog(SL_PROG_CG_BETA, step, 2, none, s);
  if (rc == cudaSuccess) rc = kernel_cuda_prog(SL_PROG_RECORD, rec, 2, ka->rec, s);
  if (rc == cudaSuccess) rc = kernel_cuda_axpbys(ka->dt, b.n, b.v[0], b.v[3], one, one, NULL, b.state + slot(CG_BETA), s);
  if (rc != cudaSuccess) sl_async_error(SL_E_RUNTIME, "%s (CUDA): %s", names[ka->op], cudaGetErrorString((cudaError_t)rc));
}
#endif

void codelet_krylov_init(void)
{
  for (int op = 0; op < SL_KRY_NOPS; op++) {
    struct starpu_perfmodel *pm = &pm_krylov[op];
    *pm = (struct starpu_perfmodel){.type = STARPU_HISTORY_BASED, .symbol = names[op]};
    struct starpu_codelet *cl = &cl_krylov[op];
    starpu_codelet_init(cl);
    cl->name = names[op];
    cl->cpu_funcs[0] = krylov_cpu;
    cl->cpu_funcs_name[0] = "krylov_cpu";
#ifdef SL_HAVE_CUDA
    cl->cuda_funcs[0] = krylov_cuda;
    cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
    int nb = 0;
    cl->modes[nb++] = STARPU_RW; /* state */
    cl->modes[nb++] = STARPU_RW; /* history ring */
    for (int i = 0; i < nvec[op]; i++) cl->modes[nb++] = vmodes[op][i];
    cl->modes[nb++] = STARPU_SCRATCH;
    cl->nbuffers = nb;
    cl->model = pm;
    cl->where = codelet_where();
  }
}

int codelet_krylov_submit(sl_krylov_op op, sl_dtype dt, starpu_data_handle_t state, starpu_data_handle_t ring,
                          const starpu_data_handle_t *vec, sl_prog_arg rec)
{
  struct krylov_args *ka = malloc(sizeof *ka);
  if (!ka) return sl_error(SL_E_NOMEM, "%s: out of memory", names[op]);
  *ka = (struct krylov_args){op, dt, rec};
  struct starpu_task *t = starpu_task_create();
  t->cl = &cl_krylov[op];
  t->cl_arg = ka;
  t->cl_arg_size = sizeof *ka;
  t->cl_arg_free = 1;
  t->priority = STARPU_MAX_PRIO;
  int i = 0;
  t->handles[i++] = state;
  t->handles[i++] = ring;
  for (int j = 0; j < nvec[op]; j++) t->handles[i++] = vec[j];
  t->handles[i++] = codelet_reduce_scratch();
  return codelet_task_submit(t);
}
