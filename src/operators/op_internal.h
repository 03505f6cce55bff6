/* The operator object shared by src/operators/ (not by the rest of starlops). */
#ifndef SL_OP_INTERNAL_H
#define SL_OP_INTERNAL_H

#include "internal.h"

enum { SL_STACK_NONE, SL_STACK_V, SL_STACK_H };
#define SL_OP_WS_MAX 8 /* work vectors an operator keeps per side between solves */

/** Submits the tasks of y = op x (mode SL_FORWARD) or y = op^H x; arguments already checked. */
typedef int (*sl_op_apply_fn)(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y);

struct sl_op {
  int refs;
  char name[160];
  sl_dtype dtype;
  sl_array *dom, *rng;    /* the layouts of the domain and range: no storage (sl_array_clone) */
  sl_op_apply_fn apply;
  sl_op *a, *b;           /* parts (composites) */
  sl_array *scratch[2];   /* temporaries, made at the first apply that needs them (sl_op_scratch) */
  sl_array *ws[2][SL_OP_WS_MAX]; /* solver work vectors kept for the next solve: [0] domain, [1] range */
  int nws[2];
  sl_array *data;         /* an operator's own data (diagonal: d, conj(d)) */
  sl_array *data_conj;
  double sign;            /* sum: +1, difference: -1 */
  void *mat;              /* MatrixMult: this rank's block (row-major nr x nc); Restriction: its indices */
  starpu_data_handle_t mat_handle;
  int64_t nr, nc, nrhs;
  int64_t nbatch;         /* Fredholm1: this rank's slices */
  void *aux[2];           /* CSR: row pointers and column indices, and their handles */
  starpu_data_handle_t aux_handle[2];
  int kind;               /* MatrixMult arrangement: SL_STACK_NONE (block diagonal), SL_STACK_V, SL_STACK_H */
  sl_cscalar scale;       /* scaled */
  int nparts;             /* stacked operators: their parts (references) */
  sl_op **parts;
  void *priv;             /* an operator's own state, freed by priv_free at destruction */
  void (*priv_free)(void *priv);
};

/** Scratch array `slot` (0 or 1) of op laid out like `like`, made at the first call (local: an apply's error
 *  is the caller's). */
int sl_op_scratch(sl_op *op, int slot, const sl_array *like, sl_array **t);
/** A new operator of the given layouts (templates created like dom_like and rng_like) with one reference. */
int sl_op_new(sl_op **out, const char *name, const sl_array *dom_like, const sl_array *rng_like, sl_op_apply_fn fn);
/** Submits the tasks of an operator that works on the chunks of x and y (nx, ny of them; 0 on a rank that
 *  owns nothing). */
typedef int (*sl_op_chunked_fn)(sl_op *op, sl_op_mode mode, sl_array *y, int nx, const starpu_data_handle_t *hx,
                                int ny, const starpu_data_handle_t *hy);
/** An apply function body: gathers the chunk handles of x and y and calls fn. */
int sl_op_apply_chunked(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y, sl_op_chunked_fn fn);
/** Copies n elements of el bytes into memory the operator owns (*ptr) and registers it (*h); nothing when
 *  n is 0 (sl_op_destroy frees and unregisters). */
int sl_op_keep(void **ptr, starpu_data_handle_t *h, const void *src, int64_t n, size_t el);
/** The apply of dense products (MatrixMult, its stacks, Fredholm1): nbatch gemm of nr x nc blocks, then the
 *  allreduce of a stack's replicated side. */
int sl_op_matrix_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y);
/** Ends a collective constructor: agrees rc over ranks, then hands o to *out or destroys it. */
int sl_op_finish(sl_op **out, sl_op *o, int rc);
/** Collective. The checks shared by the distributed MatrixMult kinds (out, sizes, a grid that fits the ranks,
 *  the dtype), agreed by every rank. */
int sl_op_grid_check(const char *fn, sl_op **out, int64_t N, int64_t K, int64_t M, int pr, int pc, sl_dtype dt);
/** The chunk handles of a (malloc'd, NULL and 0 when it has none). */
int sl_op_chunks(const sl_array *a, starpu_data_handle_t **h, int *n);
struct comm_channel;
/** Collective. A comm-layer channel on the ranks of sl_ctx.comm sharing color, ordered by key (a grid row
 *  or column), agreed by every rank. */
int sl_op_grid_channel(const char *fn, int color, int key, struct comm_channel **ch);
/** The extent and first index of part idx when n is split in parts blocks as pylops-mpi does (the first
 *  n % parts get one more). */
static inline int64_t sl_split_count(int64_t n, int parts, int idx) { return n / parts + (idx < n % parts); }
static inline int64_t sl_split_offset(int64_t n, int parts, int idx)
{
  return (int64_t)idx * (n / parts) + (idx < n % parts ? idx : n % parts);
}
/** Takes one more reference to op. */
sl_op *sl_op_ref(sl_op *op);

#endif
