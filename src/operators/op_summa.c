/* Distributed MatrixMult, SUMMA: Y = A X with A (N x K), X (K x M) and Y (N x M) in 2-D blocks over a
 * pr x pc process grid (rank r = i pc + j). Rank (i, j) holds A's rows-block i (of N over pr) x
 * columns-block j (of K over pc), X's rows-block i (of K over pr) x columns-block j (of M over pc), and Y's
 * rows-block i x columns-block j. K is cut into panels at both splits' boundaries; a panel lies in one A
 * column-block (owner column jA) and one X row-block (owner row iX).
 *   forward  for each panel: A(i, panel) broadcast along grid row i from column jA; X(panel, j) broadcast
 *            along grid column j from row iX; T = A(i, panel) X(panel, j); Y_ij += T
 *   adjoint  for each panel: the same A broadcast; W = A(i, panel)^H Y_ij; W summed over grid column j
 *            (allreduce); rank (iX, j) stores W as its rows of X
 * Every step is a task (pack, broadcast, gemm, add), each panel with its own buffers: StarPU runs the
 * broadcasts of the next panels while the gemm of this one runs (the pipelining of SUMMA). */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"

#define part_of sl_split_count
#define off_of sl_split_offset

typedef struct {
  int pr, pc, i, j;
  int64_t N, K, M;
  int64_t nb, ka, kx, mb;     /* this rank's extents: A rows / Y rows, A columns, X rows, X / Y columns */
  int64_t offka, offkx;       /* first global column of its A block, first global row of its X block */
  int npanels;
  int64_t *p0, *w;            /* panel start and width */
  int *ja, *ix;               /* owner column of A's panel, owner row of X's panel */
  starpu_data_handle_t *ap, *xp, *wp; /* per panel: A panel (nb x w), X panel (w x mb), W (w x mb) */
  sl_array *t[2];             /* the products to add into Y, alternating */
  comm_channel *row, *col;
  sl_kept a;                  /* this rank's A block (nb x ka) */
} summa_t;

static void summa_free(void *p)
{
  summa_t *s = p;
  for (int t = 0; t < s->npanels; t++) {
    if (s->ap && s->ap[t]) starpu_data_unregister(s->ap[t]);
    if (s->xp && s->xp[t]) starpu_data_unregister(s->xp[t]);
    if (s->wp && s->wp[t]) starpu_data_unregister(s->wp[t]);
  }
  sl_array_destroy(&s->t[0]);
  sl_array_destroy(&s->t[1]);
  if (s->row) comm_channel_destroy(s->row);
  if (s->col) comm_channel_destroy(s->col);
  sl_kept_free(&s->a);
  free(s->p0), free(s->w), free(s->ja), free(s->ix), free(s->ap), free(s->xp), free(s->wp);
  free(s);
}


/* A(i, panel t) on every rank of grid row i: packed by its owner, broadcast along the row. */
static int bcast_a(sl_op *op, summa_t *s, int t)
{
  size_t el = sl_dtype_size(op->dtype);
  if (!s->ap[t]) return SL_SUCCESS; /* nb = 0: the whole row has nothing */
  if (s->j == s->ja[t])
    SL_TRY(codelet_rows_submit(1, &s->ap[t], STARPU_W, 1, &s->a.h, el, s->nb, s->w[t], s->p0[t] - s->offka, s->ka, 0,
                               s->w[t]));
  return s->pc > 1 ? comm_bcast(s->row, op->dtype, s->ja[t], s->ap[t]) : SL_SUCCESS;
}

