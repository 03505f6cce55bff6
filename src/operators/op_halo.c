/* Halo on a Cartesian process grid: each rank's N-D block, extended by lo[k] and hi[k] planes along every
 * axis k, the extension filled from the neighbouring blocks (beyond the global edges: zeros, the other end
 * of the axis when periodic, or the edge planes mirrored when reflecting).
 *   forward  axis by axis (k = 0, 1, ...): the box so far is copied into the middle of a box longer by
 *            lo + hi along k, and the two halo slabs come from the neighbours along k. Later axes extend
 *            boxes that already carry the earlier halos, so edge and corner cells arrive in two hops.
 *   adjoint  the transpose, axis by axis in reverse: the middle is copied back and each halo slab is sent
 *            to the neighbour it came from, which adds it into its own boundary planes. Ghost values are
 *            summed back to their owners (pylops-mpi's adjoint only strips the halo, which is not the
 *            adjoint).
 * Slabs move through the comm layer's neighbour exchange, as tasks; the middle copy does not wait for it. */
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"
#include "comm/comm.h"

typedef struct {
  int ndim, nsteps;
  int steps[SL_MAX_DIMS];          /* the axes with a halo, in order */
  int64_t box[SL_MAX_DIMS + 1][SL_MAX_DIMS]; /* box before step i (box[nsteps]: the extended block) */
  int lo[SL_MAX_DIMS], hi[SL_MAX_DIMS];
  int lower[SL_MAX_DIMS], upper[SL_MAX_DIMS]; /* neighbour ranks along each axis (-1: none) */
  int reflect;                                 /* beyond the global edges: mirrored planes, not zeros */
  starpu_data_handle_t buf[SL_MAX_DIMS];      /* the boxes between steps */
} halo_t;

static void halo_free(void *p)
{
  halo_t *h = p;
  for (int i = 0; i < SL_MAX_DIMS; i++)
    if (h->buf[i]) starpu_data_unregister(h->buf[i]);
  free(h);
}

/* A list of handles: an array's chunks or one buffer. */
typedef struct {
  int n;
  starpu_data_handle_t *h;
} hlist;

static int64_t prod(const int64_t *d, int b, int e)
{
  int64_t p = 1;
  for (int i = b; i < e; i++) p *= d[i];
  return p;
}

/* Planes [p, p + cnt) along k of box e (P0 x e[k] x P1) to or from a packed slab: rows P0 of cnt P1. */
typedef struct {
  int64_t rows, len, start, stride;
} slab;

static slab slab_of(const int64_t *e, int ndim, int k, int64_t p, int64_t cnt)
{
  int64_t P1 = prod(e, k + 1, ndim);
  return (slab){prod(e, 0, k), cnt * P1, p * P1, e[k] * P1};
}

static int copy_slab(int acc, hlist dst, slab ds, hlist src, slab ss, size_t el)
{
  /* a packed message is written whole; blocks are written in parts */
  enum starpu_data_access_mode mode = dst.n == 1 && ds.start == 0 && ds.stride == ds.len && !acc &&
                                              (int64_t)starpu_vector_get_nx(dst.h[0]) == ds.rows * ds.len
                                          ? STARPU_W
                                          : STARPU_RW;
  return codelet_rows_submit_acc(acc, dst.n, dst.h, mode, src.n, src.h, el, ds.rows, ds.len, ss.start, ss.stride,
                                 ds.start, ds.stride);
}

/* The mirrored halo beyond a global edge (SL_HALO_REFLECT): halo plane j outside the block's planes is
 * boundary plane j inward (pylops-mpi's REFLECT: the edge plane repeated). Forward copies each boundary
 * plane of box e to its mirror in box ex; the adjoint (transposed: acc) adds each mirror back. */
static int reflect_planes(halo_t *h, int k, int side_lo, int acc, hlist e_h, hlist ex_h, const int64_t *e,
                          const int64_t *ex, size_t el)
{
  int nd = h->ndim, lo = h->lo[k], w = side_lo ? lo : h->hi[k], rc = SL_SUCCESS;
  int64_t n = e[k];
  for (int j = 0; j < w && rc == SL_SUCCESS; j++) {
    slab in = slab_of(e, nd, k, side_lo ? j : n - 1 - j, 1), out = slab_of(ex, nd, k, side_lo ? lo - 1 - j : lo + n + j, 1);
    rc = acc ? copy_slab(acc, e_h, in, ex_h, out, el) : copy_slab(0, ex_h, out, e_h, in, el);
  }
  return rc;
}

