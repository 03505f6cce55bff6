/* Sliding1D on 1 to 4 ranks (the last of 4 owning nothing), four dtypes: windows along an axis that is not
 * the distributed one and along the distributed one, each window's data taper * (M m_w) added where windows
 * overlap, against pylops'
 * definition written out here (its _slidingsteps, hanning and cosine tapers, the first window keeping its
 * start and the last its end), with data not fully covered by the windows; forward, adjoint, dot tests, the
 * model's layout, bad input. Patch2D (separable patch operators) the same way on 3-D data, the patch axes
 * in either order around the distributed one. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;
static int P, R;
static int64_t wide; /* when set: the length of the axis beside the windows (test_case) */

/* pylops' hanningtaper / cosinetaper (np.hanning(2 ntap - 1)[:ntap], mirrored; ones between) */
static void pylops_taper(int kind, int64_t nmask, int64_t ntap, double *t)
{
  for (int64_t k = 0; k < nmask; k++) t[k] = 1;
  if (kind == SL_TAPER_NONE) return;
  if (kind == SL_TAPER_HANNING) {
    int64_t M = 2 * ntap - 1;
    for (int64_t k = 0; k < ntap; k++) {
      double h = M == 1 ? 1.0 : 0.5 - 0.5 * cos(2 * M_PI * (double)k / (double)(M - 1));
      t[k] = h;
      t[nmask - 1 - k] = h;
    }
    return;
  }
  if (ntap == 1) ntap = 0;
  double half = (double)(2 * ntap - 2) / 2.0;
  for (int64_t k = 0; k < ntap; k++) {
    double c = 0.5 * (cos(((double)k - half) * M_PI / half) + 1.0);
    if (kind == SL_TAPER_COSINESQUARE) c = c * c;
    t[k] = c;
    t[nmask - 1 - k] = c;
  }
}

static cplx mval(sl_dtype dt, int64_t q, int64_t j)
{
  return sin(0.3 * (double)q + 0.7 * (double)j + 0.2) + (sl_dtype_is_complex(dt) ? I * cos(0.5 * (double)q - 0.4 * (double)j) : 0);
}

/* 1-D tapers of every window along one axis (pylops: edge windows keep their edges) */
static double *window_tapers(int kind, int64_t nwin, int64_t nover, int64_t nwins)
{
  double *tap = malloc(sizeof *tap * (size_t)nwin), *T = malloc(sizeof *T * (size_t)(nwins * nwin));
  pylops_taper(kind, nwin, nover, tap);
  for (int64_t w = 0; w < nwins; w++)
    for (int64_t q = 0; q < nwin; q++) {
      T[w * nwin + q] = tap[q];
      if (w == 0 && q < nover) T[w * nwin + q] = 1;
      if (w == nwins - 1 && q >= nwin - nover) T[w * nwin + q] = 1;
    }
  free(tap);
  return T;
}

/* x = test values (rounded to dt; the same on every rank), returned as complex doubles */
static cplx *model_values(sl_dtype dt, sl_array *x, int64_t nx, int seed)
{
  cplx *xg = malloc(sizeof *xg * (size_t)nx);
  for (int64_t i = 0; i < nx; i++) xg[i] = mc_value(dt, i, seed);
  void *buf = malloc(sl_dtype_size(dt) * (size_t)nx);
  mc_to_dtype(dt, nx, xg, buf);
  mc_from_dtype(dt, nx, buf, xg);
  CHECK_OK(sl_array_scatter(x, -1, buf));
  free(buf);
  return xg;
}

enum { DENSE = 0, WINDOWS = 1, FFT_PER_WINDOW = 2 };

/* data 2-D (n0 x n1) split along dist_axis, windows along the other axis; dist_axis -1: split along axis 0
 * and windows along it too (the model split by the windows' starts, ghost windows and rows between ranks);
 * -2: split along axis 1 and windows along it (not the first axis: the data's layout moved along axis 0).
 * inner: DENSE a dense M per window; WINDOWS M = NULL (the identity: the model holds the windows); FFT_PER_WINDOW
 * the windows' operator composed with the adjoint of an orthonormal FFT along the window axis (complex dtypes),
 * checked against the inverse DFT's matrix written out */
