/* The operator object: layouts, apply (checks, then the operator's own submit function), references. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "comm/comm.h"

int sl_op_new(sl_op **out, const char *name, const sl_array *dom_like, const sl_array *rng_like, const sl_op_ops *ops,
              void *data)
{
  sl_op *op = calloc(1, sizeof *op);
  if (!op) {
    if (data && ops->destroy) ops->destroy(data);
    return sl_error(SL_E_NOMEM, "%s: out of memory", name);
  }
  op->refs = 1;
  snprintf(op->name, sizeof op->name, "%s", name);
  op->dtype = sl_array_dtype(dom_like);
  op->ops = ops;
  op->data = data;
  int rc = sl_array_clone(&op->dom, dom_like, SL_STORE_LAYOUT);
  if (rc == SL_SUCCESS) rc = sl_array_clone(&op->rng, rng_like, SL_STORE_LAYOUT);
  if (rc != SL_SUCCESS) {
    sl_op *tmp = op;
    sl_op_destroy(&tmp);
    return rc;
  }
  *out = op;
  return SL_SUCCESS;
}

int sl_op_scratch(sl_op *op, int slot, const sl_array *like, sl_array **t)
{
  if (!op->scratch[slot]) SL_TRY(sl_array_clone(&op->scratch[slot], like, SL_STORE_TEMP));
  *t = op->scratch[slot];
  return SL_SUCCESS;
}

int sl_op_free_workspace(sl_op *op)
{
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_free_workspace: argument 1 (op) is NULL");
  SL_TRY(sl_op_check_session("sl_op_free_workspace", op, "argument 1 (op)"));
  for (int s = 0; s < 2; s++)
    while (op->nws[s] > 0) sl_array_destroy(&op->ws[s][--op->nws[s]]);
  return SL_SUCCESS;
}

int sl_op_work_take(sl_op *op, int side, sl_array **a)
{
  if (op->nws[side] > 0) { /* zeroed: a solve starts as on new ones */
    *a = op->ws[side][--op->nws[side]];
    return sl_array_fill(*a, SL_REAL(0));
  }
  return sl_array_clone(a, side ? op->rng : op->dom, SL_STORE_TEMP);
}

void sl_op_work_give(sl_op *op, int side, sl_array **a)
{
  if (*a && op->nws[side] < SL_OP_WS_MAX) {
    op->ws[side][op->nws[side]++] = *a;
    *a = NULL;
  }
  sl_array_destroy(a);
}

sl_op *sl_op_ref(sl_op *op)
{
  op->refs++;
  return op;
}

int sl_op_check_session(const char *fn, const sl_op *op, const char *an)
{
  if (!op || !op->dom || op->dom->session == sl_session()) return SL_SUCCESS; /* the layouts are made with the operator */
  char what[256];
  snprintf(what, sizeof what, "%s (%s)", an, op->name);
  return sl_error_stale(fn, what);
}

int sl_op_destroy(sl_op **opp)
{
  SL_CHECK_ARG(opp != NULL, SL_E_INVALID, "sl_op_destroy: argument 1 is NULL");
  sl_op *op = *opp;
  if (op && !sl_ctx.initialized) return sl_error(SL_E_STATE, "sl_op_destroy: called after sl_finalize; destroy operators before it");
  SL_TRY(sl_op_check_session("sl_op_destroy", op, "argument 1"));
  *opp = NULL;
  if (!op || --op->refs > 0) return SL_SUCCESS;
  sl_array_destroy(&op->dom);
  sl_array_destroy(&op->rng);
  for (int i = 0; i < 2; i++) sl_array_destroy(&op->scratch[i]);
  sl_op_free_workspace(op);
  if (op->data && op->ops->destroy) op->ops->destroy(op->data);
  free(op);
  return SL_SUCCESS;
}

