/* Private declarations shared by the starlops sources. */
#ifndef SL_INTERNAL_H
#define SL_INTERNAL_H

#include <starpu.h>
#include <starpu_mpi.h>
#include "starlops.h"

/* ---- errors (error.c) --------------------------------------------------------------------------- */
/** Records a formatted message for the calling thread and returns code: the library's own calls use the
 *  public sl_error_set (starlops_ext.h) under this name. */
int sl_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define sl_error sl_error_set
int sl_error_mpi(int rc, const char *call, const char *file, int line);
int sl_error_starpu(int rc, const char *call, const char *file, int line);
/** SL_E_STATE: `what` (fn: the call, or NULL when `what` names it) was made before the last sl_finalize, which
 *  released its handles and memory (an object of an earlier session). */
int sl_error_stale(const char *fn, const char *what);
/** Collective over comm: every rank returns the lowest (worst) code and the message of the first rank
 *  holding it, so all ranks report the same error. One allreduce; one bcast only when something failed. */
int sl_agree(MPI_Comm comm, int code);
/** Collective over the starlops communicator: calloc(1, size), the outcome agreed. NULL on every rank, with
 *  *rc the agreed error (fn's "out of memory"), when any rank failed; else the zeroed block, *rc SL_SUCCESS. */
void *sl_calloc_agreed(size_t size, const char *fn, int *rc);
/** A value that must be equal on every rank of a collective call, and its name for errors
 *  ("argument 3 (axis)"); see sl_agree_same. */
typedef enum { SL_SAME_INT = 0, SL_SAME_DOUBLE = 1, SL_SAME_TEXT = 2 } sl_same_kind;
typedef struct {
  const char *name;
  int64_t v;
  sl_same_kind kind;
} sl_same;
#define SL_SAME_I(name, x) ((sl_same){(name), (int64_t)(x), SL_SAME_INT})
/** A double compared by value (-0 equals +0). */
sl_same sl_same_d(const char *name, double x);
/** A text (a path) compared by a 64-bit hash; NULL differs from "". */
sl_same sl_same_s(const char *name, const char *text);
/** Collective over comm, one allreduce: the worst of every rank's local verdict `code` (its message taken
 *  from the rank that raised it), else SL_E_INVALID naming the first of vals[0..n) that is not the same on
 *  every rank (fn names the call). Every rank returns the same code. */
int sl_agree_same(MPI_Comm comm, const char *fn, int code, int n, const sl_same *vals);
/** A 64-bit digest (sl_array_layout_key, sl_op_key, ...) that must be the same on every rank; an error names it
 *  without its values. */
#define SL_SAME_KEY(name, key) ((sl_same){(name), (int64_t)(key), SL_SAME_TEXT})
/** An array argument's layout (dims, dtype, distribution, mask) for SL_AGREE: its digest, 0 where this rank has
 *  already failed (rc) or the array is NULL. Constructors given a `like` agree it before anything collective
 *  depends on it. */
#define SL_SAME_LAYOUT(name, rc, a) SL_SAME_KEY((name), (rc) == SL_SUCCESS && (a) ? sl_array_layout_key(SL_FNV1A_START, (a)) : 0)
/** sl_agree_same over the whole communicator with the values listed: SL_AGREE(fn, rc, SL_SAME_I(...), ...). */
#define SL_AGREE(fn, code, ...)                                                                       \
  sl_agree_same(sl_ctx.comm, (fn), (code), (int)(sizeof((sl_same[]){__VA_ARGS__}) / sizeof(sl_same)), \
                (sl_same[]){__VA_ARGS__})
/** Records the first error raised inside a task; sl_async_error_take() returns it (and clears it) at the
 *  next synchronisation point. */
void sl_async_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sl_async_error_take(void);

#define SL_TRY(call)                                                                                  \
  do {                                                                                                \
    int sl_rc_ = (call);                                                                              \
    if (sl_rc_ != SL_SUCCESS) return sl_rc_;                                                          \
  } while (0)
