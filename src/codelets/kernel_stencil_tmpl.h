/* The CPU stencil sum for one real type: included by kernel_stencil.c with R and SFX defined. */
#define ST_CAT2(a, b) a##b
#define ST_CAT(a, b) ST_CAT2(a, b)
#define SFN(name) ST_CAT(name, SFX)

/* A source of a row sum: input elements elem, elem + 1, ... (found in the segments), or a ghost run. */
typedef struct {
  const R *ghost; /* NULL: the input, from element elem */
  int64_t elem;
  R w;
} SFN(st_source_);

/* The source for input element (f, moved by dr rows along term t's axis, r + dr its row); 0 when it lies
 * beyond the global edge (its weight is 0). */
static int SFN(st_src_)(const st_plan *p, const st_term *t, const R *glo, const R *ghi, int64_t f, int64_t r, int64_t dr,
                        SFN(st_source_) *src)
{
  int64_t rr = r + dr, nc = p->ncomp;
  src->ghost = NULL;
  src->elem = f + dr * t->stride;
  if (rr >= 0 && rr < t->nloc) return 1;
  if (!t->ghosts) return 0;
  int64_t od = f / (t->stride * t->nloc), in = f % t->stride;
  if (rr < 0) src->ghost = glo + ((od * p->wlo + (p->wlo + rr)) * t->stride + in) * nc;
  else src->ghost = ghi + ((od * p->whi + (rr - t->nloc)) * t->stride + in) * nc;
  return 1;
}

/* y[q] = sum_k w[k] s[k][q] for q in [0, len): one pass, unrolled for the usual source counts. */
static void SFN(row_sum_)(int ns, const R *w, const R *const *src, R *y, int64_t len)
{
#define ST_T(k) w[k] * src[k][q]
  switch (ns) {
  case 0: for (int64_t q = 0; q < len; q++) y[q] = 0; return;
  case 1: for (int64_t q = 0; q < len; q++) y[q] = ST_T(0); return;
  case 2: for (int64_t q = 0; q < len; q++) y[q] = ST_T(0) + ST_T(1); return;
  case 3: for (int64_t q = 0; q < len; q++) y[q] = ST_T(0) + ST_T(1) + ST_T(2); return;
  case 4: for (int64_t q = 0; q < len; q++) y[q] = ST_T(0) + ST_T(1) + ST_T(2) + ST_T(3); return;
  case 5: for (int64_t q = 0; q < len; q++) y[q] = ST_T(0) + ST_T(1) + ST_T(2) + ST_T(3) + ST_T(4); return;
  case 6: for (int64_t q = 0; q < len; q++) y[q] = ST_T(0) + ST_T(1) + ST_T(2) + ST_T(3) + ST_T(4) + ST_T(5); return;
  case 7:
    for (int64_t q = 0; q < len; q++) y[q] = ST_T(0) + ST_T(1) + ST_T(2) + ST_T(3) + ST_T(4) + ST_T(5) + ST_T(6);
    return;
  default:
    for (int64_t q = 0; q < len; q++) y[q] = ST_T(0) + ST_T(1) + ST_T(2) + ST_T(3) + ST_T(4) + ST_T(5) + ST_T(6) + ST_T(7);
    for (int k = 8; k < ns; k++)
      for (int64_t q = 0; q < len; q++) y[q] += ST_T(k);
    return;
  }
#undef ST_T
}

/* Adds source q with weight wq to the n sources (p, w): its weight joins an equal pointer's, or it is appended
 * (the terms of a fused sum read the same centre). Returns the new count. */
static int SFN(add_src_)(const R **p, R *w, int n, const R *q, R wq)
{
  int j = 0;
  while (j < n && p[j] != q) j++;
  if (j < n) w[j] += wq;
  else p[n] = q, w[n++] = wq;
  return n;
}

#define ST_MAX_SRC (5 * ST_MAX_TERMS)

/* y[q] = sum_k w_k src_k[q] for q in [0, len) elements, the input sources each moved by `shift` elements: cut
 * where a source crosses from one segment to the next, each piece one pass. -1 if a source is in no segment. */
