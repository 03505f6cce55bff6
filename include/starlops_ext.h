/* starlops_ext.h: writing your own operator (docs/operators.md, "Writing your own operator").
 *
 * A user operator is a pair of functions that submit StarPU tasks on the chunks of the arrays they are
 * given, exactly as the library's own operators do. It composes with everything (algebra, stacks, solvers,
 * sl_dottest, tracing). This header adds StarPU's API to starlops.h; include it only where you write such
 * an operator.
 */
#ifndef STARLOPS_EXT_H
#define STARLOPS_EXT_H

#include <starpu.h>

#include "starlops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the shell operator ------------------------------------------------------------------------ */
/** Submits the tasks of y = A x (mode SL_FORWARD) or y = A^H x (SL_ADJOINT) and returns without waiting.
 *  x and y are already checked against the operator's layouts (x like the domain for SL_FORWARD, like the
 *  range for SL_ADJOINT). Called on every rank, in the same order: it may communicate. Returns SL_SUCCESS
 *  or a negative SL_E... code (sl_error_set gives it a message). */
typedef int (*sl_shell_apply_fn)(void *ctx, sl_op_mode mode, const sl_array *x, sl_array *y);

/** Collective. An operator from the user's functions: forward(ctx, SL_FORWARD, x, y) and
 *  adjoint(ctx, SL_ADJOINT, x, y); adjoint may be NULL, then forward is called for both modes. Its domain
 *  and range are laid out like domain_like and range_like (not kept); its dtype is the domain's. ctx is the
 *  user's; ctx_destroy(ctx) runs when the last reference goes (NULL: nothing runs). On failure the
 *  operator is not made and ctx stays the caller's. forward must be given; name and whether adjoint is given
 *  must be the same on every rank (the solvers agree their operator by its name and shapes). */
int sl_op_shell(sl_op **op, const char *name, const sl_array *domain_like, const sl_array *range_like,
                sl_shell_apply_fn forward, sl_shell_apply_fn adjoint, void *ctx, void (*ctx_destroy)(void *ctx));
/** The ctx given to sl_op_shell (NULL when op is not a shell operator). */
void *sl_op_shell_context(const sl_op *op);

/** Sets the message sl_last_error() returns and returns code: for errors found in a shell function. */
int sl_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- chunks -------------------------------------------------------------------------------------- */
/* A rank's local block (row-major over the local dims) is cut into sl_array_nchunks() chunks along its
 * flattened index, each a StarPU vector handle (STARPU_VECTOR_GET_PTR / _NX in a task). Tasks on different
 * chunks run in parallel on the CPU workers and GPUs; StarPU orders the tasks touching one chunk. */
/** The handle of chunk c (NULL when c is out of range or a is NULL or stacked). */
starpu_data_handle_t sl_array_chunk(const sl_array *a, int c);
/** The first local element of chunk c and its length; c = nchunks gives start = the local size and count
 *  0. Returns SL_E_INVALID when c is out of [0, nchunks]. */
int sl_array_chunk_extent(const sl_array *a, int c, int64_t *start, int64_t *count);
/** The chunk holding local element i (-1 when i is outside the local block). */
int sl_array_chunk_of(const sl_array *a, int64_t i);

/* ---- codelets and tasks -------------------------------------------------------------------------- */
/** Fills cl and model (both must outlive every task: static storage) the way the library's codelets
 *  are: named name, cpu (may be NULL) and cuda (may be NULL; it receives the buffers as a CPU function
 *  does, launches on starpu_cuda_get_local_stream() and returns without synchronising), a variable number
 *  of buffers whose modes each task gives, a history-based performance model named name, and placed where
 *  the library runs its compute (STARLOPS_CODELET_WHERE, GPUs first when the rank has CUDA workers) among
 *  the functions given. Local; call after sl_init. */
int sl_codelet_init(struct starpu_codelet *cl, struct starpu_perfmodel *model, const char *name, starpu_cpu_func_t cpu,
                    starpu_cuda_func_t cuda);
/** Submits one task of cl on the n handles h with access modes m; arg (size bytes, may be NULL and 0) is
 *  copied and given to the functions as cl_arg; flops (0 when unknown) feeds the traces. The task carries
 *  the library's trace tags. Local, asynchronous. */
int sl_task_submit(struct starpu_codelet *cl, const void *arg, size_t size, int n, const starpu_data_handle_t *h,
                   const enum starpu_data_access_mode *m, double flops);

#ifdef __cplusplus
}
#endif

#endif