static int summa_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  summa_t *s = op->data;
  size_t el = sl_dtype_size(op->dtype);
  starpu_data_handle_t *hx = NULL, *hy = NULL, *ht[2] = {NULL, NULL};
  int nx = 0, ny = 0, nt[2] = {0, 0};
  int rc = sl_op_chunks(x, &hx, &nx);
  if (rc == SL_SUCCESS) rc = sl_op_chunks(y, &hy, &ny);
  for (int k = 0; k < 2 && rc == SL_SUCCESS; k++) rc = sl_op_chunks(s->t[k], &ht[k], &nt[k]);
  if (rc == SL_SUCCESS && mode == SL_FORWARD) rc = sl_array_fill(y, SL_REAL(0));
  for (int t = 0; t < s->npanels && rc == SL_SUCCESS; t++) {
    sl_trace_block(t, 0); /* the panel in the trace's tags */
    rc = bcast_a(op, s, t);
    if (mode == SL_FORWARD) {
      /* X(panel, j): rows p0 - offkx .. of the owner's block, contiguous; broadcast along column j */
      if (rc == SL_SUCCESS && s->xp[t] && s->i == s->ix[t])
        rc = codelet_rows_submit(1, &s->xp[t], STARPU_W, nx, hx, el, 1, s->w[t] * s->mb, (s->p0[t] - s->offkx) * s->mb, 0, 0, 0);
      if (rc == SL_SUCCESS && s->xp[t] && s->pr > 1) rc = comm_bcast(s->col, op->dtype, s->ix[t], s->xp[t]);
      sl_array *T = s->t[t % 2];
      if (rc == SL_SUCCESS && nt[t % 2] > 0)
        rc = codelet_matmul_submit(op->dtype, 0, s->nb, s->w[t], s->mb, 1, s->ap[t], 1, &s->xp[t], nt[t % 2], ht[t % 2]);
      if (rc == SL_SUCCESS && nt[t % 2] > 0) rc = sl_array_axpby(y, SL_REAL(1), T, SL_REAL(1));
    } else {
      /* W = A(i, panel)^H Y_ij, summed over the grid column, kept by the panel's X owner */
      if (rc == SL_SUCCESS && s->wp[t])
        rc = codelet_matmul_submit(op->dtype, 1, s->nb, s->w[t], s->mb, 1, s->ap[t], nx, hx, 1, &s->wp[t]);
      if (rc == SL_SUCCESS && s->wp[t] && s->pr > 1) rc = comm_allreduce(s->col, op->dtype, COMM_SUM, s->wp[t]);
      if (rc == SL_SUCCESS && s->wp[t] && s->i == s->ix[t])
        rc = codelet_rows_submit(ny, hy, STARPU_RW, 1, &s->wp[t], el, 1, s->w[t] * s->mb, 0, 0, (s->p0[t] - s->offkx) * s->mb, 0);
    }
  }
  free(hx), free(hy), free(ht[0]), free(ht[1]);
  return rc;
}

static const sl_op_ops summa_ops = {summa_apply, NULL, summa_free, NULL};

/* The panels: K cut at the boundaries of both splits (A's columns over pc, X's rows over pr). */
static int make_panels(summa_t *s)
{
  int nmax = s->pr + s->pc;
  int64_t *cut = malloc(sizeof *cut * (size_t)(nmax + 2));
  if (!cut) return sl_error(SL_E_NOMEM, "SUMMA: out of memory");
  int nc = 0;
  for (int q = 0; q <= s->pc; q++) cut[nc++] = q < s->pc ? off_of(s->K, s->pc, q) : s->K;
  for (int q = 1; q < s->pr; q++) cut[nc++] = off_of(s->K, s->pr, q);
  for (int a = 1; a < nc; a++) /* insertion sort, then unique */
    for (int b = a; b > 0 && cut[b - 1] > cut[b]; b--) {
      int64_t tmp = cut[b];
      cut[b] = cut[b - 1];
      cut[b - 1] = tmp;
    }
  s->p0 = malloc(sizeof *s->p0 * (size_t)nc);
  s->w = malloc(sizeof *s->w * (size_t)nc);
  s->ja = malloc(sizeof *s->ja * (size_t)nc);
  s->ix = malloc(sizeof *s->ix * (size_t)nc);
  if (!s->p0 || !s->w || !s->ja || !s->ix) {
    free(cut);
    return sl_error(SL_E_NOMEM, "SUMMA: out of memory");
  }
  for (int a = 0; a + 1 < nc; a++) {
    if (cut[a + 1] == cut[a]) continue;
    int t = s->npanels++;
    s->p0[t] = cut[a];
    s->w[t] = cut[a + 1] - cut[a];
    s->ja[t] = 0;
    while (s->ja[t] + 1 < s->pc && off_of(s->K, s->pc, s->ja[t] + 1) <= cut[a]) s->ja[t]++;
    s->ix[t] = 0;
    while (s->ix[t] + 1 < s->pr && off_of(s->K, s->pr, s->ix[t] + 1) <= cut[a]) s->ix[t]++;
  }
  free(cut);
  return SL_SUCCESS;
}

