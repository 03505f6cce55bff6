/* NonStationaryConvolve1D (pylops' definition): filters given at regularly spaced centres ih along one axis,
 * linearly interpolated between them (the end filters repeated beyond), convolved along that axis. The
 * axis must not be the distributed one, so every line is local: one task per rank over its block, no
 * communication. The filter of every sample is tabulated once at construction, in both orders (2 n L values). */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "operators/op_internal.h"
#include "codelets/codelets.h"

typedef struct {
  int64_t outer, n, inner, L;
  sl_kept H;
  starpu_data_handle_t scratch; /* packing space for a block of several chunks (NULL otherwise) */
} nsconv_t;

static void nsconv_free(void *p)
{
  nsconv_t *c = p;
  sl_kept_free(&c->H);
  if (c->scratch) starpu_data_unregister_submit(c->scratch);
  free(c);
}

static int nsconv_submit(sl_op *op, sl_op_mode mode, sl_array *y, int nx, const starpu_data_handle_t *hx, int ny,
                         const starpu_data_handle_t *hy)
{
  nsconv_t *c = op->data;
  return codelet_nsconv_submit(op->dtype, mode == SL_ADJOINT, c->outer, c->n, c->inner, c->L, c->H.h, c->scratch, nx, hx, ny, hy);
}

static int nsconv_apply(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y)
{
  return sl_op_apply_chunked(op, mode, x, y, nsconv_submit);
}
static const sl_op_ops nsconv_ops = {nsconv_apply, NULL, nsconv_free, NULL};

/* element j of the host buffer hs (dtype dt) as a double complex */
static double complex value(sl_dtype dt, const void *hs, int64_t j)
{
  switch (dt) {
  case SL_FLOAT32: return ((const float *)hs)[j];
  case SL_FLOAT64: return ((const double *)hs)[j];
  case SL_COMPLEX64: return CMPLX(((const float *)hs)[2 * j], ((const float *)hs)[2 * j + 1]);
  default: return CMPLX(((const double *)hs)[2 * j], ((const double *)hs)[2 * j + 1]);
  }
}

static void store(sl_dtype dt, void *dst, int64_t j, double complex v)
{
  switch (dt) {
  case SL_FLOAT32: ((float *)dst)[j] = (float)creal(v); break;
  case SL_FLOAT64: ((double *)dst)[j] = creal(v); break;
  case SL_COMPLEX64: ((float *)dst)[2 * j] = (float)creal(v), ((float *)dst)[2 * j + 1] = (float)cimag(v); break;
  default: ((double *)dst)[2 * j] = creal(v), ((double *)dst)[2 * j + 1] = cimag(v); break;
  }
}

