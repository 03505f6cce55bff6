/* CPU element-wise and reduction kernels: kernel_vec_tmpl.h instantiated for the four dtypes. */
#include "kernel_vec.h"

#define R float
#define CPLX 0
#define SFX s
#include "kernel_vec_tmpl.h"
#undef R
#undef CPLX
#undef SFX
#define R double
#define CPLX 0
#define SFX d
#include "kernel_vec_tmpl.h"
#undef R
#undef CPLX
#undef SFX
#define R float
#define CPLX 1
#define SFX c
#include "kernel_vec_tmpl.h"
#undef R
#undef CPLX
#undef SFX
#define R double
#define CPLX 1
#define SFX z
#include "kernel_vec_tmpl.h"

/* Tables indexed by sl_dtype (SL_FLOAT32, SL_FLOAT64, SL_COMPLEX64, SL_COMPLEX128). */
#define SL_TABLE(name) {name##s, name##d, name##c, name##z}

void kernel_fill(sl_dtype dt, int64_t n, void *x, const double a[2])
{
  static void (*const f[])(int64_t, void *, const double *) = SL_TABLE(fill_);
  f[dt](n, x, a);
}

void kernel_random(sl_dtype dt, int64_t n, void *x, uint64_t key, int64_t off)
{
  static void (*const f[])(int64_t, void *, uint64_t, int64_t) = SL_TABLE(random_);
  f[dt](n, x, key, off);
}

void kernel_scale(sl_dtype dt, int64_t n, void *x, const double a[2])
{
  static void (*const f[])(int64_t, void *, const double *) = SL_TABLE(scale_);
  f[dt](n, x, a);
}

void kernel_axpby(sl_dtype dt, int64_t n, void *y, const void *x, const double a[2], const double b[2])
{
  static void (*const f[])(int64_t, void *, const void *, const double *, const double *) = SL_TABLE(axpby_);
  f[dt](n, y, x, a, b);
}

void kernel_mul(sl_dtype dt, int64_t n, void *z, const void *x, const void *y)
{
  static void (*const f[])(int64_t, void *, const void *, const void *) = SL_TABLE(mul_);
  f[dt](n, z, x, y);
}

void kernel_conj(sl_dtype dt, int64_t n, void *y, const void *x)
{
  static void (*const f[])(int64_t, void *, const void *) = SL_TABLE(conj_);
  f[dt](n, y, x);
}

void kernel_threshold(sl_dtype dt, int64_t n, void *y, const void *x, int kind, double t)
{
  static void (*const f[])(int64_t, void *, const void *, int, double) = SL_TABLE(thresh_);
  f[dt](n, y, x, kind, t);
}

void kernel_clip(sl_dtype dt, int64_t n, void *y, const void *x, int kind, double lo, double hi, double t)
{
  static void (*const f[])(int64_t, void *, const void *, int, double, double, double) = SL_TABLE(clip_);
  f[dt](n, y, x, kind, lo, hi, t);
}

void kernel_abs2(sl_dtype dt, int64_t n, void *s, const void *x, int acc)
{
  static void (*const f[])(int64_t, void *, const void *, int) = SL_TABLE(abs2_);
  f[dt](n, s, x, acc);
}

void kernel_group(sl_dtype dt, int64_t n, void *y, const void *x, const void *s, int kind, double t)
{
  static void (*const f[])(int64_t, void *, const void *, const void *, int, double) = SL_TABLE(group_);
  f[dt](n, y, x, s, kind, t);
}

void kernel_pcg_update(sl_dtype dt, int64_t n, void *const v[7], const double alpha[2], const double malpha[2],
                       const double beta[2], double gamma[2], double delta[2])
{
  static void (*const f[])(int64_t, void *const *, const double *, const double *, const double *, double *, double *) =
    SL_TABLE(pcg_);
  f[dt](n, v, alpha, malpha, beta, gamma, delta);
}

void kernel_reduce(sl_dtype dt, sl_red_kind k, int64_t n, const void *x, const void *y, double p, double out[2])
{
  static void (*const f[])(sl_red_kind, int64_t, const void *, const void *, double, double *) =
    SL_TABLE(reduce_);
  f[dt](k, n, x, y, p, out);
}