static starpu_data_handle_t message(int64_t n, size_t el)
{
  starpu_data_handle_t h = NULL;
  starpu_vector_data_register(&h, -1, 0, (uint32_t)n, el);
  return h;
}

/* Step i forward (src: box[i], dst: box[i + 1]) or adjoint (src: box[i + 1], dst: box[i]). */
static int halo_step(sl_op *op, halo_t *h, int i, sl_op_mode mode, hlist src, hlist dst)
{
  int k = h->steps[i], nd = h->ndim, lo = h->lo[k], hi = h->hi[k], me = sl_ctx.rank;
  size_t el = sl_dtype_size(op->dtype);
  int acc = sl_dtype_real(op->dtype) == SL_FLOAT32 ? 1 : 2;
  const int64_t *e = h->box[i], *ex = h->box[i + 1];
  int64_t n = e[k], P0 = prod(e, 0, k), P1 = prod(e, k + 1, nd);
  int L = h->lower[k], U = h->upper[k], rc = SL_SUCCESS;
  slab mid = slab_of(ex, nd, k, lo, n), whole = slab_of(e, nd, k, 0, n);
  /* the pieces: slab a of one side goes to slab b of the other (forward: my boundary planes to the
   * neighbour's halo; adjoint: my halo back to the neighbour's boundary planes) */
  slab top = slab_of(e, nd, k, n - lo, lo), bottom = slab_of(e, nd, k, 0, hi);
  slab hlo = slab_of(ex, nd, k, 0, lo), hhi = slab_of(ex, nd, k, lo + n, hi);
  slab pk_lo = {P0, lo * P1, 0, lo * P1}, pk_hi = {P0, hi * P1, 0, hi * P1}; /* packed messages */
  starpu_data_handle_t s_lo = NULL, s_hi = NULL, r_lo = NULL, r_hi = NULL;
  int tag = 4 * k + (mode == SL_FORWARD ? 0 : 2);
  if (mode == SL_FORWARD) {
    const double zero[2] = {0, 0};
    if ((L < 0 && lo > 0) || (U < 0 && hi > 0))
      for (int c = 0; c < dst.n && rc == SL_SUCCESS; c++) rc = codelet_vec_submit(SL_VEC_FILL, op->dtype, dst.h[c], NULL, NULL, zero, zero);
    if (rc == SL_SUCCESS) rc = copy_slab(0, dst, mid, src, whole, el);
    /* my lo halo: the lower neighbour's top lo planes; my hi halo: the upper neighbour's bottom hi planes */
    if (rc == SL_SUCCESS && lo > 0 && L == me) rc = copy_slab(0, dst, hlo, src, top, el);
    if (rc == SL_SUCCESS && hi > 0 && U == me) rc = copy_slab(0, dst, hhi, src, bottom, el);
    if (lo > 0 && U >= 0 && U != me) s_lo = message(P0 * lo * P1, el);
    if (hi > 0 && L >= 0 && L != me) s_hi = message(P0 * hi * P1, el);
    if (lo > 0 && L >= 0 && L != me) r_lo = message(P0 * lo * P1, el);
    if (hi > 0 && U >= 0 && U != me) r_hi = message(P0 * hi * P1, el);
    if (rc == SL_SUCCESS && s_lo) rc = copy_slab(0, (hlist){1, &s_lo}, pk_lo, src, top, el);
    if (rc == SL_SUCCESS && s_hi) rc = copy_slab(0, (hlist){1, &s_hi}, pk_hi, src, bottom, el);
    comm_pair pairs[2] = {{.peer = s_lo || r_hi ? U : -1, .send_tag = tag, .recv_tag = tag + 1, .send = s_lo, .recv = r_hi},
                          {.peer = s_hi || r_lo ? L : -1, .send_tag = tag + 1, .recv_tag = tag, .send = s_hi, .recv = r_lo}};
    if (rc == SL_SUCCESS && (pairs[0].peer >= 0 || pairs[1].peer >= 0))
      rc = comm_exchange(comm_world(), op->dtype, 2, pairs);
    if (rc == SL_SUCCESS && r_lo) rc = copy_slab(0, dst, hlo, (hlist){1, &r_lo}, pk_lo, el);
    if (rc == SL_SUCCESS && r_hi) rc = copy_slab(0, dst, hhi, (hlist){1, &r_hi}, pk_hi, el);
    if (rc == SL_SUCCESS && h->reflect && L < 0 && lo > 0) rc = reflect_planes(h, k, 1, 0, src, dst, e, ex, el);
    if (rc == SL_SUCCESS && h->reflect && U < 0 && hi > 0) rc = reflect_planes(h, k, 0, 0, src, dst, e, ex, el);
  } else {
    /* the middle back (it covers the whole destination), then the halos added to their owners */
    rc = codelet_rows_submit(dst.n, dst.h, STARPU_W, src.n, src.h, el, whole.rows, whole.len, mid.start, mid.stride,
                             whole.start, whole.stride);
    if (rc == SL_SUCCESS && lo > 0 && L == me) rc = copy_slab(acc, dst, top, src, hlo, el);
    if (rc == SL_SUCCESS && hi > 0 && U == me) rc = copy_slab(acc, dst, bottom, src, hhi, el);
    if (rc == SL_SUCCESS && h->reflect && L < 0 && lo > 0) rc = reflect_planes(h, k, 1, acc, dst, src, e, ex, el);
    if (rc == SL_SUCCESS && h->reflect && U < 0 && hi > 0) rc = reflect_planes(h, k, 0, acc, dst, src, e, ex, el);
    if (lo > 0 && L >= 0 && L != me) s_lo = message(P0 * lo * P1, el);
    if (hi > 0 && U >= 0 && U != me) s_hi = message(P0 * hi * P1, el);
    if (lo > 0 && U >= 0 && U != me) r_lo = message(P0 * lo * P1, el);
    if (hi > 0 && L >= 0 && L != me) r_hi = message(P0 * hi * P1, el);
    if (rc == SL_SUCCESS && s_lo) rc = copy_slab(0, (hlist){1, &s_lo}, pk_lo, src, hlo, el);
    if (rc == SL_SUCCESS && s_hi) rc = copy_slab(0, (hlist){1, &s_hi}, pk_hi, src, hhi, el);
    comm_pair pairs[2] = {{.peer = s_lo || r_hi ? L : -1, .send_tag = tag, .recv_tag = tag + 1, .send = s_lo, .recv = r_hi},
                          {.peer = s_hi || r_lo ? U : -1, .send_tag = tag + 1, .recv_tag = tag, .send = s_hi, .recv = r_lo}};
    if (rc == SL_SUCCESS && (pairs[0].peer >= 0 || pairs[1].peer >= 0))
      rc = comm_exchange(comm_world(), op->dtype, 2, pairs);
    if (rc == SL_SUCCESS && r_lo) rc = copy_slab(acc, dst, top, (hlist){1, &r_lo}, pk_lo, el);
    if (rc == SL_SUCCESS && r_hi) rc = copy_slab(acc, dst, bottom, (hlist){1, &r_hi}, pk_hi, el);
  }
  starpu_data_handle_t msgs[4] = {s_lo, s_hi, r_lo, r_hi};
  for (int m = 0; m < 4; m++)
    if (msgs[m]) starpu_data_unregister_submit(msgs[m]);
  return rc;
}

