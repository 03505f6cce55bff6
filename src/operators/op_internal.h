/* The operator object shared by src/operators/ (not by the rest of starlops). */
#ifndef SL_OP_INTERNAL_H
#define SL_OP_INTERNAL_H

#include "internal.h"
#include "codelets/kernel_patch.h"

#define SL_OP_WS_MAX 8 /* work vectors an operator keeps per side between solves */

/** Submits the tasks of y = op x (mode SL_FORWARD) or y = op^H x; arguments already checked. */
typedef int (*sl_op_apply_fn)(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y);

/** Submits t = first x (mode m1), then y = second t (mode m2) as fewer tasks than two applies, where first's
 *  kind can for this second operator and these arrays; returns SL_OP_DECLINED, submitting nothing, where it
 *  cannot (the caller then applies them one after the other). */
typedef int (*sl_op_pair_fn)(sl_op *first, sl_op_mode m1, sl_op *second, sl_op_mode m2, const sl_array *x, sl_array *t,
                             sl_array *y);
#define SL_OP_DECLINED 1

/** What an operator kind does. Each kind's file defines one table and its own context struct (`data`); no
 *  other file reads that struct. */
typedef struct sl_op_ops {
  sl_op_apply_fn apply;        /* y = op x, and y = op^H x when adjoint is NULL */
  sl_op_apply_fn adjoint;      /* y = op^H x where the kind writes it as another function, else NULL */
  void (*destroy)(void *data); /* frees the context (NULL: nothing to free) */
  sl_op_pair_fn pair;          /* this operator followed by another in fewer tasks (products), or NULL */
} sl_op_ops;

/** The part every operator shares: layouts, methods, the kind's context, and the temporaries the library
 *  keeps for it. */
struct sl_op {
  int refs;
  char name[160];
  sl_dtype dtype;
  sl_array *dom, *rng;           /* the layouts of the domain and range: no storage (sl_array_clone) */
  const sl_op_ops *ops;
  void *data;                    /* the kind's context, freed by ops->destroy */
  sl_array *scratch[2];          /* temporaries, made at the first apply that needs them (sl_op_scratch) */
  sl_array *ws[2][SL_OP_WS_MAX]; /* solver work vectors kept for the next solve: [0] domain, [1] range */
  int nws[2];
};

/** Runs op's apply for mode (arguments already checked). */
static inline int sl_op_call(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  sl_op_apply_fn f = mode == SL_ADJOINT && op->ops->adjoint ? op->ops->adjoint : op->ops->apply;
  return f(op, mode, x, y);
}

/** Host data an operator keeps, registered with StarPU (matrices, indices). */
typedef struct {
  void *ptr;
  starpu_data_handle_t h;
} sl_kept;
/** Copies n elements of el bytes into k and registers them; nothing when n is 0. */
int sl_kept_copy(sl_kept *k, const void *src, int64_t n, size_t el);
/** Unregisters and frees k (nothing when empty). */
void sl_kept_free(sl_kept *k);
/** pylops' tapers of nwins windows of nwin samples overlapping by nover (op_sliding.c): T (nwins x nwin) the
 *  taper of each window, the first keeping its start and the last its end. */
void sl_window_tapers(double *T, int64_t nwins, int64_t nwin, int64_t nover, sl_taper kind);
/** Windows along the distributed axis (op_window_split.c): this rank's rows (from off), the windows it owns
 *  (those starting in its rows: ln from wl), the ghost windows of the model (gw[0], forward) and ghost rows of
 *  the data (gw[1], adjoint) and their handles. */
typedef struct sl_window_split {
  int on;
  int64_t off, nrow, wl, ln;
  int gw[2];
  starpu_data_handle_t ghost[2];
} sl_window_split;
/** The split of nwins windows of nwin samples every step along like's distributed axis. */
void sl_window_split_init(sl_window_split *w, const sl_array *like, int64_t nwin, int64_t step, int64_t nwins);
/** Sets the patch kernels' buffers along their first axis for the forward (fwd) and the adjoint (adj), and
 *  registers the ghost layers (model_plane, data_plane: elements per window and per row of the local blocks). */
void sl_window_split_dims(sl_window_split *w, sl_patch_dims *fwd, sl_patch_dims *adj, int64_t model_plane, int64_t data_plane,
                          size_t el);
/** One apply: the ghost layer's exchange, then the patch task on the block and the ghost layer (d: the
 *  direction's dims). */
int sl_window_split_apply(const sl_window_split *w, sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y,
                          const sl_patch_dims *d, starpu_data_handle_t tables, starpu_data_handle_t scratch);
void sl_window_split_free(sl_window_split *w);
/* Windows along a distributed axis that is not the array's first: the operator built in like's layout moved
 * along another axis (sl_layout_moved), where the windows are local (or along the distributed first axis),
 * followed by the redistribution back to like's layout (one all-to-all per apply). Collective, agreed. */
/* 1 when patches over axes a0, a1 of like need that move: a patch axis is distributed but is not the array's
 * first axis (or not the first of the two) */
