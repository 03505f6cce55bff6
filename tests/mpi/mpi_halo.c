/* Halo on every Cartesian grid of 1 to 4 ranks in 1, 2 and 3 dimensions, sizes that do not divide evenly,
 * zero, periodic and reflecting boundaries, float64, complex128 and float32: each rank's extended block against the
 * global array indexed from the formula, the adjoint against the sum over every rank's extended block of
 * the cells that map to each owned cell (the transpose of the forward matrix), dot tests, bad input. Both
 * block splits: even (the first n % g blocks one cell more) and pylops-mpi 0.8's ceil split (ceil(n / g) per
 * block, the rest last), each written out here and checked against sl_op_halo_block_split. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

typedef double complex cplx;

static cplx xval(sl_dtype dt, int64_t g) { return sin(0.37 * (double)g + 0.1) + (sl_dtype_is_complex(dt) ? I * cos(0.21 * (double)g) : 0); }
static cplx yval(sl_dtype dt, int r, int64_t c)
{
  return cos(0.53 * (double)c + 1.7 * r) + (sl_dtype_is_complex(dt) ? I * sin(0.31 * (double)c - 0.6 * r) : 0);
}

/* Global flat index of cell i (coordinates relative to the block start, halo included) of rank r's extended
 * block, or -1 when it falls outside the array (bmode 0: zero boundary; 1 periodic, 2 reflecting). */
static int64_t global_of(int nd, const int64_t *dims, const int64_t *first, const int64_t *i, int bmode)
{
  int64_t g = 0;
  for (int k = 0; k < nd; k++) {
    int64_t c = first[k] + i[k];
    if (c < 0 || c >= dims[k]) {
      if (bmode == 0) return -1;
      if (bmode == 1) c = (c % dims[k] + dims[k]) % dims[k];
      else c = c < 0 ? -1 - c : 2 * dims[k] - 1 - c; /* mirrored, the edge cell repeated */
    }
    g = g * dims[k] + c;
  }
  return g;
}

/* Rank r's block along every axis, from the formulas (C-order grid coordinates, the last fastest). */
static void ref_block(int nd, const int64_t *dims, const int *grid, sl_halo_split split, int r, int64_t *first,
                      int64_t *count)
{
  for (int k = nd - 1; k >= 0; k--) {
    int64_t n = dims[k], g = grid[k], c = r % grid[k];
    r /= grid[k];
    if (split == SL_HALO_SPLIT_CEIL) {
      int64_t b = (n + g - 1) / g;
      first[k] = c * b;
      count[k] = c == g - 1 ? n - first[k] : b;
    } else {
      first[k] = 0;
      for (int64_t j = 0; j < c; j++) first[k] += n / g + (j < n % g);
      count[k] = n / g + (c < n % g);
    }
  }
}

/* Calls fn for every cell of rank r's extended block: its flat index there and its global index (or -1). */
static void for_cells(int nd, const int64_t *dims, const int *grid, sl_halo_split split, const int *halo, int bmode,
                      int r, void (*fn)(int64_t cell, int64_t g, void *ctx), void *ctx)
{
  int64_t first[8], count[8], ext[8], i[8], n = 1;
  ref_block(nd, dims, grid, split, r, first, count);
  for (int k = 0; k < nd; k++) {
    ext[k] = count[k] + halo[2 * k] + halo[2 * k + 1];
    n *= ext[k];
  }
  for (int64_t cell = 0; cell < n; cell++) {
    int64_t q = cell;
    for (int k = nd - 1; k >= 0; k--) {
      i[k] = q % ext[k] - halo[2 * k];
      q /= ext[k];
    }
    fn(cell, global_of(nd, dims, first, i, bmode), ctx);
  }
}

typedef struct {
  sl_dtype dt;
  cplx *out;
  int r;
  const int64_t *own_first, *own_count;
  int nd;
  const int64_t *dims;
} ctx_t;

static void fwd_cell(int64_t cell, int64_t g, void *p)
{
  ctx_t *c = p;
  c->out[cell] = g < 0 ? 0 : xval(c->dt, g);
}