static int halo_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  halo_t *h = op->data;
  hlist hx = {0, NULL}, hy = {0, NULL};
  int rc = sl_op_chunks(x, &hx.h, &hx.n);
  if (rc == SL_SUCCESS) rc = sl_op_chunks(y, &hy.h, &hy.n);
  if (rc == SL_SUCCESS && h->nsteps == 0) rc = sl_array_copy(y, x);
  /* forward: x -> buf[0] -> ... -> y along the steps; adjoint: the same chain walked back */
  for (int s = 0; s < h->nsteps && rc == SL_SUCCESS; s++) {
    int i = mode == SL_FORWARD ? s : h->nsteps - 1 - s;
    hlist a = i == 0 ? (mode == SL_FORWARD ? hx : hy) : (hlist){1, &h->buf[i - 1]};
    hlist b = i == h->nsteps - 1 ? (mode == SL_FORWARD ? hy : hx) : (hlist){1, &h->buf[i]};
    rc = mode == SL_FORWARD ? halo_step(op, h, i, mode, a, b) : halo_step(op, h, i, mode, b, a);
  }
  free(hx.h);
  free(hy.h);
  return rc;
}
static const sl_op_ops halo_ops = {halo_apply, NULL, halo_free, NULL};

/* Block c of n cells cut into g blocks by split: its first cell and extent (an extent <= 0: the ceil split
 * left the block nothing). */