static int SFN(span_sum_)(const st_input *in, int nc, int ns0, const SFN(st_source_) *src0, int64_t shift, R *y, int64_t len)
{
  /* one source per input element: the terms of a fused sum share the centre (and the ghost runs they read),
   * so their weights are added first (a 3-D Laplacian reads 7 sources in one pass, not 9 in two) */
  SFN(st_source_) src[ST_MAX_SRC];
  int ns = 0;
  for (int i = 0; i < ns0; i++) {
    int j = 0;
    while (j < ns && !(src[j].ghost == src0[i].ghost && (src0[i].ghost || src[j].elem == src0[i].elem))) j++;
    if (j < ns) src[j].w += src0[i].w;
    else src[ns++] = src0[i];
  }
  const R *ptr[ST_MAX_SRC] = {NULL};
  R w[ST_MAX_SRC];
  for (int i = 0; i < ns; i++) w[i] = src[i].w;
  for (int64_t q = 0; q < len;) {
    int64_t n = len - q;
    for (int i = 0; i < ns; i++) {
      if (src[i].ghost) {
        ptr[i] = src[i].ghost + (shift + q) * nc;
        continue;
      }
      int64_t el = src[i].elem + shift + q;
      int g = st_seg_find(in, el);
      if (g < 0) return -1;
      ptr[i] = (const R *)in->ptr[g] + (el - in->start[g]) * nc;
      if (in->start[g] + in->len[g] - el < n) n = in->start[g] + in->len[g] - el;
    }
    SFN(row_sum_)(ns, w, ptr, y + q * nc, n * nc);
    q += n;
  }
  return 0;
}

#ifndef ST_EDGE
#define ST_EDGE 8 /* rows at each end of the last axis whose weights a task tabulates once */
#endif

/* The weights of row r (local) along term t: from the task's table ce of the first and last ST_EDGE rows when
 * given, else worked out into buf. */
static const double *SFN(edge_weights_)(const st_term *t, int adjoint, const double (*ce)[ST_EDGE][5], int64_t r,
                                        double buf[5])
{
  if (ce && r < ST_EDGE) return ce[0][r];
  if (ce && r >= t->nloc - ST_EDGE) return ce[1][t->nloc - 1 - r];
  st_coeffs(t, adjoint, r + t->off, buf);
  return buf;
}

/* The reach of weights c (5 taps, -2..2): how many rows below (lo) and above (hi) a row they read. */
static void SFN(tap_reach_)(const double c[5], int64_t *lo, int64_t *hi)
{
  *lo = *hi = 0;
  for (int dr = -2; dr <= 2; dr++)
    if (c[dr + 2] != 0.0) {
      if (-dr > *lo) *lo = -dr;
      if (dr > *hi) *hi = dr;
    }
}