static void test_case(sl_dtype dt, int dist_axis, int64_t nslide, int64_t nwin, int64_t nover, int64_t nm, int kind, int inner)
{
  if (inner != DENSE) nm = nwin;
  int along = dist_axis == -1, moved = dist_axis == -2; /* -2: split along axis 1 and windows along it too */
  if (along) dist_axis = 0;
  if (moved) dist_axis = 1;
  int axis = along ? 0 : moved ? 1 : 1 - dist_axis;
  int64_t dims[2], nother = wide ? wide : along || moved ? 3 : 7;
  dims[1 - axis] = nother;
  dims[axis] = nslide;
  int64_t ln = mc_share(along || moved ? nslide : nother);
  sl_dist d = sl_dist_scatter(dist_axis);
  d.local_n = &ln;
  sl_array *like = NULL;
  CHECK_OK(sl_array_create(&like, 2, dims, dt, &d));
  cplx *Mz = malloc(sizeof *Mz * (size_t)(nwin * nm));
  for (int64_t q = 0; q < nwin; q++)
    for (int64_t j = 0; j < nm; j++)
      Mz[q * nm + j] = inner == DENSE ? mval(dt, q, j)
                       : inner == WINDOWS ? (q == j)
                                          : cexp(2 * M_PI * I * (double)(q * j) / (double)nwin) / sqrt((double)nwin);
  void *M = malloc(sl_dtype_size(dt) * (size_t)(nwin * nm));
  mc_to_dtype(dt, nwin * nm, Mz, M);
  if (inner == DENSE) mc_from_dtype(dt, nwin * nm, M, Mz);
  sl_op *op = NULL;
  CHECK_OK(sl_op_sliding1d(&op, like, axis, inner == DENSE ? M : NULL, nm, nwin, nover, (sl_taper)kind));
  if (op && inner == FFT_PER_WINDOW) { /* any operator per window: the windows' operator after an FFT^H along them */
    sl_op *W = op, *F = NULL, *Fh = NULL;
    int fax = axis + 1;
    op = NULL;
    CHECK_OK(sl_op_fft(&F, sl_op_domain(W), 1, &fax, SL_FFT_ORTHO, 0, -1));
    if (F) CHECK_OK(sl_op_adjoint(&Fh, F));
    if (Fh) CHECK_OK(sl_op_product(&op, W, Fh));
    sl_op_destroy(&F);
    sl_op_destroy(&Fh);
    sl_op_destroy(&W);
  }
  if (!op) {
    sl_array_destroy(&like);
    free(Mz), free(M);
    return;
  }
  /* pylops: starts 0, step, ... while start + nwin <= n; tapers; first/last windows */
  int64_t step = nwin - nover, nwins = (nslide - nwin) / step + 1;
  const int64_t *md = sl_array_dims(sl_op_domain(op));
  CHECK(sl_array_ndim(sl_op_domain(op)) == 3 && md[axis] == nwins && md[axis + 1] == nm, "Sliding1D model layout");
  double *T = window_tapers(kind, nwin, nover, nwins);
  sl_array *x = NULL, *y = NULL, *z = NULL;
  CHECK_OK(sl_op_create_domain(op, &x));
  CHECK_OK(sl_op_create_range(op, &y));
  CHECK_OK(sl_op_create_domain(op, &z));
  int64_t nx = nother * nwins * nm, ny = nother * nslide;
  cplx *xg = model_values(dt, x, nx, 3), *yref = calloc((size_t)ny, sizeof *yref), *zref = calloc((size_t)nx, sizeof *zref);
  /* index helpers: data (a, t) with t the sliding index, model (a, w, j), a the other axis */
#define DIDX(a, t) (axis == 1 ? (a) * nslide + (t) : (t) * nother + (a))
#define MIDX(a, w, j) (axis == 1 ? ((a) * nwins + (w)) * nm + (j) : ((w) * nm + (j)) * nother + (a))
  for (int64_t a = 0; a < nother; a++)
    for (int64_t w = 0; w < nwins; w++)
      for (int64_t q = 0; q < nwin; q++) {
        cplx s = 0;
        for (int64_t j = 0; j < nm; j++) s += Mz[q * nm + j] * xg[MIDX(a, w, j)];
        yref[DIDX(a, w * step + q)] += T[w * nwin + q] * s;
      }
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  char what[96];
  static const char *const inner_name[] = {"", ", the windows", ", FFT^H per window"};
  snprintf(what, sizeof what, "Sliding1D forward (axis %d%s, nwin %lld, nover %lld, taper %d%s)", axis,
           along ? " distributed" : moved ? " distributed, moved" : "",
           (long long)nwin, (long long)nover, kind, inner_name[inner]);
  mc_compare(y, yref, what);
  /* adjoint of y: model (a, w, j) = sum_q conj(M[q][j]) T[w][q] y(a, w step + q) */
  for (int64_t a = 0; a < nother; a++)
    for (int64_t w = 0; w < nwins; w++)
      for (int64_t j = 0; j < nm; j++) {
        cplx s = 0;
        for (int64_t q = 0; q < nwin; q++) s += conj(Mz[q * nm + j]) * T[w * nwin + q] * yref[DIDX(a, w * step + q)];
        zref[MIDX(a, w, j)] = s;
      }
  CHECK_OK(sl_op_apply(op, SL_ADJOINT, y, z));
  snprintf(what, sizeof what, "Sliding1D adjoint (axis %d%s, nwin %lld, nover %lld, taper %d%s)", axis,
           along ? " distributed" : moved ? " distributed, moved" : "",
           (long long)nwin, (long long)nover, kind, inner_name[inner]);
  mc_compare(z, zref, what);
  double err = 1;
  CHECK_OK(sl_dottest(op, 4, &err));
  CHECK(err < (dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-5 : 1e-13), "Sliding1D%s dot test %s: %.3g", inner_name[inner],
        sl_dtype_name(dt), err);
#undef DIDX
#undef MIDX
  sl_op_destroy(&op);
  sl_array *arrs[4] = {like, x, y, z};
  for (int i = 0; i < 4; i++) sl_array_destroy(&arrs[i]);
  free(Mz), free(M), free(T), free(xg), free(yref), free(zref);
}

