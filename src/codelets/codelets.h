/* StarPU codelets of starlops and their typed submit functions. */
#ifndef SL_CODELETS_H
#define SL_CODELETS_H

#include "internal.h"
#include "codelets/kernel_vec.h"
#include "solvers/solver_prog.h"

int sl_codelets_init(void);
void sl_codelets_shutdown(void);
void codelet_vec_init(void);
/** Where compute codelets may run (STARLOPS_CODELET_WHERE). */
uint32_t codelet_where(void);
void codelet_reduce_init(void);
/** A new task with room for nb buffers (dynamic arrays beyond STARPU_NMAXBUFS); NULL when out of memory. */
struct starpu_task *codelet_task_create(int nb);
/** Submits t; on failure destroys it and returns the error. */
int codelet_task_submit(struct starpu_task *t);

/** Element-wise operations; each names its handles' access modes. */
typedef enum {
  SL_VEC_FILL,   /* h0 (W) = a */
  SL_VEC_SCALE,  /* h0 (RW) = a h0 */
  SL_VEC_AXPBY,  /* h0 (RW) = a h1 (R) + b h0 */
  SL_VEC_AXPY0,  /* h0 (W) = a h1 (R) */
  SL_VEC_MUL,    /* h0 (W) = h1 (R) .* h2 (R) */
  SL_VEC_CONJ,   /* h0 (W) = conj(h1 (R)) */
  SL_VEC_COPY,   /* h0 (W) = h1 (R) */
  SL_VEC_AXPBYS, /* h0 (RW) = (a h2[ia]) h1 (R) + (b h3[ib]) h0, h2 and h3 variables of doubles (R) */
  SL_VEC_SCALES, /* h0 (RW) = (a h1[ia]) h0, h1 a variable (R) */
  SL_VEC_THRESH, /* h0 (W) = thresholding of h1 (R) at t (kind) */
  SL_VEC_RANDOM, /* h0 (W) = uniform values in [-1, 1) from key, its first real component numbered off */
  SL_VEC_AXPYS2, /* h0 (RW) += (a h4[ia]) h1 (R) and h2 (RW) += (b h4[ib]) h3 (R), h4 a variable (R) */
  SL_VEC_CLIP,   /* h0 (W) = clip of h1 (R): kind SL_KCLIP_BOX into [a[0], b[0]], SL_KCLIP_BALL onto |x| <= t */
  SL_VEC_ABS2,   /* h0 (W) = |h1 (R)|^2 (real part) */
  SL_VEC_ABS2ACC, /* h0 (RW) += |h1 (R)|^2 (real part) */
  SL_VEC_GROUP,  /* h0 (W) = sl_group_factor(kind, h2 (R), t) h1 (R) */
  SL_VEC_NOPS
} sl_vec_op;

/** Parameters of an element-wise task: constants a, b; offsets (in doubles) of the (re, im) pairs read
 *  from scalar handles; thresholding kind and level; random fill key and the chunk's first component. */
typedef struct {
  double a[2], b[2];
  int ia, ib;
  int kind;
  double t;
  uint64_t key;
  int64_t off;
} codelet_vec_params;
/** Submits one element-wise task on handles h[0..] (vectors of equal length, then variables). */
int codelet_vec_submit_p(sl_vec_op op, sl_dtype dt, const starpu_data_handle_t *h, const codelet_vec_params *p);
/** Submits one element-wise task on vector handles of equal length (unused handles may be NULL). */
int codelet_vec_submit(sl_vec_op op, sl_dtype dt, starpu_data_handle_t h0, starpu_data_handle_t h1,
                       starpu_data_handle_t h2, const double a[2], const double b[2]);

/** The device workspace of the CUDA reductions (a STARPU_SCRATCH vector). */
starpu_data_handle_t codelet_reduce_scratch(void);

/** Fused steps of a Krylov iteration on one chunk (codelet_krylov.c); buffers: the solver's state (RW),
 *  its history ring (RW), the scalar handles sc named (NULL when none), then the vectors named; a: the
 *  steps' parameters and the history row. */
