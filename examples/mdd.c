/* mdd: multidimensional deconvolution with the distributed MDC operator. A kernel g(t, s, r) (a Ricker
 * wavelet delayed by the source-receiver offset) convolves a sparse model m(t, r) (a few spikes per
 * receiver) into data d = MDC m; LSQR then recovers a model from d. The FFTs along time run on each rank's
 * receivers (or sources); two all-to-alls move the spectra to and from the frequency split of G.
 *   mpirun -n 2 ./mdd [--nt T] [--nr R] [--ns S] [--niter K] [--quiet]
 * Checks that the data residual of the LSQR model is below 3% of the data and that the model correlates
 * with the true one (above 0.6: the spikes come back band-limited by the 20 Hz wavelet, the frequencies it
 * lacks are not in the data). Exits non-zero if a check fails. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"

static double ricker(double t, double f0)
{
  double a = M_PI * f0 * t;
  return (1 - 2 * a * a) * exp(-a * a);
}

/* The kernel sample at time index t for source s, receiver r (dt 4 ms, 20 Hz, delay with the offset). */
static double gval(int64_t t, int64_t s, int64_t r, int64_t nt)
{
  double dt = 0.004, delay = 0.02 + 0.004 * (double)llabs((long long)(s - r)), tt = (double)t * dt - delay;
  if (tt < -(double)nt * dt / 2) tt += (double)nt * dt; /* circular */
  return ricker(tt, 20.0);
}

static double mval(int64_t t, int64_t r, int64_t nt)
{
  /* three spikes per receiver at times that move with r */
  int64_t t1 = (nt / 5 + 2 * r) % nt, t2 = (nt / 2 + r) % nt, t3 = (3 * nt / 4 + 3 * r) % nt;
  return (t == t1 ? 1.0 : 0) + (t == t2 ? -0.6 : 0) + (t == t3 ? 0.4 : 0);
}

static void usage(void) { printf("usage: mdd [--nt T] [--nr R] [--ns S] [--niter K] [--quiet]\n"); }

int main(int argc, char **argv)
{
  int64_t nt = 128, nr = 16, ns = 16, nv = 1;
  sl_solver_options o;
  sl_solver_options_default(&o);
  o.niter = 100;
  o.show = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--nt") && i + 1 < argc) nt = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--nr") && i + 1 < argc) nr = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--ns") && i + 1 < argc) ns = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--niter") && i + 1 < argc) o.niter = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--quiet")) o.show = 0;
    else {
      usage();
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (nt < 8 || nr < 1 || ns < 1) {
    usage();
    return 2;
  }
  TRY(sl_init(&argc, &argv, NULL));
  int P = sl_size(), me = sl_rank();
  /* this rank's frequencies of G = FFT of g along time (all nt/2 + 1 of them, split over the ranks) */
  int64_t nf = nt / 2 + 1, nfl = nf / P + (me < nf % P), f0 = 0;
  for (int r = 0; r < me; r++) f0 += nf / P + (r < nf % P);
  double complex *G = malloc(sizeof *G * (size_t)(nfl * ns * nr + 1));
  for (int64_t f = 0; f < nfl; f++)
    for (int64_t s = 0; s < ns; s++)
      for (int64_t r = 0; r < nr; r++) {
        double complex z = 0;
        for (int64_t t = 0; t < nt; t++) z += gval(t, s, r, nt) * cexp(-2 * M_PI * I * (double)((f0 + f) * t % nt) / (double)nt);
        G[(f * ns + s) * nr + r] = z;
      }
  sl_op *mdc = NULL;
  TRY(sl_op_mdc(&mdc, G, nfl, nf, ns, nr, nt, nv, 0.004, 1.0, SL_FLOAT64));
  free(G);
  sl_array *m = NULL, *d = NULL, *mest = NULL, *res = NULL;
  TRY(sl_op_create_domain(mdc, &m));
  TRY(sl_op_create_domain(mdc, &mest));
  TRY(sl_op_create_range(mdc, &d));
  TRY(sl_op_create_range(mdc, &res));
  double *mg = malloc(sizeof *mg * (size_t)(nt * nr * nv));
  for (int64_t t = 0; t < nt; t++)
    for (int64_t r = 0; r < nr; r++) mg[t * nr + r] = mval(t, r, nt);
  TRY(sl_array_scatter(m, -1, mg));
  free(mg);
  TRY(sl_op_apply(mdc, SL_FORWARD, m, d));
  if (me == 0 && o.show)
    printf("MDD: nt %lld, %lld sources, %lld receivers on %d ranks; LSQR, %d iterations at most\n", (long long)nt, (long long)ns,
           (long long)nr, P, o.niter);
  sl_solver_info info;
  TRY(sl_solve_lsqr(mdc, d, mest, &o, &info));
  /* data residual and the model's correlation with the truth */
  sl_scalar *a = NULL, *b = NULL, *c = NULL;
  TRY(sl_scalar_create(&a, SL_FLOAT64));
  TRY(sl_scalar_create(&b, SL_FLOAT64));
  TRY(sl_scalar_create(&c, SL_FLOAT64));
  TRY(sl_op_apply(mdc, SL_FORWARD, mest, res));
  TRY(sl_array_axpby(res, SL_REAL(1), d, SL_REAL(-1)));
  double rn = 0, dn = 0, mm = 0, me2 = 0, mt = 0;
  TRY(sl_array_norm(res, 2, a));
  TRY(sl_array_norm(d, 2, b));
  TRY(sl_scalar_get(a, &rn));
  TRY(sl_scalar_get(b, &dn));
  TRY(sl_array_dot(m, mest, c));
  TRY(sl_scalar_get(c, &mm));
  TRY(sl_array_norm(mest, 2, a));
  TRY(sl_array_norm(m, 2, b));
  TRY(sl_scalar_get(a, &me2));
  TRY(sl_scalar_get(b, &mt));
  double corr = mm / (me2 * mt);
  int ok = rn / dn < 3e-2 && corr > 0.6;
  if (me == 0)
    printf("MDD: %d iterations (%s), data residual %.3e of the data, model correlation %.4f: %s\n", info.iterations,
           sl_stop_reason_name(info.stop), rn / dn, corr, ok ? "PASSED" : "FAILED");
  sl_scalar_destroy(&a);
  sl_scalar_destroy(&b);
  sl_scalar_destroy(&c);
  sl_array_destroy(&m);
  sl_array_destroy(&d);
  sl_array_destroy(&mest);
  sl_array_destroy(&res);
  sl_op_destroy(&mdc);
  TRY(sl_finalize());
  return ok ? 0 : 1;
}
