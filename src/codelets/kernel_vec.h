/* Element-wise and reduction kernels on raw local buffers: no StarPU inside, testable alone.
 * Complex values are interleaved (re, im) pairs; scalars are passed as double[2] (re, im).
 * The CPU versions are in kernel_vec.c, the CUDA versions (same semantics) in kernel_vec.cu. */
#ifndef SL_KERNEL_VEC_H
#define SL_KERNEL_VEC_H

#include <math.h>
#include <stdint.h>

#include "starlops.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Reduction kinds. Partial results are double[2]; sums add, MAXABS takes the max, MINABS the min. */
typedef enum {
  SL_RED_DOT,    /* sum x y */
  SL_RED_VDOT,   /* sum conj(x) y */
  SL_RED_SUM,    /* sum x */
  SL_RED_ABSPOW, /* sum |x|^p */
  SL_RED_MAXABS, /* max |x| (0 when empty) */
  SL_RED_MINABS, /* min |x| (+inf when empty) */
  SL_RED_NNZ,    /* number of x != 0 */
} sl_red_kind;

/** The identity of a reduction kind. */
static inline void sl_red_identity(sl_red_kind k, double out[2])
{
  out[0] = k == SL_RED_MINABS ? INFINITY : 0.0;
  out[1] = 0.0;
}

/** acc = acc (op) part. */
static inline void sl_red_combine(sl_red_kind k, double acc[2], const double part[2])
{
  if (k == SL_RED_MAXABS) acc[0] = part[0] > acc[0] ? part[0] : acc[0];
  else if (k == SL_RED_MINABS) acc[0] = part[0] < acc[0] ? part[0] : acc[0];
  else {
    acc[0] += part[0];
    acc[1] += part[1];
  }
}

/** Thresholding kinds (ISTA/FISTA, pylops' definitions): y_i = f(|x_i|) x_i. */
typedef enum { SL_KTHRESH_SOFT = 0, SL_KTHRESH_HARD = 1, SL_KTHRESH_HALF = 2 } sl_kthresh;

#ifdef __CUDACC__
#define SL_HD __host__ __device__
#else
#define SL_HD
#endif
/** The factor f of thresholding at t for a value of modulus m:
 *  soft max(m - t, 0) / m; hard 0 where m <= sqrt(2 t); half (Xu et al.) 2/3 (1 + cos(2 pi / 3 - phi)),
 *  phi = 2/3 arccos(t / 8 (m / 3)^-3/2), 0 where m <= 54^(1/3) / 4 t^(2/3). */
static inline SL_HD double sl_thresh_factor(int kind, double m, double t)
{
  if (kind == SL_KTHRESH_SOFT) return m > t ? (m - t) / m : 0.0;
  if (kind == SL_KTHRESH_HARD) return m <= sqrt(2.0 * t) ? 0.0 : 1.0;
  if (m <= 0.94494243415960074 * pow(t, 2.0 / 3.0)) return 0.0; /* 54^(1/3) / 4 */
  double arg = t / 8.0 * pow(m / 3.0, -1.5);
  arg = arg > 1.0 ? 1.0 : (arg < -1.0 ? -1.0 : arg);
  double phi = 2.0 / 3.0 * acos(arg);
  return 2.0 / 3.0 * (1.0 + cos(2.0 * 3.14159265358979323846 / 3.0 - phi));
}

/** Proximal element kinds: SL_KCLIP_BOX clips each component (real and imaginary parts apart) into
 *  [lo, hi]; SL_KCLIP_BALL projects each element onto the disc |x| <= t (x min(1, t / |x|)). */
typedef enum { SL_KCLIP_BOX = 0, SL_KCLIP_BALL = 1 } sl_kclip;
/** Group factors from the group norm g = sqrt(s): SL_KGROUP_SOFT max(1 - t / g, 0) (0 at g = 0, the prox
 *  of t ||.||_2), SL_KGROUP_BALL min(1, t / g) (1 at g = 0, the projection onto the ball of radius t). */