static void split_block(int64_t n, int g, int c, sl_halo_split split, int64_t *first, int64_t *count)
{
  if (split == SL_HALO_SPLIT_CEIL) {
    int64_t b = (n + g - 1) / g;
    *first = c * b;
    *count = (c == g - 1 ? n : *first + b < n ? *first + b : n) - *first;
  } else {
    *first = sl_split_offset(n, g, c);
    *count = sl_split_count(n, g, c);
  }
}

int sl_op_halo_block_split(int ndim, const int64_t dims[], const int grid[], sl_halo_split split, int rank, int64_t first[],
                           int64_t count[])
{
  SL_CHECK_ARG(ndim >= 1 && ndim <= SL_MAX_DIMS && dims && grid && first && count, SL_E_INVALID,
               "sl_op_halo_block: ndim must be in [1, %d] and dims, grid, first and count set", SL_MAX_DIMS);
  SL_CHECK_ARG(split == SL_HALO_SPLIT_EVEN || split == SL_HALO_SPLIT_CEIL, SL_E_INVALID,
               "sl_op_halo_block_split: argument 4 (split) must be SL_HALO_SPLIT_EVEN or SL_HALO_SPLIT_CEIL");
  int r = rank;
  for (int k = ndim - 1; k >= 0; k--) {
    SL_CHECK_ARG(grid[k] >= 1, SL_E_INVALID, "sl_op_halo_block: argument 3 (grid): grid[%d] = %d < 1", k, grid[k]);
    int c = r % grid[k];
    r /= grid[k];
    split_block(dims[k], grid[k], c, split, &first[k], &count[k]);
  }
  SL_CHECK_ARG(rank >= 0 && r == 0, SL_E_INVALID, "sl_op_halo_block: argument %d (rank) %d is not on the grid",
               split == SL_HALO_SPLIT_EVEN ? 4 : 5, rank);
  return SL_SUCCESS;
}

int sl_op_halo_block(int ndim, const int64_t dims[], const int grid[], int rank, int64_t first[], int64_t count[])
{
  return sl_op_halo_block_split(ndim, dims, grid, SL_HALO_SPLIT_EVEN, rank, first, count);
}

