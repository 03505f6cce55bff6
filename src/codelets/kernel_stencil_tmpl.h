/* The CPU stencil sum for one real type: included by kernel_stencil.c with R and SFX defined. */
#define ST_CAT2(a, b) a##b
#define ST_CAT(a, b) ST_CAT2(a, b)
#define SFN(name) ST_CAT(name, SFX)

/* Pointer to component 0 of input element (f, moved by dr rows along term t's axis, r + dr its row). */
static const R *SFN(st_src_)(const st_plan *p, const st_term *t, const R *xb, const R *glo, const R *ghi, int64_t f,
                             int64_t r, int64_t dr)
{
  int64_t rr = r + dr, nc = p->ncomp;
  if (rr >= 0 && rr < t->nloc) return xb + (f + dr * t->stride) * nc;
  if (!t->ghosts) return NULL; /* beyond the global edge: the weight is 0 */
  int64_t od = f / (t->stride * t->nloc), in = f % t->stride;
  if (rr < 0) return glo + ((od * p->wlo + (p->wlo + rr)) * t->stride + in) * nc;
  return ghi + ((od * p->whi + (rr - t->nloc)) * t->stride + in) * nc;
}

static void SFN(stencil_)(const st_plan *p, const R *xb, const R *glo, const R *ghi, int64_t s, int64_t e, R *y)
{
  const int nd = p->ndim, last = nd - 1, nc = p->ncomp;
  int64_t idx[SL_MAX_DIMS], rem = s;
  for (int d = last; d >= 0; d--) {
    idx[d] = p->ldims[d] ? rem % p->ldims[d] : 0;
    rem = p->ldims[d] ? rem / p->ldims[d] : 0;
  }
  const double(*cint)[5] = p->cint;
  for (int64_t f = s; f < e;) {
    int64_t k0 = idx[last], run = p->ldims[last] - k0;
    if (run > e - f) run = e - f;
    R *yr = y + (f - s) * nc;
    const int64_t len = run * nc;
    for (int64_t q = 0; q < len; q++) yr[q] = 0;
    for (int k = 0; k < p->nterms; k++) {
      const st_term *t = &p->t[k];
      if (t->axis != last) {
        int64_t r = idx[t->axis], g = r + t->off;
        double c[5];
        if (st_interior(t, g)) for (int i = 0; i < 5; i++) c[i] = cint[k][i];
        else st_coeffs(t, p->adjoint, g, c);
        for (int dr = -2; dr <= 2; dr++) {
          if (c[dr + 2] == 0.0) continue;
          const R *src = SFN(st_src_)(p, t, xb, glo, ghi, f, r, dr);
          if (!src) continue;
          const R w = (R)c[dr + 2];
          for (int64_t q = 0; q < len; q++) yr[q] += w * src[q];
        }
        continue;
      }
      /* along the last axis: a vectorised interior, element by element near the block's and axis' ends */
      int64_t lo = 4 - t->off > 2 ? 4 - t->off : 2, hi = t->n - 4 - t->off < t->nloc - 2 ? t->n - 4 - t->off : t->nloc - 2;
      int64_t a = lo - k0 > 0 ? lo - k0 : 0, b = hi - k0 < run ? hi - k0 : run;
      if (b < a) b = a;
      const R *x0 = xb + f * nc;
      if (a < b) {
        const R w0 = (R)cint[k][0], w1 = (R)cint[k][1], w2 = (R)cint[k][2], w3 = (R)cint[k][3], w4 = (R)cint[k][4];
        for (int64_t q = a * nc; q < b * nc; q++)
          yr[q] += w0 * x0[q - 2 * nc] + w1 * x0[q - nc] + w2 * x0[q] + w3 * x0[q + nc] + w4 * x0[q + 2 * nc];
      }
      for (int64_t kk = 0; kk < run; kk++) {
        if (kk == a && b > a) kk = b;
        if (kk >= run) break;
        int64_t r = k0 + kk, g = r + t->off;
        double c[5];
        st_coeffs(t, p->adjoint, g, c);
        for (int dr = -2; dr <= 2; dr++) {
          if (c[dr + 2] == 0.0) continue;
          const R *src = SFN(st_src_)(p, t, xb, glo, ghi, f + kk, r, dr);
          if (!src) continue;
          for (int q = 0; q < nc; q++) yr[kk * nc + q] += (R)c[dr + 2] * src[q];
        }
      }
    }
    f += run;
    idx[last] += run;
    for (int d = last; d > 0 && idx[d] >= p->ldims[d]; d--) {
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
}

#undef SFN
#undef ST_CAT
#undef ST_CAT2
