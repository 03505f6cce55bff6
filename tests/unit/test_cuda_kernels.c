/* The CUDA kernels against the CPU kernels on the same data, in the four dtypes, with sizes that exercise
 * several blocks and the grid-stride loops. Skipped where no GPU is present. */
#include <complex.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/kernel_vec.h"

#include "unit_gpu.h"
#ifdef SL_HAVE_CUDA

static double tol(sl_dtype dt) { return dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-5 : 1e-13; }

static void *host_data(sl_dtype dt, int64_t n, int seed)
{
  size_t es = sl_dtype_size(dt);
  char *p = malloc((size_t)n * es);
  int64_t nr = n * (sl_dtype_is_complex(dt) ? 2 : 1);
  for (int64_t i = 0; i < nr; i++) {
    double v = (i % 11 == 0 && seed == 3) ? 0.0 : sin(0.001 * (double)i + seed);
    if (dt == SL_FLOAT32 || dt == SL_COMPLEX64) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
  }
  return p;
}

static void *to_device(const void *h, size_t bytes)
{
  void *d = NULL;
  cr_assert_eq(cudaMalloc(&d, bytes), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

static void expect_same(sl_dtype dt, int64_t n, const void *cpu, const void *dev, const char *what)
{
  size_t bytes = (size_t)n * sl_dtype_size(dt);
  char *g = malloc(bytes);
  cr_assert_eq(cudaMemcpy(g, dev, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  int64_t nr = n * (sl_dtype_is_complex(dt) ? 2 : 1), bad = 0;
  for (int64_t i = 0; i < nr; i++) {
    double a, b;
    if (dt == SL_FLOAT32 || dt == SL_COMPLEX64) a = ((const float *)cpu)[i], b = ((float *)g)[i];
    else a = ((const double *)cpu)[i], b = ((double *)g)[i];
    if (fabs(a - b) > tol(dt) * fmax(1, fabs(a)) && bad++ < 3)
      cr_expect(0, "%s %s [%lld]: cpu %g gpu %g", what, sl_dtype_name(dt), (long long)i, a, b);
  }
  free(g);
}

Test(cuda_kernels, match_the_cpu_kernels)
{
  if (!have_gpu()) cr_skip_test("no CUDA device");
  /* the last size: more than four grid strides (the reductions of one vector load four elements at a time) */
  const int64_t sizes[4] = {1, 1000, (1 << 20) + 37, (3 << 20) + 11};
  for (int t = 0; t < SL_NDTYPES; t++)
    for (int k = 0; k < 4; k++) {
      sl_dtype dt = (sl_dtype)t;
      int64_t n = sizes[k];
      size_t bytes = (size_t)n * sl_dtype_size(dt);
      void *x = host_data(dt, n, 1), *y = host_data(dt, n, 2), *z = host_data(dt, n, 3);
      void *dx = to_device(x, bytes), *dy = to_device(y, bytes), *dz = to_device(z, bytes);
      double a[2] = {1.5, -0.25}, b[2] = {0.5, 0.75}, zero[2] = {0, 0};
      kernel_axpby(dt, n, y, x, a, b);
      cr_assert_eq(kernel_cuda_axpby(dt, n, dy, dx, a, b, NULL), cudaSuccess);
      expect_same(dt, n, y, dy, "axpby");
      kernel_axpby(dt, n, z, x, a, zero);
      cr_assert_eq(kernel_cuda_axpby(dt, n, dz, dx, a, zero, NULL), cudaSuccess);
      expect_same(dt, n, z, dz, "axpby beta=0");
      kernel_scale(dt, n, x, b);
      cr_assert_eq(kernel_cuda_scale(dt, n, dx, b, NULL), cudaSuccess);
      expect_same(dt, n, x, dx, "scale");
      kernel_mul(dt, n, z, x, y);
      cr_assert_eq(kernel_cuda_mul(dt, n, dz, dx, dy, NULL), cudaSuccess);
      expect_same(dt, n, z, dz, "mul");
      kernel_conj(dt, n, z, y);
      cr_assert_eq(kernel_cuda_conj(dt, n, dz, dy, NULL), cudaSuccess);
      expect_same(dt, n, z, dz, "conj");
      kernel_fill(dt, n, z, a);
      cr_assert_eq(kernel_cuda_fill(dt, n, dz, a, NULL), cudaSuccess);
      expect_same(dt, n, z, dz, "fill");
      kernel_random(dt, n, z, 0x1234567ULL, 99);
      cr_assert_eq(kernel_cuda_random(dt, n, dz, 0x1234567ULL, 99, NULL), cudaSuccess);
      expect_same(dt, n, z, dz, "random");
      kernel_clip(dt, n, z, x, SL_KCLIP_BOX, -0.3, 0.4, 0);
      cr_assert_eq(kernel_cuda_clip(dt, n, dz, dx, SL_KCLIP_BOX, -0.3, 0.4, 0, NULL), cudaSuccess);
      expect_same(dt, n, z, dz, "clip (box)");
      kernel_clip(dt, n, z, x, SL_KCLIP_BALL, 0, 0, 0.5);
      cr_assert_eq(kernel_cuda_clip(dt, n, dz, dx, SL_KCLIP_BALL, 0, 0, 0.5, NULL), cudaSuccess);
      expect_same(dt, n, z, dz, "clip (ball)");
      kernel_abs2(dt, n, z, x, 0);
      cr_assert_eq(kernel_cuda_abs2(dt, n, dz, dx, 0, NULL), cudaSuccess);
      kernel_abs2(dt, n, z, y, 1);
      cr_assert_eq(kernel_cuda_abs2(dt, n, dz, dy, 1, NULL), cudaSuccess);
      expect_same(dt, n, z, dz, "abs2 (assign, then accumulate)");
      cr_assert_eq(cudaMemcpy(dz, z, bytes, cudaMemcpyHostToDevice), cudaSuccess);
      for (int kind = SL_KGROUP_SOFT; kind <= SL_KGROUP_BALL; kind++) {
        void *w = malloc(bytes), *dw = to_device(w, bytes);
        kernel_group(dt, n, w, x, z, kind, 0.6);
        cr_assert_eq(kernel_cuda_group(dt, n, dw, dx, dz, kind, 0.6, NULL), cudaSuccess);
        expect_same(dt, n, w, dw, kind == SL_KGROUP_SOFT ? "group (soft)" : "group (ball)");
        cudaFree(dw);
        free(w);
      }
      for (int kind = SL_THRESH_SOFT; kind <= SL_THRESH_HALF; kind++) {
        kernel_threshold(dt, n, z, x, kind, 0.2);
        cr_assert_eq(kernel_cuda_threshold(dt, n, dz, dx, kind, 0.2, NULL), cudaSuccess);
        expect_same(dt, n, z, dz, kind == SL_THRESH_SOFT ? "threshold (soft)" : kind == SL_THRESH_HARD ? "threshold (hard)"
                                                                                                      : "threshold (half)");
      }
      { /* the coefficients times device scalars: against the CPU kernels with the products formed here as the
         * CPU codelets form them (complex products of (re, im) pairs; a real dtype takes the real part) */
        double sab[4] = {0.5, -0.2, 1.25, 0.3};
        double *dsab = to_device(sab, sizeof sab);
        double ae[2] = {a[0] * sab[0] - a[1] * sab[1], a[0] * sab[1] + a[1] * sab[0]};
        double be[2] = {b[0] * sab[2] - b[1] * sab[3], b[0] * sab[3] + b[1] * sab[2]};
        memcpy(z, y, bytes);
        cr_assert_eq(cudaMemcpy(dz, y, bytes, cudaMemcpyHostToDevice), cudaSuccess);
        kernel_axpby(dt, n, z, x, ae, be);
        cr_assert_eq(kernel_cuda_axpbys(dt, n, dz, dx, a, b, dsab, dsab + 2, NULL), cudaSuccess);
        expect_same(dt, n, z, dz, "axpbys");
        kernel_axpby(dt, n, z, x, ae, b);
        cr_assert_eq(kernel_cuda_axpbys(dt, n, dz, dx, a, b, dsab, NULL, NULL), cudaSuccess);
        expect_same(dt, n, z, dz, "axpbys (sb NULL)");
        kernel_scale(dt, n, z, be);
        cr_assert_eq(kernel_cuda_scales(dt, n, dz, b, dsab + 2, NULL), cudaSuccess);
        expect_same(dt, n, z, dz, "scales");
        cudaFree(dsab);
      }
      double *scratch, *out;
      cr_assert_eq(cudaMalloc((void **)&scratch, SL_CUDA_REDUCE_SCRATCH_DOUBLES * sizeof(double)), cudaSuccess);
      cr_assert_eq(cudaMalloc((void **)&out, 2 * sizeof(double)), cudaSuccess);
      /* root_p: the p-norms' root taken by the final kernel, or not (0) */
      const struct { sl_red_kind k; double p, root_p; } red[] = {{SL_RED_DOT, 0, 0}, {SL_RED_VDOT, 0, 0}, {SL_RED_SUM, 0, 0},
        {SL_RED_ABSPOW, 1, 1}, {SL_RED_ABSPOW, 2, 0}, {SL_RED_ABSPOW, 2, 2}, {SL_RED_ABSPOW, 2.5, 2.5}, {SL_RED_MAXABS, 0, 0},
        {SL_RED_MINABS, 0, 0}, {SL_RED_NNZ, 0, 0}};
      /* the element-wise steps may round differently (FMA on the GPU): reduce identical inputs */
      cr_assert_eq(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice), cudaSuccess);
      cr_assert_eq(cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice), cudaSuccess);
      for (size_t r = 0; r < sizeof red / sizeof red[0]; r++) {
        double c[2], g[2];
        kernel_reduce(dt, red[r].k, n, x, y, red[r].p, c);
        const double root_p = red[r].root_p;
        if (root_p != 0.0 && root_p != 1.0) c[0] = pow(c[0], 1.0 / root_p);
        cr_assert_eq(kernel_cuda_reduce(dt, red[r].k, n, dx, dy, red[r].p, root_p, scratch, out, NULL), cudaSuccess);
        cr_assert_eq(cudaMemcpy(g, out, sizeof g, cudaMemcpyDeviceToHost), cudaSuccess);
        /* sums in a different order: relative to the size of the sum */
        double scale = fmax(1.0, fabs(c[0]) + fabs(c[1]));
        cr_expect(fabs(c[0] - g[0]) <= 1e-11 * scale && fabs(c[1] - g[1]) <= 1e-11 * scale,
                  "reduce kind %d p %g root %g %s n %lld: cpu %.17g%+.17gi gpu %.17g%+.17gi", red[r].k, red[r].p, root_p,
                  sl_dtype_name(dt), (long long)n, c[0], c[1], g[0], g[1]);
      }
      cudaFree(scratch);
      cudaFree(out);
      cudaFree(dx);
      cudaFree(dy);
      cudaFree(dz);
      free(x);
      free(y);
      free(z);
    }
}
#else
Test(cuda_kernels, match_the_cpu_kernels) { cr_skip_test("built without CUDA"); }
#endif
