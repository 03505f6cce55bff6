/* The stencil kernels on blocks cut into segments that lie apart in memory (as the chunks of an array do
 * when StarPU allocates them on a worker): one element per segment, segments of a few elements, and one
 * segment, against a naive loop over the weights of every row; forward and adjoint, real and complex
 * (two components per element), 3-D and 4-D Laplacians over every axis (mixed kinds), and a 3-D Laplacian of
 * centred second derivatives and a 3-D sum with a five-point first derivative along the first axis (the CUDA
 * kernel for 3-D boxes, which sums several planes per thread: one and two planes either side, rows of 45
 * and 70 columns, over two and three warps with a partial last one). The CUDA kernels, where a GPU is present,
 * on the same segments in float64 and float32, and with the interior launched in slabs of three rows and the
 * 3-D kernel's rows in bands of one row tile, and the 3-D kernel's marching forms. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codelets/kernel_stencil.h"
#include "unit_gpu.h"

/* lap = 1: every axis a centred second derivative without edges (a Laplacian), else mixed kinds and edges
 * (axis a of kind kinds[(a + shift) % 4]) */
static st_plan make_plan(int ndim, const int64_t *dims, int ncomp, int adjoint, int lap, int shift)
{
  st_plan p;
  memset(&p, 0, sizeof p);
  p.ndim = ndim;
  p.ncomp = ncomp;
  p.adjoint = adjoint;
  p.wlo = p.whi = 2;
  for (int d = 0; d < ndim; d++) p.ldims[d] = dims[d];
  int kinds[4] = {ST_D2_C, ST_D1_C5, ST_D1_FWD, ST_D2_BWD};
  for (int a = 0; a < ndim; a++) {
    int64_t stride = 1;
    for (int d = a + 1; d < ndim; d++) stride *= dims[d];
    p.t[p.nterms++] = (st_term){.kind = lap ? ST_D2_C : kinds[(a + shift) % 4], .edge = lap ? 0 : a % 2, .axis = a,
                                .ghosts = 0, .n = dims[a], .off = 0, .nloc = dims[a], .stride = stride,
                                .scale = 1.0 + 0.5 * a};
  }
  st_plan_finish(&p);
  return p;
}

/* y[f] = sum over terms and dr of the row weights times x[f + dr stride], rows inside the block only. */
static void naive(const st_plan *p, const double *x, int64_t n, double *y)
{
  for (int64_t f = 0; f < n; f++)
    for (int c = 0; c < p->ncomp; c++) {
      double acc = 0;
      for (int k = 0; k < p->nterms; k++) {
        const st_term *t = &p->t[k];
        int64_t r = (f / t->stride) % t->nloc;
        double w[5];
        st_coeffs(t, p->adjoint, r, w);
        for (int dr = -2; dr <= 2; dr++)
          if (r + dr >= 0 && r + dr < t->nloc) acc += w[dr + 2] * x[(f + dr * t->stride) * p->ncomp + c];
      }
      y[f * p->ncomp + c] = acc;
    }
}

/* The block cut into segments of seg elements, each in its own allocation, allocated last-first. */
static void cut(const double *x, int64_t n, int ncomp, int64_t seg, st_input *in, double **owned)
{
  memset(in, 0, sizeof *in);
  in->nseg = (int)((n + seg - 1) / seg);
  cr_assert_leq(in->nseg, ST_MAX_SEGS);
  for (int i = in->nseg - 1; i >= 0; i--) {
    in->start[i] = i * seg;
    in->len[i] = in->start[i] + seg > n ? n - in->start[i] : seg;
    owned[i] = malloc(sizeof(double) * (size_t)(in->len[i] * ncomp));
    memcpy(owned[i], x + in->start[i] * ncomp, sizeof(double) * (size_t)(in->len[i] * ncomp));
    in->ptr[i] = owned[i];
  }
}