static int halo_check(const char *fn, sl_op **op, int ndim, const int64_t dims[], const int grid[], const int halo[],
                      sl_halo_boundary bnd, sl_halo_split split, sl_dtype dt)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(op != NULL, SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  SL_CHECK_ARG(ndim >= 1 && ndim <= SL_MAX_DIMS, SL_E_INVALID, "%s: argument 2 (ndim) must be in [1, %d], got %d", fn,
               SL_MAX_DIMS, ndim);
  SL_CHECK_ARG(dims && grid && halo, SL_E_INVALID, "%s: argument %d (%s) is NULL", fn, !dims ? 3 : !grid ? 4 : 5,
               !dims ? "dims" : !grid ? "grid" : "halo");
  SL_CHECK_ARG(bnd == SL_HALO_ZERO || bnd == SL_HALO_PERIODIC || bnd == SL_HALO_REFLECT, SL_E_INVALID,
               "%s: argument 6 (boundary) must be SL_HALO_ZERO, SL_HALO_PERIODIC or SL_HALO_REFLECT", fn);
  SL_CHECK_ARG(split == SL_HALO_SPLIT_EVEN || split == SL_HALO_SPLIT_CEIL, SL_E_INVALID,
               "%s: argument 7 (split) must be SL_HALO_SPLIT_EVEN or SL_HALO_SPLIT_CEIL", fn);
  SL_CHECK_ARG(sl_dtype_valid(dt), SL_E_DTYPE, "%s: argument %d (dt) is not a valid dtype", fn,
               strcmp(fn, "sl_op_halo") == 0 ? 7 : 8);
  int64_t P = 1;
  for (int k = 0; k < ndim; k++) {
    SL_CHECK_ARG(grid[k] >= 1, SL_E_INVALID, "%s: argument 4 (grid): grid[%d] = %d must be >= 1", fn, k, grid[k]);
    P *= grid[k];
  }
  SL_CHECK_ARG(P == sl_ctx.size, SL_E_INVALID, "%s: argument 4 (grid): the grid has %lld ranks, the communicator %d", fn,
               (long long)P, sl_ctx.size);
  for (int k = 0; k < ndim; k++) {
    SL_CHECK_ARG(dims[k] >= grid[k], SL_E_DIMS,
                 "%s: argument 3 (dims): dims[%d] = %lld is smaller than grid[%d] = %d (every block must own cells)", fn,
                 k, (long long)dims[k], k, grid[k]);
    SL_CHECK_ARG(halo[2 * k] >= 0 && halo[2 * k + 1] >= 0, SL_E_INVALID,
                 "%s: argument 5 (halo): halo[%d] and halo[%d] (axis %d) must be >= 0", fn, 2 * k, 2 * k + 1, k);
    /* the smallest block: the last one under either split */
    int64_t first = 0, smallest = 0, w = halo[2 * k] > halo[2 * k + 1] ? halo[2 * k] : halo[2 * k + 1];
    split_block(dims[k], grid[k], grid[k] - 1, split, &first, &smallest);
    SL_CHECK_ARG(smallest >= 1, SL_E_DIMS,
                 "%s: argument 3 (dims): split as pylops-mpi's MPIHalo (ceil(%lld / %d) cells per block), the last "
                 "block along axis %d owns no cells", fn, (long long)dims[k], grid[k], k);
    SL_CHECK_ARG((grid[k] == 1 && bnd == SL_HALO_ZERO) || w <= smallest, SL_E_DIMS,
                 "%s: argument 5 (halo): a halo of %lld planes along axis %d is wider than the smallest block (%lld)", fn,
                 (long long)w, k, (long long)smallest);
  }
  /* the whole array with every block's halos, in bytes, within 64 bits (a bound on every box and sum below) */
  int64_t ext[SL_MAX_DIMS], bytes = 0;
  for (int k = 0; k < ndim; k++)
    ext[k] = dims[k] > INT64_MAX / 4 ? -1 : dims[k] + (int64_t)grid[k] * ((int64_t)halo[2 * k] + halo[2 * k + 1]);
  SL_CHECK_ARG(sl_size_product(ndim, ext, (int64_t)sl_dtype_size(dt), &bytes) == SL_SUCCESS, SL_E_DIMS,
               "%s: argument 3 (dims): the array with its halos overflows 64 bits in bytes", fn);
  return SL_SUCCESS;
}

static int halo_make(const char *fn, sl_op **op, int ndim, const int64_t dims[], const int grid[], const int halo[],
                     sl_halo_boundary bnd, sl_halo_split split, sl_dtype dt);

int sl_op_halo(sl_op **op, int ndim, const int64_t dims[], const int grid[], const int halo[], sl_halo_boundary bnd,
               sl_dtype dt)
{
  return halo_make("sl_op_halo", op, ndim, dims, grid, halo, bnd, SL_HALO_SPLIT_EVEN, dt);
}

int sl_op_halo_split(sl_op **op, int ndim, const int64_t dims[], const int grid[], const int halo[], sl_halo_boundary bnd,
                     sl_halo_split split, sl_dtype dt)
{
  return halo_make("sl_op_halo_split", op, ndim, dims, grid, halo, bnd, split, dt);
}

