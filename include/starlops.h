/* starlops: distributed linear operators on StarPU task graphs across MPI ranks.
 *
 * Conventions
 * - Every function returning int returns SL_SUCCESS (0) or a negative SL_E... code; sl_strerror() names
 *   the code and sl_last_error() says what was wrong, naming the argument.
 * - "Collective" functions are called by every rank of the starlops communicator in the same order with
 *   arguments that agree where stated; they reach the same verdict on every rank.
 * - "Async" functions submit StarPU tasks and return; their results are valid for every later starlops
 *   call, and the host sees values through sl_scalar_get(), sl_array_acquire() or sl_wait().
 */
#ifndef STARLOPS_H
#define STARLOPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_VERSION_MAJOR 0
#define SL_VERSION_MINOR 1
#define SL_VERSION_PATCH 0
#define SL_VERSION_STRING "0.1.0"

/** Maximum number of array dimensions. */
#define SL_MAX_DIMS 8

/* ---- status codes ------------------------------------------------------------------------------- */
enum {
  SL_SUCCESS = 0,
  SL_E_INVALID = -1,  /**< an argument is invalid (NULL, out of range) */
  SL_E_DIMS = -2,     /**< dimensions do not match */
  SL_E_DTYPE = -3,    /**< dtypes do not match or are not supported */
  SL_E_DIST = -4,     /**< distributions (partition, axis, local dims, mask) do not match */
  SL_E_NOMEM = -5,    /**< out of memory */
  SL_E_BACKEND = -6,  /**< a backend (CUDA, NCCL, MPI thread level) is unavailable */
  SL_E_COMM = -7,     /**< an MPI or NCCL call failed */
  SL_E_IO = -8,       /**< a file could not be opened, read or written */
  SL_E_FORMAT = -9,   /**< a file's content is malformed (e.g. a bad .npy header or a truncated file) */
  SL_E_STATE = -10,   /**< starlops is not initialised, or already initialised */
  SL_E_RUNTIME = -11, /**< a StarPU, CUDA or cuBLAS call failed */
  SL_E_NUMERIC = -12, /**< a computation met a non-finite value (NaN or Inf in the data or the operator) */
};

/** Name of a status code ("SL_E_DIMS: dimension mismatch"). */
const char *sl_strerror(int code);
/** Last error message of the calling thread, naming the bad argument ("" when none). */
const char *sl_last_error(void);

/* ---- dtypes and scalars ------------------------------------------------------------------------- */
typedef enum { SL_FLOAT32 = 0, SL_FLOAT64 = 1, SL_COMPLEX64 = 2, SL_COMPLEX128 = 3 } sl_dtype;
#define SL_NDTYPES 4

/** Size in bytes of one element of dt (0 for an invalid dtype). */
size_t sl_dtype_size(sl_dtype dt);
/** "float32", "float64", "complex64", "complex128" (NULL for an invalid dtype). */
const char *sl_dtype_name(sl_dtype dt);
/** 1 if dt is complex64 or complex128. */
int sl_dtype_is_complex(sl_dtype dt);

/** A host scalar passed to vector operations; im is ignored for real dtypes. */
typedef struct { double re, im; } sl_cscalar;
#define SL_REAL(x) ((sl_cscalar){(x), 0.0})

/* ---- runtime ------------------------------------------------------------------------------------ */
typedef struct {
  MPI_Comm comm;          /**< communicator to run on (duplicated); MPI_COMM_NULL means MPI_COMM_WORLD */
  const char *trace_dir;  /**< FxT trace directory; NULL means $STARLOPS_TRACE, and no tracing if unset */
  int ncpus;              /**< CPU workers per rank; -1 means StarPU's default ($STARPU_NCPU) */
  int ncuda;              /**< CUDA workers per rank; -1 means StarPU's default ($STARPU_NCUDA) */
  size_t chunk_bytes;     /**< target bytes per array chunk; 0 means $STARLOPS_CHUNK_BYTES or 4 MiB */
  int verbose;            /**< print starlops_info on rank 0 after init */
  int trace_region;       /**< 1: with tracing on, record only between sl_trace_begin and sl_trace_end
                               (also $STARLOPS_TRACE_REGION=1) */
} sl_options;

/** Fills opts with the defaults. */
void sl_options_default(sl_options *opts);

/** Collective. Initialises MPI (MPI_THREAD_MULTIPLE) unless the program already did, then StarPU and
 *  StarPU-MPI. Chooses the dmdas scheduler when CUDA workers exist and STARPU_SCHED is unset, and sets up
 *  cuBLAS handles. opts may be NULL. */
int sl_init(int *argc, char ***argv, const sl_options *opts);
/** Collective. Waits for all tasks, releases the runtime, and finalises MPI if sl_init initialised it. Arrays,
 *  operators, scalars and proximal operators belong to the session that made them: destroy them before this;
 *  after sl_init again, the calls that act on one of an earlier session refuse it (SL_E_STATE), sl_*_destroy
 *  included (accessors of its dims, dtype or name still answer). */
int sl_finalize(void);
/** 1 between sl_init and sl_finalize. */
int sl_initialized(void);
/** Waits until every submitted task has completed. */
int sl_wait(void);
/** Rank and size in the starlops communicator. */
int sl_rank(void);
int sl_size(void);
/** The starlops communicator (a duplicate of the one given to sl_init). */
MPI_Comm sl_comm(void);
/** Number of CPU and CUDA workers of this rank. */
int sl_ncpu_workers(void);
int sl_ncuda_workers(void);
/** Collective. Prints version, ranks, workers per rank, comm backend and build options on rank 0. */
int sl_info_print(FILE *out);
/** Name of the communication backend in use ("mpi"). */
const char *sl_comm_backend_name(void);

/** For language bindings: sizeof of the public struct named type ("sl_options", "sl_dist", "sl_cscalar",
 *  "sl_solver_options", "sl_solver_info"), 0 for another name. Needs no initialisation. */
size_t sl_abi_size(const char *type);
/** SL_VERSION_STRING of the library (which may differ from the header a program was built with). */
const char *sl_version(void);

/** Reserves count consecutive 64-bit StarPU-MPI tags and stores the first in *first. Every rank must
 *  call it in the same order; the tags then agree across ranks. */
int sl_tag_alloc(int64_t count, int64_t *first);

/* ---- distributed arrays ------------------------------------------------------------------------- */
typedef enum { SL_SCATTER = 0, SL_BROADCAST = 1 } sl_partition;

/** How an array is spread over the ranks. Zero-initialise, or use sl_dist_default(). */
typedef struct {
  sl_partition partition; /**< SL_SCATTER (blocks along axis) or SL_BROADCAST (full copy per rank) */
  int axis;               /**< distributed axis for SL_SCATTER (may be negative: -1 is the last) */
  const int64_t *local_n; /**< optional: this rank's extent along axis; NULL: first n % P ranks get one more */
  const int *mask;        /**< optional: one int per rank; ranks with equal values hold a full replica */
  int ghost_lo, ghost_hi; /**< optional ghost layers before and after the block along axis (at most its length) */
} sl_dist;

/** Scatter along axis 0, default local dims, no mask, no ghosts. */
sl_dist sl_dist_default(void);
/** Scatter along axis. */
sl_dist sl_dist_scatter(int axis);
/** Full copy on every rank. */
sl_dist sl_dist_broadcast(void);

typedef struct sl_array sl_array;

/** Collective. Creates an array of global dims[0..ndim-1] and dtype dt, distributed as dist (NULL:
 *  sl_dist_default()). ndim, dims, dt, partition, axis, ghosts and mask must agree across ranks; local_n
 *  is checked once so that the blocks tile the axis (within each mask group). Contents are zero. */
int sl_array_create(sl_array **a, int ndim, const int64_t dims[], sl_dtype dt, const sl_dist *dist);
/** Collective. Like sl_array_create, with the local block in buffer (no copy; the buffer must hold the
 *  local block in C order and outlive the array). */
int sl_array_wrap(sl_array **a, void *buffer, int ndim, const int64_t dims[], sl_dtype dt,
                  const sl_dist *dist);
