/* FFTs over consecutive axes of a contiguous C-order block (outer, dims..., inner): every transform of the
 * block in one task, one multi-dimensional plan for all its axes. CPU: FFTW (guru interface, plans made
 * once per shape under a lock and run with the new-array calls, which are thread-safe; FFTW_MEASURE on
 * scratch arrays unless STARLOPS_FFTW_PLANNER=estimate; a transform of 64 Ki elements or more runs on as
 * many FFTW threads as the rank has CPU workers, or STARLOPS_FFT_THREADS, so one task uses the rank's
 * cores while its other workers sleep); CUDA: cuFFT (plans made once per shape and
 * worker, on the worker's stream; the bin weights applied by cuFFT's own loads or stores through callbacks linked
 * in at plan time, kernel_fft_cb.h, else by a pass of their own). Kinds: complex forward / backward, in place (one buffer) or out of
 * place (two: the input is only read); real-to-complex (n real samples to n/2 + 1 bins) and
 * complex-to-real, along one axis. After the transform (R2C, C2C) or before it (C2R) every bin is
 * multiplied by scale, and for the real kinds the interior bins (1 .. (n-1)/2) by `interior` too; C2R
 * also zeroes the imaginary parts of the bins 0 and n/2 it reads (so that it computes the real part of
 * the sum, the adjoint of R2C, on any input). */
#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/codelets.h"
#include "codelets/kernel_fft.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <cufftXt.h>

#include "codelets/kernel_fft_cb.h"
#endif

static struct starpu_codelet cl_fft_c2c, cl_fft_c2c_oop, cl_fft_r2c, cl_fft_c2r, cl_fft_chunks;

typedef struct fft_args {
  fft_shape s;
  int kind;
  int oop; /* two buffers: in (read), out (written) */
} fft_args;

typedef struct fft_chunk_args {
  codelet_chunks ch; /* first: the chunked codelets' can_execute reads it */
  fft_shape s;
  int kind;
} fft_chunk_args;

/* ---- plan caches ---------------------------------------------------------------------------------- */
typedef struct plan_entry {
  struct plan_entry *next;
  fft_shape s;
  int kind, inplace, worker; /* inplace: bit 0 in place, bit 1 aligned (FFTW) */
  void *plan;      /* fftw_plan / fftwf_plan, or a cufftHandle (as intptr) */
  void *weights;   /* CUDA: the plan's callbacks' fft_cb_info in device memory (NULL: no callback) */
  int device;      /* CUDA: the plan's device */
} plan_entry;

static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
static plan_entry *plans;
static int threads_ready; /* fftw_init_threads succeeded */

