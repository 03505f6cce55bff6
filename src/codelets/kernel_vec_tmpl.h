/* One body for the four dtypes: included by kernel_vec.c with R (float or double), CPLX (0 or 1) and
 * SFX (s, d, c, z) defined. Element i occupies x[i] (real) or x[2i], x[2i+1] (complex). */
#define SL_CAT2(a, b) a##b
#define SL_CAT(a, b) SL_CAT2(a, b)
#define FN(name) SL_CAT(name, SFX)

static void FN(fill_)(int64_t n, void *xv, const double a[2])
{
  R *x = xv;
  for (int64_t i = 0; i < n; i++) {
    if (CPLX) {
      x[2 * i] = (R)a[0];
      x[2 * i + 1] = (R)a[1];
    } else {
      x[i] = (R)a[0];
    }
  }
}

static void FN(random_)(int64_t n, void *xv, uint64_t key, int64_t off)
{
  R *x = xv;
  for (int64_t j = 0; j < n * (CPLX ? 2 : 1); j++) x[j] = (R)kernel_random_value(key, off + j);
}

static void FN(scale_)(int64_t n, void *xv, const double a[2])
{
  R *x = xv;
  const R ar = (R)a[0], ai = (R)a[1];
  for (int64_t i = 0; i < n; i++) {
    if (CPLX) {
      R xr = x[2 * i], xi = x[2 * i + 1];
      x[2 * i] = ar * xr - ai * xi;
      x[2 * i + 1] = ar * xi + ai * xr;
    } else {
      x[i] *= ar;
    }
  }
}