/** Collective. Like sl_array_wrap with the local block in GPU memory: dev_ptr (C order, this rank's block) on
 *  CUDA device `device`, where this rank must have a CUDA worker (else SL_E_BACKEND on every rank). The block
 *  is one chunk whose home is that buffer: tasks on that GPU read and write it in place (no copy), others
 *  get copies from StarPU; sl_array_sync brings the current values back into it. No ghost layers. */
int sl_array_wrap_device(sl_array **a, void *dev_ptr, int device, int ndim, const int64_t dims[], sl_dtype dt,
                         const sl_dist *dist);
/** Waits for the tasks writing a and makes the buffer a was made from (sl_array_wrap's host buffer,
 *  sl_array_wrap_device's device buffer) hold its current values; for arrays starlops allocated, waits only. */
int sl_array_sync(sl_array *a);
/** Collective. A new zero array with the same dims, dtype and distribution as like. When its local block is
 *  one chunk (the default on GPU ranks; blocks up to STARLOPS_CHUNK_BYTES on CPU ranks) it has no host home:
 *  StarPU places it where it is first used, sl_array_acquire brings it to the host, the pointer it gives may
 *  change between acquires, and after an SL_WRITE acquire the buffer is undefined until written
 *  (docs/arrays.md). */
int sl_array_create_like(sl_array **a, const sl_array *like);
/** Waits for the array's tasks and frees it. NULL is accepted. */
int sl_array_destroy(sl_array **a);

/* Accessors (local): a NULL array gives 0 (ndim, nchunks), -1 (sizes, offset, axis, count, dtype,
 * partition) or NULL (dims). */
int sl_array_ndim(const sl_array *a);
sl_dtype sl_array_dtype(const sl_array *a);
/** Global dims, this rank's local dims, and this rank's first global index along the distributed axis. */
const int64_t *sl_array_dims(const sl_array *a);
const int64_t *sl_array_local_dims(const sl_array *a);
int64_t sl_array_local_offset(const sl_array *a);
int64_t sl_array_global_size(const sl_array *a);
int64_t sl_array_local_size(const sl_array *a);
sl_partition sl_array_partition(const sl_array *a);
int sl_array_axis(const sl_array *a);
/** Number of StarPU chunks of the local block (0 when this rank owns nothing). */
int sl_array_nchunks(const sl_array *a);
/** Local extent of rank r along the distributed axis (the whole extent for SL_BROADCAST). */
int64_t sl_array_count_of(const sl_array *a, int r);

typedef enum { SL_READ = 1, SL_WRITE = 2, SL_READ_WRITE = 3 } sl_access;
/** Waits for pending tasks on the local block and gives the host a pointer to it (C order, local dims).
 *  Pair every call with sl_array_release(). *ptr is NULL when this rank owns nothing. */
int sl_array_acquire(sl_array *a, sl_access mode, void **ptr);
int sl_array_release(sl_array *a);

/** Collective. Gathers the global array (C order) into global on rank root, or on every rank when root
 *  is -1. Within a mask group, the group's replica is gathered. global may be NULL where unused. */
int sl_array_gather(sl_array *a, int root, void *global);
/** Collective. Sets the array from the global array held by rank root, or by every rank when root is -1
 *  (then no data moves). */
int sl_array_scatter(sl_array *a, int root, const void *global);

/** Collective. Fills the ghost layers from the neighbouring blocks along the distributed axis (zeros
 *  beyond the global edges). Works for any ghost width, any number of ranks and for ranks that own nothing;
 *  the array's layout and ghost widths are agreed across the ranks before any message. */
int sl_array_exchange_ghosts(sl_array *a);
/** Waits and gives the host pointers to the ghost layers (dims: local dims with ghost_lo or ghost_hi
 *  along axis); either may be NULL. Pair with sl_array_release_ghosts(). */
int sl_array_acquire_ghosts(sl_array *a, void **lo, void **hi);
int sl_array_release_ghosts(sl_array *a);

/** Collective, async. dst = src where the two differ only in distribution: same dims and dtype, both
 *  SL_SCATTER without mask, any distributed axes and local extents (pylops-mpi's redistribute, moving the
 *  distributed axis). One all-to-all of the comm layer; packing and unpacking are tasks. */
int sl_array_redistribute(sl_array *dst, const sl_array *src);

/** Stacked arrays (pylops-mpi's StackedDistributedArray): *out becomes one vector made of the n arrays
 *  parts[0..n) (any dims, distributions and masks; one dtype). The stack takes them: parts[i] become NULL
 *  and sl_array_destroy(out) frees them (destroying a part alone is refused: SL_E_STATE). Fill, copy, scale, axpby, multiply, conj, threshold, random fill,
 *  dot, vdot, sum and norms work part by part (a reduction combines the parts'); so do the solvers. The
 *  host access, gather/scatter, .npy and ghost functions take the parts (sl_array_stack_part). */
int sl_array_stack(sl_array **out, int n, sl_array **parts);
/** Number of parts of a stacked array (0 for a plain array), and part i (NULL when out of range). */
int sl_array_stack_nparts(const sl_array *a);
sl_array *sl_array_stack_part(const sl_array *a, int i);

/** Collective. Writes the array to a NumPy .npy file (C order) through MPI-IO, each rank its block. */
int sl_array_save_npy(sl_array *a, const char *path);
/** Collective. Reads a .npy file (any dtype of starlops, C order, little-endian) into a new array
 *  distributed as dist. A file written on P ranks reads back on any Q. */
int sl_array_load_npy(sl_array **a, const char *path, const sl_dist *dist);

/* ---- scalars living in StarPU handles ----------------------------------------------------------- */
typedef struct sl_scalar sl_scalar;
/** A scalar of dtype dt (the value is stored as a double complex internally). */
int sl_scalar_create(sl_scalar **s, sl_dtype dt);
/** Before sl_finalize: a scalar is released with the session that created it (SL_E_STATE after sl_finalize, or
 *  for a scalar of an earlier session after sl_init again). */
int sl_scalar_destroy(sl_scalar **s);
/** Waits for the tasks writing s, then stores its value in *value as dt (float, double, float complex
 *  or double complex). */
int sl_scalar_get(sl_scalar *s, void *value);
/** Waits, then returns the value as re/im doubles. */
int sl_scalar_get_c(sl_scalar *s, sl_cscalar *value);
sl_dtype sl_scalar_dtype(const sl_scalar *s);
/** s = value (async: a task writes it after the tasks already reading s). */
int sl_scalar_set(sl_scalar *s, sl_cscalar value);
/** Scalar arithmetic on the task graph (a small CPU task): out = a + b, a - b, a b, a / b, sqrt(a) (real
 *  part), 1 / a, |a|. b is ignored (may be NULL) by the unary kinds; out may be a or b. x / 0 gives 0. */
typedef enum { SL_SOP_ADD, SL_SOP_SUB, SL_SOP_MUL, SL_SOP_DIV, SL_SOP_SQRT, SL_SOP_RECIP, SL_SOP_ABS } sl_scalar_opkind;
int sl_scalar_op(sl_scalar *out, sl_scalar_opkind kind, const sl_scalar *a, const sl_scalar *b);

/* ---- vector operations (async; arrays must agree in dims, dtype and distribution) ---------------- */
/** a = value */
int sl_array_fill(sl_array *a, sl_cscalar value);
/** dst = src */
int sl_array_copy(sl_array *dst, const sl_array *src);
/** a = alpha a */
int sl_array_scale(sl_array *a, sl_cscalar alpha);
/** y = alpha x + beta y */
int sl_array_axpby(sl_array *y, sl_cscalar alpha, const sl_array *x, sl_cscalar beta);
/** z = x .* y (element-wise; z may be x or y) */
int sl_array_multiply(sl_array *z, const sl_array *x, const sl_array *y);
/** dst = conj(src) (dst may be src; a copy for real dtypes) */
int sl_array_conj(sl_array *dst, const sl_array *src);