typedef enum { SL_KGROUP_SOFT = 0, SL_KGROUP_BALL = 1 } sl_kgroup;
static inline SL_HD double sl_group_factor(int kind, double s, double t)
{
  double g = sqrt(s > 0 ? s : 0.0);
  if (kind == SL_KGROUP_SOFT) return g > t ? 1.0 - t / g : 0.0;
  return g > t ? t / g : 1.0;
}
static inline SL_HD double sl_clip1(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

/** c = a b for complex pairs (coefficients read from scalar handles). */
static inline SL_HD void sl_cmul2(const double a[2], const double b[2], double c[2])
{
  double r = a[0] * b[0] - a[1] * b[1], i = a[0] * b[1] + a[1] * b[0];
  c[0] = r;
  c[1] = i;
}

#ifdef __CUDACC__
#define SL_HD __host__ __device__
#else
#define SL_HD
#endif
/** Uniform value in [-1, 1) for real component j of a block filled from key: a counter-based hash
 *  (splitmix64's finaliser), so any chunk, on any worker, CPU or GPU, computes the same values. */
static inline SL_HD double kernel_random_value(uint64_t key, int64_t j)
{
  uint64_t z = key + (uint64_t)(j + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* x = a */
void kernel_fill(sl_dtype dt, int64_t n, void *x, const double a[2]);
/* x[j] = kernel_random_value(key, off + j) for the n elements' real components j */
void kernel_random(sl_dtype dt, int64_t n, void *x, uint64_t key, int64_t off);
/* x = a x */
void kernel_scale(sl_dtype dt, int64_t n, void *x, const double a[2]);
/* y = a x + b y; y is not read when b == 0 */
void kernel_axpby(sl_dtype dt, int64_t n, void *y, const void *x, const double a[2], const double b[2]);
/* z = x .* y (z may alias x or y) */
void kernel_mul(sl_dtype dt, int64_t n, void *z, const void *x, const void *y);
/* y = conj(x) (y may alias x) */
void kernel_conj(sl_dtype dt, int64_t n, void *y, const void *x);
/* y = f(|x|) x, f = sl_thresh_factor(kind, ., t) (y may alias x) */
void kernel_threshold(sl_dtype dt, int64_t n, void *y, const void *x, int kind, double t);
/* y = clip of x (sl_kclip kind: box [lo, hi] per component, or the disc of radius t); y may alias x */
void kernel_clip(sl_dtype dt, int64_t n, void *y, const void *x, int kind, double lo, double hi, double t);
/* s = |x|^2 (acc == 0) or s + |x|^2 (acc == 1), in the real part (imaginary part 0) */
void kernel_abs2(sl_dtype dt, int64_t n, void *s, const void *x, int acc);
/* y = sl_group_factor(kind, re s, t) x (y may alias x) */
void kernel_group(sl_dtype dt, int64_t n, void *y, const void *x, const void *s, int kind, double t);
/* Pipelined CG's vector updates in one pass over v = (r, w, q, z, s, p, x): z = q + beta z, s = w + beta s,
 * p = r + beta p, x = alpha p + x, r = malpha s + r, w = malpha z + w; then, when gamma is not NULL,
 * gamma = ||r||^2 and delta = w^H r of the new r and w */
void kernel_pcg_update(sl_dtype dt, int64_t n, void *const v[7], const double alpha[2], const double malpha[2],
                       const double beta[2], double gamma[2], double delta[2]);
/* out = reduction of x (and y for DOT/VDOT); p is the power for ABSPOW */
void kernel_reduce(sl_dtype dt, sl_red_kind k, int64_t n, const void *x, const void *y, double p, double out[2]);

/** Number of doubles of device scratch kernel_cuda_reduce needs. */
#define SL_CUDA_REDUCE_SCRATCH_DOUBLES (2 * 2048)

#ifdef SL_HAVE_CUDA
/* CUDA versions on device pointers, queued on stream; they return a cudaError_t as int. */
int kernel_cuda_fill(sl_dtype dt, int64_t n, void *x, const double a[2], void *stream);
int kernel_cuda_random(sl_dtype dt, int64_t n, void *x, uint64_t key, int64_t off, void *stream);
int kernel_cuda_scale(sl_dtype dt, int64_t n, void *x, const double a[2], void *stream);
int kernel_cuda_axpby(sl_dtype dt, int64_t n, void *y, const void *x, const double a[2], const double b[2],
                      void *stream);
int kernel_cuda_mul(sl_dtype dt, int64_t n, void *z, const void *x, const void *y, void *stream);
int kernel_cuda_conj(sl_dtype dt, int64_t n, void *y, const void *x, void *stream);
/* y = (a sa) x + (b sb) y with sa, sb device pointers to (re, im) pairs (NULL: a or b alone); y is read */
int kernel_cuda_axpbys(sl_dtype dt, int64_t n, void *y, const void *x, const double a[2], const double b[2],
                       const double *sa, const double *sb, void *stream);
/* x = (a sa) x, sa a device pointer to an (re, im) pair */
int kernel_cuda_scales(sl_dtype dt, int64_t n, void *x, const double a[2], const double *sa, void *stream);
int kernel_cuda_threshold(sl_dtype dt, int64_t n, void *y, const void *x, int kind, double t, void *stream);
int kernel_cuda_clip(sl_dtype dt, int64_t n, void *y, const void *x, int kind, double lo, double hi, double t,
                     void *stream);
int kernel_cuda_abs2(sl_dtype dt, int64_t n, void *s, const void *x, int acc, void *stream);
int kernel_cuda_group(sl_dtype dt, int64_t n, void *y, const void *x, const void *s, int kind, double t, void *stream);
/* out = the reduction of x (and y), then out[0] = out[0]^(1/root_p) (a square root for 2; nothing for root_p 0
 * or 1), on stream; scratch holds SL_CUDA_REDUCE_SCRATCH_DOUBLES */
int kernel_cuda_reduce(sl_dtype dt, sl_red_kind k, int64_t n, const void *x, const void *y, double p, double root_p,
                       double *scratch, double *out, void *stream);
#endif

#ifdef __cplusplus
}
#endif
#endif