static int SFN(stencil_)(const st_plan *p, const st_input *in, int64_t s, int64_t e, R *y)
{
  const int ndim = p->ndim, last = ndim - 1, nc = p->ncomp;
  const R *glo = (const R *)in->glo, *ghi = (const R *)in->ghi;
  int64_t idx[SL_MAX_DIMS], rem = s;
  for (int d = last; d >= 0; d--) {
    idx[d] = p->ldims[d] ? rem % p->ldims[d] : 0;
    rem = p->ldims[d] ? rem / p->ldims[d] : 0;
  }
  const double(*cint)[5] = p->cint;
  int lt = -1; /* the term along the last axis, if any */
  for (int k = 0; k < p->nterms; k++)
    if (p->t[k].axis == last) lt = k;
  /* the weights of the last axis's first and last ST_EDGE rows, worked out once for every row of the task
   * (short rows spend a large share of their time on their ends) */
  double ce[2][ST_EDGE][5];
  const int cached = lt >= 0 && p->t[lt].nloc >= 2 * ST_EDGE;
  if (cached)
    for (int r = 0; r < ST_EDGE; r++) {
      st_coeffs(&p->t[lt], p->adjoint, r + p->t[lt].off, ce[0][r]);
      st_coeffs(&p->t[lt], p->adjoint, p->t[lt].nloc - 1 - r + p->t[lt].off, ce[1][r]);
    }
  /* Local rows [plo, phi) of each term read with the interior weights and no ghost (along the last axis: the
   * elements of a row summed in one pass with the other sources). A whole row of the last
   * axis whose index along every other term's axis is in that range is plain: its sources are the previous
   * plain row's moved by one row, so consecutive plain rows share one set-up (kept below while every source
   * stays in its segment). */
  int64_t plo[ST_MAX_TERMS], phi[ST_MAX_TERMS];
  for (int k = 0; k < p->nterms; k++) {
    const st_term *t = &p->t[k];
    int64_t rl, rh;
    SFN(tap_reach_)(cint[k], &rl, &rh);
    plo[k] = t->ilo - t->off > rl ? t->ilo - t->off : rl;
    phi[k] = t->ihi - t->off < t->nloc - rh ? t->ihi - t->off : t->nloc - rh;
  }
  /* a row's direct set-up: every source (merged) with the end of its segment, the row itself, and the
   * interior's sources (the same moved by a, with the last axis's interior taps) */
  const R *sp[ST_MAX_SRC + 5], *send[ST_MAX_SRC + 5], *ip[ST_MAX_SRC + 5], *xrow = NULL, *xend = NULL;
  R sw[ST_MAX_SRC + 5], iw[ST_MAX_SRC + 5];
  int nsp = 0, ni = 0, kept = 0; /* kept: the set-up is a plain row's, row f_kept */
  int64_t a = 0, b = 0, f_kept = 0;
  for (int64_t f = s; f < e;) {
    int64_t k0 = idx[last], run = p->ldims[last] - k0;
    if (run > e - f) run = e - f;
    R *yr = y + (f - s) * nc;
    int plain = lt >= 0 && k0 == 0 && run == p->ldims[last];
    for (int k = 0; plain && k < p->nterms; k++)
      if (k != lt && (idx[p->t[k].axis] < plo[k] || idx[p->t[k].axis] >= phi[k])) plain = 0;
    int direct = 0;
    if (plain && kept && f == f_kept + run) { /* the previous row's set-up moved by one row */
      const int64_t step = run * nc;
      direct = xrow + step + p->t[lt].nloc * nc <= xend;
      for (int i = 0; i < nsp; i++) direct = direct && sp[i] + step + run * nc <= send[i];
      if (direct) {
        xrow += step;
        for (int i = 0; i < nsp; i++) sp[i] += step;
        for (int i = 0; i < ni; i++) ip[i] += step;
      }
    }
    kept = 0;
    /* the sources of the terms along the other axes: whole input rows */
    SFN(st_source_) src[ST_MAX_SRC];
    int ns = 0;
    if (!direct)
      for (int k = 0; k < p->nterms; k++) {
        const st_term *t = &p->t[k];
        if (k == lt) continue;
        int64_t r = idx[t->axis], g = r + t->off;
        double c[5];
        if (st_interior(t, g)) for (int i = 0; i < 5; i++) c[i] = cint[k][i];
        else st_coeffs(t, p->adjoint, g, c);
        for (int dr = -2; dr <= 2; dr++) {
          if (c[dr + 2] == 0.0 || !SFN(st_src_)(p, t, glo, ghi, f, r, dr, &src[ns])) continue;
          src[ns++].w = (R)c[dr + 2];
        }
      }
    if (lt < 0) {
      if (SFN(span_sum_)(in, nc, ns, src, 0, yr, run) != 0) return -1;
    } else {
      /* along the last axis: its interior joins the one pass; near the ends, element by element */
      const st_term *t = &p->t[lt];
      if (!direct) {
        /* [a, b): the row's elements with the interior weights whose taps stay inside the block */
        a = plo[lt] - k0 > 0 ? plo[lt] - k0 : 0, b = phi[lt] - k0 < run ? phi[lt] - k0 : run;
        if (a > run) a = run;
        if (b < a) b = a;
        /* the input row itself, when no ghost layer is involved and one segment holds it */
        xrow = NULL;
        if (!t->ghosts) {
          int64_t rs = f - k0;
          int sg = st_seg_find(in, rs);
          if (sg >= 0 && in->start[sg] + in->len[sg] >= rs + t->nloc) {
            xrow = (const R *)in->ptr[sg] + (rs - in->start[sg]) * nc;
            xend = (const R *)in->ptr[sg] + in->len[sg] * nc;
          }
        }
        /* the usual case: the row and every other source's run of `run` elements each in one segment (or a
         * ghost run): direct pointers, one pass over the interior and the ends element by element */
        direct = xrow != NULL;
        nsp = 0;
        for (int i = 0; direct && i < ns; i++) {
          const R *q = src[i].ghost, *qend = NULL;
          if (!q) {
            int sg = st_seg_find(in, src[i].elem);
            if (sg < 0 || in->start[sg] + in->len[sg] < src[i].elem + run) direct = 0;
            else {
              q = (const R *)in->ptr[sg] + (src[i].elem - in->start[sg]) * nc;
              qend = (const R *)in->ptr[sg] + in->len[sg] * nc;
            }
          }
          if (!direct) break;
          int n0 = nsp;
          nsp = SFN(add_src_)(sp, sw, nsp, q, src[i].w);
          if (nsp > n0) send[n0] = qend;
        }
        if (direct) {
          /* the interior's sources: the other sources moved by a, and the last axis's interior taps */
          ni = 0;
          for (int i = 0; i < nsp; i++) ip[ni] = sp[i] + a * nc, iw[ni++] = sw[i];
          for (int dr = -2; dr <= 2; dr++) {
            if (cint[lt][dr + 2] == 0.0) continue;
            ni = SFN(add_src_)(ip, iw, ni, xrow + (k0 + a + dr) * nc, (R)cint[lt][dr + 2]);
          }
          kept = plain;
        }
      } else {
        kept = 1;
      }
      f_kept = f;
      if (direct) {
        if (a < b) SFN(row_sum_)(ni, iw, ip, yr + a * nc, (b - a) * nc);
        for (int part = 0; part < 2; part++)
          for (int64_t kk = part ? b : 0; kk < (part ? run : a); kk++) {
            int64_t r = k0 + kk;
            double cbuf[5];
            const double *c = SFN(edge_weights_)(t, p->adjoint, cached ? ce : NULL, r, cbuf);
            for (int q = 0; q < nc; q++) {
              R acc = 0;
              for (int i = 0; i < nsp; i++) acc += sw[i] * sp[i][kk * nc + q];
              for (int dr = -2; dr <= 2; dr++)
                if (c[dr + 2] != 0.0 && r + dr >= 0 && r + dr < t->nloc) acc += (R)c[dr + 2] * xrow[(r + dr) * nc + q];
              yr[kk * nc + q] = acc;
            }
          }
      } else if (a < b) {
        int n2 = ns;
        SFN(st_source_) src2[ST_MAX_SRC];
        for (int i = 0; i < ns; i++) {
          src2[i] = src[i];
          if (src2[i].ghost) src2[i].ghost += a * nc;
          else src2[i].elem += a;
        }
        for (int dr = -2; dr <= 2; dr++)
          if (cint[lt][dr + 2] != 0.0) src2[n2++] = (SFN(st_source_)){.ghost = NULL, .elem = f + a + dr, .w = (R)cint[lt][dr + 2]};
        if (SFN(span_sum_)(in, nc, n2, src2, 0, yr + a * nc, b - a) != 0) return -1;
      }
      for (int part = 0; part < 2 && !direct; part++) {
        int64_t from = part ? b : 0, to = part ? run : a;
        if (from >= to) continue;
        if (SFN(span_sum_)(in, nc, ns, src, from, yr + from * nc, to - from) != 0) return -1;
        for (int64_t kk = from; kk < to; kk++) {
          int64_t r = k0 + kk;
          double cbuf[5];
          const double *c = SFN(edge_weights_)(t, p->adjoint, cached ? ce : NULL, r, cbuf);
          for (int dr = -2; dr <= 2; dr++) {
            SFN(st_source_) one;
            if (c[dr + 2] == 0.0 || !SFN(st_src_)(p, t, glo, ghi, f + kk, r, dr, &one)) continue;
            const R *q1 = one.ghost;
            if (!q1) {
              int sg = st_seg_find(in, one.elem);
              if (sg < 0) return -1;
              q1 = (const R *)in->ptr[sg] + (one.elem - in->start[sg]) * nc;
            }
            for (int q = 0; q < nc; q++) yr[kk * nc + q] += (R)c[dr + 2] * q1[q];
          }
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
  return 0;
}

#undef ST_MAX_SRC
#undef SFN
#undef ST_CAT
#undef ST_CAT2