int sl_patch_moved(const sl_array *like, int a0, int a1);
int sl_window_wrap(sl_op **op, sl_op *inner, const sl_array *loc, const sl_array *like, const char *name);
/** The windowed operators' object (op_windowed.c): the patch kernels' buffers for the forward (d) and the
 *  adjoint (da), the split along the distributed axis, the tables (M, T0, T1) and the scratch handle. An
 *  operator made with sl_windowed_ops owns it. */
typedef struct sl_windowed {
  sl_patch_dims d, da;
  sl_window_split split;
  sl_kept tables;
  starpu_data_handle_t scratch;
} sl_windowed;
extern const sl_op_ops sl_windowed_ops;
/** Registers c's scratch handle for both directions (SL_E_DIMS when it is beyond the kernels' index ranges). */
int sl_windowed_scratch(sl_windowed *c, const char *fn, size_t el);
/** Releases c (a constructor's failure path; NULL is ignored). */
void sl_windowed_free(sl_windowed *c);
/** The checks the Patch2D constructors share (op_patch2d.c): like, the two patch axes (normalised into *a0,
 *  *a1), the windows along them, the taper's overlap; the distributed axis may be a patch axis only when it
 *  is the first axis. Not agreed. */
int sl_patch_check(const char *fn, const sl_array *like, const int axes[2], const int64_t nwin[2], const int64_t nover[2],
                   sl_taper taper, int *a0, int *a1);
/** dst[k0 + i] = v[i] (i < n) in dtype dt (imaginary parts 0). */
void sl_store_real(void *dst, int64_t k0, const double *v, int64_t n, sl_dtype dt);

/** Scratch array `slot` (0 or 1) of op laid out like `like`, made at the first call (local: an apply's error
 *  is the caller's). */
int sl_op_scratch(sl_op *op, int slot, const sl_array *like, sl_array **t);
/** A new operator of the given layouts (templates created like dom_like and rng_like) with one reference,
 *  methods ops and context data. It owns data from the call on: on failure ops->destroy(data) runs. */
int sl_op_new(sl_op **out, const char *name, const sl_array *dom_like, const sl_array *rng_like, const sl_op_ops *ops,
              void *data);
/** Submits the tasks of an operator that works on the chunks of x and y (nx, ny of them; 0 on a rank that
 *  owns nothing). */
typedef int (*sl_op_chunked_fn)(sl_op *op, sl_op_mode mode, sl_array *y, int nx, const starpu_data_handle_t *hx,
                                int ny, const starpu_data_handle_t *hy);
/** An apply function body: gathers the chunk handles of x and y and calls fn. */
int sl_op_apply_chunked(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y, sl_op_chunked_fn fn);
struct comm_channel;
/** Collective (the last step of a dense kind's constructor). A dense product (MatrixMult and its stacks,
 *  the block MatrixMult, Fredholm1): nbatch gemm of this rank's nr x nc blocks A (copied) on nrhs columns
 *  per apply; after the apply of mode sum_mode (SL_FORWARD, SL_ADJOINT, or -1 for none) the result is
 *  allreduced over sum_channel (owned by the operator from the call on; NULL: the range's or domain's own
 *  group). Agrees rc (the caller's verdict so far) and the allocations, then hands the operator to *out. */
int sl_op_dense(sl_op **out, int rc, const char *name, const sl_array *dom, const sl_array *rng, const void *A, int64_t nr,
                int64_t nc, int64_t nrhs, int64_t nbatch, int sum_mode, struct comm_channel *sum_channel);
/** Ends a collective constructor (validate, agree, build, finish): agrees rc over ranks, then hands o to
 *  *out or destroys it. */
int sl_op_finish(sl_op **out, sl_op *o, int rc);
/** Collective. The checks shared by the distributed MatrixMult kinds (out, sizes, a grid that fits the ranks,
 *  the dtype), agreed by every rank. */
int sl_op_grid_check(const char *fn, sl_op **out, int64_t N, int64_t K, int64_t M, int pr, int pc, sl_dtype dt);
/** The FFT's kind against like (op_fft.c): the norm, real against like's dtype, the real-to-complex axis `last`
 *  (the last of the axes) not the distributed one; normpos, realpos: those arguments' positions in fn. */
int sl_fft_kind_check(const char *fn, const sl_array *like, sl_fft_norm norm, int normpos, int real, int realpos, int last);
/** A derivative's kind (op_stencil.c): forward, backward or centered; argn its position in fn. */
int sl_deriv_kind_check(const char *fn, int argn, sl_deriv_kind kind);
/** The chunk handles of a (malloc'd, NULL and 0 when it has none). */
int sl_op_chunks(const sl_array *a, starpu_data_handle_t **h, int *n);
/** Collective. A comm-layer channel on the ranks of sl_ctx.comm sharing color, ordered by key (a grid row
 *  or column), agreed by every rank. */
int sl_op_grid_channel(const char *fn, int color, int key, struct comm_channel **ch);
/** Takes one more reference to op. */
sl_op *sl_op_ref(sl_op *op);

#endif