typedef enum {
  SL_KRY_CG, /* vectors c (RW), Ac (R), x (RW), r (RW): c^H A c, CG's alpha step, x += alpha c, r -= alpha Ac;
                ||r||^2, CG's beta step, the history row, c = r + beta c: an iteration after its apply */
  SL_KRY_CGLS_ALPHA, /* vectors q (R), c (R), x (RW), s (RW): ||q||^2, ||c||^2, CGLS's alpha step (a.d = damp^2),
                        x += alpha c, s -= alpha q */
  SL_KRY_CGLS_BETA,  /* vectors r (R), s (R), x (R), c (RW): ||r||^2, ||s||^2, ||x||^2, CGLS's beta step, the
                        history row, c = r + beta c */
  SL_KRY_LSQR_U, /* vectors u (RW), Av (R): u = Av - alpha u, ||u||^2, LSQR's step A, u /= beta */
  SL_KRY_LSQR_V, /* vectors v (RW), A^H u (R), w (RW), x (RW): v = cu A^H u + cv v, ||v||^2, ||w||^2, LSQR's step B,
                    v /= alpha, x += t1 w, w = v + t2 w, the history row */
  SL_KRY_PCG, /* vectors r (RW), w (RW), q (R), z (RW), s (RW), p (RW), x (RW): pipelined CG after q = A w (not the
                 first iteration): ||r||^2, w^H r, its step (a.flag 0), the history row, z, s, p, x, r, w updated,
                 then ||r||^2 and w^H r of the new r and w (into the state, for the next step) */
  SL_KRY_PCG_NEXT, /* the same after an SL_KRY_PCG or SL_KRY_PCG_NEXT step: without the first two reductions */
  SL_KRY_CG_DIST_A, /* several ranks; scalars c^H A c (R, allreduced), ||r||^2 (W, this rank's part); vectors c (R),
                       Ac (R), x (RW), r (RW): CG's alpha step, x += alpha c, r -= alpha Ac, ||r||^2 */
  SL_KRY_CG_DIST_B, /* scalar ||r||^2 (R, allreduced); vectors r (R), c (RW): CG's beta step, the history row,
                       c = r + beta c */
  SL_KRY_CGLS_DIST_A, /* several ranks, domain whole on each, range split; scalar ||q||^2 (R, allreduced); vectors
                         q (R), c (R), x (RW), s (RW): ||c||^2, CGLS's alpha step, x += alpha c, s -= alpha q */
  SL_KRY_CGLS_DIST_B, /* scalar ||s||^2 (R, allreduced); vectors r (R), s (R), x (R), c (RW): ||r||^2, ||x||^2, CGLS's
                         beta step, the history row, c = r + beta c */
  SL_KRY_LSQR_DIST_U1, /* several ranks, range split; scalar ||u||^2 (W, this rank's part); vectors u (RW), Av (R):
                          u = Av - alpha u, ||u||^2 */
  SL_KRY_LSQR_DIST_U2, /* scalar ||u||^2 (R, allreduced); vector u (RW): LSQR's step A, u /= beta */
  SL_KRY_PCG_DIST, /* pipelined CG on several ranks (not the first iteration); scalars ||r||^2 and w^H r (RW: read
                      allreduced, left holding this rank's parts for the new r and w); vectors as SL_KRY_PCG: its
                      step, z, s, p, x, r, w updated, the history row, then ||r||^2 and w^H r */
  SL_KRY_PCG_CHUNK, /* pipelined CG on one chunk of several (one task per chunk, ring NULL), after its step;
                       scalars: the chunk's parts of ||r||^2 and w^H r (W); vectors as SL_KRY_PCG: z, s, p, x, r,
                       w updated, then the two parts */
  SL_KRY_NOPS
} sl_krylov_op;
void codelet_krylov_init(void);
int codelet_krylov_submit(sl_krylov_op op, sl_dtype dt, starpu_data_handle_t state, starpu_data_handle_t ring,
                          const starpu_data_handle_t *sc, const starpu_data_handle_t *vec, sl_prog_arg a);

/** Submits partial (W, a 2-double variable) = reduction k of x (and y for DOT/VDOT), then its root
 *  1/root_p when root_p is not 0 or 1 (a one-chunk reduction writes the scalar itself). host: the result is
 *  read next on the host or by a CPU task, so a CUDA task writes it in main memory (copied on its stream);
 *  else it stays where the task ran. */
int codelet_reduce_submit(sl_dtype dt, sl_red_kind k, double p, double root_p, starpu_data_handle_t x,
                          starpu_data_handle_t y, starpu_data_handle_t partial, int host);

/** Submits the task that combines nparts partials into the scalar handle (2 doubles) and takes the root
 *  1/root_p when root_p is not 0 or 1. */
int codelet_combine_submit(sl_red_kind k, double root_p, int nparts, const starpu_data_handle_t *parts,
                           starpu_data_handle_t scalar);
