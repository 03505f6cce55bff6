/* The solvers' scalar steps that can run where the vectors are: one source, compiled for the host
 * (scalar_task.c) and, in CUDA builds, for the GPU (codelets/kernel_prog.cu), so a solve whose vector
 * operations run on a GPU keeps its coefficients there too (no transfer of the state or of the reduction
 * results between the host and the device inside an iteration).
 *
 * A step reads and writes variables of doubles: v[0] is the solver's state (slots of (re, im) pairs),
 * v[1..] are reduction results (an (re, im) pair each) or the history ring. Complex values are explicit
 * pairs so the same code compiles as C and as CUDA C++. */
#ifndef SL_SOLVER_PROG_H
#define SL_SOLVER_PROG_H

#include <math.h>

#include "starlops.h"

#ifdef __CUDACC__
#define SL_PROG_FN __host__ __device__ static inline
#else
#define SL_PROG_FN static inline
#endif

/* Slots of the state (each an (re, im) pair of doubles) that every solver keeps up to date. */
enum {
  S_MON = 0,  /* the quantity the tolerance tests (real) */
  S_REF = 1,  /* its reference for SL_TOL_RELATIVE (real) */
  S_STOP = 2, /* a stop reason set by a scalar task (breakdown, LSQR's rules), 0 while running */
  S_COST = 3, /* the value recorded in the cost history */
  S_AUX = 4,  /* a second column of the table (CGLS/LSQR r2norm), NaN when unused */
  S_BAD = 5,  /* the first iteration whose recorded values were not finite (-1: none yet) */
  S_RED = 6,  /* three reductions' results, written by a fused step (codelets/codelet_krylov.c) */
  S_FIRST = 9 /* the solver's own slots start here */
};
#define SOLVER_MAX_SLOTS 40

/** Slot i of the state handle, for sl_array_axpby_h (offset in doubles). */
SL_PROG_FN int slot(int i) { return 2 * i; }

/* CG's and CGLS's own slots. */
enum { CG_K_OLD = S_FIRST, CG_ALPHA, CG_BETA, CG_MALPHA, CG_ALPHA_PREV };
enum { CGLS_K_OLD = S_FIRST, CGLS_ALPHA, CGLS_MALPHA, CGLS_BETA };
enum {
  LSQR_ALPHA = S_FIRST, LSQR_BETA, LSQR_MALPHA, LSQR_INV_BETA, LSQR_INV_ALPHA, LSQR_CU, LSQR_CV, LSQR_T1, LSQR_T2,
  LSQR_RHOBAR, LSQR_PHIBAR, LSQR_ANORM, LSQR_ACOND, LSQR_DDNORM, LSQR_RES2, LSQR_XNORM, LSQR_XXNORM, LSQR_Z, LSQR_CS2,
  LSQR_SN2, LSQR_BNORM, LSQR_ARNORM, LSQR_INV_RHO
};

/** The steps. */
typedef enum {
  SL_PROG_RECORD,     /* the history row of iteration k (flag: a cost of +Inf is allowed) */
  SL_PROG_CG_INIT,    /* v[1] = ||r||^2: the monitored norm and its reference */
  SL_PROG_CG_ALPHA,   /* v[1] = c^H A c: alpha = kold / c^H A c */
  SL_PROG_CG_BETA,    /* v[1] = ||r||^2: beta = k / kold */
  SL_PROG_PCG_COEFFS, /* pipelined CG: v[1] = gamma = ||r||^2, v[2] = delta = w^H r (flag: first iteration) */
  SL_PROG_CGLS_INIT,  /* v[1] = ||r||^2, v[2] = ||s||^2 */
  SL_PROG_CGLS_ALPHA, /* v[1] = ||q||^2, v[2] = ||c||^2: alpha = kold / (||q||^2 + damp^2 ||c||^2) (d[0]: damp^2) */
  SL_PROG_CGLS_BETA,  /* v[1] = ||r||^2, v[2] = ||s||^2, v[3] = ||x||^2 (d[0]: damp^2) */
  SL_PROG_LSQR_BETA0,  /* LSQR (d: damp, atol, btol, 1 / conlim; k, niter): v[1] = ||y||^2, v[2] = ||u||^2 */
  SL_PROG_LSQR_ALPHA0, /* v[1] = ||v||^2 */
  SL_PROG_LSQR_STEP_A, /* v[1] = ||u||^2 after u = A v - alpha u */
  SL_PROG_LSQR_STEP_B, /* v[1] = ||v||^2 after v = A^H u - beta v, v[2] = ||w||^2: the rest of scipy's iteration */
  SL_PROG_COUNT
} sl_prog;
#define SL_PROG_MAXBUF 4