static void expect_close_tol(const double *a, const double *b, int64_t n, const char *what, double tol)
{
  int bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (fabs(a[i] - b[i]) > tol * fmax(1.0, fabs(b[i])) && bad++ < 3)
      cr_expect(0, "%s [%lld]: %.17g, expected %.17g", what, (long long)i, a[i], b[i]);
}

static void expect_close(const double *a, const double *b, int64_t n, const char *what)
{
  expect_close_tol(a, b, n, what, 1e-12);
}

#ifdef SL_HAVE_CUDA
/* The CUDA kernel on device copies of the same segments (single: as floats, against the double reference
 * within 1e-4: the inputs' and weights' rounding over at most 20 terms): the output range [a, b). */
static void check_cuda(const st_plan *p, const st_input *hin, int64_t a, int64_t b, const double *ref, const char *what,
                       int single)
{
  const size_t es = single ? sizeof(float) : sizeof(double);
  st_input din = *hin;
  void *dptr[ST_MAX_SEGS];
  for (int i = 0; i < hin->nseg; i++) {
    int64_t m = hin->len[i] * p->ncomp;
    const double *src = hin->ptr[i];
    void *h = malloc(es * (size_t)m);
    for (int64_t k = 0; k < m; k++)
      if (single) ((float *)h)[k] = (float)src[k];
      else ((double *)h)[k] = src[k];
    cr_assert_eq(cudaMalloc(&dptr[i], es * (size_t)m), cudaSuccess);
    cr_assert_eq(cudaMemcpy(dptr[i], h, es * (size_t)m, cudaMemcpyHostToDevice), cudaSuccess);
    free(h);
    din.ptr[i] = dptr[i];
  }
  int64_t m = (b - a) * p->ncomp;
  void *dy = NULL, *yh = malloc(es * (size_t)m);
  double *y = malloc(sizeof(double) * (size_t)m);
  cr_assert_eq(cudaMalloc(&dy, es * (size_t)m), cudaSuccess);
  cr_assert_eq(kernel_cuda_stencil(p, single, &din, a, b, dy, NULL), cudaSuccess);
  cr_assert_eq(cudaMemcpy(yh, dy, es * (size_t)m, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int64_t k = 0; k < m; k++) y[k] = single ? (double)((float *)yh)[k] : ((double *)yh)[k];
  expect_close_tol(y, ref + a * p->ncomp, m, what, single ? 1e-4 : 1e-12);
  for (int i = 0; i < hin->nseg; i++) cudaFree(dptr[i]);
  cudaFree(dy);
  free(yh);
  free(y);
}
#endif

Test(stencil_kernel, segments_apart_in_memory_match_a_naive_loop)
{
  /* small blocks (mostly edge rows), then blocks with an interior (the CUDA kernel's fast box) */
  int64_t d3[3] = {5, 4, 7}, d4[4] = {3, 4, 2, 5}, d1[1] = {301}, d2[2] = {37, 53}, e3[3] = {11, 13, 17},
          e4[4] = {9, 9, 10, 11}, l3[3] = {70, 19, 45}, c3[3] = {23, 12, 70};
  const int64_t *dims[8] = {d3, d4, d1, d2, e3, e4, l3, c3};
  int nds[8] = {3, 4, 1, 2, 3, 4, 3, 3};
#ifdef SL_HAVE_CUDA
  int gpu = have_gpu();
#endif
  for (int c = 0; c < 8; c++)
    for (int ncomp = 1; ncomp <= 2; ncomp++)
      for (int adj = 0; adj < 2; adj++) {
        /* c3: a five-point first derivative along axis 0 (two planes either side), rows longer than 64 */
        st_plan p = make_plan(nds[c], dims[c], ncomp, adj, c == 6, c == 7);
        int64_t n = 1;
        for (int d = 0; d < nds[c]; d++) n *= dims[c][d];
        double *x = malloc(sizeof(double) * (size_t)(n * ncomp)), *ref = malloc(sizeof(double) * (size_t)(n * ncomp)),
               *y = malloc(sizeof(double) * (size_t)(n * ncomp));
        for (int64_t i = 0; i < n * ncomp; i++) x[i] = sin(0.37 * (double)i) + 0.1 * (double)(i % 5);
        naive(&p, x, n, ref);
        int64_t segs[4] = {n, 7, 3, n / 3 + 1};
        for (int s = 0; s < 4; s++) {
          if ((n + segs[s] - 1) / segs[s] > ST_MAX_SEGS) continue; /* a task never reads more than ST_MAX_SEGS */
          st_input in;
          double *owned[ST_MAX_SEGS];
          cut(x, n, ncomp, segs[s], &in, owned);
          char what[160];
          snprintf(what, sizeof what, "%d-D, %d component(s), %s, segments of %lld", nds[c], ncomp,
                   adj ? "adjoint" : "forward", (long long)segs[s]);
          /* the whole block, then an output range from inside one segment to inside another */
          cr_expect_eq(kernel_stencil(&p, 0, &in, 0, n, y), 0, "%s", what);
          expect_close(y, ref, n * ncomp, what);
          int64_t a = n / 3 + 1, b = n - 2;
          cr_expect_eq(kernel_stencil(&p, 0, &in, a, b, y), 0, "%s", what);
          expect_close(y, ref + a * ncomp, (b - a) * ncomp, what);
#ifdef SL_HAVE_CUDA
          if (gpu)
            for (int single = 0; single < 2; single++) {
              char w2[200];
              snprintf(w2, sizeof w2, "%s, CUDA %s", what, single ? "float" : "double");
              check_cuda(&p, &in, 0, n, ref, w2, single);
              check_cuda(&p, &in, a, b, ref, w2, single);
              /* one segment's elements: the range of a task, whose taps reach into the segments beside it */
              int mid = in.nseg / 2;
              check_cuda(&p, &in, in.start[mid], in.start[mid] + in.len[mid], ref, w2, single);
              /* the interior in slabs of at most three rows of axis 0, one launch each (as a block of 2^30
               * values or more goes), and the 3-D kernel's rows in bands of one row tile (as large planes go) */
              st_plan ps = p;
              ps.slab = 3;
              ps.band = 1;
              check_cuda(&ps, &in, 0, n, ref, w2, single);
              check_cuda(&ps, &in, a, b, ref, w2, single);
              /* the 3-D kernel's marching forms: 8, 16 and 32 planes a thread, blocks of 8 and 16 rows */
              for (int zm = 8; zm <= 32; zm *= 2)
                for (int zb = 8; zb <= 16; zb *= 2) {
                  st_plan pm = p;
                  pm.zmarch = zm, pm.zby = zb;
                  snprintf(w2, sizeof w2, "%s, CUDA %s, %d planes, %d rows", what, single ? "float" : "double", zm, zb);
                  check_cuda(&pm, &in, 0, n, ref, w2, single);
                  check_cuda(&pm, &in, a, b, ref, w2, single);
                  check_cuda(&pm, &in, in.start[mid], in.start[mid] + in.len[mid], ref, w2, single);
                  pm.slab = 3;
                  check_cuda(&pm, &in, 0, n, ref, w2, single);
                }
            }
#endif
          for (int i = 0; i < in.nseg; i++) free(owned[i]);
        }
        free(x);
        free(ref);
        free(y);
      }
}

Test(stencil_kernel, an_element_in_no_segment_is_reported)
{
  int64_t dims[2] = {6, 5};
  st_plan p = make_plan(2, dims, 1, 0, 0, 0);
  double x[30] = {0}, y[30];
  st_input in;
  double *owned[ST_MAX_SEGS];
  cut(x, 30, 1, 10, &in, owned);
  in.nseg = 2; /* the last ten elements are missing: rows 4 and 5 of axis 0 read them */
  cr_expect_eq(kernel_stencil(&p, 0, &in, 10, 20, y), -1);
  for (int i = 0; i < 3; i++) free(owned[i]);
}