void codelet_rows_init(void);
/** First member of the argument struct of every chunked codelet: chunks of the input and of the output. */
typedef struct codelet_chunks {
  int nin, nout;
  int rw; /* 1: the task reads its output chunks too (it writes a part of them) */
} codelet_chunks;
/** Copies between the chunks buffers[first..first+n) and one contiguous buffer (to_chunks: which way). */
void codelet_chunks_copy(void *buffers[], int first, int n, void *flat, size_t el, int to_chunks);
/** The chunks buffers[first..first+n) as one buffer when they lie back to back in memory (the sub-blocks of one
 *  host block do, on the CPU), so that a kernel can use them in place; NULL otherwise (copy them). */
void *codelet_chunks_flat(void *buffers[], int first, int n, size_t el);
/** Sets up a chunked codelet: CPU and CUDA (asynchronous, one chunk per side) functions, variable buffers. */
void codelet_chunked_init(struct starpu_codelet *cl, const char *name, starpu_cpu_func_t cpu, starpu_cuda_func_t cuda);
/** Submits cl on nfixed read handles, then args' nin input chunks (read), then its nout output chunks
 *  (write); takes args (a malloc'd struct starting with codelet_chunks), frees it on failure. */
int codelet_chunked_submit(struct starpu_codelet *cl, void *args, size_t args_size, int nfixed,
                           const starpu_data_handle_t *fixed, const starpu_data_handle_t *in,
                           const starpu_data_handle_t *out, double flops, const char *what);
/** codelet_chunked_submit with one fixed handle (none when NULL) and, when a side has several chunks, a scratch handle after the
 *  outputs (STARPU_SCRATCH: the worker's packing space, which StarPU keeps between tasks). */
int codelet_chunked_submit_scratch(struct starpu_codelet *cl, void *args, size_t args_size, starpu_data_handle_t fixed,
                                   starpu_data_handle_t scratch, const starpu_data_handle_t *in,
                                   const starpu_data_handle_t *out, double flops, const char *what);
/** The same with the scratch handle (work) attached also with one chunk per side when `always`: work space for
 *  the implementations (the CPU one packs into it when a side has several chunks). */
int codelet_chunked_submit_work(struct starpu_codelet *cl, void *args, size_t args_size, starpu_data_handle_t fixed,
                                starpu_data_handle_t work, int always, const starpu_data_handle_t *in,
                                const starpu_data_handle_t *out, double flops, const char *what);
void codelet_matmul_init(void);
void codelet_select_init(void);
void codelet_nsconv_init(void);
void codelet_patch_init(void);
/** Submits Patch2D with a dense matrix per patch, or Sliding1D (kernel_patch.h, dims an sl_patch_dims), on a
 *  rank's blocks given as chunks: tables holds M, T0 and T1; scratch a home-less vector of
 *  codelet_patch_work(dims, packing, element size) elements, packing being what the input and output buffers need together
 *  (with a ghost layer, when a side has several chunks); ghost: one of the nin inputs is a ghost layer.
 *  part (NULL: the whole buffers) makes the task one part of an apply: its input starts in_off elements into
 *  the inputs taken back to back, its output out_off elements into the outputs', and with rw it reads the
 *  outputs too (it writes a part of them, or adds into them: dims' acc). Nothing when nout is 0. */
typedef struct codelet_patch_part {
  int64_t in_off, out_off;
  int rw;
} codelet_patch_part;
int codelet_patch_submit(sl_dtype dt, int adjoint, const void *dims, starpu_data_handle_t tables, starpu_data_handle_t scratch,
                         int nin, const starpu_data_handle_t *in, int ghost, int nout, const starpu_data_handle_t *out,
                         const codelet_patch_part *part);
int64_t codelet_patch_work(const void *dims, int64_t packing, size_t el);
/** Submits NonStationaryConvolve1D on a rank's block seen as (outer, n, inner), H the n x L filter table,
 *  scratch a home-less vector of twice the block (used when the block has several chunks); nothing when nout
 *  is 0. */
int codelet_nsconv_submit(sl_dtype dt, int adjoint, int64_t outer, int64_t n, int64_t inner, int64_t L, starpu_data_handle_t H,
                          starpu_data_handle_t scratch, int nin, const starpu_data_handle_t *in, int nout,
                          const starpu_data_handle_t *out);
void codelet_csr_init(void);
/** Submits y = A x (adjoint: A^H x) for a CSR block (nr x nc, nnz entries; colind and vals NULL when nnz
 *  is 0), x and y given as their chunks. Nothing when ny is 0. */
typedef struct csr_trans csr_trans;
/** The transposed copy of a CSR block that the CPU task makes on first use by an adjoint on several threads (the
 *  operator keeps it: pass the same one to every submission of that block); NULL when out of memory. */
