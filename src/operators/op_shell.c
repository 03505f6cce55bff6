/* The shell operator: an operator whose apply is the user's own functions (include/starlops_ext.h), and
 * what a user needs to write them: chunk extents, codelets set up as the library's are, task submission. */
#include <stdlib.h>
#include <string.h>

#include "starlops_ext.h"
#include "operators/op_internal.h"
#include "codelets/codelets.h"

typedef struct {
  sl_shell_apply_fn forward, adjoint;
  void *ctx;
  void (*ctx_destroy)(void *ctx);
} shell_t;

static void shell_free(void *p)
{
  shell_t *c = p;
  if (c->ctx_destroy) c->ctx_destroy(c->ctx);
  free(c);
}

/* Runs a callback. Its return: a starlops status as it is; any other value becomes SL_E_RUNTIME naming it. The
 * outermost callback's status is agreed (one allreduce of an int per apply): a callback failing on some ranks
 * fails the apply on every rank, so that the others do not go on into the next collective call (a solver's
 * reduction) alone. Inside a callback nothing more is agreed (neither a nested shell's status nor sl_op_apply's
 * arguments): a rank whose callback fails before them would meet the others' agreements with its own. */
static int shell_run(const sl_op *op, const char *which, sl_shell_apply_fn fn, void *ctx, sl_op_mode mode, const sl_array *x,
                     sl_array *y)
{
  sl_ctx.shell_depth++;
  int rc = fn(ctx, mode, x, y);
  sl_ctx.shell_depth--;
  if (rc > 0 || rc < SL_E_NUMERIC)
    rc = sl_error(SL_E_RUNTIME, "%s: its %s callback returned %d, which is not a starlops status (SL_SUCCESS or an SL_E_* code)",
                  op->name, which, rc);
  return sl_ctx.shell_depth == 0 ? sl_agree(sl_ctx.comm, rc) : rc;
}

static int shell_forward(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  shell_t *c = op->data;
  return shell_run(op, "forward", c->forward, c->ctx, mode, x, y);
}

static int shell_adjoint(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  shell_t *c = op->data;
  return shell_run(op, "adjoint", c->adjoint, c->ctx, mode, x, y);
}

static const sl_op_ops shell_ops = {shell_forward, shell_adjoint, shell_free, NULL};
static const sl_op_ops shell_ops_one = {shell_forward, NULL, shell_free, NULL};

static int shell_check(sl_op **op, const char *name, const sl_array *dom, const sl_array *rng, sl_shell_apply_fn forward)
{
  const char *fn = "sl_op_shell";
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  SL_CHECK_ARG(name != NULL, SL_E_INVALID, "%s: argument 2 (name) is NULL", fn);
  SL_CHECK_ARG(dom != NULL, SL_E_INVALID, "%s: argument 3 (domain_like) is NULL", fn);
  SL_CHECK_ARG(rng != NULL, SL_E_INVALID, "%s: argument 4 (range_like) is NULL", fn);
  SL_TRY(sl_array_check_session(fn, dom, "argument 3 (domain_like)"));
  SL_TRY(sl_array_check_session(fn, rng, "argument 4 (range_like)"));
  SL_CHECK_ARG(forward != NULL, SL_E_INVALID, "%s: argument 5 (forward) is NULL", fn);
  return SL_SUCCESS;
}

int sl_op_shell(sl_op **op, const char *name, const sl_array *domain_like, const sl_array *range_like,
                sl_shell_apply_fn forward, sl_shell_apply_fn adjoint, void *ctx, void (*ctx_destroy)(void *ctx))
{
  SL_CHECK_INIT();
  /* validate, agree, build, finish */
  int rc = shell_check(op, name, domain_like, range_like, forward);
  SL_TRY(SL_AGREE("sl_op_shell", rc, SL_SAME_I("argument 6 (adjoint given or NULL)", adjoint != NULL),
                  sl_same_s("argument 2 (name)", name), SL_SAME_LAYOUT("argument 3 (domain_like: its layout)", rc, domain_like),
                  SL_SAME_LAYOUT("argument 4 (range_like: its layout)", rc, range_like)));
  shell_t *c = calloc(1, sizeof *c);
  if (!c) rc = sl_error(SL_E_NOMEM, "sl_op_shell: out of memory");
  sl_op *o = NULL;
  if (c) {
    *c = (shell_t){.forward = forward, .adjoint = adjoint, .ctx = ctx}; /* ctx is the caller's until success */
    rc = sl_op_new(&o, name, domain_like, range_like, adjoint ? &shell_ops : &shell_ops_one, c);
  }
  SL_TRY(sl_op_finish(op, o, rc));
  c->ctx_destroy = ctx_destroy;
  sl_ctx.shells = 1;
  return SL_SUCCESS;
}

void *sl_op_shell_context(const sl_op *op)
{
  if (!op || (op->ops != &shell_ops && op->ops != &shell_ops_one)) return NULL;
  return ((const shell_t *)op->data)->ctx;
}