/* row-major flat index of coordinates c over dims d (n axes) */
static int64_t flat(int n, const int64_t *d, const int64_t *c)
{
  int64_t f = 0;
  for (int k = 0; k < n; k++) f = f * d[k] + c[k];
  return f;
}

/* Patch2D on 3-D data (dims dd, split along dist), patches over axes ax[0], ax[1]: y(.., w0 s0 + q0, .., w1 s1 +
 * q1, ..) += T0[w0][q0] T1[w1][q1] sum_{j0, j1} M0[q0][j0] M1[q1][j1] x(.., w0, j0, .., w1, j1, ..) */
/* dense: 0 the separable operator (sl_op_patch2d), 1 the dense one with M = kron(M0, M1), 2 the dense one with a
 * matrix that is not a Kronecker product (sl_op_patch2d_dense), 3 the patches themselves (M = NULL, the identity),
 * 4 those under an orthonormal 2-D FFT^H over the patch axes (any operator per patch; complex dtypes); the
 * references use the dense matrix (for 3 and 4 the identity's and the inverse 2-D DFT's, written out). */
static void test_patch2d(sl_dtype dt, int dist, const int64_t dd[3], const int ax[2], const int64_t nwin[2],
                         const int64_t nover[2], const int64_t nop_[2], int kind, int dense)
{
  const int64_t nop[2] = {dense >= 3 ? nwin[0] : nop_[0], dense >= 3 ? nwin[1] : nop_[1]};
  int64_t ln = mc_share(dd[dist]);
  sl_dist d = sl_dist_scatter(dist);
  d.local_n = &ln;
  sl_array *like = NULL;
  CHECK_OK(sl_array_create(&like, 3, dd, dt, &d));
  cplx *Mz[2];
  void *M[2];
  for (int a = 0; a < 2; a++) {
    Mz[a] = malloc(sizeof(cplx) * (size_t)(nwin[a] * nop[a]));
    for (int64_t q = 0; q < nwin[a]; q++)
      for (int64_t j = 0; j < nop[a]; j++) Mz[a][q * nop[a] + j] = mval(dt, q + 3 * a, j - a);
    M[a] = malloc(sl_dtype_size(dt) * (size_t)(nwin[a] * nop[a]));
    mc_to_dtype(dt, nwin[a] * nop[a], Mz[a], M[a]);
    mc_from_dtype(dt, nwin[a] * nop[a], M[a], Mz[a]);
  }
  /* the patch matrix: row q0 nwin1 + q1, column j0 nop1 + j1 */
  int64_t nr = nwin[0] * nwin[1], nc = nop[0] * nop[1];
  cplx *Md = malloc(sizeof *Md * (size_t)(nr * nc));
  void *Mb = malloc(sl_dtype_size(dt) * (size_t)(nr * nc));
  for (int64_t q0 = 0; q0 < nwin[0]; q0++)
    for (int64_t q1 = 0; q1 < nwin[1]; q1++)
      for (int64_t j0 = 0; j0 < nop[0]; j0++)
        for (int64_t j1 = 0; j1 < nop[1]; j1++)
          Md[(q0 * nwin[1] + q1) * nc + j0 * nop[1] + j1] =
            dense == 2   ? mval(dt, q0 * 7 + q1, j0 * 5 - j1) + 0.1 * (double)(q1 * j0)
            : dense == 3 ? (q0 == j0 && q1 == j1)
            : dense == 4 ? cexp(2 * M_PI * I * ((double)(q0 * j0) / (double)nwin[0] + (double)(q1 * j1) / (double)nwin[1])) /
                             sqrt((double)(nwin[0] * nwin[1]))
                         : Mz[0][q0 * nop[0] + j0] * Mz[1][q1 * nop[1] + j1];
  mc_to_dtype(dt, nr * nc, Md, Mb);
  if (dense < 3) mc_from_dtype(dt, nr * nc, Mb, Md);
  sl_op *op = NULL;
  if (dense) CHECK_OK(sl_op_patch2d_dense(&op, like, ax, dense >= 3 ? NULL : Mb, nop[0], nop[1], nwin[0], nover[0], nwin[1],
                                          nover[1], (sl_taper)kind));
  if (op && dense == 4) { /* a 2-D FFT^H over the patch axes of the patches' array, then the patches' operator */
    sl_op *W = op, *F = NULL, *Fh = NULL;
    int fax[2], e = 0;
    for (int k = 0; k < 3; k++) {
      if (k == ax[0] || k == ax[1]) fax[k == ax[1]] = e + 1; /* the nop axis after the patches' axis */
      e += k == ax[0] || k == ax[1] ? 2 : 1;
    }
    op = NULL;
    CHECK_OK(sl_op_fft(&F, sl_op_domain(W), 2, fax, SL_FFT_ORTHO, 0, -1));
    if (F) CHECK_OK(sl_op_adjoint(&Fh, F));
    if (Fh) CHECK_OK(sl_op_product(&op, W, Fh));
    sl_op_destroy(&F);
    sl_op_destroy(&Fh);
    sl_op_destroy(&W);
  }
  if (!dense) CHECK_OK(sl_op_patch2d(&op, like, ax, M[0], nop[0], nwin[0], nover[0], M[1], nop[1], nwin[1], nover[1], (sl_taper)kind));
  int64_t step[2], nw[2];
  double *T[2];
  for (int a = 0; a < 2; a++) {
    step[a] = nwin[a] - nover[a];
    nw[a] = (dd[ax[a]] - nwin[a]) / step[a] + 1;
    T[a] = window_tapers(kind, nwin[a], nover[a], nw[a]);
  }
  /* the model: each patch axis replaced by (nwins, nop) */
  int64_t md[5];
  for (int k = 0, e = 0; k < 3; k++) {
    if (k == ax[0] || k == ax[1]) {
      int a = k == ax[1];
      md[e++] = nw[a];
      md[e++] = nop[a];
    } else {
      md[e++] = dd[k];
    }
  }
  int lay_ok = op && sl_array_ndim(sl_op_domain(op)) == 5;
  for (int k = 0; lay_ok && k < 5; k++) lay_ok = sl_array_dims(sl_op_domain(op))[k] == md[k];
  CHECK(lay_ok && op && (dense == 4 || !strcmp(sl_op_name(op), "Patch2D")), "Patch2D model layout %lld x %lld x %lld x %lld x %lld",
        (long long)md[0], (long long)md[1], (long long)md[2], (long long)md[3], (long long)md[4]);
  if (!lay_ok) {
    sl_op_destroy(&op);
    sl_array_destroy(&like);
    for (int a = 0; a < 2; a++) free(Mz[a]), free(M[a]), free(T[a]);
    free(Md), free(Mb);
    return;
  }
  sl_array *x = NULL, *y = NULL, *z = NULL;
  CHECK_OK(sl_op_create_domain(op, &x));
  CHECK_OK(sl_op_create_range(op, &y));
  CHECK_OK(sl_op_create_domain(op, &z));
  int64_t nx = md[0] * md[1] * md[2] * md[3] * md[4], ny = dd[0] * dd[1] * dd[2];
  cplx *xg = model_values(dt, x, nx, 5), *yref = calloc((size_t)ny, sizeof *yref), *zref = calloc((size_t)nx, sizeof *zref);
  /* the sums of the terms' magnitudes: the scale of each element's rounding (forward), and of the rounding
   * plus the forward's error carried through (adjoint, which takes the computed y) */
  double *ymag = calloc((size_t)ny, sizeof *ymag), *zmag = calloc((size_t)nx, sizeof *zmag);
  int other = 3 - ax[0] - ax[1];
  for (int64_t a = 0; a < dd[other]; a++)
    for (int64_t w0 = 0; w0 < nw[0]; w0++)
      for (int64_t w1 = 0; w1 < nw[1]; w1++)
        for (int64_t q0 = 0; q0 < nwin[0]; q0++)
          for (int64_t q1 = 0; q1 < nwin[1]; q1++) {
            int64_t dc[3], mc[5];
            dc[other] = a, dc[ax[0]] = w0 * step[0] + q0, dc[ax[1]] = w1 * step[1] + q1;
            int64_t iy = flat(3, dd, dc);
            double t = T[0][w0 * nwin[0] + q0] * T[1][w1 * nwin[1] + q1];
            cplx acc = 0;
            double mag = 0;
            for (int64_t j0 = 0; j0 < nop[0]; j0++)
              for (int64_t j1 = 0; j1 < nop[1]; j1++) {
                for (int k = 0, e = 0; k < 3; k++) {
                  if (k == ax[0]) mc[e++] = w0, mc[e++] = j0;
                  else if (k == ax[1]) mc[e++] = w1, mc[e++] = j1;
                  else mc[e++] = a;
                }
                cplx term = Md[(q0 * nwin[1] + q1) * nc + j0 * nop[1] + j1] * xg[flat(5, md, mc)];
                acc += term;
                mag += cabs(term);
              }
            yref[iy] += t * acc;
            ymag[iy] += fabs(t) * mag;
          }
  /* adjoint of yref, term by term */
  for (int64_t a = 0; a < dd[other]; a++)
    for (int64_t w0 = 0; w0 < nw[0]; w0++)
      for (int64_t w1 = 0; w1 < nw[1]; w1++)
        for (int64_t j0 = 0; j0 < nop[0]; j0++)
          for (int64_t j1 = 0; j1 < nop[1]; j1++) {
            int64_t dc[3], mc[5];
            for (int k = 0, e = 0; k < 3; k++) {
              if (k == ax[0]) mc[e++] = w0, mc[e++] = j0;
              else if (k == ax[1]) mc[e++] = w1, mc[e++] = j1;
              else mc[e++] = a;
            }
            cplx acc = 0;
            double mag = 0;
            for (int64_t q0 = 0; q0 < nwin[0]; q0++)
              for (int64_t q1 = 0; q1 < nwin[1]; q1++) {
                dc[other] = a, dc[ax[0]] = w0 * step[0] + q0, dc[ax[1]] = w1 * step[1] + q1;
                cplx w = conj(Md[(q0 * nwin[1] + q1) * nc + j0 * nop[1] + j1]) * T[0][w0 * nwin[0] + q0] *
                         T[1][w1 * nwin[1] + q1];
                acc += w * yref[flat(3, dd, dc)];
                mag += cabs(w) * ymag[flat(3, dd, dc)];
              }
            zref[flat(5, md, mc)] = acc;
            zmag[flat(5, md, mc)] = mag;
          }
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  /* each element within mc_tol of its terms' magnitudes (sums of up to 64 x 64 terms that cancel) */
  const double tol = mc_tol(dt);
  static const char *const kinds[] = {"", " dense kron", " dense", ", the patches", ", FFT2D^H per patch"};
  char what[128];
  snprintf(what, sizeof what, "Patch2D%s forward (axes %d %d, nwin %lld %lld, nover %lld %lld, taper %d)",
           kinds[dense], ax[0], ax[1], (long long)nwin[0], (long long)nwin[1],
           (long long)nover[0], (long long)nover[1], kind);
  mc_compare_mag(y, yref, ymag, what, tol);
  CHECK_OK(sl_op_apply(op, SL_ADJOINT, y, z));
  snprintf(what, sizeof what, "Patch2D%s adjoint (axes %d %d, nwin %lld %lld, nover %lld %lld, taper %d)",
           kinds[dense], ax[0], ax[1], (long long)nwin[0], (long long)nwin[1],
           (long long)nover[0], (long long)nover[1], kind);
  mc_compare_mag(z, zref, zmag, what, tol);
  double err = 1;
  /* seed 5: with seed 4 the two inner products of the patches over the distributed axis on 2 ranks nearly
   * cancel for the real dtypes (relative difference 500 eps in float32 and float64 alike) */
  CHECK_OK(sl_dottest(op, 5, &err));
  CHECK(err < (dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? 1e-5 : 1e-13), "Patch2D dot test %s: %.3g", sl_dtype_name(dt), err);
  sl_op_destroy(&op);
  sl_array *arrs[4] = {like, x, y, z};
  for (int i = 0; i < 4; i++) sl_array_destroy(&arrs[i]);
  for (int a = 0; a < 2; a++) free(Mz[a]), free(M[a]), free(T[a]);
  free(Md), free(Mb);
  free(xg), free(yref), free(zref), free(ymag), free(zmag);
}