/** A step's arguments, passed by value. */
typedef struct {
  int k;       /* the iteration */
  int flag;    /* the step's option (see sl_prog) */
  int rows;    /* SL_PROG_RECORD: the rows of the history ring */
  int niter;   /* LSQR: the iteration limit */
  double d[4]; /* the step's real parameters (see sl_prog) */
} sl_prog_arg;

typedef struct {
  double re, im;
} sl_prog_c;

SL_PROG_FN sl_prog_c prog_c(double re, double im)
{
  sl_prog_c z;
  z.re = re;
  z.im = im;
  return z;
}
SL_PROG_FN sl_prog_c prog_get(const double *v, int i) { return prog_c(v[slot(i)], v[slot(i) + 1]); }
SL_PROG_FN void prog_put(double *v, int i, sl_prog_c z)
{
  v[slot(i)] = z.re;
  v[slot(i) + 1] = z.im;
}
SL_PROG_FN sl_prog_c prog_real(double r) { return prog_c(r, 0.0); }
SL_PROG_FN int prog_zero(sl_prog_c a) { return a.re == 0 && a.im == 0; }
SL_PROG_FN sl_prog_c prog_neg(sl_prog_c a) { return prog_c(-a.re, -a.im); }
SL_PROG_FN sl_prog_c prog_sub(sl_prog_c a, sl_prog_c b) { return prog_c(a.re - b.re, a.im - b.im); }
SL_PROG_FN sl_prog_c prog_mul(sl_prog_c a, sl_prog_c b) { return prog_c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
/* a / b, scaled by b's largest component (Smith's algorithm) so that no intermediate overflows */
SL_PROG_FN sl_prog_c prog_div(sl_prog_c a, sl_prog_c b)
{
  if (fabs(b.re) >= fabs(b.im)) {
    double r = b.im / b.re, d = b.re + b.im * r;
    return prog_c((a.re + a.im * r) / d, (a.im - a.re * r) / d);
  }
  double r = b.re / b.im, d = b.re * r + b.im;
  return prog_c((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
SL_PROG_FN int prog_finite(double x) { return x - x == 0; } /* false for NaN and +-Inf */

/* history ring row k % rows = (cost, monitored value, aux) of the state; the first iteration whose values
 * are not finite stops the solve (S_STOP), whatever the solver's own steps decided (aux is NaN when unused:
 * Inf only) */
SL_PROG_FN void prog_record(double *const *v, sl_prog_arg a)
{
  double *s = v[0], *row = v[1] + 3 * (a.k % a.rows);
  double cost = s[slot(S_COST)], mon = s[slot(S_MON)], aux = s[slot(S_AUX)];
  int cost_bad = cost != cost || (!prog_finite(cost) && !a.flag);
  int aux_inf = aux == aux && !prog_finite(aux);
  row[0] = cost;
  row[1] = mon;
  row[2] = aux;
  if (s[slot(S_BAD)] < 0 && (s[slot(S_STOP)] == SL_STOP_NONFINITE || cost_bad || !prog_finite(mon) || aux_inf ||
                             !prog_finite(s[slot(S_REF)]))) {
    s[slot(S_BAD)] = a.k;
    s[slot(S_STOP)] = SL_STOP_NONFINITE;
  }
}

SL_PROG_FN void prog_cg_init(double *const *v)
{
  double rr = v[1][0];
  prog_put(v[0], CG_K_OLD, prog_real(rr));
  v[0][slot(S_MON)] = v[0][slot(S_REF)] = v[0][slot(S_COST)] = sqrt(rr);
}

SL_PROG_FN void prog_cg_alpha(double *const *v)
{
  sl_prog_c d = prog_c(v[1][0], v[1][1]);
  if (!prog_finite(d.re) || !prog_finite(d.im)) v[0][slot(S_STOP)] = SL_STOP_NONFINITE;
  if (prog_zero(d)) {
    v[0][slot(S_STOP)] = SL_STOP_BREAKDOWN;
    prog_put(v[0], CG_ALPHA, prog_real(0));
    prog_put(v[0], CG_MALPHA, prog_real(0));
    return;
  }
  sl_prog_c a = prog_div(prog_get(v[0], CG_K_OLD), d);
  prog_put(v[0], CG_ALPHA, a);
  prog_put(v[0], CG_MALPHA, prog_neg(a));
}

SL_PROG_FN void prog_cg_beta(double *const *v)
{
  double k = v[1][0], kold = v[0][slot(CG_K_OLD)];
  prog_put(v[0], CG_BETA, prog_real(kold != 0 ? k / kold : 0.0));
  prog_put(v[0], CG_K_OLD, prog_real(k));
  v[0][slot(S_MON)] = v[0][slot(S_COST)] = sqrt(k);
}

SL_PROG_FN void prog_pcg_coeffs(double *const *v, int first)
{
  double gamma = v[1][0];
  sl_prog_c delta = prog_c(v[2][0], v[2][1]), alpha, beta;
  if (first) {
    beta = prog_real(0);
    alpha = prog_zero(delta) ? prog_real(0) : prog_div(prog_real(gamma), delta);
    v[0][slot(S_REF)] = sqrt(gamma);
  } else {
    double gold = v[0][slot(CG_K_OLD)];
    beta = prog_real(gold != 0 ? gamma / gold : 0);
    sl_prog_c den = prog_sub(delta, prog_mul(beta, prog_div(prog_real(gamma), prog_get(v[0], CG_ALPHA_PREV))));
    alpha = prog_zero(den) ? prog_real(0) : prog_div(prog_real(gamma), den);
  }
  if (prog_zero(delta) && gamma != 0) v[0][slot(S_STOP)] = SL_STOP_BREAKDOWN;
  if (!prog_finite(gamma) || !prog_finite(delta.re) || !prog_finite(delta.im)) v[0][slot(S_STOP)] = SL_STOP_NONFINITE;
  prog_put(v[0], CG_ALPHA, alpha);
  prog_put(v[0], CG_MALPHA, prog_neg(alpha));
  prog_put(v[0], CG_BETA, beta);
  prog_put(v[0], CG_ALPHA_PREV, alpha);
  prog_put(v[0], CG_K_OLD, prog_real(gamma));
  v[0][slot(S_MON)] = v[0][slot(S_COST)] = sqrt(gamma);
}

SL_PROG_FN void prog_cgls_init(double *const *v)
{
  v[0][slot(CGLS_K_OLD)] = v[1][0];
  v[0][slot(S_MON)] = v[0][slot(S_REF)] = sqrt(v[1][0]);
  v[0][slot(S_COST)] = v[0][slot(S_AUX)] = sqrt(v[2][0]);
}

SL_PROG_FN void prog_cgls_alpha(double *const *v, double damp2)
{
  double den = v[1][0] + damp2 * v[2][0];
  double al = den != 0 ? v[0][slot(CGLS_K_OLD)] / den : 0.0;
  if (den == 0) v[0][slot(S_STOP)] = SL_STOP_BREAKDOWN;
  if (!prog_finite(den)) v[0][slot(S_STOP)] = SL_STOP_NONFINITE;
  v[0][slot(CGLS_ALPHA)] = al;
  v[0][slot(CGLS_MALPHA)] = -al;
}

SL_PROG_FN void prog_cgls_beta(double *const *v, double damp2)
{
  double k = v[1][0], kold = v[0][slot(CGLS_K_OLD)];
  v[0][slot(CGLS_BETA)] = kold != 0 ? k / kold : 0.0;
  v[0][slot(CGLS_K_OLD)] = k;
  v[0][slot(S_MON)] = sqrt(k);
  v[0][slot(S_COST)] = sqrt(v[2][0]);
  v[0][slot(S_AUX)] = sqrt(v[2][0] + damp2 * v[3][0]);
}

/* LSQR (Paige and Saunders 1982) with the recurrences and stopping rules of scipy.sparse.linalg.lsqr */
#define LQ(i) s[slot(LSQR_##i)]

SL_PROG_FN void prog_lsqr_beta0(double *const *v)
{
  double *s = v[0], beta = sqrt(v[2][0]);
  LQ(BNORM) = sqrt(v[1][0]);
  LQ(BETA) = beta;
  LQ(INV_BETA) = beta > 0 ? 1.0 / beta : 0.0;
  LQ(PHIBAR) = beta;
  s[slot(S_MON)] = s[slot(S_COST)] = s[slot(S_AUX)] = s[slot(S_REF)] = beta;
}

SL_PROG_FN void prog_lsqr_alpha0(double *const *v)
{
  double *s = v[0], alpha = sqrt(v[1][0]);
  LQ(ALPHA) = alpha;
  LQ(MALPHA) = -alpha;
  LQ(INV_ALPHA) = alpha > 0 ? 1.0 / alpha : 0.0;
  LQ(RHOBAR) = alpha;
  LQ(CS2) = -1.0;
  if (!prog_finite(alpha)) s[slot(S_STOP)] = SL_STOP_NONFINITE;
  LQ(ARNORM) = alpha * LQ(BETA);
  if (LQ(ARNORM) == 0) s[slot(S_STOP)] = SL_STOP_TOL; /* x0 solves the problem already */
}

SL_PROG_FN void prog_lsqr_step_a(double *const *v, sl_prog_arg a)
{
  double *s = v[0], beta = sqrt(v[1][0]), alpha = LQ(ALPHA), damp = a.d[0];
  LQ(BETA) = beta;
  if (!prog_finite(beta)) s[slot(S_STOP)] = SL_STOP_NONFINITE;
  if (beta > 0) {
    LQ(INV_BETA) = 1.0 / beta;
    LQ(ANORM) = sqrt(LQ(ANORM) * LQ(ANORM) + alpha * alpha + beta * beta + damp * damp);
    LQ(CU) = 1.0;
    LQ(CV) = -beta;
  } else { /* u = 0: keep u and v */
    LQ(INV_BETA) = 1.0;
    LQ(CU) = 0.0;
    LQ(CV) = 1.0;
  }
}

SL_PROG_FN void prog_lsqr_step_b(double *const *v, sl_prog_arg a)
{
  double *s = v[0], damp = a.d[0], atol = a.d[1], btol = a.d[2], ctol = a.d[3];
  double beta = LQ(BETA), alpha = LQ(ALPHA);
  if (!prog_finite(v[1][0]) || !prog_finite(v[2][0])) s[slot(S_STOP)] = SL_STOP_NONFINITE;
  if (beta > 0) {
    alpha = sqrt(v[1][0]);
    LQ(INV_ALPHA) = alpha > 0 ? 1.0 / alpha : 1.0;
  } else {
    LQ(INV_ALPHA) = 1.0;
  }
  double rhobar = LQ(RHOBAR), phibar = LQ(PHIBAR), rhobar1 = rhobar, psi = 0.0;
  if (damp > 0) {
    rhobar1 = hypot(rhobar, damp);
    double cs1 = rhobar / rhobar1, sn1 = damp / rhobar1;
    psi = sn1 * phibar;
    phibar = cs1 * phibar;
  }
  double rho = hypot(rhobar1, beta);
  double cs = rho > 0 ? rhobar1 / rho : 1.0, sn = rho > 0 ? beta / rho : 0.0;
  double theta = sn * alpha;
  rhobar = -cs * alpha;
  double phi = cs * phibar;
  phibar = sn * phibar;
  double tau = sn * phi;
  LQ(T1) = rho > 0 ? phi / rho : 0.0;
  LQ(T2) = rho > 0 ? -theta / rho : 0.0;
  LQ(INV_RHO) = rho > 0 ? 1.0 / rho : 0.0;
  double ddnorm = LQ(DDNORM) + (rho > 0 ? v[2][0] / (rho * rho) : 0.0);
  double delta = LQ(SN2) * rho, gambar = -LQ(CS2) * rho, rhs = phi - delta * LQ(Z);
  double zbar = gambar != 0 ? rhs / gambar : 0.0;
  double xnorm = sqrt(LQ(XXNORM) + zbar * zbar);
  double gamma = hypot(gambar, theta);
  LQ(CS2) = gamma > 0 ? gambar / gamma : 1.0;
  LQ(SN2) = gamma > 0 ? theta / gamma : 0.0;
  double z = gamma > 0 ? rhs / gamma : 0.0;
  LQ(Z) = z;
  LQ(XXNORM) += z * z;
  double anorm = LQ(ANORM), acond = anorm * sqrt(ddnorm);
  double res2 = LQ(RES2) + psi * psi, rnorm = sqrt(phibar * phibar + res2), arnorm = alpha * fabs(tau);
  double r1sq = rnorm * rnorm - damp * damp * LQ(XXNORM);
  double r1norm = r1sq < 0 ? -sqrt(-r1sq) : sqrt(r1sq);
  double bnorm = LQ(BNORM), eps = 2.220446049250313e-16; /* DBL_EPSILON */
  double test1 = bnorm > 0 ? rnorm / bnorm : 0.0, test2 = arnorm / (anorm * rnorm + eps), test3 = 1.0 / (acond + eps);
  double t1 = test1 / (1.0 + (bnorm > 0 ? anorm * xnorm / bnorm : 0.0));
  double rtol = btol + atol * (bnorm > 0 ? anorm * xnorm / bnorm : 0.0);
  int istop = 0;
  if (a.k >= a.niter) istop = SL_STOP_NITER;
  if (1.0 + test3 <= 1.0) istop = SL_STOP_LSQR_EPS;
  if (1.0 + test2 <= 1.0) istop = SL_STOP_LSQR_EPS;
  if (1.0 + t1 <= 1.0) istop = SL_STOP_LSQR_EPS;
  if (test3 <= ctol) istop = SL_STOP_LSQR_CONLIM;
  if (test2 <= atol) istop = SL_STOP_LSQR_ATOL;
  if (test1 <= rtol) istop = SL_STOP_TOL;
  LQ(ALPHA) = alpha;
  LQ(MALPHA) = -alpha;
  LQ(RHOBAR) = rhobar;
  LQ(PHIBAR) = phibar;
  LQ(DDNORM) = ddnorm;
  LQ(ACOND) = acond;
  LQ(RES2) = res2;
  LQ(XNORM) = xnorm;
  LQ(ARNORM) = arnorm;
  s[slot(S_MON)] = r1norm;
  s[slot(S_COST)] = r1norm;
  s[slot(S_AUX)] = rnorm;
  if (istop && s[slot(S_STOP)] != SL_STOP_NONFINITE) s[slot(S_STOP)] = istop;
}
#undef LQ

/** Runs step p on the buffers v. */
SL_PROG_FN void sl_prog_run(int p, double *const *v, sl_prog_arg a)
{
  switch (p) {
  case SL_PROG_RECORD: prog_record(v, a); break;
  case SL_PROG_CG_INIT: prog_cg_init(v); break;
  case SL_PROG_CG_ALPHA: prog_cg_alpha(v); break;
  case SL_PROG_CG_BETA: prog_cg_beta(v); break;
  case SL_PROG_PCG_COEFFS: prog_pcg_coeffs(v, a.flag); break;
  case SL_PROG_CGLS_INIT: prog_cgls_init(v); break;
  case SL_PROG_CGLS_ALPHA: prog_cgls_alpha(v, a.d[0]); break;
  case SL_PROG_CGLS_BETA: prog_cgls_beta(v, a.d[0]); break;
  case SL_PROG_LSQR_BETA0: prog_lsqr_beta0(v); break;
  case SL_PROG_LSQR_ALPHA0: prog_lsqr_alpha0(v); break;
  case SL_PROG_LSQR_STEP_A: prog_lsqr_step_a(v, a); break;
  case SL_PROG_LSQR_STEP_B: prog_lsqr_step_b(v, a); break;
  default: break;
  }
}

#ifdef __cplusplus
extern "C" {
#endif
/** Runs step p on the GPU (one thread, on the stream s); n buffers (device pointers). 0 or a CUDA error. */
int kernel_cuda_prog(int p, double *const *v, int n, sl_prog_arg a, void *s);
#ifdef __cplusplus
}
#endif

#endif