/** y = (alpha sa) x + (beta sb) y with sa, sb scalars computed on the task graph (NULL: 1), so a reduction
 *  feeds the update without a host round trip; x and y differ; y is read. */
int sl_array_axpby_s(sl_array *y, sl_cscalar alpha, const sl_scalar *sa, const sl_array *x, sl_cscalar beta,
                     const sl_scalar *sb);
/** Thresholding kinds (pylops' ISTA/FISTA): soft x max(|x| - t, 0) / |x|; hard x where |x| > sqrt(2 t),
 *  else 0; half the half-thresholding of Xu et al. (0 where |x| <= 54^(1/3) / 4 t^(2/3)). */
typedef enum { SL_THRESH_SOFT = 0, SL_THRESH_HARD = 1, SL_THRESH_HALF = 2 } sl_thresh;
/** dst = threshold(src) element-wise at level thresh >= 0 (complex: on the modulus, phase kept; dst may be
 *  src). */
int sl_array_threshold(sl_array *dst, const sl_array *src, sl_thresh kind, double thresh);
/** Fills a with uniform values in [-1, 1) (both parts for complex) from seed and the block's place in its
 *  group, so replicas agree: tasks (CPU or CUDA) whose values depend only on seed, the place and the
 *  element's position, not on the worker or the chunking. Asynchronous; for a replicated array (SL_BROADCAST
 *  or a mask) collective, the seed agreed over the ranks. */
int sl_array_fill_random(sl_array *a, unsigned seed);

/* Reductions (collective, async): the result lands in s, whose dtype becomes the result's dtype.
 * Scatter arrays reduce over their mask group; broadcast arrays reduce locally. */
/** s = sum_i x_i y_i */
int sl_array_dot(const sl_array *x, const sl_array *y, sl_scalar *s);
/** s = sum_i conj(x_i) y_i */
int sl_array_vdot(const sl_array *x, const sl_array *y, sl_scalar *s);
/** s = sum_i x_i */
int sl_array_sum(const sl_array *x, sl_scalar *s);
/** s = ||x||_ord (real): ord = 2 (Euclidean), 1, any p > 0, INFINITY (max |x_i|), -INFINITY (min |x_i|),
 *  0 (number of non-zeros). */
int sl_array_norm(const sl_array *x, double ord, sl_scalar *s);

/* ---- tracing (docs/tracing.md) ------------------------------------------------------------------ */
/** With tracing on (STARLOPS_TRACE or sl_options.trace_dir) in region mode (trace_region or
 *  STARLOPS_TRACE_REGION=1): waits for the submitted tasks, then starts recording. A no-op otherwise (the
 *  whole run is recorded, or nothing). */
int sl_trace_begin(void);
/** In region mode: waits for the submitted tasks, then stops recording. A no-op otherwise. */
int sl_trace_end(void);
/** Puts a user event with this text in the trace (no-op when tracing is off). */
int sl_trace_event(const char *text);

/* ---- linear operators (docs/operators.md) ------------------------------------------------------ */
typedef struct sl_op sl_op;
typedef enum { SL_FORWARD = 0, SL_ADJOINT = 1 } sl_op_mode;

/** Submits y = op x (SL_FORWARD) or y = op^H x (SL_ADJOINT) and returns. x must be laid out like the
 *  operator's domain (its range for SL_ADJOINT), y like its range (domain); x and y must differ. */
int sl_op_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y);
/** A new array laid out like the operator's domain (model) or range (data). */
int sl_op_create_domain(const sl_op *op, sl_array **x);
int sl_op_create_range(const sl_op *op, sl_array **y);
/** Global sizes of the range (rows) and domain (columns), dtype and a short name ("Diagonal", "A + B"). */
int64_t sl_op_nrows(const sl_op *op);
int64_t sl_op_ncols(const sl_op *op);
sl_dtype sl_op_dtype(const sl_op *op);
const char *sl_op_name(const sl_op *op);
/** The layouts of the domain and range (dims, dtype, distribution, chunking; no storage), owned by the
 *  operator: pass them as `like` arguments or to sl_array_create_like. NULL for a NULL operator. */
const sl_array *sl_op_domain(const sl_op *op);
const sl_array *sl_op_range(const sl_op *op);
/** Drops the caller's reference; operators built from this one keep theirs. */
int sl_op_destroy(sl_op **op);
/** A solve keeps its work vectors on the operator it solves with, so the next solve on it allocates
 *  nothing (at most 8 per side, laid out like the domain or range); this frees them now (sl_op_destroy
 *  also does). On a rank without a CUDA worker their blocks go to the host allocation cache, for the next
 *  allocations of their size, until its cap pushes them out or sl_finalize (STARLOPS_HOST_CACHE_MB=0: back
 *  to the system at once; docs/arrays.md). Not collective. */
int sl_op_free_workspace(sl_op *op);

/* Elementary operators: domain and range are laid out like the given arrays (dims, dtype, distribution;
 * the arrays are not kept). Communication: none. */
/** y = x */
int sl_op_identity(sl_op **op, const sl_array *like);
/** y = 0 (domain like domain_like, range like range_like; same dtype) */
int sl_op_zero(sl_op **op, const sl_array *domain_like, const sl_array *range_like);
/** Collective. y = d .* x; adjoint conj(d) .* x (d is copied; NaN or Inf in d: SL_E_NUMERIC on every rank) */
int sl_op_diagonal(sl_op **op, const sl_array *d);
/** Collective. pylops' Diagonal(diag, dims, axis): y[..., i, ...] = d[i] x[..., i, ...] with i the index
 *  along `axis` of an array laid out like `like` (any axis, distributed or not); adjoint conj(d). d is a
 *  host buffer of dims[axis] values of like's dtype, the same on every rank (checked), finite; it is
 *  copied. */
int sl_op_diagonal_axis(sl_op **op, const sl_array *like, const void *d, int axis);

/** Collective. Restriction: y = x[idx] with idx this rank's n flat indices (C order) into its local block of
 *  like (SL_SCATTER, no mask); the range is 1-D (sum of n), n elements on this rank; adjoint: zeros with
 *  x[idx] += y (repeated indices accumulate). Out-of-range indices fail on every rank. No communication. */
int sl_op_restriction(sl_op **op, const sl_array *like, const int64_t *idx, int64_t n);
/** Collective. pylops' Restriction(dims, iava, axis): y keeps the n planes iava[0..n) (global indices along
 *  `axis`, the same on every rank) of arrays laid out like `like` (SL_SCATTER without a mask, or
 *  SL_BROADCAST); the range is like with dims[axis] = n, distributed as like (along the restricted axis each
 *  rank keeps the planes inside its block, so iava must then be increasing; on another axis any order and
 *  repeats are accepted). Adjoint: zeros with the planes added back (repeats accumulate). No communication. */
int sl_op_restriction_axis(sl_op **op, const sl_array *like, const int64_t *iava, int64_t n, int axis);
/** Collective. pylops' Roll (numpy.roll): y[..., k, ...] = x[..., (k - shift) mod n, ...] along `axis` of arrays
 *  laid out like `like`; adjoint the roll back. Along the distributed axis the two slabs that change places
 *  move between ranks (redistributions); along another axis it is a local permutation. */
int sl_op_roll(sl_op **op, const sl_array *like, int axis, int64_t shift);
/** Collective. A sparse CSR block per rank (block diagonal, like sl_op_matrix with nrhs = 1): rowptr
 *  (nrows + 1 entries, from 0), colind and vals (rowptr[nrows] entries each, 64-bit indices, values of dt)
 *  are copied; y_r = A_r x_r, adjoint x_r = A_r^H y_r. CPU row loop, cuSPARSE SpMV on a GPU. */
int sl_op_csr(sl_op **op, int64_t nrows, int64_t ncols, const int64_t *rowptr, const int64_t *colind,
              const void *vals, sl_dtype dt);