int sl_op_matmul_summa(sl_op **op, const void *A, int64_t N, int64_t K, int64_t M, int pr, int pc, sl_dtype dt)
{
  const char *fn = "sl_op_matmul_summa";
  SL_TRY(sl_op_grid_check(fn, op, N, K, M, pr, pc, dt));
  int rc = SL_SUCCESS;
  summa_t *s = sl_calloc_agreed(sizeof *s, fn, &rc);
  if (!s) return rc;
  *s = (summa_t){.pr = pr, .pc = pc, .i = sl_ctx.rank / pc, .j = sl_ctx.rank % pc, .N = N, .K = K, .M = M};
  s->nb = part_of(N, pr, s->i);
  s->ka = part_of(K, pc, s->j);
  s->kx = part_of(K, pr, s->i);
  s->mb = part_of(M, pc, s->j);
  s->offka = off_of(K, pc, s->j);
  s->offkx = off_of(K, pr, s->i);
  rc = s->nb * s->ka > 0 && !A ? sl_error(SL_E_INVALID, "%s: argument 2 (A) is NULL for a %lld x %lld block", fn, (long long)s->nb, (long long)s->ka) : SL_SUCCESS;
  int64_t bad = rc == SL_SUCCESS && s->nb * s->ka > 0 ? sl_first_nonfinite(A, s->nb * s->ka, dt) : -1;
  if (bad >= 0)
    rc = sl_error(SL_E_INVALID, "%s: argument 2 (A) holds a non-finite value at (%lld, %lld) of this rank's block", fn,
                  (long long)(bad / s->ka), (long long)(bad % s->ka));
  if (rc == SL_SUCCESS) rc = make_panels(s);
  /* the grid's rows and columns as channels of the comm layer */
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc == SL_SUCCESS) rc = sl_op_grid_channel(fn, s->i, s->j, &s->row);
  if (rc == SL_SUCCESS) rc = sl_op_grid_channel(fn, s->j, s->i, &s->col);
  size_t el = sl_dtype_size(dt);
  if (rc == SL_SUCCESS) {
    s->ap = calloc((size_t)s->npanels, sizeof *s->ap);
    s->xp = calloc((size_t)s->npanels, sizeof *s->xp);
    s->wp = calloc((size_t)s->npanels, sizeof *s->wp);
    if (!s->ap || !s->xp || !s->wp) rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
    const double zero[2] = {0, 0};
    for (int t = 0; rc == SL_SUCCESS && t < s->npanels; t++) {
      s->ap[t] = sl_buffer(s->nb * s->w[t], el);
      s->xp[t] = sl_buffer(s->w[t] * s->mb, el);
      s->wp[t] = sl_buffer(s->w[t] * s->mb, el);
      /* a broadcast reads and writes its buffer: the receivers' must hold something first */
      if (s->ap[t]) rc = codelet_vec_submit(SL_VEC_FILL, dt, s->ap[t], NULL, NULL, zero, zero);
      if (rc == SL_SUCCESS && s->xp[t]) rc = codelet_vec_submit(SL_VEC_FILL, dt, s->xp[t], NULL, NULL, zero, zero);
    }
  }
  /* domain: X's blocks, range: Y's blocks, each a 1-D array of this rank's block (row-major), in rank order */
  int64_t ddim = K * M, rdim = N * M, dloc = s->kx * s->mb, rloc = s->nb * s->mb;
  sl_dist dd = sl_dist_default(), rd = sl_dist_default();
  dd.local_n = &dloc;
  rd.local_n = &rloc;
  sl_array *dom = NULL, *rng = NULL;
  if (rc == SL_SUCCESS) rc = sl_layout_create(&dom, 1, &ddim, dt, &dd);
  if (rc == SL_SUCCESS) rc = sl_layout_create(&rng, 1, &rdim, dt, &rd);
  if (rc == SL_SUCCESS) rc = sl_array_create_like(&s->t[0], rng);
  if (rc == SL_SUCCESS) rc = sl_array_create_like(&s->t[1], rng);
  if (rc == SL_SUCCESS) rc = sl_kept_copy(&s->a, A, s->nb * s->ka, el);
  sl_op *o = NULL;
  char name[96];
  snprintf(name, sizeof name, "MatrixMult(SUMMA %d x %d)", pr, pc);
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, name, dom, rng, &summa_ops, s);
  else summa_free(s);
  sl_array_destroy(&dom);
  sl_array_destroy(&rng);
  return sl_op_finish(op, o, rc);
}

int sl_op_summa_block(int64_t N, int64_t K, int64_t M, int pr, int pc, int rank, int64_t extent[8])
{
  SL_CHECK_ARG(pr >= 1 && pc >= 1 && rank >= 0 && rank < pr * pc && extent, SL_E_INVALID,
               "sl_op_summa_block: a rank of the %d x %d grid and an extent array are needed", pr, pc);
  SL_CHECK_ARG(N >= 1 && K >= 1 && M >= 1, SL_E_INVALID, "sl_op_summa_block: arguments 1-3 (N, K, M) must be >= 1, got %lld, "
               "%lld, %lld", (long long)N, (long long)K, (long long)M);
  int i = rank / pc, j = rank % pc;
  int64_t e[8] = {off_of(N, pr, i), part_of(N, pr, i), off_of(K, pc, j), part_of(K, pc, j),
                  off_of(K, pr, i), part_of(K, pr, i), off_of(M, pc, j), part_of(M, pc, j)};
  memcpy(extent, e, sizeof e);
  return SL_SUCCESS;
}