static void test_patch2d_bad_input(void)
{
  int64_t dims[3] = {5, 12, 10};
  sl_array *x = NULL, *xt = NULL;
  CHECK_OK(sl_array_create(&x, 3, dims, SL_FLOAT64, NULL)); /* split along axis 0 */
  sl_dist d1 = sl_dist_scatter(1);
  CHECK_OK(sl_array_create(&xt, 3, dims, SL_FLOAT64, &d1)); /* split along axis 1 */
  double M0[6 * 3] = {0}, M1[4 * 2] = {0};
  sl_op *op = NULL;
  int ax[2] = {1, 2};
  int rc = sl_op_patch2d(&op, xt, ax, M0, 3, 4, 1, M1, 2, 4, 1, SL_TAPER_HANNING);
  CHECK(rc == SL_SUCCESS, "a patch axis distributed, not the first (the layout moved): %s", sl_last_error());
  sl_op_destroy(&op);
  sl_array_destroy(&xt);
  int same[2] = {1, 1};
  rc = sl_op_patch2d(&op, x, same, M0, 3, 6, 2, M1, 2, 4, 1, SL_TAPER_HANNING);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "axes"), "the same axis twice: %s", sl_last_error());
  int ok[2] = {1, 2};
  rc = sl_op_patch2d(&op, x, ok, M0, 3, 6, 4, M1, 2, 4, 1, SL_TAPER_COSINE);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "nover"), "overlap above half a patch: %s",
        sl_last_error());
  rc = sl_op_patch2d(&op, x, ok, M0, 3, 6, 2, M1, 2, 11, 1, SL_TAPER_NONE);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "nwin"), "patch longer than the axis: %s",
        sl_last_error());
  /* an error of the second axis's windows names Patch2D's arguments for that axis */
  M1[3] = NAN;
  rc = sl_op_patch2d(&op, x, ok, M0, 3, 6, 2, M1, 2, 4, 1, SL_TAPER_NONE);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "sl_op_patch2d: along axes[1] (arguments 8-11: M1"),
        "NaN in M1: %s", sl_last_error());
  M1[3] = 0;
  CHECK(op == NULL, "a failed Patch2D leaves op NULL");
  /* the dense patch operator */
  double Md[6 * 4 * 3 * 2] = {0};
  int ok2[2] = {1, 2};
  sl_array *xt2 = NULL;
  CHECK_OK(sl_array_create(&xt2, 3, dims, SL_FLOAT64, &d1)); /* split along axis 1 */
  rc = sl_op_patch2d_dense(&op, xt2, ok2, Md, 3, 2, 6, 2, 4, 1, SL_TAPER_NONE);
  CHECK(rc == SL_SUCCESS, "dense patches over a distributed axis that is not the first (the layout moved): %s", sl_last_error());
  sl_op_destroy(&op);
  sl_array_destroy(&xt2);
  rc = sl_op_patch2d_dense(&op, x, ok2, Md, 0, 2, 6, 2, 4, 1, SL_TAPER_NONE);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "nop0"), "nop0 = 0: %s", sl_last_error());
  Md[7] = NAN;
  rc = sl_op_patch2d_dense(&op, x, ok2, Md, 3, 2, 6, 2, 4, 1, SL_TAPER_NONE);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "non-finite"), "NaN in M: %s", sl_last_error());
  Md[7] = R;
  rc = sl_op_patch2d_dense(&op, x, ok2, Md, 3, 2, 6, 2, 4, 1, SL_TAPER_NONE);
  CHECK(P == 1 ? rc == SL_SUCCESS : mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 4"),
        "M differing between ranks: %s", sl_last_error());
  sl_op_destroy(&op);
  rc = sl_op_patch2d_dense(&op, x, ok2, Md, 3, 2, 6, 4, 4, 1, SL_TAPER_HANNING);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "nover"), "dense: overlap above half: %s",
        sl_last_error());
  CHECK(op == NULL, "a failed dense Patch2D leaves op NULL");
  rc = sl_op_patch2d_dense(&op, x, ok2, NULL, 6, 3, 6, 2, 4, 1, SL_TAPER_NONE);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 4 (M) is NULL"),
        "dense: M NULL (the patches) with nop != nwin: %s", sl_last_error());
  CHECK(op == NULL, "a failed Patch2D of the patches leaves op NULL");
  sl_array_destroy(&x);
}