#define SL_CHECK_MPI(call)                                                                            \
  do {                                                                                                \
    int sl_rc_ = (call);                                                                              \
    if (sl_rc_ != MPI_SUCCESS) return sl_error_mpi(sl_rc_, #call, __FILE__, __LINE__);               \
  } while (0)
#define SL_CHECK_STARPU(call)                                                                         \
  do {                                                                                                \
    int sl_rc_ = (call);                                                                              \
    if (sl_rc_ != 0) return sl_error_starpu(sl_rc_, #call, __FILE__, __LINE__);                      \
  } while (0)
#define SL_CHECK_ARG(cond, code, ...)                                                                 \
  do {                                                                                                \
    if (!(cond)) return sl_error((code), __VA_ARGS__);                                                \
  } while (0)

/* ---- settings (settings.c): every STARLOPS_* variable, read once by sl_init -------------------------- */
enum { SL_WHERE_AUTO, SL_WHERE_ANY, SL_WHERE_CPU, SL_WHERE_CUDA };
typedef struct {
  int where;                 /* STARLOPS_CODELET_WHERE: SL_WHERE_* */
  size_t chunk_bytes;        /* sl_options.chunk_bytes or STARLOPS_CHUNK_BYTES; 0: the default */
  int max_chunks;            /* STARLOPS_MAX_CHUNKS; 0: the default */
  int stencil_no_overlap;    /* STARLOPS_STENCIL_NO_OVERLAP=1 */
  int stencil_generic;       /* STARLOPS_STENCIL_GENERIC=1 */
  int stencil_edge_serial;   /* STARLOPS_STENCIL_EDGE_SERIAL=1 */
  int stencil_zplanes;       /* STARLOPS_STENCIL_ZPLANES (4, 8, 16, 32; 0: four) */
  int stencil_zrows;         /* STARLOPS_STENCIL_ZROWS (8, 16; 0: eight) */
  int no_fuse;               /* STARLOPS_SOLVER_NO_FUSE=1 */
  int nsconv_rows;           /* STARLOPS_NSCONV_ROWS=1 */
  int fftw_estimate;         /* STARLOPS_FFTW_PLANNER=estimate */
  int fft_callbacks;         /* STARLOPS_FFT_CALLBACKS (default 1): cuFFT applies the FFT's weights through callbacks */
  int placement_starpu;      /* STARLOPS_PLACEMENT=starpu: StarPU sizes and binds the rank's threads alone */
  int fft_threads;           /* STARLOPS_FFT_THREADS; 0: the rank's CPU workers for large transforms */
  int task_threads;          /* STARLOPS_TASK_THREADS; 0: the rank's CPU workers for large one-task-per-rank kernels */
  int comm_stage_host;       /* STARLOPS_COMM_STAGE_HOST=1 */
  int comm_tasks;            /* STARLOPS_COMM_TASKS=1: every collective a task (comm_direct.c) */
  int comm_gpu_staging;      /* STARLOPS_COMM_GPU_STAGING=1 */
  int comm_no_shm;           /* STARLOPS_COMM_SHM=0: redistributions through MPI even with every rank on one node */
  int comm_shm_fail_rank;    /* STARLOPS_COMM_SHM_FAIL_RANK (test hook): this rank + 1 makes no segment; 0 none */
  int gather_p2p;            /* STARLOPS_GATHER_P2P=1 (test hook): gather and scatter move each block as one message,
                                as past INT_MAX elements a group (array_gather.c) */
  int comm_spin_set;
  double comm_spin_s;        /* STARLOPS_COMM_SPIN_US, in seconds */
  int cuda_worker_spin;      /* STARLOPS_CUDA_WORKER_SPIN=1: a CUDA worker polls instead of sleeping (unset: 1 where
                                the rank has a CUDA worker, set by sl_host_wait_start) */
  int64_t host_cache_mb;     /* STARLOPS_HOST_CACHE_MB (-1 unset: an eighth of the node's memory, or of the cgroup's
                                limit where lower, over its ranks) */
  double wait_spin_s;        /* STARLOPS_WAIT_SPIN_US, in seconds (0: the main thread sleeps at once; unset: where the
                                compute codelets run on CUDA workers the poll follows the rank's waits, host_wait.c,
                                and this holds its minimum; else 0; set by sl_host_wait_start) */
  int64_t comm_blocking_bytes; /* STARLOPS_COMM_BLOCKING_BYTES: host-MPI collectives from this size block
                                  on their channel's thread; 0 never */
  int64_t comm_ring_bytes;   /* STARLOPS_COMM_RING_BYTES: host-MPI allreduce and reduce-scatter of this size
                                per rank or more run as a ring of point-to-point messages; 0 never */
  int64_t comm_ring_segment_bytes; /* STARLOPS_COMM_RING_SEGMENT_BYTES: the ring's segments (at most 64 per block) */
  int64_t comm_allreduce_blocking_bytes; /* STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES: host-MPI allreduces from this size
                                            and below comm_ring_allreduce_bytes block on their channel's thread; 0 never */
  int64_t comm_ring_allreduce_bytes; /* STARLOPS_COMM_RING_ALLREDUCE_BYTES: the allreduce size from which the ring
                                        takes over from that blocking call */
  char comm[16];             /* STARLOPS_COMM */
  double timeout_s;          /* STARLOPS_TIMEOUT: the watchdog's limit in seconds, 0 off */
} sl_settings;
/** Reads and validates every setting (before StarPU starts). */
int sl_settings_read(const sl_options *o);
/** Placement and chunking from the settings and the workers (after StarPU starts). */
void sl_settings_place(void);

/* ---- host waits (host_wait.c): how the main thread and the CUDA workers wait for short tasks ----- */
/** After StarPU starts: keeps the rank's CUDA workers awake (STARLOPS_CUDA_WORKER_SPIN). */
int sl_host_wait_start(void);
void sl_host_wait_stop(void);

/* ---- host allocation cache (host_cache.c): freed main-memory blocks kept for the next of the same size ---- */
/** After StarPU starts, on a rank without a CUDA worker and with one NUMA memory node: StarPU's main-memory
 *  allocations through the cache's hooks, up to cap_mb MiB kept (-1: an eighth of the node's memory, or of the
 *  cgroup's limit where lower, over its ranks; 0: off). Sets sl_ctx.host_cache_bytes (0 when not installed). */
void sl_host_cache_start(int64_t cap_mb);
/** After StarPU stops: StarPU's allocator again, every cached block freed. */
void sl_host_cache_stop(void);
/* the hooks themselves (starpu_malloc_hook, starpu_free_hook), the bytes now cached, and the cap (tests) */
int sl_host_cache_malloc(unsigned node, void **A, size_t dim, int flags);
int sl_host_cache_free(unsigned node, void *A, size_t dim, int flags);
size_t sl_host_cache_bytes(void);
void sl_host_cache_set_cap(size_t bytes);
/** starpu_task_wait_for_all, polling first (STARLOPS_WAIT_SPIN_US, or the budget from the rank's recent waits).
 *  Returns StarPU's code. */
int sl_host_wait_tasks(void);
/** starpu_data_acquire (on the main memory), polling first as sl_host_wait_tasks. Returns StarPU's code. */
int sl_host_acquire(starpu_data_handle_t h, enum starpu_data_access_mode mode);
/** Whether the main thread's poll follows the rank's recent waits (STARLOPS_WAIT_SPIN_US unset where the compute
 *  runs on CUDA workers) rather than a fixed budget. */
int sl_host_wait_adapts(void);

/* ---- cores (cores.c): a rank's share of its node, before StarPU starts ----------------------------- */
/** Collective over sl_ctx.comm. Splits the node's cores (and GPUs, when several) between the
 *  communicator's ranks on the node and sets conf's worker counts and bindings, where the user chose none. */
int sl_cores_place(struct starpu_conf *conf, int want_cuda, int ngpus);
/** pthread_create for a thread starlops starts (comm progress and channel threads), named name and on the rank's cores: its
 *  share of the node when sl_cores_place bound its workers, the whole node when the rank has it alone (the
 *  creator's binding when the user chose the binding or StarPU's placement). Returns pthread_create's code. */
int sl_cores_thread_create(pthread_t *th, const char *name, void *(*fn)(void *), void *arg);

/* ---- runtime context (context.c) ---------------------------------------------------------------- */
struct sl_context {
  int initialized;
  int own_mpi;             /* sl_init called MPI_Init_thread */
  MPI_Comm comm;           /* duplicate of the user's communicator, for collectives of the main thread */
  int rank, size;
  int ncpu, ncuda;
  int node_rank, node_ranks; /* this rank among the communicator's ranks on its node */
  size_t host_cache_bytes; /* the host allocation cache's cap on this rank, its hooks installed (0: off; host_cache.c) */
  int core_lo, core_hi;    /* the node's cores [lo, hi) this rank's threads are bound to (-1: StarPU's choice) */
  sl_settings set;
  uint32_t where;          /* the workers compute codelets may run on (STARPU_CPU, STARPU_CUDA or both) */
  size_t chunk_bytes;
  int max_chunks;          /* chunks per local block at most */
  int tracing;
  int shells;      /* a shell operator was made this session (sl_op_shell, collective): applies agree their checks */
  int shell_depth; /* shell callbacks running (nested): inside one, nothing more is agreed (op_shell.c) */
  int trace_region;        /* record only between sl_trace_begin and sl_trace_end */
};
extern struct sl_context sl_ctx;

/** How many times sl_init has started (objects record it: one of an earlier session is refused). */
unsigned sl_session(void);

#define SL_CHECK_INIT()                                                                               \
  do {                                                                                                \
    if (!sl_ctx.initialized) return sl_error(SL_E_STATE, "starlops is not initialised: call sl_init first"); \
  } while (0)

/* ---- dtypes (dtype.c) --------------------------------------------------------------------------- */
int sl_dtype_valid(sl_dtype dt);
/** MPI datatype of one element of dt. */
MPI_Datatype sl_dtype_mpi(sl_dtype dt);
/** The real dtype of the same precision (float32 for complex64). */
sl_dtype sl_dtype_real(sl_dtype dt);
/** The index of the first element of the host buffer (n elements of dt) with a non-finite part, or -1. */
int64_t sl_first_nonfinite(const void *buf, int64_t n, sl_dtype dt);
/** A committed contiguous MPI datatype of elsize bytes (free it with MPI_Type_free). */
int sl_mpi_element_type(size_t elsize, MPI_Datatype *el);
/** A committed MPI datatype of n contiguous elements of elsize bytes, for any n >= 0 (MPI counts are int):
 *  pieces of at most `piece` elements (sl_mpi_run_type: 2^30), so one of it moves a block past 2^31 - 1. */
int sl_mpi_run_type_pieces(int64_t n, size_t elsize, int64_t piece, MPI_Datatype *t);
int sl_mpi_run_type(int64_t n, size_t elsize, MPI_Datatype *t);

/* ---- mask groups (group.c) ---------------------------------------------------------------------- */
/** A sub-communicator of ranks sharing a mask value; created once per distinct mask, shared by arrays. */
typedef struct sl_group {
  MPI_Comm comm;           /* for the main thread */
  struct comm_channel *channel; /* the comm layer's channel on this group (collectives inside tasks) */
  int rank, size;
  int *members;            /* world ranks of the group, in group-rank order */
  int *mask;               /* the mask it was made from (NULL: the whole communicator) */
  struct sl_group *next;
} sl_group;
/** Collective. Returns the shared group for mask (NULL: the whole communicator). The mask must already
 *  be agreed across ranks. */
int sl_group_get(const int *mask, sl_group **g);
void sl_group_free_all(void);

/* ---- watchdog (watchdog.c) ---- */
/** Starts the watchdog when seconds > 0 (STARLOPS_TIMEOUT); sl_watch_stop ends it. */
int sl_watch_start(double seconds);
void sl_watch_stop(void);
/** The main thread enters / leaves a blocking wait named `what` (nested calls keep the outer name). */
void sl_watch_begin(const char *what);
void sl_watch_end(void);
/** The timeout in seconds (0: off), a monotonic clock, and the abort with its message. */
double sl_watch_limit(void);
double sl_watch_now(void);
void sl_watch_expired(const char *what, double waited);

/** *bytes = elsize x dims[0] x ... x dims[n-1]; SL_E_DIMS (no message) when a dim is negative or the
 *  product overflows int64. */
int sl_size_product(int n, const int64_t *dims, int64_t elsize, int64_t *bytes);

/* ---- arrays (array.c) --------------------------------------------------------------------------- */
struct sl_array {
  int ndim;
  int64_t dims[SL_MAX_DIMS];
  int64_t ldims[SL_MAX_DIMS];
  sl_dtype dtype;
  size_t elsize;
  sl_partition partition;
  int axis;
  sl_group *group;
  int64_t *counts;          /* extent along axis of every rank of the communicator (agreed at creation) */
  int64_t offset;           /* first global index of this rank along axis */
  int64_t nlocal;           /* elements in the local block */
  int64_t outer, inner;     /* products of dims before and after axis */
  void *data;               /* the local block */
  int owns_data;
  unsigned pinned;          /* host blocks pinned by host_alloc (array.c): bit 0 data, bits 1-2 the ghosts */
  starpu_data_handle_t handle;   /* the whole local block (NULL when empty) */
  int nchunks;
  starpu_data_handle_t *partials; /* one double-complex reduction partial per chunk */
  int ghost_lo, ghost_hi;
  void *ghost[2];
  starpu_data_handle_t ghost_handle[2];
  int acquired;
  int ghosts_acquired;      /* sl_array_acquire_ghosts holds the ghost buffers */
  int layout_only;          /* a layout (an operator's domain or range): no block, no handles */
  int placed;               /* registered with no host home (temporaries, one-chunk user arrays): where first written */
  starpu_data_handle_t *chunk_h; /* a placed block of several chunks: one home-less handle per chunk (handle NULL) */
  void *stage;              /* a host view of chunk_h's chunks while acquired (array_access.c) */
  int stage_mode;           /* the sl_access of that acquire */
  int device_home;          /* sl_array_wrap_device: 1 + the StarPU memory node of the device buffer (0 otherwise) */
  int nparts;               /* a stacked array (sl_array_stack): its parts, owned; 0 for a plain array */
  int in_stack;             /* a part of a stacked array: the stack destroys it */
  unsigned session;         /* sl_session() at creation: an array of an earlier session lost its handles */
  struct sl_array **parts;
  struct sl_scalar **pscal; /* one reduction result per part (reused; StarPU orders the reuses) */
};
/** The extent and first index of part idx when n is split in parts blocks as pylops-mpi does (the first
 *  n % parts get one more); an array's chunks split its block so. */
static inline int64_t sl_split_count(int64_t n, int parts, int idx) { return n / parts + (idx < n % parts); }
static inline int64_t sl_split_offset(int64_t n, int parts, int idx)
{
  return (int64_t)idx * (n / parts) + (idx < n % parts ? idx : n % parts);
}
/** FNV-1a of n bytes at p, continuing from h (SL_FNV1A_START to start): a digest for agreements. */
#define SL_FNV1A_START 0xcbf29ce484222325ULL
static inline uint64_t sl_fnv1a(uint64_t h, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}
/** h continued with a digest of a's layout (dims, dtype, partition, axis, parts; not its values), for agreements;
 *  a NULL array has its own digest. */
uint64_t sl_array_layout_key(uint64_t h, const sl_array *a);
/** A digest of an operator for agreements: its name, dtype and the layouts of its domain and range (0 for NULL). */
uint64_t sl_op_key(const sl_op *op);
/** SL_E_STATE naming `an` (fn: the call) when op was made before the last sl_finalize; NULL passes. */
int sl_op_check_session(const char *fn, const sl_op *op, const char *an);
/** Refuses a stacked array where only plain ones work. */
#define SL_CHECK_PLAIN(fn, a)                                                                         \
  SL_CHECK_ARG(!(a) || (a)->nparts == 0, SL_E_INVALID, "%s: a stacked array is not accepted here (use its parts: sl_array_stack_part)", fn)
/** What an array made by sl_array_clone holds. */
enum sl_storage {
  SL_STORE_LAYOUT = 0, /**< a layout: dims, dtype, distribution, chunking; no block, no handles */
  SL_STORE_HOST = 1,   /**< a zeroed host block (sl_array_create) */
  SL_STORE_TEMP = 2,   /**< a library temporary: every chunk home-less (StarPU allocates each where its zero fill
                        *   runs, on a GPU from its allocation cache when a block of that size was dropped
                        *   before, and drops it at destruction); host access stages the chunks through one
                        *   buffer */
  SL_STORE_USER = 3,   /**< a user's array (sl_array_create_like): home-less when it is one chunk (host access
                        *   then gets StarPU's own host copy, no staging), else a host block */
};
/** A new array laid out like `like` with the given storage (enum sl_storage). Local: the layout was agreed
 *  when `like` was made; the caller agrees the verdict where it must. */
int sl_array_clone(sl_array **out, const sl_array *like, int storage);
/** Collective, as sl_array_create: a layout only (no block, no handles), for operators' domains and ranges. */
int sl_layout_create(sl_array **a, int ndim, const int64_t dims[], sl_dtype dt, const sl_dist *dist);
/* Collective, agreed: like's layout scattered along another axis, the longest one not in skip[0..nskip) (else the
 * lower of skip[0] and skip[nskip - 1]): where lines along the skipped axes are local, for operators that
 * redistribute to work on them. */
int sl_layout_moved(sl_array **loc, const sl_array *like, const int *skip, int nskip);
int sl_stack_clone(sl_array **a, const sl_array *like, int storage);
void sl_stack_free(sl_array *a);
/** The stacked-array branch of a reduction: s = combination of the parts' reductions (array_stack.c). */
int sl_stack_reduce(int kind, double p, double root_p, const sl_array *x, const sl_array *y, sl_scalar *s, sl_dtype result);
/** Fills dst[0] (outer x width[0] x inner planes before the block along the axis) and dst[1] (after) from
 *  the neighbouring blocks of the scattered array a, zeros beyond the global edges; tasks only. */
int sl_array_ghost_fill(const sl_array *a, const int width[2], const starpu_data_handle_t dst[2]);
/** Chunk c of the local block. */
starpu_data_handle_t sl_array_chunk(const sl_array *a, int c);
/** SL_E_STATE naming `an` (fn: the call, may be NULL when an names it) when a was made before the last
 *  sl_finalize (its handles and group went with that session); NULL passes. */
int sl_array_check_session(const char *fn, const sl_array *a, const char *an);
/** 0 if a and b agree in dims, dtype and distribution; else an error naming arguments an and bn. */
int sl_array_check_same(const sl_array *a, const char *an, const sl_array *b, const char *bn);
/** SL_E_INVALID naming `an` (fn: the call) when a, or one of its parts, is a layout without storage (an
 *  operator's domain or range) where an array's values are read or written. */
int sl_array_check_data(const char *fn, const sl_array *a, const char *an);
/** Quiet twins of sl_array_check_same's tests: the same split of the elements over the ranks (partition,
 *  axis, counts; not the group), and the same layout and chunking (parts, dims, dtype, split, group, chunks:
 *  one array can stand for the other in a task). */
int sl_array_same_split(const sl_array *a, const sl_array *b);
int sl_array_same_layout(const sl_array *a, const sl_array *b);

/* ---- element-wise operations of the proximal layer (array_prox.c); arguments already checked ------- */
/** dst = clip of src (sl_kclip: SL_KCLIP_BOX into [lo, hi] per component, SL_KCLIP_BALL onto |x| <= t);
 *  stacked arrays part by part; dst may be src. */
int sl_array_clip_p(sl_array *dst, const sl_array *src, int kind, double lo, double hi, double t);
/** s = |x|^2 (acc 0) or s += |x|^2 (acc 1), in the real part; plain arrays alike. */
int sl_array_abs2_p(sl_array *s, const sl_array *x, int acc);
/** dst = sl_group_factor(kind, s, t) src for plain arrays alike (dst may be src). */
int sl_array_group_p(sl_array *dst, const sl_array *src, const sl_array *s, int kind, double t);

/** Collective, waits: *out = the perc-th percentile (0..100, numpy's linear interpolation) of |x| over the
 *  array's group (array_percentile.c); SL_E_NUMERIC on every rank when x holds NaN. Plain arrays. */
int sl_array_abs_percentile_p(sl_array *x, double perc, double *out);

/* ---- what the solvers need of an operator beyond the public API (operators/op.c) ----------------- */
/** A work vector laid out like op's domain (side 0) or range (1): one kept from an earlier solve on op,
 *  zeroed, or a new library temporary. Local. */
int sl_op_work_take(sl_op *op, int side, sl_array **a);
/** Gives a work vector back to op for the next solve (kept up to a bound, else destroyed); *a becomes NULL. */
void sl_op_work_give(sl_op *op, int side, sl_array **a);

/** Collective. *lambda = |the largest eigenvalue of A^H A| estimated by niter power iterations (the squared
 *  norm of A: the step rules of ISTA/FISTA, ProximalGradient's L2 and PrimalDual; solvers/power.c). */
int sl_normal_eig(sl_op *A, int niter, double *lambda);
/** The options of a CG solve nested in another algorithm (a prox, an ADMM x-update): niter iterations from
 *  x0, no tolerance, one host wait at the end (solvers/solver.c). */
void sl_inner_cg_options(sl_solver_options *o, int niter, const sl_array *x0);

/* ---- redistribution (array_redistribute.c) ------------------------------------------------------ */
/** A plan moving data laid out like `from` to the layout of `to` (same dims and dtype, SL_SCATTER over the
 *  whole communicator, any axes and local extents); fn names the caller in errors. Not collective. */
typedef struct sl_redist sl_redist;
int sl_redist_create(sl_redist **out, const sl_array *from, const sl_array *to, const char *fn);
/** Collective, made by every rank with its own rc (returned): when comm_shm_wanted(), the receive buffers become
 *  segments of shared memory that the other ranks' packs write straight into (p may be NULL where rc fails).
 *  For plans applied many times (operators); a plan that is not shared keeps MPI. */
int sl_redist_share(sl_redist *p, const sl_array *from, const sl_array *to, int rc);
/** The shared segment laid out as this rank's destination block (every piece lands at its place), or NULL: a
 *  caller that makes it the destination (nd = 1, this handle) saves the unpacks. The plan owns it. */
starpu_data_handle_t sl_redist_block(const sl_redist *p);
/** Collective. Submits the tasks moving the source (its local block as ns handles) to the destination (nd
 *  handles); every element of the destination is written. */
int sl_redist_submit(sl_redist *p, int ns, const starpu_data_handle_t *hs, int nd, const starpu_data_handle_t *hd);
void sl_redist_destroy(sl_redist *p);

/* ---- copies (copy.c) ---------------------------------------------------------------------------- */
/** A vector handle of n elements of el bytes, allocated where first used (NULL when n is 0). */
starpu_data_handle_t sl_buffer(int64_t n, size_t el);
/** Space for at least n elements of el bytes, for tasks that use only its pointer: past 2^32 - 1 elements (StarPU
 *  1.3 counts a vector's elements in 32 bits) it is registered as fewer, larger elements, so its element count
 *  is not n. */
starpu_data_handle_t sl_buffer_space(int64_t n, size_t el);
void sl_copy_rows(void *dst, int64_t dst_stride, const void *src, int64_t src_stride, int64_t rows,
                  int64_t row_len, size_t elsize);

/* ---- a loop over a few threads (parallel.c) ------------------------------------------------------ */
typedef void (*sl_range_fn)(int64_t lo, int64_t hi, void *arg);
/** Runs fn on slices of [0, n) on nt threads (the caller's and nt - 1 helpers of the pool, bound to the other
 *  CPU workers' cores) and returns when all are done; nt <= 1, or a loop already running, runs fn(0, n) on the
 *  caller. */
void sl_parallel_for(int nt, int64_t n, sl_range_fn fn, void *arg);
/** Threads for a CPU task that is a rank's whole block (NonStationaryConvolve1D, MatrixMult, CSR, Sliding1D / Patch2D)
 *  doing about `work` element operations: STARLOPS_TASK_THREADS when set, else the rank's CPU workers from 2^18
 *  operations on (the other workers have nothing of that operator to run meanwhile), else one. */
int sl_task_threads(double work);
/** The rule of both thread settings: forced when it is above 0, else the rank's CPU workers when work >= from,
 *  else one. */
int sl_threads_for(int forced, double work, double from);
/** Inside a slice of sl_parallel_for running on a helper: that helper's work space of at least bytes, kept
 *  between loops (NULL on any other thread, or when it cannot be allocated). */
void *sl_helper_scratch(size_t bytes);
/** Routes FFTW's threaded loops through sl_parallel_for (after fftw_init_threads); stops the helper threads. */
void sl_parallel_init(void);
void sl_parallel_shutdown(void);

/* ---- scalars (scalar.c) ------------------------------------------------------------------------- */
struct sl_scalar {
  double *value;         /* (re, im): a slot of scalar_pool.c, the handle's home */
  unsigned generation;   /* sl_scalar_slots_generation() at creation: an earlier one's slot was freed */
  sl_dtype dtype;
  starpu_data_handle_t handle;
};

/* page-aligned host memory, pinned on ranks with CUDA workers (pinned.c) */
void *sl_pinned_alloc(size_t bytes);
size_t sl_pinned_page(void); /* the system's page size, at least 4 KiB: the blocks' alignment */
void sl_pinned_free(void *p);
/* the scalars' homes (scalar_pool.c): pinned 16-byte slots on ranks with CUDA workers, zeroed when taken */
double *sl_scalar_slot_get(void);
void sl_scalar_slot_put(double *v);
void sl_scalar_slots_free(void);
unsigned sl_scalar_slots_generation(void); /* how many times the slots were freed (sl_finalize) */
/** SL_E_STATE naming `an` (fn: the call) when s was made before the last sl_finalize; NULL passes. */
int sl_scalar_check_session(const char *fn, const sl_scalar *s, const char *an);

/* ---- scalar tasks (scalar_task.c) --------------------------------------------------------------- */
/** A computation on variables of doubles: v[i] is buffer i; arg is the copy given at submission. */
typedef void (*sl_stask_fn)(double *const *v, const void *arg);
/** Submits a CPU task running fn on the n variable handles h with the given access modes (arg, size bytes,
 *  is copied). */
int sl_stask_submit(sl_stask_fn fn, const void *arg, size_t size, int n, const starpu_data_handle_t *h,
                    const enum starpu_data_access_mode *modes);
/** A read-only variable holding (1, 0) pairs: the coefficient of an absent scalar. */
#define SL_ONE_DOUBLES 2
starpu_data_handle_t sl_one_handle(void);
void sl_stask_init(void);
void sl_stask_shutdown(void);
/** y = (alpha ha[ia]) x + (beta hb[ib]) y with ha, hb variables of doubles ((re, im) pairs at offsets ia,
 *  ib; NULL: 1); y is read. Arguments already checked. */
int sl_array_axpby_h(sl_array *y, sl_cscalar alpha, starpu_data_handle_t ha, int ia, const sl_array *x,
                     sl_cscalar beta, starpu_data_handle_t hb, int ib);
/** y1 += hs[i1] x1 and y2 += hs[i2] x2 in one task per chunk ((re, im) pairs of the variable hs); the four
 *  arrays alike, y1 and y2 distinct. Arguments already checked. */
int sl_array_axpy2_h(sl_array *y1, const sl_array *x1, int i1, sl_array *y2, const sl_array *x2, int i2,
                     starpu_data_handle_t hs);
/** y = (alpha ha[ia]) y */
int sl_array_scale_h(sl_array *y, sl_cscalar alpha, starpu_data_handle_t ha, int ia);
/** Squared 2-norms or vdots of several arrays in one collective: s[i] = vdot(x[i], y[i]) (y[i] NULL:
 *  ||x[i]||^2). The arrays must share a group; one allreduce of all results. */
/** sl_array_norm without the agreement (the library's own calls, arguments already valid). */
int sl_array_norm_p(const sl_array *x, double ord, sl_scalar *s);
/** Collective: SL_E_NUMERIC naming argument `an` of call fn when x holds a NaN or an Inf (its 1-norm, one
 *  allreduced reduction and a host wait, carries them; finite values whose sum overflows are refused too); the
 *  verdict agreed on every rank. */
int sl_array_check_finite(const sl_array *x, const char *fn, const char *an);
int sl_array_vdots_fused(int n, const sl_array *const *x, const sl_array *const *y, sl_scalar *const *s);

/* ---- block coordinates in traces (context.c) ----------------------------------------------------- */
/** The Tag of the tasks this thread submits while tracing (tasks.rec): the solver iteration in bits 40-63,
 *  a panel or part index in bits 20-39, the chunk (block) index in bits 0-19. Never used for dependencies. */
extern _Thread_local uint64_t sl_trace_tag;
static inline void sl_trace_block(int64_t panel, int64_t chunk)
{
  sl_trace_tag = (sl_trace_tag & ~((1ULL << 40) - 1)) | ((uint64_t)(panel & 0xFFFFF) << 20) | (uint64_t)(chunk & 0xFFFFF);
}
static inline void sl_trace_iteration(int64_t it)
{
  sl_trace_tag = ((uint64_t)it << 40) | (sl_trace_tag & ((1ULL << 40) - 1));
}

/* ---- tags (tag.c) ------------------------------------------------------------------------------- */
void sl_tag_reset(void);

#endif