static void FN(axpby_)(int64_t n, void *yv, const void *xv, const double a[2], const double b[2])
{
  R *y = yv;
  const R *x = xv;
  const R ar = (R)a[0], ai = (R)a[1], br = (R)b[0], bi = (R)b[1];
  /* Separate loops keep the branch out of the vectorised body; b == 0 never reads y. */
  if (b[0] == 0.0 && b[1] == 0.0) {
    for (int64_t i = 0; i < n; i++) {
      if (CPLX) {
        R xr = x[2 * i], xi = x[2 * i + 1];
        y[2 * i] = ar * xr - ai * xi;
        y[2 * i + 1] = ar * xi + ai * xr;
      } else {
        y[i] = ar * x[i];
      }
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    if (CPLX) {
      R xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
      y[2 * i] = ar * xr - ai * xi + br * yr - bi * yi;
      y[2 * i + 1] = ar * xi + ai * xr + br * yi + bi * yr;
    } else {
      y[i] = ar * x[i] + br * y[i];
    }
  }
}

static void FN(mul_)(int64_t n, void *zv, const void *xv, const void *yv)
{
  R *z = zv;
  const R *x = xv, *y = yv;
  for (int64_t i = 0; i < n; i++) {
    if (CPLX) {
      R xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
      z[2 * i] = xr * yr - xi * yi;
      z[2 * i + 1] = xr * yi + xi * yr;
    } else {
      z[i] = x[i] * y[i];
    }
  }
}

static void FN(conj_)(int64_t n, void *yv, const void *xv)
{
  R *y = yv;
  const R *x = xv;
  for (int64_t i = 0; i < n; i++) {
    if (CPLX) {
      y[2 * i] = x[2 * i];
      y[2 * i + 1] = -x[2 * i + 1];
    } else {
      y[i] = x[i];
    }
  }
}

static void FN(thresh_)(int64_t n, void *yv, const void *xv, int kind, double t)
{
  R *y = yv;
  const R *x = xv;
  for (int64_t i = 0; i < n; i++) {
    if (CPLX) {
      double f = sl_thresh_factor(kind, hypot((double)x[2 * i], (double)x[2 * i + 1]), t);
      y[2 * i] = (R)(f * x[2 * i]);
      y[2 * i + 1] = (R)(f * x[2 * i + 1]);
    } else {
      y[i] = (R)(sl_thresh_factor(kind, fabs((double)x[i]), t) * x[i]);
    }
  }
}

static void FN(clip_)(int64_t n, void *yv, const void *xv, int kind, double lo, double hi, double t)
{
  R *y = yv;
  const R *x = xv;
  const int c = CPLX ? 2 : 1;
  if (kind == SL_KCLIP_BOX) {
    for (int64_t j = 0; j < c * n; j++) y[j] = (R)sl_clip1((double)x[j], lo, hi);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double m = CPLX ? hypot((double)x[2 * i], (double)x[2 * i + 1]) : fabs((double)x[i]);
    double f = m > t ? t / m : 1.0;
    for (int k = 0; k < c; k++) y[c * i + k] = (R)(f * x[c * i + k]);
  }
}

static void FN(abs2_)(int64_t n, void *sv, const void *xv, int acc)
{
  R *s = sv;
  const R *x = xv;
  for (int64_t i = 0; i < n; i++) {
    if (CPLX) {
      R v = x[2 * i] * x[2 * i] + x[2 * i + 1] * x[2 * i + 1];
      s[2 * i] = acc ? s[2 * i] + v : v;
      s[2 * i + 1] = 0;
    } else {
      s[i] = acc ? s[i] + x[i] * x[i] : x[i] * x[i];
    }
  }
}

static void FN(group_)(int64_t n, void *yv, const void *xv, const void *sv, int kind, double t)
{
  R *y = yv;
  const R *x = xv, *s = sv;
  const int c = CPLX ? 2 : 1;
  for (int64_t i = 0; i < n; i++) {
    double f = sl_group_factor(kind, (double)s[c * i], t);
    for (int k = 0; k < c; k++) y[c * i + k] = (R)(f * x[c * i + k]);
  }
}

/* kernel_pcg_update's pass; red: with the reductions (a constant where inlined) */
static inline __attribute__((always_inline)) void FN(pcg_pass_)(int64_t n, void *const *v, const double al[2],
                                                                  const double ma[2], const double be[2], int red,
                                                                  double g[2], double d[2])
{
  R *restrict r = v[0], *restrict w = v[1], *restrict z = v[3], *restrict s = v[4], *restrict p = v[5];
  R *restrict x = v[6];
  const R *restrict q = v[2];
  const R ar = (R)al[0], ai = (R)al[1], mr = (R)ma[0], mi = (R)ma[1], br = (R)be[0], bi = (R)be[1];
  double g0 = 0.0, d0 = 0.0, d1 = 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (CPLX) {
      const int64_t j = 2 * i, k = 2 * i + 1;
      R zr = q[j] + br * z[j] - bi * z[k], zi = q[k] + br * z[k] + bi * z[j];
      R sr = w[j] + br * s[j] - bi * s[k], si = w[k] + br * s[k] + bi * s[j];
      R pr = r[j] + br * p[j] - bi * p[k], pi = r[k] + br * p[k] + bi * p[j];
      x[j] += ar * pr - ai * pi;
      x[k] += ar * pi + ai * pr;
      R rr = r[j] + mr * sr - mi * si, ri = r[k] + mr * si + mi * sr;
      R wr = w[j] + mr * zr - mi * zi, wi = w[k] + mr * zi + mi * zr;
      z[j] = zr, z[k] = zi, s[j] = sr, s[k] = si, p[j] = pr, p[k] = pi;
      r[j] = rr, r[k] = ri, w[j] = wr, w[k] = wi;
      if (red) {
        g0 += (double)rr * rr + (double)ri * ri;
        d0 += (double)wr * rr + (double)wi * ri; /* conj(w) r */
        d1 += (double)wr * ri - (double)wi * rr;
      }
    } else {
      R zv = q[i] + br * z[i], sv = w[i] + br * s[i], pv = r[i] + br * p[i];
      x[i] += ar * pv;
      R rv = r[i] + mr * sv, wv = w[i] + mr * zv;
      z[i] = zv, s[i] = sv, p[i] = pv, r[i] = rv, w[i] = wv;
      if (red) {
        g0 += (double)rv * rv;
        d0 += (double)wv * rv;
      }
    }
  }
  if (red) {
    g[0] = g0, g[1] = 0.0;
    d[0] = d0, d[1] = d1;
  }
}

static void FN(pcg_)(int64_t n, void *const *v, const double al[2], const double ma[2], const double be[2], double g[2],
                     double d[2])
{
  if (g) FN(pcg_pass_)(n, v, al, ma, be, 1, g, d);
  else FN(pcg_pass_)(n, v, al, ma, be, 0, NULL, NULL);
}