static void test_bad_input(void)
{
  int64_t dims[2] = {9, 20};
  sl_array *x = NULL;
  CHECK_OK(sl_array_create(&x, 2, dims, SL_FLOAT64, NULL)); /* split along axis 0 */
  double M[8 * 2] = {0};
  sl_op *op = NULL;
  int rc = sl_op_sliding1d(&op, x, 0, M, 2, 4, 1, SL_TAPER_HANNING);
  CHECK(rc == SL_SUCCESS, "sliding along the distributed axis 0: %s", sl_last_error());
  sl_op_destroy(&op);
  sl_array *xt = NULL;
  int64_t dt2[2] = {4, 9};
  sl_dist d1 = sl_dist_scatter(1);
  CHECK_OK(sl_array_create(&xt, 2, dt2, SL_FLOAT64, &d1));
  rc = sl_op_sliding1d(&op, xt, 1, M, 2, 4, 1, SL_TAPER_HANNING);
  CHECK(rc == SL_SUCCESS, "sliding along the distributed axis 1 (the layout moved): %s", sl_last_error());
  sl_op_destroy(&op);
  sl_array_destroy(&xt);
  rc = sl_op_sliding1d(&op, x, 1, M, 2, 8, 5, SL_TAPER_HANNING);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "nover"), "hanning overlap above nwin / 2: %s",
        sl_last_error());
  rc = sl_op_sliding1d(&op, x, 1, M, 2, 8, 8, SL_TAPER_NONE);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "nover"), "nover = nwin: %s", sl_last_error());
  rc = sl_op_sliding1d(&op, x, 1, M, 2, 30, 2, SL_TAPER_NONE);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "nwin"), "window longer than the axis: %s",
        sl_last_error());
  rc = sl_op_sliding1d(&op, x, 1, NULL, 2, 8, 2, SL_TAPER_NONE);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "argument 4 (M) is NULL"),
        "M NULL (the windows) with nm != nwin: %s", sl_last_error());
  double eye[4 * 4] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  rc = sl_op_sliding1d(&op, x, 1, R == 0 ? eye : NULL, 4, 4, 1, SL_TAPER_NONE);
  CHECK(P == 1 ? rc == SL_SUCCESS : mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "given or NULL"),
        "M given on one rank, NULL on the others: %s", sl_last_error());
  sl_op_destroy(&op);
  double mine[8 * 2] = {[0] = (double)R};
  rc = sl_op_sliding1d(&op, x, 1, mine, 2, 8, 2, SL_TAPER_NONE);
  CHECK(P == 1 || mc_same_error_everywhere(rc, SL_E_INVALID), "M differing between ranks: %s", sl_last_error());
  sl_op_destroy(&op);
  sl_array_destroy(&x);
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  P = sl_size();
  R = sl_rank();
  const sl_dtype *dts = mc_dtypes;
  for (int t = 0; t < 4; t++) {
    test_case(dts[t], 0, 23, 8, 3, 6, SL_TAPER_HANNING, DENSE); /* windows at 0, 5, 10, 15: the axis covered */
    test_case(dts[t], 0, 25, 8, 3, 6, SL_TAPER_COSINE, DENSE);  /* the last 2 samples uncovered */
    test_case(dts[t], 1, 19, 6, 2, 4, SL_TAPER_COSINESQUARE, DENSE);
    test_case(dts[t], 1, 16, 4, 0, 5, SL_TAPER_NONE, DENSE);    /* no overlap, nm > nwin */
    /* along the distributed axis: windows reaching over one or more ranks' rows, a rank with rows but no window
     * start, the last rows uncovered, one-row windows */
    test_case(dts[t], -1, 23, 8, 3, 6, SL_TAPER_HANNING, DENSE);
    test_case(dts[t], -1, 26, 11, 2, 4, SL_TAPER_COSINE, DENSE);
    test_case(dts[t], -1, 17, 3, 0, 2, SL_TAPER_NONE, DENSE);
    test_case(dts[t], -1, 9, 1, 0, 3, SL_TAPER_NONE, DENSE);
    /* 33 elements beside windows along axis 0 (the CPU's per-window GEMMs on the model in place) */
    wide = 33;
    test_case(dts[t], 1, 19, 6, 2, 4, SL_TAPER_COSINESQUARE, DENSE);
    test_case(dts[t], -1, 23, 8, 3, 6, SL_TAPER_HANNING, DENSE);
    wide = 0;
    /* along the distributed axis 1 (not the first: the layout moved) */
    test_case(dts[t], -2, 23, 8, 3, 6, SL_TAPER_HANNING, DENSE);
    test_case(dts[t], -2, 26, 11, 2, 5, SL_TAPER_COSINE, DENSE);
    test_case(dts[t], -2, 9, 1, 0, 3, SL_TAPER_NONE, DENSE);
    /* the windows themselves (M = NULL), alone and under any operator (an FFT per window), away from and along the
     * distributed axis */
    for (int inner = WINDOWS; inner <= FFT_PER_WINDOW; inner++) {
      if (inner == FFT_PER_WINDOW && !sl_dtype_is_complex(dts[t])) continue;
      test_case(dts[t], 0, 25, 8, 3, 0, SL_TAPER_COSINE, inner);
      test_case(dts[t], 1, 19, 6, 2, 0, SL_TAPER_HANNING, inner);
      test_case(dts[t], -1, 23, 8, 3, 0, SL_TAPER_HANNING, inner);
      test_case(dts[t], -1, 26, 11, 2, 0, SL_TAPER_COSINESQUARE, inner);
      test_case(dts[t], -2, 19, 6, 2, 0, SL_TAPER_COSINE, inner);
    }
  }
  for (int t = 0; t < 4; t++) {
    const int64_t d1[3] = {5, 14, 11}, w1[2] = {6, 5}, o1[2] = {2, 1}, p1[2] = {4, 3};
    const int a1[2] = {1, 2}, a2[2] = {2, 0};
    for (int dense = 0; dense < 3; dense++) /* the last row and column uncovered */
      test_patch2d(dts[t], 0, d1, a1, w1, o1, p1, SL_TAPER_HANNING, dense);
    const int64_t d2[3] = {13, 5, 9}, w2[2] = {9, 4}, o2[2] = {0, 2}, p2[2] = {5, 6};
    for (int dense = 0; dense < 3; dense += 2) /* Sliding2D: one window over axis 2; the axes in reverse order */
      test_patch2d(dts[t], 1, d2, a2, w2, o2, p2, SL_TAPER_COSINE, dense);
    /* Sliding2D as documented (nwin1 the second axis's length, nover1 = 0), windows sliding over the distributed
     * axis 0 */
    const int64_t ws[2] = {5, 9}, os[2] = {2, 0}, ps[2] = {4, 6};
    const int as[2] = {0, 2};
    for (int dense = 0; dense < 3; dense += 2) test_patch2d(dts[t], 0, d2, as, ws, os, ps, SL_TAPER_HANNING, dense);
    /* patches over the distributed axis 0, as the first or the second patch axis */
    const int64_t d3[3] = {17, 4, 10}, w3[2] = {6, 4}, o3[2] = {2, 1}, p3[2] = {3, 5};
    const int a3[2] = {0, 2}, a4[2] = {2, 0};
    for (int dense = 0; dense < 3; dense += 2) {
      test_patch2d(dts[t], 0, d3, a3, w3, o3, p3, SL_TAPER_HANNING, dense);
      test_patch2d(dts[t], 0, d3, a4, w3, o3, p3, SL_TAPER_COSINESQUARE, dense);
    }
    /* patches over the first two axes of three: a trailing axis of 3 elements inside every patch sample */
    const int64_t d4[3] = {12, 9, 3}, w4[2] = {5, 4}, o4[2] = {2, 1}, p4[2] = {4, 3};
    const int a5[2] = {0, 1};
    for (int dense = 0; dense < 5; dense++) {
      if (dense == 4 && !sl_dtype_is_complex(dts[t])) continue;
      test_patch2d(dts[t], 0, d4, a5, w4, o4, p4, SL_TAPER_HANNING, dense);
    }
    /* the patches themselves (M = NULL), alone and under a 2-D FFT per patch, away from and over the distributed
     * axis */
    for (int dense = 3; dense <= 4; dense++) {
      if (dense == 4 && !sl_dtype_is_complex(dts[t])) continue;
      test_patch2d(dts[t], 0, d1, a1, w1, o1, p1, SL_TAPER_HANNING, dense);
      test_patch2d(dts[t], 1, d2, a2, w2, o2, p2, SL_TAPER_COSINE, dense);
      test_patch2d(dts[t], 0, d3, a3, w3, o3, p3, SL_TAPER_HANNING, dense);
      test_patch2d(dts[t], 0, d3, a4, w3, o3, p3, SL_TAPER_COSINESQUARE, dense);
    }
    /* many patches along the last axis (the GPU's one-kernel path takes patches over the last two axes from 8 along
     * the second, in tiles of 32, 48 or 64): M 64 x 64 (24 patches: one tile of 32), M 24 x 35 over the distributed
     * axis (125: tiles of 64, the last part full), M 30 x 30 (40: tiles of 48, the last column uncovered) */
    const int64_t d5[3] = {3, 20, 150}, w5[2] = {8, 8}, o5[2] = {2, 2}, p5[2] = {8, 8};
    const int64_t d6[3] = {2, 29, 502}, w6[2] = {6, 4}, o6[2] = {2, 0}, p6[2] = {5, 7};
    const int64_t d7[3] = {2, 14, 163}, w7[2] = {5, 6}, o7[2] = {1, 2}, p7[2] = {6, 5};
    test_patch2d(dts[t], 0, d5, a1, w5, o5, p5, SL_TAPER_HANNING, 2);
    test_patch2d(dts[t], 1, d6, a1, w6, o6, p6, SL_TAPER_COSINE, 2);
    test_patch2d(dts[t], 0, d7, a1, w7, o7, p7, SL_TAPER_COSINESQUARE, 1);
    /* overlaps wider than half a patch on both axes (no taper): up to three patches cover a sample along each axis
     * (the GPU's general row kernel), dense (the GEMM path: 4 patches along the second axis) and alone */
    const int64_t d8[3] = {4, 13, 12}, w8[2] = {5, 6}, o8[2] = {3, 4}, p8[2] = {4, 5};
    for (int dense = 1; dense <= 3; dense++) test_patch2d(dts[t], 0, d8, a1, w8, o8, p8, SL_TAPER_NONE, dense);
    /* the same over the distributed axis (the axis before it of length 1: split by the patches' starts, the ghost
     * patches or rows of a neighbour; the GPU's row kernels on the GEMM path with buffers that start inside the
     * axis), and with a taper (at most two patches per sample) */
    const int64_t d9[3] = {1, 13, 12}, d10[3] = {1, 14, 11};
    for (int dense = 1; dense <= 3; dense++) {
      test_patch2d(dts[t], 1, d9, a1, w8, o8, p8, SL_TAPER_NONE, dense);
      test_patch2d(dts[t], 1, d10, a1, w1, o1, p1, SL_TAPER_HANNING, dense);
    }
    /* a patch axis distributed but not the array's first, or not the first of the two: the layout moved */
    for (int dense = 0; dense < 5; dense += 2) {
      if (dense == 4 && !sl_dtype_is_complex(dts[t])) continue;
      test_patch2d(dts[t], 1, d1, a1, w1, o1, p1, SL_TAPER_HANNING, dense);
      test_patch2d(dts[t], 2, d3, a3, w3, o3, p3, SL_TAPER_COSINE, dense);
    }
  }
  test_bad_input();
  test_patch2d_bad_input();
  return mc_finish("mpi_sliding");
}