static int apply_check(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_apply: argument 1 (op) is NULL");
  SL_CHECK_ARG(mode == SL_FORWARD || mode == SL_ADJOINT, SL_E_INVALID,
               "sl_op_apply: argument 2 (mode) must be SL_FORWARD or SL_ADJOINT, not %d", (int)mode);
  SL_CHECK_ARG(x != NULL && y != NULL, SL_E_INVALID, "sl_op_apply: argument %d (%s) is NULL", x ? 4 : 3, x ? "y" : "x");
  SL_CHECK_ARG(x != y, SL_E_INVALID, "sl_op_apply: arguments 3 (x) and 4 (y) are the same array");
  SL_TRY(sl_op_check_session("sl_op_apply", op, "argument 1 (op)"));
  const sl_array *in = mode == SL_FORWARD ? op->dom : op->rng, *out = mode == SL_FORWARD ? op->rng : op->dom;
  char inn[192], outn[192];
  snprintf(inn, sizeof inn, "the %s of %s", mode == SL_FORWARD ? "domain" : "range", op->name);
  snprintf(outn, sizeof outn, "the %s of %s", mode == SL_FORWARD ? "range" : "domain", op->name);
  SL_TRY(sl_array_check_same(x, "sl_op_apply: argument 3 (x)", in, inn));
  return sl_array_check_same(y, "sl_op_apply: argument 4 (y)", out, outn);
}

int sl_op_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  SL_CHECK_INIT();
  int rc = apply_check(op, mode, x, y);
  /* a shell's callback status is agreed over the ranks (op_shell.c): once a shell exists, so is the verdict
   * on the arguments (outside callbacks), so that no rank enters that agreement while another has returned */
  if (sl_ctx.shells && sl_ctx.shell_depth == 0) rc = sl_agree(sl_ctx.comm, rc);
  SL_TRY(rc);
  if (sl_ctx.tracing) { /* one user event per application, named after the operator */
    char ev[200];
    snprintf(ev, sizeof ev, "%s %s", mode == SL_FORWARD ? "apply" : "apply^H", op->name);
    starpu_fxt_trace_user_event_string(ev);
  }
  return sl_op_call(op, mode, x, y);
}

int sl_op_create_domain(const sl_op *op, sl_array **x)
{
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_create_domain: argument 1 (op) is NULL");
  SL_TRY(sl_op_check_session("sl_op_create_domain", op, "argument 1 (op)"));
  return sl_array_create_like(x, op->dom);
}

int sl_op_create_range(const sl_op *op, sl_array **y)
{
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "sl_op_create_range: argument 1 (op) is NULL");
  SL_TRY(sl_op_check_session("sl_op_create_range", op, "argument 1 (op)"));
  return sl_array_create_like(y, op->rng);
}

const sl_array *sl_op_domain(const sl_op *op) { return op ? op->dom : NULL; }
const sl_array *sl_op_range(const sl_op *op) { return op ? op->rng : NULL; }
int64_t sl_op_nrows(const sl_op *op) { return op ? sl_array_global_size(op->rng) : -1; }
int64_t sl_op_ncols(const sl_op *op) { return op ? sl_array_global_size(op->dom) : -1; }
sl_dtype sl_op_dtype(const sl_op *op) { return op ? op->dtype : SL_FLOAT64; }
const char *sl_op_name(const sl_op *op) { return op ? op->name : NULL; }

uint64_t sl_op_key(const sl_op *op)
{
  if (!op) return 0;
  uint64_t h = sl_fnv1a(SL_FNV1A_START, op->name, strlen(op->name));
  h = sl_fnv1a(h, &op->dtype, sizeof op->dtype);
  return sl_array_layout_key(sl_array_layout_key(h, op->dom), op->rng);
}