/** Collective. Several dense blocks per rank, block diagonal (pylops-mpi's MPIBlockDiag of a list of
 *  MatrixMult on each rank): this rank's nblocks blocks A[b] (row-major nrows[b] x ncols[b], dtype dt,
 *  copied; a rank may give none) act on consecutive parts of its block of x; stored as one CSR block (sl_op_csr's
 *  layouts: domain sum of the ranks' ncols, range sum of their nrows). No communication. */
int sl_op_matrix_blocks(sl_op **op, int nblocks, const void *const *A, const int64_t *nrows, const int64_t *ncols, sl_dtype dt);
/** Collective. Fredholm1: d[k] = G[k] m[k] for every slice k (G[k] nx x ny, m[k] ny x nz, d[k] nx x nz),
 *  adjoint m[k] = G[k]^H d[k]. The slices are distributed along axis 0: this rank holds nsl of them (G: its
 *  nsl x nx x ny block, C order, copied); nx, ny and nz must agree across ranks. Domain (sum nsl, ny, nz),
 *  range (sum nsl, nx, nz). Batched gemm (CBLAS loop, cuBLAS strided batched); no communication. */
int sl_op_fredholm1(sl_op **op, const void *G, int64_t nsl, int64_t nx, int64_t ny, int64_t nz, sl_dtype dt);
/** Collective. MatrixMult with a dense block per rank: y_r = A_r x_r, adjoint x_r = A_r^H y_r, where A_r
 *  (row-major nrows x ncols, dtype dt, copied) is this rank's block; a rank may give 0 x 0. The domain is
 *  (sum of ncols, nrhs) and the range (sum of nrows, nrhs), distributed along axis 0 with this rank's
 *  extents ncols and nrows (1-D when nrhs = 1). Local gemv/gemm (CBLAS, cuBLAS); no communication. */
int sl_op_matrix(sl_op **op, const void *A, int64_t nrows, int64_t ncols, int64_t nrhs, sl_dtype dt);
/** Collective. VStack of dense blocks: y_r = A_r x with x replicated (domain (ncols, nrhs), SL_BROADCAST;
 *  ncols the same on every rank), y scattered (sum of nrows); adjoint x = sum_r A_r^H y_r, one allreduce. */
int sl_op_vstack_matrix(sl_op **op, const void *A, int64_t nrows, int64_t ncols, int64_t nrhs, sl_dtype dt);
/** Collective. HStack of dense blocks: y = sum_r A_r x_r with y replicated (range (nrows, nrhs),
 *  SL_BROADCAST; nrows the same on every rank), x scattered; one allreduce forward; adjoint x_r = A_r^H y. */
int sl_op_hstack_matrix(sl_op **op, const void *A, int64_t nrows, int64_t ncols, int64_t nrhs, sl_dtype dt);

/* Finite-difference stencils along any axis of an N-D array (the distributed one included), with pylops'
 * definitions (docs/operators.md). Domain and range are laid out like `like` (not kept). On the distributed
 * axis, the two boundary planes on each side move between neighbours through the comm layer (as tasks);
 * the interior is computed meanwhile. The adjoint is the exact transpose. */
typedef enum { SL_DERIV_FORWARD = 0, SL_DERIV_BACKWARD = 1, SL_DERIV_CENTERED = 2 } sl_deriv_kind;
/** Collective. First derivative along axis with sampling d: forward (x[i+1] - x[i]) / d, backward
 *  (x[i] - x[i-1]) / d, centered of order 3 or 5; edge (centered only): one-sided differences at the ends. */
int sl_op_first_derivative(sl_op **op, const sl_array *like, int axis, double sampling, sl_deriv_kind kind, int order,
                           int edge);
/** Collective. Second derivative along axis: forward, backward or centered (x[i+1] - 2 x[i] + x[i-1]) / d^2;
 *  edge (centered only) extends the end rows with one-sided stencils. */
int sl_op_second_derivative(sl_op **op, const sl_array *like, int axis, double sampling, sl_deriv_kind kind, int edge);
/** Collective. Laplacian: sum over the naxes axes (NULL: 0..naxes-1) of weights[i] (NULL: 1) times the second
 *  derivative with sampling[i] (NULL: 1), kind and edge; computed in one fused pass over each block. */
int sl_op_laplacian(sl_op **op, const sl_array *like, int naxes, const int *axes, const double *weights,
                    const double *sampling, sl_deriv_kind kind, int edge);

/** Collective. Distributed MatrixMult by SUMMA: Y = A X, A N x K, X K x M, over a pr x pc process grid
 *  (pr pc = ranks; any factorisation, not only squares; rank r is grid row r / pc, column r % pc). Rank (i, j)
 *  gives A's block: rows-block i of N over pr by columns-block j of K over pc (row-major, copied). The domain
 *  holds X and the range Y, each as a 1-D array of the ranks' blocks in rank order, rank (i, j) holding
 *  X's rows-block i of K over pr by columns-block j of M over pc (row-major) and Y's rows-block i of N by
 *  columns-block j of M (sl_op_summa_block gives the extents). Blocks split as pylops-mpi does (the first
 *  n % p get one more). Forward: per panel of K, A broadcast along grid rows, X along grid columns, a gemm;
 *  adjoint: the same A broadcast, a gemm, an allreduce along grid columns. Panels are pipelined (one set of
 *  buffers each). Adjoint: X = A^H Y. */
int sl_op_matmul_summa(sl_op **op, const void *A, int64_t N, int64_t K, int64_t M, int pr, int pc, sl_dtype dt);
/** Collective. Distributed MatrixMult, "block" kind: Y = A X on a pr x pc grid; rank (i, j) gives A's
 *  rows-block i (of N over pr) with all K columns (row-major, copied). The domain is X as a (K, M) array
 *  split by columns over each grid row and replicated over the grid rows (mask = grid row: rank (i, j)
 *  holds columns-block j of M over pc); the range is Y in 2-D blocks as in sl_op_matmul_summa. Forward: a
 *  local gemm, no communication; adjoint: a local gemm and one allreduce along the grid column. */
int sl_op_matmul_block(sl_op **op, const void *A, int64_t N, int64_t K, int64_t M, int pr, int pc, sl_dtype dt);
/** Rank's blocks in sl_op_matmul_summa's layout: extent = {first row and rows of A/Y (of N), first column
 *  and columns of A (of K), first row and rows of X (of K), first column and columns of X/Y (of M)}. */
int sl_op_summa_block(int64_t N, int64_t K, int64_t M, int pr, int pc, int rank, int64_t extent[8]);

/** Collective. Redistribution as an operator: y = x moved from the layout of from_like to that of to_like
 *  (as sl_array_redistribute); the adjoint moves it back. */
int sl_op_redistribute(sl_op **op, const sl_array *from_like, const sl_array *to_like);

/** Collective. pylops' NonStationaryConvolve1D along `axis` of arrays laid out like `like`: nfilt filters of
 *  hsize samples (odd, centred on the middle one) in hs (nfilt x hsize values of like's dtype, the same on
 *  every rank, finite), placed at the regularly spaced indices ih (increasing, 0 <= ih < dims[axis]); the
 *  filter of sample k is the linear interpolation of the two nearest given ones (the first or last beyond
 *  them). Forward
 *  y[k] = sum_s h_(k-s)[s + hsize/2] x[k - s]; the adjoint uses the conjugate filters (pylops' rmatvec does
 *  not conjugate complex filters). axis must not be the one `like` is distributed along (each line is local:
 *  one task per rank, no communication); any other axis, any dtype. */
int sl_op_nonstationary_convolve1d(sl_op **op, const sl_array *like, const void *hs, int64_t nfilt, int64_t hsize,
                                   const int64_t *ih, int axis);