/* Adds y_r[cell] to the owned cell g of this rank's block. */
static void adj_cell(int64_t cell, int64_t g, void *p)
{
  ctx_t *c = p;
  if (g < 0) return;
  int64_t q = g, loc = 0, idx[8];
  for (int k = c->nd - 1; k >= 0; k--) {
    idx[k] = q % c->dims[k];
    q /= c->dims[k];
  }
  for (int k = 0; k < c->nd; k++) {
    int64_t o = idx[k] - c->own_first[k];
    if (o < 0 || o >= c->own_count[k]) return;
    loc = loc * c->own_count[k] + o;
  }
  c->out[loc] += yval(c->dt, c->r, cell);
}

static int check_local(sl_array *a, sl_dtype dt, const cplx *ref, int64_t n, const char *what)
{
  void *p = NULL;
  int bad = 0;
  CHECK_OK(sl_array_acquire(a, SL_READ, &p));
  cplx *z = calloc((size_t)n + 1, sizeof *z);
  if (p) mc_from_dtype(dt, n, p, z);
  double tol = mc_tol(dt) * 10;
  for (int64_t k = 0; k < n; k++)
    if (cabs(z[k] - ref[k]) > tol * fmax(1.0, cabs(ref[k])) && bad++ < 2)
      CHECK(0, "%s: element %lld is %g%+gi, expected %g%+gi", what, (long long)k, creal(z[k]), cimag(z[k]), creal(ref[k]),
            cimag(ref[k]));
  free(z);
  CHECK_OK(sl_array_release(a));
  return bad;
}

static void run(int nd, const int64_t *dims, const int *grid, sl_halo_split split, const int *halo, int bmode,
                sl_dtype dt)
{
  int me = sl_rank(), P = sl_size();
  char what[160];
  int n = snprintf(what, sizeof what, "Halo %s %s%s dims", sl_dtype_name(dt), bmode == 2 ? "reflect" : bmode ? "periodic" : "zero",
                   split == SL_HALO_SPLIT_CEIL ? " ceil-split" : "");
  for (int k = 0; k < nd; k++) n += snprintf(what + n, sizeof what - (size_t)n, "%s%lld", k ? "x" : " ", (long long)dims[k]);
  n += snprintf(what + n, sizeof what - (size_t)n, " grid");
  for (int k = 0; k < nd; k++) n += snprintf(what + n, sizeof what - (size_t)n, "%s%d", k ? "x" : " ", grid[k]);
  sl_op *op = NULL;
  sl_halo_boundary bnd = bmode == 2 ? SL_HALO_REFLECT : bmode ? SL_HALO_PERIODIC : SL_HALO_ZERO;
  if (split == SL_HALO_SPLIT_EVEN) CHECK_OK(sl_op_halo(&op, nd, dims, grid, halo, bnd, dt));
  else CHECK_OK(sl_op_halo_split(&op, nd, dims, grid, halo, bnd, split, dt));
  if (!op) return;
  int64_t first[8], count[8], lfirst[8], lcount[8], nown = 1, next = 1;
  ref_block(nd, dims, grid, split, me, first, count);
  CHECK_OK(sl_op_halo_block_split(nd, dims, grid, split, me, lfirst, lcount));
  for (int k = 0; k < nd; k++)
    CHECK(lfirst[k] == first[k] && lcount[k] == count[k], "%s: rank %d's block along axis %d: first %lld, %lld cells "
          "(expected %lld, %lld)", what, me, k, (long long)lfirst[k], (long long)lcount[k], (long long)first[k],
          (long long)count[k]);
  for (int k = 0; k < nd; k++) {
    nown *= count[k];
    next *= count[k] + halo[2 * k] + halo[2 * k + 1];
  }
  sl_array *x = NULL, *y = NULL;
  CHECK_OK(sl_op_create_domain(op, &x));
  CHECK_OK(sl_op_create_range(op, &y));
  CHECK(sl_array_local_size(x) == nown && sl_array_local_size(y) == next, "%s: local sizes %lld, %lld (expected %lld, %lld)",
        what, (long long)sl_array_local_size(x), (long long)sl_array_local_size(y), (long long)nown, (long long)next);
  /* forward: x from the formula of its global index */
  cplx *buf = calloc((size_t)(next > nown ? next : nown) + 1, sizeof *buf);
  void *p = NULL;
  CHECK_OK(sl_array_acquire(x, SL_WRITE, &p));
  for (int64_t c = 0; c < nown; c++) {
    int64_t q = c, g = 0, idx[8];
    for (int k = nd - 1; k >= 0; k--) {
      idx[k] = q % count[k];
      q /= count[k];
    }
    for (int k = 0; k < nd; k++) g = g * dims[k] + first[k] + idx[k];
    buf[c] = xval(dt, g);
  }
  mc_to_dtype(dt, nown, buf, p);
  CHECK_OK(sl_array_release(x));
  CHECK_OK(sl_op_apply(op, SL_FORWARD, x, y));
  ctx_t c = {dt, buf, me, first, count, nd, dims};
  for_cells(nd, dims, grid, split, halo, bmode, me, fwd_cell, &c);
  char w2[200];
  snprintf(w2, sizeof w2, "%s forward", what);
  check_local(y, dt, buf, next, w2);
  /* adjoint: y_r from a formula on every rank; x = sum of the cells mapping to each owned cell */
  CHECK_OK(sl_array_acquire(y, SL_WRITE, &p));
  for (int64_t e = 0; e < next; e++) buf[e] = yval(dt, me, e);
  mc_to_dtype(dt, next, buf, p);
  CHECK_OK(sl_array_release(y));
  CHECK_OK(sl_op_apply(op, SL_ADJOINT, y, x));
  memset(buf, 0, sizeof *buf * (size_t)nown);
  for (int r = 0; r < P; r++) {
    c.r = r;
    for_cells(nd, dims, grid, split, halo, bmode, r, adj_cell, &c);
  }
  snprintf(w2, sizeof w2, "%s adjoint", what);
  check_local(x, dt, buf, nown, w2);
  double err = 1;
  CHECK_OK(sl_dottest(op, 11, &err));
  CHECK(err < (dt == SL_FLOAT32 ? 1e-5 : 1e-13), "%s: dot test %g", what, err);
  free(buf);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  sl_op_destroy(&op);
}