int sl_op_nonstationary_convolve1d(sl_op **op, const sl_array *like, const void *hs, int64_t nfilt, int64_t hsize,
                                   const int64_t *ih, int axis)
{
  SL_CHECK_INIT();
  const char *fn = "sl_op_nonstationary_convolve1d";
  int rc = SL_SUCCESS;
  uint64_t digest = SL_FNV1A_START;
  if (!op) rc = sl_error(SL_E_INVALID, "%s: argument 1 (op) is NULL", fn);
  else if (!like) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is NULL", fn);
  else if (like->session != sl_session()) rc = sl_array_check_session(fn, like, "argument 2 (like)");
  else if (like->nparts) rc = sl_error(SL_E_INVALID, "%s: argument 2 (like) is a stacked array; give one of its parts", fn);
  else if (axis < -like->ndim || axis >= like->ndim)
    rc = sl_error(SL_E_INVALID, "%s: argument 7 (axis) is %d, outside the %d axes of argument 2 (like)", fn, axis, like->ndim);
  else if (nfilt < 1 || !hs || !ih)
    rc = sl_error(SL_E_INVALID, "%s: arguments 3-6: nfilt must be >= 1 with hs and ih given (nfilt %lld, hs %s, ih %s)", fn,
                  (long long)nfilt, hs ? "given" : "NULL", ih ? "given" : "NULL");
  else if (hsize < 1 || hsize % 2 == 0)
    rc = sl_error(SL_E_INVALID, "%s: argument 5 (hsize) must be odd and >= 1 (filters centred on their middle sample), got %lld",
                  fn, (long long)hsize);
  else if (nfilt > INT64_MAX / 16 / hsize)
    rc = sl_error(SL_E_DIMS, "%s: arguments 4 and 5 (nfilt %lld, hsize %lld): nfilt x hsize overflows", fn, (long long)nfilt,
                  (long long)hsize);
  if (rc == SL_SUCCESS && axis < 0) axis += like->ndim;
  /* the table is one StarPU vector (written so that the product cannot overflow) */
  if (rc == SL_SUCCESS && like->dims[axis] > 0 && hsize > (int64_t)(UINT32_MAX / 2) / like->dims[axis])
    rc = sl_error(SL_E_DIMS, "%s: the filter table, two copies of %lld samples x %lld taps (arguments 2 and 5: the length "
                  "along axis %d and hsize), is above 2^32 elements", fn, (long long)like->dims[axis], (long long)hsize, axis);
  if (rc == SL_SUCCESS && like->partition == SL_SCATTER && like->axis == axis && like->group->size > 1)
    rc = sl_error(SL_E_DIST, "%s: argument 7 (axis = %d) is the axis argument 2 (like) is distributed along; convolve along "
                  "another axis, or move the data first (sl_op_redistribute)", fn, axis);
  for (int64_t f = 0; rc == SL_SUCCESS && f < nfilt; f++)
    if (ih[f] < -(INT64_MAX / 4) || ih[f] > INT64_MAX / 4)
      rc = sl_error(SL_E_INVALID, "%s: argument 6 (ih): ih[%lld] = %lld is out of range (|ih| <= 2^61)", fn, (long long)f,
                    (long long)ih[f]);
  for (int64_t f = 1; rc == SL_SUCCESS && f < nfilt; f++)
    if (ih[f] - ih[f - 1] != ih[1] - ih[0] || ih[1] <= ih[0])
      rc = sl_error(SL_E_INVALID, "%s: argument 6 (ih) must be increasing and regularly spaced (pylops' rule); ih[%lld] - "
                    "ih[%lld] = %lld, ih[1] - ih[0] = %lld", fn, (long long)f, (long long)f - 1, (long long)(ih[f] - ih[f - 1]),
                    (long long)(ih[1] - ih[0]));
  if (rc == SL_SUCCESS && (ih[0] < 0 || ih[nfilt - 1] >= like->dims[axis]))
    rc = sl_error(SL_E_INVALID, "%s: argument 6 (ih): the filter centres must lie on the axis, 0 <= ih < %lld (argument 2's "
                  "length along axis %d; pylops' rule), got %lld .. %lld", fn, (long long)like->dims[axis], axis,
                  (long long)ih[0], (long long)ih[nfilt - 1]);
  int64_t bad = rc == SL_SUCCESS ? sl_first_nonfinite(hs, nfilt * hsize, like->dtype) : -1;
  if (bad >= 0)
    rc = sl_error(SL_E_INVALID, "%s: argument 3 (hs) holds a non-finite value at filter %lld, sample %lld", fn,
                  (long long)(bad / hsize), (long long)(bad % hsize));
  if (rc == SL_SUCCESS) {
    digest = sl_fnv1a(digest, hs, (size_t)(nfilt * hsize) * like->elsize);
    digest = sl_fnv1a(digest, ih, sizeof(int64_t) * (size_t)nfilt);
  }
  SL_TRY(SL_AGREE(fn, rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like),
                  SL_SAME_I("argument 4 (nfilt)", nfilt), SL_SAME_I("argument 5 (hsize)", hsize),
                  SL_SAME_I("argument 7 (axis)", axis), SL_SAME_I("arguments 3 and 6 (hs and ih: their values)", digest)));
  nsconv_t *c = calloc(1, sizeof *c);
  int64_t n = like->dims[axis];
  void *H = malloc(2 * (size_t)(n * hsize) * like->elsize + 1);
  if (!c || !H) rc = sl_error(SL_E_NOMEM, "%s: out of memory for the %lld x %lld filter table", fn, (long long)n, (long long)hsize);
  if (rc == SL_SUCCESS) {
    c->n = n;
    c->L = hsize;
    c->outer = c->inner = 1;
    for (int d = 0; d < axis; d++) c->outer *= like->ldims[d];
    for (int d = axis + 1; d < like->ndim; d++) c->inner *= like->ldims[d];
    int64_t dh = nfilt > 1 ? ih[1] - ih[0] : 1;
    for (int64_t k = 0; k < n; k++) { /* pylops' interpolation: the nearest centres on either side */
      double t = (double)(k - ih[0]) / (double)dh;
      int64_t i0 = (int64_t)floor(t);
      for (int64_t s = 0; s < hsize; s++) {
        double complex v;
        if (i0 < 0) v = value(like->dtype, hs, s);
        else if (i0 >= nfilt - 1) v = value(like->dtype, hs, (nfilt - 1) * hsize + s);
        else {
          double w = t - (double)i0;
          v = (1 - w) * value(like->dtype, hs, i0 * hsize + s) + w * value(like->dtype, hs, (i0 + 1) * hsize + s);
        }
        store(like->dtype, H, k * hsize + s, v);         /* sample-major, for the CPU kernel */
        store(like->dtype, H, n * hsize + s * n + k, v); /* tap-major, for the CUDA kernel */
      }
    }
    rc = sl_kept_copy(&c->H, H, 2 * n * hsize, like->elsize);
    if (rc == SL_SUCCESS && like->nchunks > 1)
      starpu_vector_data_register(&c->scratch, -1, 0, (uint32_t)(2 * like->nlocal), like->elsize);
  }
  free(H);
  sl_op *o = NULL;
  if (rc == SL_SUCCESS) rc = sl_op_new(&o, "NonStationaryConvolve1D", like, like, &nsconv_ops, c);
  else if (c) nsconv_free(c);
  return sl_op_finish(op, o, rc);
}