/** Tapers of Sliding1D (pylops' tapertype): none, hanning, cosine, cosinesquare. */
typedef enum { SL_TAPER_NONE = 0, SL_TAPER_HANNING = 1, SL_TAPER_COSINE = 2, SL_TAPER_COSINESQUARE = 3 } sl_taper;
/** Collective. pylops' Sliding1D with one dense matrix M (nwin x nm, row-major, like's dtype, the same on every
 *  rank) for every window, along `axis` of the data laid out like `like`: windows of nwin samples start every
 *  nwin - nover samples (as many as fit: samples past the last window are not covered), window w's data are
 *  taper_w * (M m_w), added where windows overlap; the first window's taper keeps its start, the last's its
 *  end (pylops' tapers). The model is the data's layout with `axis` replaced by (nwins, nm); the adjoint is
 *  the true adjoint (M^H, tapers, windows gathered). Along an axis that is not the distributed one the
 *  windows are local and the model is distributed as the data. Along the distributed axis, when it is the
 *  first axis (or the axes before it have length 1), each rank owns the windows that start in its rows, so
 *  the model is split by the windows' starts (create it with sl_op_create_domain); the windows reaching into
 *  the next ranks' rows travel as ghost layers through neighbour exchanges. Along a distributed axis that is
 *  not the first, the windows are local in the data's layout moved along the longest other axis (the model
 *  is distributed that way) and every forward apply ends with the move back (one all-to-all; the adjoint
 *  starts with one).
 *  M = NULL (with nm = nwin) is the identity: the model holds the windows themselves, and the operator adds
 *  them, tapered, into the data. Composed after any operator whose range is laid out like its domain
 *  (sl_op_product(&S, W, Op), e.g. Op the adjoint of sl_op_fft along axis + 1 of sl_op_domain(W)) it is
 *  pylops' Sliding1D of that operator (one operator for all the windows, batched along the windows' axis). */
int sl_op_sliding1d(sl_op **op, const sl_array *like, int axis, const void *M, int64_t nm, int64_t nwin, int64_t nover,
                    sl_taper taper);
/** Collective. pylops' Patch2D with a separable operator on every patch: patches of nwin0 x nwin1 samples
 *  starting every (nwin0 - nover0, nwin1 - nover1) over axes[0] and axes[1] of the data laid out like `like`
 *  (either may be the distributed axis: see sl_op_sliding1d for the model's split along the first axis, and
 *  the move along another axis otherwise), the operator on each patch the Kronecker product of M0 (nwin0 x nop0)
 *  and M1 (nwin1 x nop1) (row-major, like's dtype, the same on every rank: a 2-D FFT's two 1-D transforms,
 *  for instance), the tapers pylops' 2-D tapers (the outer product of the 1-D ones; an edge patch keeps its
 *  edge; with a taper, nover at most nwin / 2 on each axis). The model is the data's layout with axes[0]
 *  replaced by (nwins0, nop0) and axes[1] by (nwins1, nop1), distributed as the data (pylops orders the
 *  model's patch axes (nwins0, nwins1, nop0, nop1)). pylops' Sliding2D with a separable operator is the case
 *  nwin1 = the length of axes[1], nover1 = 0 (one window along it). Built as two Sliding1D operators. */
int sl_op_patch2d(sl_op **op, const sl_array *like, const int axes[2], const void *M0, int64_t nop0, int64_t nwin0,
                  int64_t nover0, const void *M1, int64_t nop1, int64_t nwin1, int64_t nover1, sl_taper taper);
/** Collective. pylops' Patch2D with any operator on a patch, given as the dense matrix M ((nwin0 nwin1) x (nop0
 *  nop1), row-major, like's dtype, the same on every rank: row q0 nwin1 + q1 is the patch sample (q0 along
 *  axes[0], q1 along axes[1]), column j0 nop1 + j1 the patch's model coefficient), for non-separable operators
 *  (a Radon transform, a dictionary): patches, tapers and the model's layout as sl_op_patch2d (with M =
 *  kron(M0, M1) both give the same operator). A patch axis may be the distributed axis: when it is the first
 *  axis of the array (and the first patch axis) the model is split by the patches' starts along it and ghost
 *  patches and rows travel between neighbours, as for sl_op_sliding1d; otherwise the patches are local in
 *  the data's layout moved along another axis, followed by the move back. Away from it every patch is
 *  local.
 *  M = NULL (with nop0 = nwin0, nop1 = nwin1) is the identity: the model holds the patches themselves, and
 *  composed after any operator whose range is laid out like its domain (a 2-D sl_op_fft over the two nop
 *  axes of sl_op_domain(W), adjoint) it is pylops' Patch2D of that operator. */
int sl_op_patch2d_dense(sl_op **op, const sl_array *like, const int axes[2], const void *M, int64_t nop0, int64_t nop1,
                        int64_t nwin0, int64_t nover0, int64_t nwin1, int64_t nover1, sl_taper taper);

/** Normalisation of the FFT (pylops' norm): 1/sqrt(N) both ways (default), none, or 1/N both ways (N the
 *  product of the transformed lengths); the adjoint is always the true adjoint. */
typedef enum { SL_FFT_ORTHO = 0, SL_FFT_NONE = 1, SL_FFT_ONE_OVER_N = 2 } sl_fft_norm;
/** Collective. Distributed FFT over the naxes axes (NULL: the last naxes) of arrays laid out like `like`
 *  (SL_SCATTER along any axis, no mask): forward the DFT sum x exp(-2 pi i k n / N) along each axis, with
 *  norm; adjoint its adjoint. Axes other than the distributed one are transformed locally; the distributed
 *  axis through an all-to-all to another axis and, when out_axis is -1 (the range distributed like the
 *  domain), one back. out_axis >= 0 distributes the range along that axis (one all-to-all saved).
 *  real = 1: `like` is float32/float64 and the last of axes (not the distributed one) is transformed
 *  real-to-complex into n/2 + 1 bins (complex range), the bins 1 .. (n-1)/2 multiplied by sqrt(2) as in
 *  pylops (so that the adjoint is the complex-to-real transform of the bins divided by sqrt(2)). FFTW on the
 *  CPU, cuFFT on a GPU. */
int sl_op_fft(sl_op **op, const sl_array *like, int naxes, const int *axes, sl_fft_norm norm, int real, int out_axis);

/** Collective. sl_op_fft with pylops' FFT options, per transformed axis (axes NULL: the last naxes; each array
 *  argument NULL: none): nfft[i] samples (the input zero-padded, or truncated to its first nfft[i], along
 *  axis i before the transform, as numpy's fft(x, n=nfft); norm divides by the padded length),
 *  ifftshift_before[i] (numpy's ifftshift of the input along axis i) and fftshift_after[i] (fftshift of the
 *  output; not on the real-to-complex axis). The domain is laid out like `like`, the range like the FFT of
 *  the padded array (distributed as `like`). A product of rolls, restrictions along the axes (and their
 *  adjoints for the padding), redistributions where the padded axis is the distributed one, and sl_op_fft. */
int sl_op_fft_nfft(sl_op **op, const sl_array *like, int naxes, const int *axes, const int64_t *nfft, sl_fft_norm norm,
                   int real, const int *ifftshift_before, const int *fftshift_after);

/** Collective. MDC, multidimensional convolution (pylops' MDC, twosided = 0): for a real model m (nt, nr,
 *  nv) and data d (nt, ns, nv), both split along their second axis, d = F^H R^T Fredholm1(c G) R F m with F
 *  the real FFT along time (sl_op_fft, ortho), R keeping the first nfmax <= nt/2 + 1 frequencies and
 *  c = dt dr sqrt(nt). G (nfmax, ns, nr; complex64/complex128 for dt float32/float64) is split along
 *  frequency: this rank gives its nfl consecutive slices (C order, copied; the ranks' nfl add up to nfmax,
 *  rank order). The FFTs are distributed too: one all-to-all to the frequency split and one back. When G
 *  is the FFT of a real kernel g along time (unnormalised, nfmax = nt/2 + 1), d is c times the circular
 *  convolution of g and m in time, summed over receivers. */
int sl_op_mdc(sl_op **op, const void *G, int64_t nfl, int64_t nfmax, int64_t ns, int64_t nr, int64_t nt, int64_t nv, double dt,
              double dr, sl_dtype dtype);

/** Collective. sl_op_mdc with pylops' twosided = True: the model's time axis holds negative and positive
 *  times (zero time at index nt / 2; nt usually 2 nt0 - 1), ifftshifted along time before its FFT
 *  (sl_op_fft_nfft), so d = F^H R^T Fredholm1(c G) R F ifftshift_t(m); the data keep positive times. */