static void errors(void)
{
  int P = sl_size();
  sl_op *op = NULL;
  int64_t d2[2] = {9, 10};
  int g_bad[2] = {P + 1, 1}, g_ok[2] = {P, 1}, h1[4] = {1, 1, 1, 1}, hwide[4] = {5, 1, 1, 1}, hneg[4] = {1, -1, 0, 0};
  int rc = sl_op_halo(&op, 2, d2, g_bad, h1, SL_HALO_ZERO, SL_FLOAT64);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "grid"), "bad grid: %s", sl_last_error());
  if (P > 1) {
    rc = sl_op_halo(&op, 2, d2, g_ok, hwide, SL_HALO_ZERO, SL_FLOAT64);
    CHECK(mc_same_error_everywhere(rc, SL_E_DIMS) && strstr(sl_last_error(), "halo"), "wide halo: %s", sl_last_error());
  }
  rc = sl_op_halo(&op, 2, d2, g_ok, hneg, SL_HALO_ZERO, SL_FLOAT64);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "halo"), "negative halo: %s", sl_last_error());
  int64_t small[2] = {P - 1, 4};
  if (P > 1) {
    rc = sl_op_halo(&op, 2, small, g_ok, h1, SL_HALO_ZERO, SL_FLOAT64);
    CHECK(mc_same_error_everywhere(rc, SL_E_DIMS) && strstr(sl_last_error(), "dims"), "dims < grid: %s", sl_last_error());
  }
  rc = sl_op_halo(&op, 2, d2, g_ok, h1, (sl_halo_boundary)7, SL_FLOAT64);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "boundary"), "bad boundary: %s", sl_last_error());
  rc = sl_op_halo(NULL, 2, d2, g_ok, h1, SL_HALO_ZERO, SL_FLOAT64);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "op"), "NULL op: %s", sl_last_error());
  int64_t d2r[2] = {9 + (sl_rank() == 0), 10};
  rc = sl_op_halo(&op, 2, d2r, g_ok, h1, SL_HALO_ZERO, SL_FLOAT64);
  if (P > 1) CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "differ"), "dims differ: %s", sl_last_error());
  else sl_op_destroy(&op);
  CHECK(op == NULL, "no operator after an error");
  /* P + 1 cells over P >= 3 ranks: ceil(P + 1 / P) = 2 cells per block leaves the last block nothing */
  if (P >= 3) {
    int64_t dl[2] = {P + 1, 4};
    int h0[4] = {0, 0, 0, 0};
    rc = sl_op_halo_split(&op, 2, dl, g_ok, h0, SL_HALO_ZERO, SL_HALO_SPLIT_CEIL, SL_FLOAT64);
    CHECK(mc_same_error_everywhere(rc, SL_E_DIMS) && strstr(sl_last_error(), "no cells"),
          "ceil split leaving a block empty: %s", sl_last_error());
    rc = sl_op_halo(&op, 2, dl, g_ok, h0, SL_HALO_ZERO, SL_FLOAT64); /* the even split gives every block cells */
    CHECK(rc == SL_SUCCESS, "the even split of %d cells over %d ranks: %s", P + 1, P, sl_last_error());
    sl_op_destroy(&op);
  }
  rc = sl_op_halo_split(&op, 2, d2, g_ok, h1, SL_HALO_ZERO, (sl_halo_split)5, SL_FLOAT64);
  CHECK(mc_same_error_everywhere(rc, SL_E_INVALID) && strstr(sl_last_error(), "split"), "bad split: %s", sl_last_error());
  int64_t f[2], c[2];
  CHECK(sl_op_halo_block_split(2, d2, g_ok, (sl_halo_split)5, 0, f, c) == SL_E_INVALID, "sl_op_halo_block_split: bad split");
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  int P = sl_size();
  /* the grids of P ranks in 1, 2 and 3 dimensions */
  int g1[1] = {P};
  int g2[4][2] = {{P, 1}, {1, P}, {P == 4 ? 2 : P, P == 4 ? 2 : 1}, {1, P}};
  int g3[3][3] = {{1, P, 1}, {P, 1, 1}, {P == 4 ? 2 : 1, 1, P == 4 ? 2 : P}};
  int64_t d1[1] = {23}, d2[2] = {9, 10}, d3[3] = {8, 7, 6};
  int h1[2] = {2, 1}, h2[4] = {1, 2, 2, 1}, h3[6] = {1, 2, 0, 1, 2, 1};
  const sl_dtype dts[3] = {SL_FLOAT64, SL_COMPLEX128, SL_FLOAT32};
  for (int bmode = 0; bmode < 3; bmode++) {
    for (int t = 0; t < 3; t++) run(1, d1, g1, SL_HALO_SPLIT_EVEN, h1, bmode, dts[t]);
    for (int g = 0; g < 3; g++)
      for (int t = 0; t < 2; t++) run(2, d2, g2[g], SL_HALO_SPLIT_EVEN, h2, bmode, dts[t]);
    for (int g = 0; g < 3; g++) run(3, d3, g3[g], SL_HALO_SPLIT_EVEN, h3, bmode, dts[g % 2]);
  }
  int hnone[4] = {0, 0, 0, 0};
  run(2, d2, g2[0], SL_HALO_SPLIT_EVEN, hnone, 0, SL_FLOAT64);
  /* pylops-mpi's ceil split: 41 cells over 4 ranks are 11, 11, 11, 8 (even: 11, 10, 10, 10) */
  int64_t d41[1] = {41}, d2c[2] = {14, 15}, d3c[3] = {8, 7, 11};
  for (int bmode = 0; bmode < 3; bmode++) {
    run(1, d41, g1, SL_HALO_SPLIT_CEIL, h1, bmode, SL_FLOAT64);
    for (int g = 0; g < 3; g++) run(2, d2c, g2[g], SL_HALO_SPLIT_CEIL, h2, bmode, g ? SL_FLOAT64 : SL_COMPLEX128);
    run(3, d3c, g3[2], SL_HALO_SPLIT_CEIL, h3, bmode, SL_FLOAT64);
  }
  if (P == 4) {
    int64_t f[1], c[1], want[4] = {11, 11, 11, 8};
    for (int r = 0; r < 4; r++) {
      CHECK_OK(sl_op_halo_block_split(1, d41, g1, SL_HALO_SPLIT_CEIL, r, f, c));
      CHECK(c[0] == want[r], "41 cells over 4 ranks, ceil split: rank %d holds %lld (pylops-mpi: %lld)", r, (long long)c[0],
            (long long)want[r]);
    }
  }
  errors();
  return mc_finish("mpi_halo");
}