csr_trans *codelet_csr_trans_new(void);
void codelet_csr_trans_free(csr_trans *t);
int codelet_csr_submit(sl_dtype dt, int adjoint, int64_t nr, int64_t nc, int64_t nnz, starpu_data_handle_t rowptr,
                       starpu_data_handle_t colind, starpu_data_handle_t vals, csr_trans *trans, int nx,
                       const starpu_data_handle_t *x, int ny, const starpu_data_handle_t *y);
/** Submits Restriction's task: forward out = in[idx] (n elements), adjoint out = 0, out[idx] += in; in and
 *  out given as their chunks; idx a vector handle of n int64 (NULL when n = 0). Nothing when nout is 0. */
int codelet_select_submit(sl_dtype dt, int adjoint, int64_t n, starpu_data_handle_t idx, int nin,
                          const starpu_data_handle_t *in, int nout, const starpu_data_handle_t *out);
/** Submits Y = A X (adjoint: A^H X) for a row-major nr x nc block A (NULL when empty), X and Y given as
 *  their chunks (nx, ny of them), nrhs columns; nbatch such products on consecutive blocks of A, X and Y.
 *  Nothing when ny is 0. */
int codelet_matmul_submit(sl_dtype dt, int adjoint, int64_t nr, int64_t nc, int64_t nrhs, int64_t nbatch,
                          starpu_data_handle_t A, int nx, const starpu_data_handle_t *x, int ny,
                          const starpu_data_handle_t *y);
/** Submits a strided row copy: rows rows of row_len elements from the logical vector src (the
 *  concatenation of nsrc handles) at src_start + o src_stride to dst (ndst handles, access dst_mode) at
 *  dst_start + o dst_stride. */
int codelet_rows_submit(int ndst, const starpu_data_handle_t *dst, enum starpu_data_access_mode dst_mode, int nsrc,
                        const starpu_data_handle_t *src, size_t elsize, int64_t rows, int64_t row_len,
                        int64_t src_start, int64_t src_stride, int64_t dst_start, int64_t dst_stride);
/** The same; acc 0 copies, acc 1 (2) adds the rows into dst in float (double) units (dst_mode RW). */
int codelet_rows_submit_acc(int acc, int ndst, const starpu_data_handle_t *dst, enum starpu_data_access_mode dst_mode,
                            int nsrc, const starpu_data_handle_t *src, size_t elsize, int64_t rows, int64_t row_len,
                            int64_t src_start, int64_t src_stride, int64_t dst_start, int64_t dst_stride);

void codelet_fft_init(void);
void codelet_fft_shutdown(void);
struct fft_shape;
/** Submits one FFT task of kind FFT_FORWARD / FFT_BACKWARD (in place on in when out is NULL or in, else from
 *  in, only read, to out), FFT_R2C (in real, out complex) or FFT_C2R (in complex, overwritten; out real) on the lines of s (kernel_fft.h). */
int codelet_fft_submit(const struct fft_shape *s, int kind, starpu_data_handle_t in, starpu_data_handle_t out);
/** Submits one out-of-place FFT task of kind FFT_FORWARD / FFT_BACKWARD / FFT_R2C from nin input chunks (read) to
 *  nout output chunks (written); on the CPU (only) chunks that lie back to back are used in place, others go
 *  through scratch (a home-less vector holding the input and the output plus 64 bytes, needed when a side has
 *  several chunks). */
int codelet_fft_submit_chunks(const struct fft_shape *s, int kind, int nin, const starpu_data_handle_t *in, int nout,
                              const starpu_data_handle_t *out, starpu_data_handle_t scratch);

void codelet_stencil_init(void);
/** Submits one stencil task: output elements [s, e) of the block (the chunk out) from the nin input chunks
 *  in (first elements start) and the ghost planes glo, ghi (NULL when not read). */
int codelet_stencil_submit(const void *plan, sl_dtype dt, starpu_data_handle_t glo, starpu_data_handle_t ghi,
                           int nin, const starpu_data_handle_t *in, const int64_t *start, starpu_data_handle_t out,
                           int64_t s, int64_t e);

void codelet_stencil_pair_init(void);
/** Submits one task computing t = first x, then y = second t (two st_plans without ghost terms) on blocks of n
 *  elements that are one chunk each (x, t, y distinct). */
int codelet_stencil_pair_submit(const void *first, const void *second, sl_dtype dt, starpu_data_handle_t x,
                                starpu_data_handle_t t, starpu_data_handle_t y, int64_t n);

/** Submits the task that takes the root 1/root_p of the scalar (nothing when root_p is 0 or 1). */
int codelet_root_submit(double root_p, starpu_data_handle_t scalar);

#endif