int sl_op_mdc_twosided(sl_op **op, const void *G, int64_t nfl, int64_t nfmax, int64_t ns, int64_t nr, int64_t nt, int64_t nv,
                       double dt, double dr, sl_dtype dtype);

/** How Halo fills the halo cells beyond the global edges: zeros, the other end of the axis, or the planes
 *  inside the edge mirrored (pylops-mpi's REFLECT: halo plane j beyond the edge holds plane j inside it, the
 *  edge plane repeated). */
typedef enum { SL_HALO_ZERO = 0, SL_HALO_PERIODIC = 1, SL_HALO_REFLECT = 2 } sl_halo_boundary;
/** How Halo cuts an axis of n cells over g ranks: SL_HALO_SPLIT_EVEN gives the first n % g blocks one cell
 *  more than n / g (41 over 4: 11, 10, 10, 10; the split of starlops' arrays and of pylops-mpi's
 *  DistributedArray); SL_HALO_SPLIT_CEIL is pylops-mpi 0.8's MPIHalo split, ceil(n / g) cells per block and
 *  the rest in the last (41 over 4: 11, 11, 11, 8). */
typedef enum { SL_HALO_SPLIT_EVEN = 0, SL_HALO_SPLIT_CEIL = 1 } sl_halo_split;
/** Collective. Halo on a Cartesian process grid (pylops-mpi's MPIHalo): the global N-D array dims[0..ndim)
 *  is cut into blocks over a grid[0] x ... grid[ndim-1] process grid (rank r has C-order grid coordinates,
 *  the last fastest; blocks split with SL_HALO_SPLIT_EVEN: sl_op_halo_block; sl_op_halo_split takes the
 *  split). The domain is a 1-D array of the
 *  ranks' blocks (C order) in rank order; the range the same with each block extended by halo[2k] planes
 *  before and halo[2k+1] after along every axis k, filled from the neighbouring blocks (edge and corner
 *  cells included), and beyond the global edges with zeros (SL_HALO_ZERO), from the other end
 *  (SL_HALO_PERIODIC) or mirrored (SL_HALO_REFLECT). The adjoint is the true adjoint: halo values are summed back into the blocks that
 *  own them. Every block must own cells and be at least as thick as the halo (an unsplit axis with zero
 *  boundary excepted). */
int sl_op_halo(sl_op **op, int ndim, const int64_t dims[], const int grid[], const int halo[], sl_halo_boundary bnd,
               sl_dtype dt);
/** Collective. sl_op_halo with the blocks split as `split` says (SL_HALO_SPLIT_CEIL: as pylops-mpi 0.8's
 *  MPIHalo; every block must still own cells, so for example 9 cells over 6 ranks is refused). */
int sl_op_halo_split(sl_op **op, int ndim, const int64_t dims[], const int grid[], const int halo[], sl_halo_boundary bnd,
                     sl_halo_split split, sl_dtype dt);
/** Rank's block in Halo's layout (SL_HALO_SPLIT_EVEN): first global index and extent along every axis. */
int sl_op_halo_block(int ndim, const int64_t dims[], const int grid[], int rank, int64_t first[], int64_t count[]);
/** Rank's block in Halo's layout with the given split. */
int sl_op_halo_block_split(int ndim, const int64_t dims[], const int grid[], sl_halo_split split, int rank, int64_t first[],
                           int64_t count[]);

/* Stacked operators over any operators (their parts keep a reference); the stacked side is a stacked
 * array (sl_array_stack) whose parts are laid out like the parts' domains or ranges. Each part
 * communicates as it does alone; the sums are local. */
/** VStack: y_i = A_i x (one domain shared by every A_i), adjoint x = sum_i A_i^H y_i; range stacked. */
int sl_op_vstack(sl_op **out, int n, sl_op **ops);
/** HStack: y = sum_i A_i x_i (one range shared), adjoint x_i = A_i^H y; domain stacked. */
int sl_op_hstack(sl_op **out, int n, sl_op **ops);
/** BlockDiag: y_i = A_i x_i, adjoint x_i = A_i^H y_i; domain and range stacked. */
int sl_op_block_diag(sl_op **out, int n, sl_op **ops);
/** Collective. Gradient: the VStack of the first derivatives (kind, order 3 when centered, edge) along every
 *  axis of arrays laid out like `like`, with sampling[a] (NULL: 1); its adjoint is minus the divergence. */
int sl_op_gradient(sl_op **out, const sl_array *like, const double *sampling, sl_deriv_kind kind, int edge);
/** Collective. pylops' FirstDirectionalDerivative: y = sum_k v_k dx/da_k (the Gradient's derivatives: kind,
 *  order 3 when centered, edge, sampling[k]) along one direction v (ndim values, the same on every rank;
 *  vfield NULL) or a direction per point (vfield: ndim arrays laid out like `like`; v NULL). like has 2 or
 *  more axes. */
int sl_op_first_directional_derivative(sl_op **out, const sl_array *like, const double *v, sl_array *const *vfield,
                                       const double *sampling, sl_deriv_kind kind, int edge);
/** Collective. pylops' SecondDirectionalDerivative: -D^H D with D the centered first directional derivative
 *  above (v or vfield, sampling, edge). */
int sl_op_second_directional_derivative(sl_op **out, const sl_array *like, const double *v, sl_array *const *vfield,
                                        const double *sampling, int edge);

/* Algebra (local calls). The result holds references to its parts; a temporary (one array per
 * intermediate) is allocated at the first apply and kept, so later applies allocate nothing. The parts must agree in dtype; the layouts must match
 * (sum: same domain and same range; product: a's domain = b's range). */
/** a + b, a - b */
int sl_op_sum(sl_op **out, sl_op *a, sl_op *b);
int sl_op_diff(sl_op **out, sl_op *a, sl_op *b);
/** a b (b applies first) */
int sl_op_product(sl_op **out, sl_op *a, sl_op *b);
/** s a (s finite; complex for complex operators; its imaginary part must be 0 for real ones) */
int sl_op_scaled(sl_op **out, sl_op *a, sl_cscalar s);
/** a^H, a^T = conj(a^H), conj(a) */
int sl_op_adjoint(sl_op **out, sl_op *a);
int sl_op_transpose(sl_op **out, sl_op *a);
int sl_op_conj(sl_op **out, sl_op *a);
/** The largest k of sl_op_power (a power is a chain of k products, applied k deep) */
#define SL_OP_POWER_MAX 1024
/** a^k for a square operator (domain laid out like the range), 0 <= k <= SL_OP_POWER_MAX (a^0 = identity;
 *  a^1 = a itself, another reference) */
int sl_op_power(sl_op **out, sl_op *a, int k);

/** Dot test: random u (domain) and v (range) from seed; *err = |v^H (A u) - (A^H v)^H u| / max of their
 *  moduli (real parts only when one side is real and the other complex). Collective; waits. Round-off gives about 1e-15 in float64/complex128, 1e-6 in float32. */
int sl_dottest(sl_op *op, unsigned seed, double *err);

/* ---- proximal operators (docs/proximal.md) ------------------------------------------------------- */
/** A proper convex function f with its proximal operator prox_(tau f)(x) = argmin_z f(z) + ||z - x||^2 / (2 tau),
 *  the proximal operator of its convex conjugate f*, its value and, where f is smooth, its gradient; each
 *  applies element-wise (or per group, or through an operator) as tasks on arrays of any layout, the
 *  layout of the arrays it is given. The constructors are collective: their numbers must agree across
 *  ranks (checked). Every apply takes x and y laid out alike; y may be x (in place). */
