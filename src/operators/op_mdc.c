/* MDC, multidimensional convolution (pylops' MDC; twosided: the model's time axis holds negative and positive
 * times, ifftshifted before its FFT): d = F_s^H R^T Fredholm1(c G) R F_r m
 * with m (nt, nr, nv) and d (nt, ns, nv) real, F the real FFT along time (pylops' "ortho" real FFT), R
 * keeping the first nfmax frequencies, G (nfmax, ns, nr) and c = dt dr sqrt(nt). Distributed end to end:
 *   m and d are split along their second axis (receivers, sources), so the FFTs along time are local;
 *   one all-to-all moves the spectrum to a split along frequency, where each rank multiplies its slices of
 *   G (its Fredholm1 block) with no communication; one all-to-all moves the result back.
 * pylops-mpi replicates the FFTs on every rank. R is folded into the frequency split: the last rank also
 * holds the nf - nfmax frequencies above nfmax, with zero slices of G. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"

static int mdc_check(const char *fn, sl_op **op, const void *G, int64_t nfl, int64_t nfmax, int64_t ns, int64_t nr, int64_t nt,
                     int64_t nv, double dt, double dr, sl_dtype dtype)
{
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  SL_CHECK_ARG(isfinite(dt) && dt > 0, SL_E_INVALID, "%s: argument 9 (dt) must be finite and > 0, got %g", fn, dt);
  SL_CHECK_ARG(isfinite(dr) && dr > 0, SL_E_INVALID, "%s: argument 10 (dr) must be finite and > 0, got %g", fn, dr);
  SL_CHECK_ARG(dtype == SL_FLOAT32 || dtype == SL_FLOAT64, SL_E_DTYPE, "%s: argument 11 (dtype) must be float32 or float64 (the "
               "model and data are real; G is complex64 or complex128)", fn);
  SL_CHECK_ARG(nt >= 1 && ns >= 1 && nr >= 1 && nv >= 1, SL_E_INVALID,
               "%s: arguments 5-8 (ns, nr, nt, nv) must be >= 1, got %lld, %lld, %lld, %lld", fn, (long long)ns,
               (long long)nr, (long long)nt, (long long)nv);
  SL_CHECK_ARG(nfmax >= 1 && nfmax <= nt / 2 + 1, SL_E_INVALID, "%s: argument 4 (nfmax) must be in [1, nt/2 + 1 = %lld], got %lld",
               fn, (long long)(nt / 2 + 1), (long long)nfmax);
  SL_CHECK_ARG(nfl >= 0, SL_E_INVALID, "%s: argument 3 (nfl) must be >= 0, got %lld", fn, (long long)nfl);
  SL_CHECK_ARG(nfl == 0 || G, SL_E_INVALID, "%s: argument 2 (G) is NULL for %lld frequencies", fn, (long long)nfl);
  return SL_SUCCESS;
}

static int mdc_build(const char *fn, int twosided, sl_op **op, const void *G, int64_t nfl, int64_t nfmax, int64_t ns, int64_t nr,
                     int64_t nt, int64_t nv, double dt, double dr, sl_dtype dtype)
{
  SL_CHECK_INIT();
  int rc = SL_AGREE(fn, mdc_check(fn, op, G, nfl, nfmax, ns, nr, nt, nv, dt, dr, dtype), SL_SAME_I("argument 4 (nfmax)", nfmax),
                    SL_SAME_I("argument 5 (ns)", ns), SL_SAME_I("argument 6 (nr)", nr), SL_SAME_I("argument 7 (nt)", nt),
                    SL_SAME_I("argument 8 (nv)", nv), sl_same_d("argument 9 (dt)", dt), sl_same_d("argument 10 (dr)", dr),
                    SL_SAME_I("argument 11 (dtype)", dtype));
  if (rc != SL_SUCCESS) return rc;
  int64_t tot = nfl;
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &tot, 1, MPI_INT64_T, MPI_SUM, sl_ctx.comm));
  if (tot != nfmax)
    return sl_error(SL_E_DIMS, "%s: the ranks' frequencies (argument 3, nfl) add up to %lld, not nfmax = %lld", fn,
                    (long long)tot, (long long)nfmax);
  sl_dtype ct = dtype == SL_FLOAT64 ? SL_COMPLEX128 : SL_COMPLEX64;
  size_t cel = sl_dtype_size(ct);
  int64_t nf = nt / 2 + 1, nsl = nfl + (sl_ctx.rank == sl_ctx.size - 1 ? nf - nfmax : 0);
  /* this rank's slices of c G, padded with zero slices above nfmax */
  double c = dt * dr * sqrt((double)nt);
  int64_t cnt = 0, bad = -1;
  void *g = NULL;
  if (__builtin_mul_overflow(nsl, ns, &cnt) || __builtin_mul_overflow(cnt, nr, &cnt) || cnt > (int64_t)UINT32_MAX)
    rc = sl_error(SL_E_DIMS, "%s: arguments 3, 5 and 6 (nfl, ns, nr): this rank's %lld frequency slices of %lld x %lld are past "
                  "2^32 elements (one buffer)", fn, (long long)nsl, (long long)ns, (long long)nr);
  else if (!isfinite(c) || (dtype == SL_FLOAT32 && !isfinite((float)c)))
    rc = sl_error(SL_E_INVALID, "%s: arguments 9 and 10 (dt, dr): the scale dt dr sqrt(nt) = %g overflows", fn, c);
  else if (c == 0.0 || (dtype == SL_FLOAT32 && (float)c == 0.0f))
    rc = sl_error(SL_E_INVALID, "%s: arguments 9 and 10 (dt, dr): the scale dt dr sqrt(nt) = %g underflows to zero%s", fn, c,
                  dtype == SL_FLOAT32 ? " in float32" : "");
  else if ((bad = sl_first_nonfinite(G, nfl * ns * nr, ct)) >= 0)
    rc = sl_error(SL_E_INVALID, "%s: argument 2 (G) holds a non-finite value at element %lld", fn, (long long)bad);
  else if (!(g = calloc((size_t)cnt + 1, cel)))
    rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  if (rc == SL_SUCCESS) {
    for (int64_t i = 0; i < nfl * ns * nr; i++) {
      if (ct == SL_COMPLEX128) ((double *)g)[2 * i] = c * ((const double *)G)[2 * i], ((double *)g)[2 * i + 1] = c * ((const double *)G)[2 * i + 1];
      else ((float *)g)[2 * i] = (float)(c * ((const float *)G)[2 * i]), ((float *)g)[2 * i + 1] = (float)(c * ((const float *)G)[2 * i + 1]);
    }
    if ((bad = sl_first_nonfinite(g, nfl * ns * nr, ct)) >= 0)
      rc = sl_error(SL_E_INVALID, "%s: argument 2 (G) times the scale dt dr sqrt(nt) = %g overflows at element %lld", fn, c,
                    (long long)bad);
  }
  if ((rc = sl_agree(sl_ctx.comm, rc)) != SL_SUCCESS) {
    free(g);
    return rc;
  }
  sl_op *fred = NULL, *fm = NULL, *fs = NULL, *fsh = NULL, *t1 = NULL, *t2 = NULL, *p1 = NULL, *p2 = NULL, *p3 = NULL, *o = NULL;
  sl_array *m = NULL, *d = NULL;
  int64_t mdims[3] = {nt, nr, nv}, ddims[3] = {nt, ns, nv};
  sl_dist split = sl_dist_scatter(1);
  const int t0[1] = {0};
  rc = sl_op_fredholm1(&fred, g, nsl, ns, nr, nv, ct);
  free(g);
  if (rc == SL_SUCCESS) rc = sl_layout_create(&m, 3, mdims, dtype, &split);
  if (rc == SL_SUCCESS) rc = sl_layout_create(&d, 3, ddims, dtype, &split);
  const int shift[1] = {1};
  if (rc == SL_SUCCESS && twosided) rc = sl_op_fft_nfft(&fm, m, 1, t0, NULL, SL_FFT_ORTHO, 1, shift, NULL);
  else if (rc == SL_SUCCESS) rc = sl_op_fft(&fm, m, 1, t0, SL_FFT_ORTHO, 1, -1);
  if (rc == SL_SUCCESS) rc = sl_op_fft(&fs, d, 1, t0, SL_FFT_ORTHO, 1, -1);
  if (rc == SL_SUCCESS) rc = sl_op_adjoint(&fsh, fs);
  if (rc == SL_SUCCESS) rc = sl_op_redistribute(&t1, fm->rng, fred->dom);
  if (rc == SL_SUCCESS) rc = sl_op_redistribute(&t2, fred->rng, fs->rng);
  if (rc == SL_SUCCESS) rc = sl_op_product(&p1, t1, fm);
  if (rc == SL_SUCCESS) rc = sl_op_product(&p2, fred, p1);
  if (rc == SL_SUCCESS) rc = sl_op_product(&p3, t2, p2);
  if (rc == SL_SUCCESS) rc = sl_op_product(&o, fsh, p3);
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc == SL_SUCCESS) snprintf(o->name, sizeof o->name, "MDC(nt %lld, ns %lld, nr %lld, nv %lld, nfmax %lld%s)", (long long)nt,
                                 (long long)ns, (long long)nr, (long long)nv, (long long)nfmax, twosided ? ", twosided" : "");
  sl_op *parts[] = {fred, fm, fs, fsh, t1, t2, p1, p2, p3};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) sl_op_destroy(&parts[i]);
  sl_array_destroy(&m);
  sl_array_destroy(&d);
  if (rc != SL_SUCCESS) {
    sl_op_destroy(&o);
    return rc;
  }
  *op = o;
  return SL_SUCCESS;
}

int sl_op_mdc(sl_op **op, const void *G, int64_t nfl, int64_t nfmax, int64_t ns, int64_t nr, int64_t nt, int64_t nv, double dt,
              double dr, sl_dtype dtype)
{
  return mdc_build("sl_op_mdc", 0, op, G, nfl, nfmax, ns, nr, nt, nv, dt, dr, dtype);
}

int sl_op_mdc_twosided(sl_op **op, const void *G, int64_t nfl, int64_t nfmax, int64_t ns, int64_t nr, int64_t nt, int64_t nv,
                       double dt, double dr, sl_dtype dtype)
{
  return mdc_build("sl_op_mdc_twosided", 1, op, G, nfl, nfmax, ns, nr, nt, nv, dt, dr, dtype);
}