static int same_shape(const fft_shape *a, const fft_shape *b)
{
  if (a->dbl != b->dbl || a->rank != b->rank || a->outer != b->outer || a->n != b->n || a->inner != b->inner) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

#ifdef SL_HAVE_CUDA
static int wants_callbacks(const fft_shape *s, int kind);
#endif

/* A CUDA plan (worker >= 0) with callbacks carries its weights: it serves the same weights only; a plain one
 * serves any weights that would not get callbacks (the task applies them in a pass). */
static plan_entry *find_plan(const fft_shape *s, int kind, int inplace, int worker)
{
#ifdef SL_HAVE_CUDA
  int plain = worker >= 0 && !wants_callbacks(s, kind);
#else
  int plain = 0; /* no CUDA plans */
#endif
  for (plan_entry *e = plans; e; e = e->next)
    if (same_shape(&e->s, s) && e->kind == kind && e->inplace == inplace && e->worker == worker &&
        (worker < 0 || (e->weights ? e->s.scale == s->scale && e->s.interior == s->interior : plain)))
      return e;
  return NULL;
}

static plan_entry *add_plan(const fft_shape *s, int kind, int inplace, int worker, void *plan)
{
  plan_entry *e = malloc(sizeof *e);
  if (!e) return NULL;
  *e = (plan_entry){plans, *s, kind, inplace, worker, plan, NULL, -1};
  plans = e;
  return e;
}

/* FFTW threads for a transform of this shape (a function of the shape and the settings, so the plan cache
 * needs no other key). */
static int fftw_threads_for(const fft_shape *s)
{
  return sl_threads_for(sl_ctx.set.fft_threads, (double)(s->outer * s->n * s->inner), (double)(1 << 16));
}

/* The FFTW plan of this shape, made on first use: with FFTW_MEASURE (the default) on scratch arrays of the
 * same size, since measuring overwrites them, or with FFTW_ESTIMATE on the task's own arrays when
 * STARLOPS_FFTW_PLANNER=estimate. Buffers at FFTW's SIMD alignment (StarPU's usually are) get plans that
 * use SIMD; others a plan made with FFTW_UNALIGNED, which runs on any buffer but without SIMD. */
static void *fftw_plan_for(const fft_shape *s, int kind, void *in, void *out)
{
  int aligned = s->dbl ? fftw_alignment_of(in) == 0 && fftw_alignment_of(out) == 0
                       : fftwf_alignment_of(in) == 0 && fftwf_alignment_of(out) == 0;
  int inplace = (in == out) | (aligned << 1); /* the plan's variant: in place, aligned */
  pthread_mutex_lock(&plan_lock);
  plan_entry *e = find_plan(s, kind, inplace, -1);
  void *plan = e ? e->plan : NULL;
  if (!e) {
    int n = (int)s->n, nc = (int)(s->n / 2 + 1), inner = (int)s->inner;
    int ni = kind == FFT_C2R ? nc : n, no = kind == FFT_R2C ? nc : n;
    int measure = !sl_ctx.set.fftw_estimate;
    size_t cel = s->dbl ? 16 : 8, rel = cel / 2;
    size_t isz = (size_t)(s->outer * ni * inner) * (kind == FFT_R2C ? rel : cel);
    size_t osz = (size_t)(s->outer * no * inner) * (kind == FFT_C2R ? rel : cel);
    void *pi = in, *po = out;
    if (measure) {
      pi = s->dbl ? fftw_malloc(isz) : fftwf_malloc(isz);
      po = in == out ? pi : s->dbl ? fftw_malloc(osz) : fftwf_malloc(osz);
      if (!pi || !po) { /* no scratch: estimate on the task's own arrays */
        if (po && po != pi) s->dbl ? fftw_free(po) : fftwf_free(po);
        if (pi) s->dbl ? fftw_free(pi) : fftwf_free(pi);
        measure = 0, pi = in, po = out;
      }
    }
    /* the transformed axes (strides in elements: complex ones, or real ones for the real side) */
    int rank = s->rank;
    fftw_iodim dim[FFT_MAX_RANK];
    fftwf_iodim dimf[FFT_MAX_RANK];
    for (int i = rank - 1, st = inner; i >= 0; st *= (int)s->dims[i], i--) {
      dim[i] = (fftw_iodim){(int)s->dims[i], st, st};
      dimf[i] = (fftwf_iodim){(int)s->dims[i], st, st};
    }
    int nall = rank == 1 ? ni : n, nallo = rank == 1 ? no : n;
    fftw_iodim loops[2] = {{(int)s->outer, nall * inner, nallo * inner}, {inner, 1, 1}};
    fftwf_iodim loopsf[2] = {{(int)s->outer, nall * inner, nallo * inner}, {inner, 1, 1}};
    unsigned flags = (measure ? FFTW_MEASURE : FFTW_ESTIMATE) | (aligned ? 0 : FFTW_UNALIGNED) | (kind == FFT_C2R ? FFTW_DESTROY_INPUT : 0);
    int sign = kind == FFT_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD;
    int nt = threads_ready ? fftw_threads_for(s) : 1;
    if (threads_ready && s->dbl) fftw_plan_with_nthreads(nt);
    else if (threads_ready) fftwf_plan_with_nthreads(nt);
    if (s->dbl) {
      if (kind == FFT_R2C) plan = fftw_plan_guru_dft_r2c(1, dim, 2, loops, pi, po, flags);
      else if (kind == FFT_C2R) plan = fftw_plan_guru_dft_c2r(1, dim, 2, loops, pi, po, flags);
      else plan = fftw_plan_guru_dft(rank, dim, 2, loops, pi, po, sign, flags);
    } else {
      if (kind == FFT_R2C) plan = fftwf_plan_guru_dft_r2c(1, dimf, 2, loopsf, pi, po, flags);
      else if (kind == FFT_C2R) plan = fftwf_plan_guru_dft_c2r(1, dimf, 2, loopsf, pi, po, flags);
      else plan = fftwf_plan_guru_dft(rank, dimf, 2, loopsf, pi, po, sign, flags);
    }
    if (threads_ready && s->dbl) fftw_plan_with_nthreads(1); /* the process's other FFTW users see the default */
    else if (threads_ready) fftwf_plan_with_nthreads(1);
    if (measure) {
      if (po != pi) s->dbl ? fftw_free(po) : fftwf_free(po);
      s->dbl ? fftw_free(pi) : fftwf_free(pi);
    }
    if (plan && !add_plan(s, kind, inplace, -1, plan)) plan = NULL;
  }
  pthread_mutex_unlock(&plan_lock);
  return plan;
}

/* kernel_fft_weights on the transform's threads */
struct weights_job {
  const fft_shape *s;
  void *z;
  int c2r_input;
};
static void weights_range(int64_t lo, int64_t hi, void *p)
{
  const struct weights_job *j = p;
  kernel_fft_weights_range(j->s, j->z, j->c2r_input, lo, hi);
}
static void weights(const fft_shape *s, void *z, int c2r_input)
{
  struct weights_job j = {s, z, c2r_input};
  sl_parallel_for(threads_ready ? fftw_threads_for(s) : 1, kernel_fft_weight_lines(s, c2r_input), weights_range, &j);
}

/* A copy on the transform's threads, every real value multiplied by s's scale (a complex transform's weights
 * are all that scale). */
struct copy_job {
  char *dst;
  const char *src;
  double scale;
  int dbl;
};
static void copy_bytes(const struct copy_job *j, size_t lo, size_t hi)
{
  if (j->scale == 1.0) {
    memcpy(j->dst + lo, j->src + lo, hi - lo);
  } else if (j->dbl) {
    double *d = (double *)(j->dst + lo);
    const double *x = (const double *)(j->src + lo);
    for (size_t i = 0, m = (hi - lo) / 8; i < m; i++) d[i] = x[i] * j->scale;
  } else {
    float *d = (float *)(j->dst + lo);
    const float *x = (const float *)(j->src + lo), f = (float)j->scale;
    for (size_t i = 0, m = (hi - lo) / 4; i < m; i++) d[i] = x[i] * f;
  }
}
static void copy_range(int64_t lo, int64_t hi, void *p) { copy_bytes(p, (size_t)lo * 4096, (size_t)hi * 4096); }
static void copy_threads(const fft_shape *s, void *dst, const void *src, size_t bytes)
{
  struct copy_job j = {dst, src, s->scale, s->dbl};
  int64_t pages = (int64_t)(bytes / 4096);
  sl_parallel_for(threads_ready ? fftw_threads_for(s) : 1, pages, copy_range, &j);
  copy_bytes(&j, (size_t)pages * 4096, bytes);
}

/* The element sizes of a transform's input and output (a real side holds reals). */
static size_t in_el(const fft_shape *s, int kind) { return (s->dbl ? 16u : 8u) / (kind == FFT_R2C ? 2u : 1u); }
static size_t out_el(const fft_shape *s, int kind) { return (s->dbl ? 16u : 8u) / (kind == FFT_C2R ? 2u : 1u); }
static int64_t in_count(const fft_shape *s, int kind) { return s->outer * s->inner * (kind == FFT_C2R ? s->n / 2 + 1 : s->n); }
/* One transform task's work on the CPU: in -> out (the same pointer: in place). A complex transform out of place
 * with a scale other than 1, or of strided lines (inner > 1), first copies its input, scaled, into the output and
 * runs in place there: the scale costs no pass of its own, and FFTW's in-place plans ran faster than its
 * out-of-place ones (2048^2, one core: 40-45 ms against 46-52, the copy 8; strided lines up to 5x). */
static void fft_run_cpu(const fft_shape *s, int kind, void *in, void *out)
{
  int scaled = 0;
  if ((kind == FFT_FORWARD || kind == FFT_BACKWARD) && in != out && (s->scale != 1.0 || s->inner > 1)) {
    copy_threads(s, out, in, (size_t)in_count(s, kind) * in_el(s, kind));
    in = out;
    scaled = 1;
  }
  if (kind == FFT_C2R) weights(s, in, 1);
  void *plan = fftw_plan_for(s, kind, in, out);
  if (!plan) {
    sl_async_error(SL_E_RUNTIME, "FFT: FFTW could not plan a transform of %lld x %lld x %lld", (long long)s->outer,
                   (long long)s->n, (long long)s->inner);
    return;
  }
  if (s->dbl) {
    if (kind == FFT_R2C) fftw_execute_dft_r2c(plan, in, out);
    else if (kind == FFT_C2R) fftw_execute_dft_c2r(plan, in, out);
    else fftw_execute_dft(plan, in, out);
  } else {
    if (kind == FFT_R2C) fftwf_execute_dft_r2c(plan, in, out);
    else if (kind == FFT_C2R) fftwf_execute_dft_c2r(plan, in, out);
    else fftwf_execute_dft(plan, in, out);
  }
  if (kind != FFT_C2R && !scaled) weights(s, out, 0);
}

static void fft_cpu(void *buffers[], void *arg)
{
  const fft_args *a = arg;
  void *in = (void *)STARPU_VECTOR_GET_PTR(buffers[0]);
  fft_run_cpu(&a->s, a->kind, in, a->oop ? (void *)STARPU_VECTOR_GET_PTR(buffers[1]) : in);
}

static size_t scratch_in_bytes(const fft_shape *s, int kind)
{
  return ((size_t)in_count(s, kind) * in_el(s, kind) + 63) / 64 * 64; /* the output part starts SIMD-aligned */
}

/* The chunked task (complex or real-to-complex, out of place): the input's chunks (read), the output's chunks
 * (written), and the scratch space when a side has several. Chunks that lie back to back (a host block's, on the
 * CPU) are used in place; others are packed into the scratch space (the input) or transformed there and copied
 * out (the output). A complex transform of strided lines (inner > 1) runs in place in the output, its input
 * copied there (by fft_run_cpu where the input's chunks lie back to back): FFTW's out-of-place plans of strided
 * lines measured up to 5x slower than the copy and the in-place plan together (2048 x 1024 along the first axis,
 * one core). */
static void fft_chunks_cpu(void *buffers[], void *arg)
{
  const fft_chunk_args *a = arg;
  int nin = a->ch.nin, nout = a->ch.nout;
  size_t iel = in_el(&a->s, a->kind), oel = out_el(&a->s, a->kind);
  char *scr = nin > 1 || nout > 1 ? (char *)STARPU_VECTOR_GET_PTR(buffers[nin + nout]) : NULL;
  char *in = codelet_chunks_flat(buffers, 0, nin, iel), *out = codelet_chunks_flat(buffers, nin, nout, oel);
  int pack_out = !out, strided = a->s.inner > 1 && a->kind != FFT_R2C;
  if (pack_out) out = scr + scratch_in_bytes(&a->s, a->kind);
  if (strided) { /* the input into the output, then in place */
    if (!in) { /* else fft_run_cpu copies it, scaled */
      codelet_chunks_copy(buffers, 0, nin, out, iel, 0);
      in = out;
    }
  } else if (!in) {
    in = scr;
    codelet_chunks_copy(buffers, 0, nin, in, iel, 0);
  }
  fft_run_cpu(&a->s, a->kind, in, out);
  if (pack_out) codelet_chunks_copy(buffers, nin, nout, out, oel, 1);
}

#ifdef SL_HAVE_CUDA
/* cuFFT's LTO callbacks with the symbol's name: cuFFT 12 (CUDA 13) on; older toolkits make plain plans. */
#if defined(CUFFT_VERSION) && CUFFT_VERSION >= 12000
#define FFT_CALLBACKS 1
#else
#define FFT_CALLBACKS 0
#endif

#if FFT_CALLBACKS
/* Callbacks that failed to link once (a cuFFT without NVRTC or nvJitLink) are not tried again in the process. */
static int callbacks_failed;

/* The weights of s, kind (kernel_fft_weights_cuda's) as the callbacks read them; 0 where every weight is 1. */
static int callback_info(const fft_shape *s, int kind, fft_cb_info *w)
{
  int c2r = kind == FFT_C2R;
  if (kernel_fft_weight_lines(s, c2r) == 0) return 0;
  *w = (fft_cb_info){s->scale, s->interior, s->n, s->real ? s->n / 2 + 1 : s->n, s->inner, s->real, c2r};
  return 1;
}
#endif

/* Whether a CUDA plan for s, kind would be made with callbacks (they may still fail to link). */
static int wants_callbacks(const fft_shape *s, int kind)
{
#if FFT_CALLBACKS
  fft_cb_info w;
  return sl_ctx.set.fft_callbacks && !callbacks_failed && callback_info(s, kind, &w);
#else
  (void)s, (void)kind;
  return 0;
#endif
}

/* A new plan in *p: with the weights in a callback (its info copied to *weights, device memory) where the shape has
 * weights, STARLOPS_FFT_CALLBACKS allows it and it links; else without (*weights NULL: the task runs the weights
 * pass). */
static int cufft_make(const fft_shape *s, int kind, cufftHandle *p, void **weights)
{
  int n = (int)s->n, nc = (int)(s->n / 2 + 1), inner = (int)s->inner, rank = s->rank;
  int ni = kind == FFT_C2R ? nc : n, no = kind == FFT_R2C ? nc : n;
  int nn[FFT_MAX_RANK];
  for (int i = 0; i < rank; i++) nn[i] = (int)s->dims[i];
  cufftType t = s->dbl ? (kind == FFT_R2C ? CUFFT_D2Z : kind == FFT_C2R ? CUFFT_Z2D : CUFFT_Z2Z)
                       : (kind == FFT_R2C ? CUFFT_R2C : kind == FFT_C2R ? CUFFT_C2R : CUFFT_C2C);
  /* inner == 1: the lines are the batch; else one call per outer slab, the inner lines as the batch */
  int batch = inner == 1 ? (int)s->outer : inner, idist = inner == 1 ? ni : 1, odist = inner == 1 ? no : 1;
  int *inem = rank == 1 ? &ni : nn, *onem = rank == 1 ? &no : nn;
  *weights = NULL;
#if FFT_CALLBACKS
  fft_cb_info w;
  void *d = NULL;
  if (sl_ctx.set.fft_callbacks && !callbacks_failed && callback_info(s, kind, &w) &&
      cudaMalloc(&d, sizeof w) == cudaSuccess) {
    size_t ws;
    int rc = cufftCreate(p);
    if (rc != CUFFT_SUCCESS) {
      cudaFree(d);
      return rc;
    }
    cufftXtCallbackType ct = kind == FFT_C2R ? (s->dbl ? CUFFT_CB_LD_COMPLEX_DOUBLE : CUFFT_CB_LD_COMPLEX)
                                             : (s->dbl ? CUFFT_CB_ST_COMPLEX_DOUBLE : CUFFT_CB_ST_COMPLEX);
    const char *name = kind == FFT_C2R ? (s->dbl ? FFT_CB_LOAD_Z : FFT_CB_LOAD_C) : (s->dbl ? FFT_CB_STORE_Z : FFT_CB_STORE_C);
    /* the weights on the worker's stream, before any of the plan's kernels */
    rc = cudaMemcpyAsync(d, &w, sizeof w, cudaMemcpyHostToDevice, starpu_cuda_get_local_stream()) == cudaSuccess
           ? CUFFT_SUCCESS : CUFFT_ALLOC_FAILED;
    if (rc == CUFFT_SUCCESS) rc = cufftXtSetJITCallback(*p, name, sl_fft_cb_fatbin, sl_fft_cb_fatbin_size, ct, &d);
    if (rc == CUFFT_SUCCESS) rc = cufftMakePlanMany(*p, rank, nn, inem, inner, idist, onem, inner, odist, t, batch, &ws);
    if (rc == CUFFT_SUCCESS) {
      *weights = d;
      return CUFFT_SUCCESS;
    }
    cufftDestroy(*p);
    cudaFree(d);
    cudaGetLastError(); /* no error left behind for the task's kernels */
    if (rc != CUFFT_ALLOC_FAILED) callbacks_failed = 1; /* the plan did not link: plain plans from now on */
  }
#endif
  return cufftPlanMany(p, rank, nn, inem, inner, idist, onem, inner, odist, t, batch);
}

/* The cuFFT plan of this shape for the calling worker (on its stream); *weighted: its callbacks apply the weights. */
static int cufft_plan_for(const fft_shape *s, int kind, cufftHandle *out, int *weighted)
{
  int worker = starpu_worker_get_id();
  pthread_mutex_lock(&plan_lock);
  plan_entry *e = find_plan(s, kind, 0, worker);
  int rc = CUFFT_SUCCESS;
  if (!e) {
    void *w = NULL;
    rc = cufft_make(s, kind, out, &w);
    int made = rc == CUFFT_SUCCESS;
    if (rc == CUFFT_SUCCESS) rc = cufftSetStream(*out, starpu_cuda_get_local_stream());
    if (rc == CUFFT_SUCCESS && !(e = add_plan(s, kind, 0, worker, (void *)(intptr_t)*out))) rc = CUFFT_ALLOC_FAILED;
    if (e) {
      e->weights = w;
      cudaGetDevice(&e->device);
    } else if (made) {
      cufftDestroy(*out);
      if (w) cudaFree(w);
    }
  }
  if (e) {
    *out = (cufftHandle)(intptr_t)e->plan;
    *weighted = e->weights != NULL;
  }
  pthread_mutex_unlock(&plan_lock);
  return rc;
}

static void fft_run_cuda(const fft_shape *s, int kind, char *in, char *out)
{
  cudaStream_t st = starpu_cuda_get_local_stream();
  cufftHandle plan;
  int weighted = 0, rc = cufft_plan_for(s, kind, &plan, &weighted);
  if (rc == 0 && kind == FFT_C2R && !weighted) rc = kernel_fft_weights_cuda(s, in, 1, st);
  int64_t n = s->n, nc = n / 2 + 1, inner = s->inner;
  int64_t ni = kind == FFT_C2R ? nc : n, no = kind == FFT_R2C ? nc : n;
  size_t isz = in_el(s, kind), osz = out_el(s, kind);
  int64_t slabs = inner == 1 ? 1 : s->outer;
  for (int64_t o = 0; o < slabs && rc == 0; o++) {
    void *i = in + (size_t)(o * ni * inner) * isz, *q = out + (size_t)(o * no * inner) * osz;
    int dir = kind == FFT_BACKWARD ? CUFFT_INVERSE : CUFFT_FORWARD;
    if (s->dbl)
      rc = kind == FFT_R2C ? cufftExecD2Z(plan, i, q) : kind == FFT_C2R ? cufftExecZ2D(plan, i, q) : cufftExecZ2Z(plan, i, q, dir);
    else
      rc = kind == FFT_R2C ? cufftExecR2C(plan, i, q) : kind == FFT_C2R ? cufftExecC2R(plan, i, q) : cufftExecC2C(plan, i, q, dir);
  }
  if (rc == 0 && kind != FFT_C2R && !weighted) rc = kernel_fft_weights_cuda(s, out, 0, st);
  if (rc != 0) sl_async_error(SL_E_RUNTIME, "FFT (CUDA): cuFFT or kernel error %d", rc);
}

static void fft_cuda(void *buffers[], void *arg)
{
  const fft_args *a = arg;
  char *in = (char *)STARPU_VECTOR_GET_PTR(buffers[0]);
  fft_run_cuda(&a->s, a->kind, in, a->oop ? (char *)STARPU_VECTOR_GET_PTR(buffers[1]) : in);
}
#endif

static void fft_init(struct starpu_codelet *cl, const char *name, int nbuffers, enum starpu_data_access_mode m0,
                     enum starpu_data_access_mode m1)
{
  starpu_codelet_init(cl);
  cl->name = name;
  cl->cpu_funcs[0] = fft_cpu;
#ifdef SL_HAVE_CUDA
  cl->cuda_funcs[0] = fft_cuda;
  cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
  cl->where = codelet_where();
  cl->nbuffers = nbuffers;
  cl->modes[0] = m0;
  cl->modes[1] = m1;
}

void codelet_fft_init(void)
{
  if (!threads_ready) /* once per process; on failure FFTW plans run on the calling thread alone */
    threads_ready = fftw_init_threads() && fftwf_init_threads();
  if (threads_ready) sl_parallel_init(); /* FFTW's threads: the pool's, bound to the rank's workers' cores */
  fft_init(&cl_fft_c2c, "sl_fft", 1, STARPU_RW, STARPU_NONE);
  fft_init(&cl_fft_c2c_oop, "sl_fft", 2, STARPU_R, STARPU_W);
  fft_init(&cl_fft_r2c, "sl_fft_r2c", 2, STARPU_R, STARPU_W);
  fft_init(&cl_fft_c2r, "sl_fft_c2r", 2, STARPU_RW, STARPU_W);
  /* the CPUs only: op_fft takes this route on ranks whose compute codelets run on CPUs */
  codelet_chunked_init(&cl_fft_chunks, "sl_fft", fft_chunks_cpu, NULL);
  cl_fft_chunks.where = STARPU_CPU;
}

void codelet_fft_shutdown(void)
{
  pthread_mutex_lock(&plan_lock);
  while (plans) {
    plan_entry *e = plans;
    plans = e->next;
    if (e->worker < 0) {
      if (e->s.dbl) fftw_destroy_plan(e->plan);
      else fftwf_destroy_plan(e->plan);
    }
#ifdef SL_HAVE_CUDA
    else { /* on the plan's device */
      int dev = -1, moved = cudaGetDevice(&dev) == cudaSuccess && dev != e->device && cudaSetDevice(e->device) == cudaSuccess;
      cufftDestroy((cufftHandle)(intptr_t)e->plan);
      if (e->weights) cudaFree(e->weights);
      if (moved) cudaSetDevice(dev);
    }
#endif
    free(e);
  }
  pthread_mutex_unlock(&plan_lock);
}

/* The shape's axes: 1 to FFT_MAX_RANK, one for the real kinds. */
static int check_rank(const fft_shape *s)
{
  if (s->rank < 1 || s->rank > FFT_MAX_RANK || (s->real && s->rank != 1))
    return sl_error(SL_E_INVALID, "FFT: a transform over %d axes (%s)", s->rank, s->real ? "real" : "complex");
  return SL_SUCCESS;
}

/* 5 n log2 n per complex transform, half that for the real kinds. */
static double fft_flops(const fft_shape *s, int kind)
{
  int real = kind == FFT_R2C || kind == FFT_C2R;
  return 5.0 * (double)(s->outer * s->inner) * (double)s->n * log2((double)s->n + 1) * (real ? 0.5 : 1);
}

int codelet_fft_submit(const fft_shape *s, int kind, starpu_data_handle_t in, starpu_data_handle_t out)
{
  if (s->outer * s->n * s->inner == 0) return SL_SUCCESS;
  SL_TRY(check_rank(s));
  fft_args *a = malloc(sizeof *a);
  int real = kind == FFT_R2C || kind == FFT_C2R, two = real || (out && out != in);
  struct starpu_task *t = a ? codelet_task_create(two ? 2 : 1) : NULL;
  if (!t) {
    free(a);
    return sl_error(SL_E_NOMEM, "FFT: out of memory");
  }
  *a = (fft_args){*s, kind, two};
  t->cl = kind == FFT_R2C ? &cl_fft_r2c : kind == FFT_C2R ? &cl_fft_c2r : two ? &cl_fft_c2c_oop : &cl_fft_c2c;
  t->cl_arg = a;
  t->cl_arg_size = sizeof *a;
  t->cl_arg_free = 1;
  t->handles[0] = in;
  if (two) t->handles[1] = out;
  t->flops = fft_flops(s, kind);
  return codelet_task_submit(t);
}

int codelet_fft_submit_chunks(const fft_shape *s, int kind, int nin, const starpu_data_handle_t *in, int nout,
                              const starpu_data_handle_t *out, starpu_data_handle_t scratch)
{
  if (s->outer * s->n * s->inner == 0 || nout == 0) return SL_SUCCESS;
  if (kind != FFT_FORWARD && kind != FFT_BACKWARD && kind != FFT_R2C)
    return sl_error(SL_E_INVALID, "FFT: a chunked transform is complex or real-to-complex");
  SL_TRY(check_rank(s));
  if ((nin > 1 || nout > 1) && !scratch) return sl_error(SL_E_INVALID, "FFT: several chunks and no scratch space");
  fft_chunk_args *a = malloc(sizeof *a);
  if (!a) return sl_error(SL_E_NOMEM, "FFT: out of memory");
  *a = (fft_chunk_args){{nin, nout, 0}, *s, kind};
  return codelet_chunked_submit_work(&cl_fft_chunks, a, sizeof *a, NULL, scratch, 0, in, out, fft_flops(s, kind), "FFT");
}