typedef struct sl_prox sl_prox;
/** f(x) = sigma ||x||_1 (complex: the sum of moduli); prox: soft thresholding at tau sigma; sigma >= 0. */
int sl_prox_l1(sl_prox **p, double sigma);
/** f(x) = sigma / 2 ||Op x - b||^2 with Op an operator (NULL: the identity) and b laid out like its range
 *  (NULL: zero; copied). With an operator the prox solves (I + tau sigma Op^H Op) z = x + tau sigma Op^H b
 *  by CG (cg_niter iterations at most, warm-started from x; pyproximal's L2 does the same with 10);
 *  without one it is (x + tau sigma b) / (1 + tau sigma). Smooth: gradient sigma Op^H (Op x - b). A NaN or
 *  an Inf in b is refused here (SL_E_NUMERIC; one reduction), as are an allocation failing on any rank and,
 *  with an operator, cg_niter outside [1, INT_MAX / 4). */
int sl_prox_l2(sl_prox **p, sl_op *Op, const sl_array *b, double sigma, int cg_niter);
/** f(x) = sigma sum_j ||x_j||_2 over the groups of a stacked array x (sl_array_stack): group j holds element
 *  j of every part (pyproximal's L21 on a Gradient's range, the isotropic total variation); prox: each
 *  group shrunk by max(1 - tau sigma / ||x_j||, 0). Plain arrays are refused. */
int sl_prox_l21(sl_prox **p, double sigma);
/** Collective. L21 along `axis` of plain arrays laid out like `like`: f(x) = sigma sum over the other indices
 *  of the 2-norm of the line along axis (pyproximal's L21 on an array of ndim lines). Built as L21 on V x
 *  with V the stack of the planes along the axis (a permutation): one task per plane each way, meant for
 *  short axes. When axis is the distributed one (its lines span ranks), V starts with a redistribution along
 *  the longest other axis (two all-to-alls per prox); an array with a mask (replicas) along it is refused
 *  then (SL_E_DIST). A 1-D array is one line: f is sigma times its 2-norm, distributed or not. */
int sl_prox_l21_axis(sl_prox **p, const sl_array *like, int axis, double sigma);
/** The indicator of the box lower <= x <= upper (0 inside, +Inf outside; complex: the real and imaginary
 *  parts each); prox: clipping. lower <= upper; either may be infinite. */
int sl_prox_box(sl_prox **p, double lower, double upper);
/** g(x) = f(a x + b) for real a != 0 and b (pyproximal's precomposition):
 *  prox_(tau g)(x) = (prox_(a^2 tau f)(a x + b) - b) / a. g keeps a reference to f. */
int sl_prox_precompose(sl_prox **g, sl_prox *f, double a, double b);
/** g(x) = a f(x) + b with a > 0 (postcomposition): prox_(tau g) = prox_(a tau f). */
int sl_prox_postcompose(sl_prox **g, sl_prox *f, double a, double b);
/** Collective. y = prox_(tau f)(x), tau > 0 (agreed). Here and in the solvers every rank must pass a
 *  proximal object of the same kind and parameters (agreed through a digest: kind, weights, bounds,
 *  composition factors, inner iterations, its operator's name and shapes); a step that overflows (tau sigma,
 *  a precomposition's a^2 tau, Moreau's 1 / tau) is refused with SL_E_INVALID. */
int sl_prox_apply(sl_prox *p, double tau, const sl_array *x, sl_array *y);
/** Collective. y = prox_(tau f*)(x), the prox of the convex conjugate: a projection for L1 and L21, a closed
 *  form for L2 without an operator, else Moreau's identity x - tau prox_(f / tau)(x / tau). */
int sl_prox_apply_dual(sl_prox *p, double tau, const sl_array *x, sl_array *y);
/** Collective, asynchronous. s = f(x) (real; +Inf for a point outside a Box). */
int sl_prox_value(sl_prox *p, const sl_array *x, sl_scalar *s);
/** Collective. g = grad f(x) for a smooth f (L2 and its compositions); SL_E_INVALID for the others. */
int sl_prox_gradient(sl_prox *p, const sl_array *x, sl_array *g);
/** A short name ("L1", "L2(Op)", "L21", "Box", "precomposed L1"). */
const char *sl_prox_name(const sl_prox *p);
/** Drops the caller's reference (compositions keep theirs). */
int sl_prox_destroy(sl_prox **p);

/* ---- solvers (docs/solvers.md) ------------------------------------------------------------------ */
/** How tol is read. Residual norms are 2-norms: CG and CGLS test r = y - A x (CGLS: its normal-equation
 *  residual A^H r - damp^2 x, as pylops does), ISTA/FISTA the update ||x_k - x_(k-1)||. */
typedef enum {
  SL_TOL_RELATIVE = 0, /**< stop when ||r|| <= tol ||r_0|| (default) */
  SL_TOL_ABSOLUTE = 1, /**< stop when ||r|| <= tol */
  SL_TOL_SQUARED = 2,  /**< stop when ||r||^2 <= tol (pylops' rule for cg and cgls) */
} sl_tol_rule;

/** Why a solver stopped. */
typedef enum {
  SL_STOP_NONE = 0,      /**< not stopped (only while running) */
  SL_STOP_TOL = 1,       /**< the tolerance test passed */
  SL_STOP_NITER = 2,     /**< niter iterations done */
  SL_STOP_CALLBACK = 3,  /**< the callback asked to stop */
  SL_STOP_BREAKDOWN = 4, /**< a zero denominator (exact solution, or an operator that is not SPD for CG) */
  SL_STOP_LSQR_ATOL = 5, /**< LSQR: ||A^H r|| / (||A|| ||r||) <= atol (least-squares solution) */
  SL_STOP_LSQR_CONLIM = 6, /**< LSQR: the condition estimate reached conlim */
  SL_STOP_LSQR_EPS = 7,  /**< LSQR: a test reached machine precision */
  SL_STOP_NONFINITE = 8, /**< a residual, norm or coefficient became NaN or Inf (the solve returns
                              SL_E_NUMERIC; info.iterations is the iteration that first saw it) */
} sl_stop_reason;

/** Name of a stop reason ("tolerance reached"). */
const char *sl_stop_reason_name(sl_stop_reason r);

/** Called after iteration iter (1-based) with the current iterate; return nonzero to stop. Reading x on
 *  the host (sl_array_acquire) waits for the iteration's tasks. */
typedef int (*sl_solver_callback)(int iter, const sl_array *x, void *user);

/** Acceleration of ProximalGradient (pyproximal's acceleration): none, FISTA's t-sequence
 *  (omega_k = (t_(k-1) - 1) / t_k), or Vandenberghe's omega_k = k / (k + 3). */
typedef enum { SL_ACCEL_NONE = 0, SL_ACCEL_FISTA = 1, SL_ACCEL_VANDENBERGHE = 2 } sl_accel;