/* fn: the public call, which names the arguments (sl_op_halo has no split: its dt is argument 7) */
static int halo_make(const char *fn, sl_op **op, int ndim, const int64_t dims[], const int grid[], const int halo[],
                     sl_halo_boundary bnd, sl_halo_split split, sl_dtype dt)
{
  SL_CHECK_INIT();
  /* one agreement: the verdict, and the description every rank must share (unused axes as -1) */
  int rc = halo_check(fn, op, ndim, dims, grid, halo, bnd, split, dt);
  sl_same same[4 + 3 * SL_MAX_DIMS];
  int ns = 0, ok = rc == SL_SUCCESS;
  same[ns++] = SL_SAME_I("argument 2 (ndim)", ndim);
  same[ns++] = SL_SAME_I("argument 6 (boundary)", bnd);
  same[ns++] = SL_SAME_I("argument 7 (split)", split);
  same[ns++] = SL_SAME_I("argument 7 or 8 (dt)", dt);
  for (int k = 0; k < SL_MAX_DIMS; k++) {
    int used = ok && k < ndim;
    same[ns++] = SL_SAME_I("argument 3 (dims)", used ? dims[k] : -1);
    same[ns++] = SL_SAME_I("argument 4 (grid)", used ? grid[k] : -1);
    same[ns++] = SL_SAME_I("argument 5 (halo)", used ? (int64_t)halo[2 * k] << 32 | (int64_t)halo[2 * k + 1] : -1);
  }
  SL_TRY(sl_agree_same(sl_ctx.comm, fn, rc, ns, same));
  halo_t *h = sl_calloc_agreed(sizeof *h, fn, &rc);
  if (!h) return rc;
  h->ndim = ndim;
  h->reflect = bnd == SL_HALO_REFLECT;
  int64_t first[SL_MAX_DIMS], count[SL_MAX_DIMS];
  sl_op_halo_block_split(ndim, dims, grid, split, sl_ctx.rank, first, count);
  memcpy(h->box[0], count, sizeof count);
  int coord[SL_MAX_DIMS], r = sl_ctx.rank;
  for (int k = ndim - 1; k >= 0; k--) {
    coord[k] = r % grid[k];
    r /= grid[k];
  }
  for (int k = 0; k < ndim; k++) {
    h->lo[k] = halo[2 * k];
    h->hi[k] = halo[2 * k + 1];
    int64_t stride = 1;
    for (int j = k + 1; j < ndim; j++) stride *= grid[j];
    int c = coord[k];
    h->lower[k] = c > 0 ? sl_ctx.rank - (int)stride : bnd == SL_HALO_PERIODIC ? sl_ctx.rank + (grid[k] - 1) * (int)stride : -1;
    h->upper[k] = c < grid[k] - 1 ? sl_ctx.rank + (int)stride : bnd == SL_HALO_PERIODIC ? sl_ctx.rank - (grid[k] - 1) * (int)stride : -1;
    if ((int64_t)h->lo[k] + h->hi[k] == 0) continue;
    int i = h->nsteps++;
    h->steps[i] = k;
    memcpy(h->box[i + 1], h->box[i], sizeof h->box[i]);
    h->box[i + 1][k] += (int64_t)h->lo[k] + h->hi[k];
  }
  size_t el = sl_dtype_size(dt);
  rc = SL_SUCCESS;
  const double zero[2] = {0, 0};
  for (int i = 0; i + 1 < h->nsteps && rc == SL_SUCCESS; i++) { /* written in parts: it must hold values first */
    h->buf[i] = sl_buffer(prod(h->box[i + 1], 0, ndim), el);
    rc = codelet_vec_submit(SL_VEC_FILL, dt, h->buf[i], NULL, NULL, zero, zero);
  }
  int64_t nd = 1, nr = 1, ld = prod(h->box[0], 0, ndim), lr = prod(h->box[h->nsteps], 0, ndim);
  rc = sl_agree(sl_ctx.comm, rc); /* a submission failing on one rank: every rank stops before the allreduces */
  if (rc == SL_SUCCESS)
    rc = MPI_Allreduce(&ld, &nd, 1, MPI_INT64_T, MPI_SUM, sl_ctx.comm) == MPI_SUCCESS &&
               MPI_Allreduce(&lr, &nr, 1, MPI_INT64_T, MPI_SUM, sl_ctx.comm) == MPI_SUCCESS
           ? SL_SUCCESS
           : sl_error(SL_E_COMM, "%s: MPI_Allreduce failed", fn);
  sl_dist dd = sl_dist_default(), rd = sl_dist_default();
  dd.local_n = &ld;
  rd.local_n = &lr;
  sl_array *dom = NULL, *rng = NULL;
  if (rc == SL_SUCCESS) rc = sl_layout_create(&dom, 1, &nd, dt, &dd);
  if (rc == SL_SUCCESS) rc = sl_layout_create(&rng, 1, &nr, dt, &rd);
  sl_op *o = NULL;
  char name[96];
  snprintf(name, sizeof name, "Halo(%dD, %s%s)", ndim, bnd == SL_HALO_ZERO ? "zero" : bnd == SL_HALO_PERIODIC ? "periodic" : "reflect",
           split == SL_HALO_SPLIT_CEIL ? ", ceil split" : "");
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, name, dom, rng, &halo_ops, h);
  else halo_free(h);
  sl_array_destroy(&dom);
  sl_array_destroy(&rng);
  return sl_op_finish(op, o, rc);
}