/* |x_i| in double */
static inline double FN(abs_)(const R *x, int64_t i)
{
  return CPLX ? hypot((double)x[2 * i], (double)x[2 * i + 1]) : fabs((double)x[i]);
}

static void FN(reduce_)(sl_red_kind k, int64_t n, const void *xv, const void *yv, double p, double out[2])
{
  const R *x = xv, *y = yv;
  double s0 = 0.0, s1 = 0.0;
  double m = k == SL_RED_MINABS ? INFINITY : 0.0;
  /* The sums run over the real components j (2 per complex element) into four accumulators each, j modulo 4:
   * one running sum is bound by the latency of its additions (a norm then reads at about half the memory's
   * rate on one core); four keep the loads streaming, and the sum is summed pairwise at the end. */
  const int64_t nr = CPLX ? 2 * n : n; /* real components */
  double acc[2][4] = {{0}};
#define SL_RED_LOOP(BODY)                                                                                           \
  do {                                                                                                              \
    int64_t j = 0;                                                                                                  \
    for (; j + 4 <= nr; j += 4)                                                                                     \
      for (int u = 0; u < 4; u++) BODY(j + u, u);                                                                   \
    for (int u = 0; j < nr; j++, u++) BODY(j, u);                                                                   \
    s0 = (acc[0][0] + acc[0][1]) + (acc[0][2] + acc[0][3]);                                                         \
    s1 = (acc[1][0] + acc[1][1]) + (acc[1][2] + acc[1][3]);                                                         \
  } while (0)
  switch (k) {
  case SL_RED_DOT:
  case SL_RED_VDOT: {
    const double sgn = k == SL_RED_VDOT ? -1.0 : 1.0;
    /* complex: component j of x times y's two components of the same element (re: xr yr - xi yi, im: xr yi + xi
     * yr, x's imaginary part negated for VDOT) */
#define SL_DOT_C(j, u)                                                                                              \
    do {                                                                                                            \
      const int64_t e = (j) & ~(int64_t)1;                                                                          \
      if ((j) & 1) {                                                                                                \
        const double xi = sgn * x[j];                                                                               \
        acc[0][u] -= xi * y[e + 1];                                                                                 \
        acc[1][u] += xi * y[e];                                                                                     \
      } else {                                                                                                      \
        acc[0][u] += (double)x[j] * y[e];                                                                           \
        acc[1][u] += (double)x[j] * y[e + 1];                                                                       \
      }                                                                                                             \
    } while (0)
#define SL_DOT_R(j, u) (acc[0][u] += (double)x[j] * (double)y[j])
    if (CPLX) SL_RED_LOOP(SL_DOT_C);
    else SL_RED_LOOP(SL_DOT_R);
#undef SL_DOT_C
#undef SL_DOT_R
    break;
  }
  case SL_RED_SUM:
#define SL_SUM_(j, u) (acc[CPLX ? (j) & 1 : 0][u] += x[j])
    SL_RED_LOOP(SL_SUM_);
#undef SL_SUM_
    break;
  case SL_RED_ABSPOW:
    if (p == 2.0) {
#define SL_SQ_(j, u) (acc[0][u] += (double)x[j] * x[j])
      SL_RED_LOOP(SL_SQ_);
#undef SL_SQ_
    } else if (p == 1.0) {
      for (int64_t i = 0; i < n; i++) s0 += FN(abs_)(x, i);
    } else {
      for (int64_t i = 0; i < n; i++) s0 += pow(FN(abs_)(x, i), p);
    }
    break;
  case SL_RED_MAXABS:
    for (int64_t i = 0; i < n; i++) {
      double v = FN(abs_)(x, i);
      m = v > m ? v : m;
    }
    s0 = m;
    break;
  case SL_RED_MINABS:
    for (int64_t i = 0; i < n; i++) {
      double v = FN(abs_)(x, i);
      m = v < m ? v : m;
    }
    s0 = m;
    break;
  case SL_RED_NNZ:
    for (int64_t i = 0; i < n; i++) s0 += CPLX ? (x[2 * i] != 0 || x[2 * i + 1] != 0) : (x[i] != 0);
    break;
  }
#undef SL_RED_LOOP
  out[0] = s0;
  out[1] = s1;
}

#undef FN