/** Options shared by the solvers (sl_solver_options_default() fills the defaults). */
typedef struct {
  int niter;               /**< iterations at most (default 100); 0 returns x0 */
  double tol;              /**< tolerance (default 1e-10); 0 runs niter iterations */
  sl_tol_rule tol_rule;    /**< how tol is read (default SL_TOL_RELATIVE) */
  int check_every;         /**< test convergence (a host wait) every k iterations (default 1) */
  const sl_array *x0;      /**< initial guess laid out like x; NULL: zero */
  int show;                /**< 1: print the iteration table and a summary on rank 0 */
  FILE *out;               /**< where show prints (NULL: stdout) */
  sl_solver_callback callback; /**< called after every iteration when set (each call waits); a nonzero return
                                    stops the solve at the next convergence test (every check_every iterations),
                                    the requests of the ranks combined */
  void *user;              /**< passed to callback */
  double *cost;            /**< if set, niter + 1 entries: the residual norm before iteration 1 and after
                                each iteration (ISTA/FISTA: the cost 1/2 ||y - A x||^2 + eps ||x||_1; the
                                proximal solvers: f + epsg g, f(x) + g(A x), entry 0 is 0) */
  double damp;             /**< CGLS and LSQR: minimise ||y - A x||^2 + damp^2 ||x||^2; CG: solve
                                (A + damp^2 I) x = y (default 0) */
  double atol, btol, conlim; /**< LSQR: Paige-Saunders' stopping rules (defaults 1e-8, 1e-8, 1e8); tol and
                                  tol_rule are not used by LSQR */
  sl_array *var;           /**< LSQR: if set (laid out like x, plain), receives scipy's calc_var estimate of the
                                diagonal of (A^H A + damp^2 I)^-1 (sum over the iterations of |w_k / rho_k|^2;
                                an underestimate when LSQR stops early, above it when it
                                iterates past the Krylov space's dimension) */
  int pipelined;           /**< CG: pipelined CG (Ghysels-Vanroose), one fused reduction per iteration */
  double eps;              /**< ISTA/FISTA: weight of the sparsity term (default 0.1) */
  sl_thresh thresh;        /**< ISTA/FISTA: thresholding kind (default SL_THRESH_SOFT) */
  double alpha;            /**< ISTA/FISTA: step; 0: 1 / (largest eigenvalue of A^H A) by power iteration */
  int power_niter;         /**< ISTA/FISTA: power iterations for the step (default 30) */
  double perc;             /**< ISTA/FISTA: 0 (default) thresholds from eps; in (0, 100]: percentile thresholding
                                (pylops' perc): every value with |x| at or below the p-th percentile of |x| over
                                the array becomes 0 (soft: thresholding at that percentile; hard and half: their
                                cut placed there), p = 100 - decay[k-1] (100 - perc); one host wait and about
                                64 small allreduces per iteration; x plain */
  const double *decay;     /**< ISTA/FISTA: if set, niter factors (finite, >= 0, the same on every rank): iteration
                                k thresholds at decay[k-1] eps alpha / 2 (pylops' decay) */
  double tau;              /**< proximal solvers: the primal step (0: from a power iteration, see each solver;
                                ADMM: 1) */
  double mu;               /**< PrimalDual: the dual step (0: 0.95 / ||A||, with tau 0.95 / ||A|| too) */
  double theta;            /**< PrimalDual: the extrapolation weight (default 1) */
  double gamma;            /**< PrimalDual: > 0 for Chambolle-Pock's accelerated steps when f is gamma-strongly
                                convex (theta_k = 1 / sqrt(1 + 2 gamma tau_k), tau_(k+1) = theta_k tau_k,
                                mu_(k+1) = mu_k / theta_k); 0: constant steps (default) */
  int gfirst;              /**< PrimalDual: update the dual variable first (default 1, as pyproximal) */
  double epsg;             /**< ProximalGradient: the weight of g (default 1) */
  sl_accel accel;          /**< ProximalGradient: SL_ACCEL_NONE (default), SL_ACCEL_FISTA or SL_ACCEL_VANDENBERGHE */
  int inner_niter;         /**< ADMM: CG iterations of each x-update (default 10); ProximalGradient with
                                backtrack: tries per iteration at most */
  int backtrack;           /**< ProximalGradient: pyproximal's backtracking (tau from options.tau, else 1, times beta
                                until f(x) <= f(z) + Re<grad f(z), x - z> + ||x - z||^2 / (2 tau)); host waits
                                per try */
  double beta;             /**< ProximalGradient: the backtracking factor (default 0.5) */
} sl_solver_options;

/** What a solver returns beside x. */
typedef struct {
  int iterations;          /**< iterations done */
  sl_stop_reason stop;     /**< why it stopped */
  double r0norm;           /**< the residual norm the relative rule divides by (||r_0||; ISTA/FISTA: 0) */
  double rnorm;            /**< final residual norm (CG ||y - A x||, CGLS/LSQR ||y - A x||, ISTA/FISTA the
                                last update norm) */
  double r2norm;           /**< CGLS/LSQR: sqrt(||y - A x||^2 + damp^2 ||x||^2) */
  double anorm, acond, arnorm, xnorm; /**< LSQR: estimates of ||A||, cond(A), ||A^H r||, ||x|| */
  double alpha;            /**< ISTA/FISTA: the step used */
  int host_syncs;          /**< host waits on the iteration's results (convergence tests, callbacks) */
  double seconds;          /**< wall time of the solve */
} sl_solver_info;

void sl_solver_options_default(sl_solver_options *o);

/** Collective. Conjugate gradients for A x = y with A Hermitian positive definite (square, domain laid out
 *  like the range); x laid out like the domain, y like the range. Per iteration: one apply, two
 *  reductions (pipelined: one fused reduction), no host wait except the tests. info may be NULL. */
int sl_solve_cg(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info);
/** Collective. CGLS: minimises ||y - A x||^2 + damp^2 ||x||^2 (CG on the normal equations). Per
 *  iteration: one forward and one adjoint apply, two fused reductions. */
int sl_solve_cgls(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info);
/** Collective. LSQR (Paige and Saunders 1982) for the same problem as CGLS, with damping and the atol, btol
 *  and conlim stopping rules of scipy.sparse.linalg.lsqr. Per iteration: one forward and one adjoint
 *  apply, two fused reductions. */
int sl_solve_lsqr(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info);
/** Collective. ISTA for min 1/2 ||y - A x||^2 + eps ||x||_1 (or the hard/half penalties): x = T(x + alpha
 *  A^H (y - A x)) with T thresholding at eps alpha / 2 (pylops' rule); stops when ||x_k - x_(k-1)|| <= tol
 *  (tol_rule applies; relative to ||x_1 - x_0||). */
int sl_solve_ista(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info);
/** Collective. FISTA (Beck and Teboulle): ISTA with Nesterov's momentum. */
int sl_solve_fista(sl_op *A, const sl_array *y, sl_array *x, const sl_solver_options *o, sl_solver_info *info);
/** Collective. Proximal gradient for min f(x) + epsg g(x) with f smooth (sl_prox_gradient: L2 or its
 *  compositions): x_k = prox_(tau epsg g)(z - tau grad f(z)), z the last iterate or its extrapolation
 *  (options.accel). tau 0: 1 / L with L the Lipschitz constant of grad f (sigma ||Op||^2 by power
 *  iteration). x is laid out as f and g expect; stops when ||x_k - x_(k-1)|| <= tol (tol_rule), the cost
 *  f(x) + epsg g(x) recorded when options.show or options.cost asks for it. */
int sl_solve_proximal_gradient(sl_prox *f, sl_prox *g, sl_array *x, const sl_solver_options *o, sl_solver_info *info);
/* (with options.backtrack, tau is searched every iteration instead: info.alpha is the last one) */
/** Collective. ADMM with an L2 term (pyproximal's ADMML2): min 1/2 ||Op x - b||^2 + g(A x) with A an operator
 *  (NULL: the identity): x = argmin 1/2 ||Op x - b||^2 + 1/(2 tau) ||A x - z + u||^2 (CG on the normal
 *  equations, inner_niter iterations, warm-started), z = prox_(tau g)(A x + u), u += A x - z. */
int sl_solve_admm_l2(sl_prox *g, sl_op *Op, const sl_array *b, sl_op *A, sl_array *x, const sl_solver_options *o,
                     sl_solver_info *info);
/** Collective. Primal-dual (Chambolle and Pock 2011) for min f(x) + g(A x): x_k = prox_(tau f)(x - tau A^H y),
 *  xhat = x_k + theta (x_k - x_(k-1)), y = prox_(mu g*)(y + mu A xhat) (gfirst: the dual update first).
 *  tau and mu 0: both 0.95 / ||A|| (power iteration on A^H A); options.gamma > 0 takes the accelerated
 *  steps. */
int sl_solve_primal_dual(sl_prox *f, sl_prox *g, sl_op *A, sl_array *x, const sl_solver_options *o,
                         sl_solver_info *info);
/** Collective. Power iteration on a square operator A: *eig is the Rayleigh quotient b^H A b of the last
 *  unit vector b (the largest eigenvalue in modulus for Hermitian A), from a random start (seed); stops
 *  when |eig_k - eig_(k-1)| < tol |eig_(k-1)| or after niter. *iters (may be NULL) gets the iterations. */
int sl_power_iteration(sl_op *A, int niter, double tol, unsigned seed, sl_cscalar *eig, int *iters);

#ifdef __cplusplus
}
#endif
#endif