/* A block's chunks split it as sl_split_count and sl_split_offset do (array.c; starpu_vector_filter_block's
 * parts for a host block): the first nlocal % nchunks chunks hold one element more. */
int sl_array_chunk_extent(const sl_array *a, int c, int64_t *start, int64_t *count)
{
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_array_chunk_extent: argument 1 (a) is NULL");
  SL_CHECK_ARG(c >= 0 && c <= a->nchunks && (!a->layout_only || a->nchunks == 0), SL_E_INVALID,
               "sl_array_chunk_extent: argument 2 (c) is %d, the array has %d chunks%s", c, a->nchunks,
               !a->layout_only || a->nchunks == 0 ? "" : " and no storage (a layout)");
  if (start) *start = c < a->nchunks ? sl_split_offset(a->nlocal, a->nchunks, c) : a->nlocal;
  if (count) *count = c < a->nchunks ? sl_split_count(a->nlocal, a->nchunks, c) : 0;
  return SL_SUCCESS;
}

int sl_array_chunk_of(const sl_array *a, int64_t i)
{
  if (!a || a->layout_only || i < 0 || i >= a->nlocal) return -1;
  int64_t q = a->nlocal / a->nchunks, r = a->nlocal % a->nchunks; /* the first r chunks hold q + 1 */
  return (int)(i < r * (q + 1) ? i / (q + 1) : r + (i - r * (q + 1)) / q);
}

int sl_codelet_init(struct starpu_codelet *cl, struct starpu_perfmodel *model, const char *name, starpu_cpu_func_t cpu,
                    starpu_cuda_func_t cuda)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(cl != NULL, SL_E_INVALID, "sl_codelet_init: argument 1 (cl) is NULL");
  SL_CHECK_ARG(model != NULL, SL_E_INVALID, "sl_codelet_init: argument 2 (model) is NULL");
  SL_CHECK_ARG(name != NULL, SL_E_INVALID, "sl_codelet_init: argument 3 (name) is NULL");
  SL_CHECK_ARG(cpu || cuda, SL_E_INVALID, "sl_codelet_init: %s: arguments 4 (cpu) and 5 (cuda) are both NULL", name);
  uint32_t have = (cpu ? STARPU_CPU : 0) | (cuda ? STARPU_CUDA : 0);
  uint32_t where = codelet_where() & have;
  if (!where) where = have & (sl_ctx.ncuda > 0 ? STARPU_CUDA | STARPU_CPU : STARPU_CPU);
  SL_CHECK_ARG(where != 0, SL_E_BACKEND, "sl_codelet_init: %s has only a CUDA function and this rank has no CUDA worker",
               name);
  memset(model, 0, sizeof *model);
  model->type = STARPU_HISTORY_BASED;
  model->symbol = name;
  starpu_codelet_init(cl);
  cl->name = name;
  if (cpu) cl->cpu_funcs[0] = cpu;
  if (cuda) {
    cl->cuda_funcs[0] = cuda;
    cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
  }
  cl->nbuffers = STARPU_VARIABLE_NBUFFERS;
  cl->model = model;
  cl->where = where;
  return SL_SUCCESS;
}

int sl_task_submit(struct starpu_codelet *cl, const void *arg, size_t size, int n, const starpu_data_handle_t *h,
                   const enum starpu_data_access_mode *m, double flops)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(cl != NULL, SL_E_INVALID, "sl_task_submit: argument 1 (cl) is NULL");
  SL_CHECK_ARG(n >= 0 && (n == 0 || (h && m)), SL_E_INVALID, "sl_task_submit: %s: %d buffers without %s", cl->name, n,
               h ? "modes" : "handles");
  SL_CHECK_ARG(size == 0 || arg, SL_E_INVALID, "sl_task_submit: %s: argument 3 (arg) is NULL with size %zu", cl->name, size);
  for (int i = 0; i < n; i++)
    SL_CHECK_ARG(h[i] != NULL, SL_E_INVALID, "sl_task_submit: %s: handle %d is NULL", cl->name, i);
  void *copy = NULL;
  if (size) {
    copy = malloc(size);
    if (!copy) return sl_error(SL_E_NOMEM, "sl_task_submit: %s: out of memory", cl->name);
    memcpy(copy, arg, size);
  }
  struct starpu_task *t = codelet_task_create(n);
  if (!t) {
    free(copy);
    return sl_error(SL_E_NOMEM, "sl_task_submit: %s: out of memory", cl->name);
  }
  t->cl = cl;
  t->cl_arg = copy;
  t->cl_arg_size = size;
  t->cl_arg_free = copy != NULL;
  for (int i = 0; i < n; i++) {
    STARPU_TASK_SET_HANDLE(t, h[i], i);
    STARPU_TASK_SET_MODE(t, m[i], i);
  }
  t->flops = flops;
  return codelet_task_submit(t);
}