int sl_op_chunks(const sl_array *a, starpu_data_handle_t **h, int *n)
{
  *n = sl_array_nchunks(a);
  *h = NULL;
  if (*n == 0) return SL_SUCCESS;
  *h = malloc(sizeof **h * (size_t)*n);
  if (!*h) return sl_error(SL_E_NOMEM, "operator: out of memory");
  for (int c = 0; c < *n; c++) (*h)[c] = sl_array_chunk(a, c);
  return SL_SUCCESS;
}

int sl_op_apply_chunked(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y, sl_op_chunked_fn fn)
{
  starpu_data_handle_t *hx = NULL, *hy = NULL;
  int nx = 0, ny = 0;
  int rc = sl_op_chunks(x, &hx, &nx);
  if (rc == SL_SUCCESS) rc = sl_op_chunks(y, &hy, &ny);
  if (rc == SL_SUCCESS) rc = fn(op, mode, y, nx, hx, ny, hy);
  free(hx);
  free(hy);
  return rc;
}

int sl_kept_copy(sl_kept *k, const void *src, int64_t n, size_t el)
{
  if (n == 0) return SL_SUCCESS;
  if (n > (int64_t)UINT32_MAX) /* one StarPU vector: its length is 32-bit */
    return sl_error(SL_E_DIMS, "operator: a table of %lld elements on one rank is above 2^32; use more ranks", (long long)n);
  k->ptr = malloc((size_t)n * el);
  if (!k->ptr) return sl_error(SL_E_NOMEM, "operator: out of memory for %lld elements", (long long)n);
  memcpy(k->ptr, src, (size_t)n * el);
  starpu_vector_data_register(&k->h, STARPU_MAIN_RAM, (uintptr_t)k->ptr, (uint32_t)n, el);
  return SL_SUCCESS;
}

void sl_kept_free(sl_kept *k)
{
  if (k->h) starpu_data_unregister(k->h);
  free(k->ptr);
  k->h = NULL;
  k->ptr = NULL;
}

int sl_op_finish(sl_op **out, sl_op *o, int rc)
{
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc != SL_SUCCESS) {
    sl_op_destroy(&o);
    return rc;
  }
  *out = o;
  return SL_SUCCESS;
}

int sl_op_grid_check(const char *fn, sl_op **out, int64_t N, int64_t K, int64_t M, int pr, int pc, sl_dtype dt)
{
  SL_CHECK_INIT();
  int rc = SL_SUCCESS;
  if (!out) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (N < 1 || K < 1 || M < 1)
    rc = sl_error(SL_E_INVALID, "%s: arguments 3-5 (N, K, M) must be >= 1, got %lld, %lld, %lld", fn, (long long)N,
                  (long long)K, (long long)M);
  else if (pr < 1 || pc < 1 || (int64_t)pr * pc != sl_ctx.size)
    rc = sl_error(SL_E_INVALID, "%s: arguments 6-7: the grid %d x %d does not fit %d ranks (pr x pc must equal it)", fn, pr,
                  pc, sl_ctx.size);
  else if (!sl_dtype_valid(dt)) rc = sl_error(SL_E_INVALID, "%s: argument 8 (dt) is not a valid dtype", fn);
  return SL_AGREE(fn, rc, SL_SAME_I("argument 3 (N)", N), SL_SAME_I("argument 4 (K)", K), SL_SAME_I("argument 5 (M)", M),
                  SL_SAME_I("argument 6 (pr)", pr), SL_SAME_I("argument 7 (pc)", pc), SL_SAME_I("argument 8 (dt)", dt));
}

int sl_op_grid_channel(const char *fn, int color, int key, struct comm_channel **ch)
{
  MPI_Comm c = MPI_COMM_NULL;
  int rc = MPI_Comm_split(sl_ctx.comm, color, key, &c) == MPI_SUCCESS ? SL_SUCCESS
                                                                      : sl_error(SL_E_COMM, "%s: MPI_Comm_split failed", fn);
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc == SL_SUCCESS) rc = sl_agree(sl_ctx.comm, comm_channel_create(c, ch));
  if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  return rc;
}
