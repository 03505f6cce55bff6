/* The perc-th percentile of |x| over an array (numpy's linear interpolation between order statistics),
 * for percentile thresholding: the local moduli are sorted on the host, then two order statistics are found
 * by bisection on the bit patterns of non-negative doubles (their order is the integers' order), with one
 * allreduce of two counts per step over the array's group. Collective; waits for x. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double from_bits(uint64_t u)
{
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* number of the n sorted values that are <= v */
static int64_t count_le(const double *m, int64_t n, double v)
{
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (m[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

int sl_array_abs_percentile_p(sl_array *x, double perc, double *out)
{
  MPI_Comm comm = x->partition == SL_SCATTER ? x->group->comm : MPI_COMM_SELF;
  int64_t n = x->nlocal;
  double *m = malloc(sizeof *m * (size_t)(n ? n : 1));
  int rc = m ? SL_SUCCESS : sl_error(SL_E_NOMEM, "percentile thresholding: out of memory for %lld moduli", (long long)n);
  void *p = NULL;
  if (rc == SL_SUCCESS) rc = sl_array_acquire(x, SL_READ, &p);
  int bad = 0;
  if (rc == SL_SUCCESS) {
    for (int64_t i = 0; i < n; i++) {
      switch (x->dtype) {
      case SL_FLOAT32: m[i] = fabs((double)((const float *)p)[i]); break;
      case SL_FLOAT64: m[i] = fabs(((const double *)p)[i]); break;
      case SL_COMPLEX64: m[i] = hypot((double)((const float *)p)[2 * i], (double)((const float *)p)[2 * i + 1]); break;
      default: m[i] = hypot(((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]); break;
      }
      bad |= isnan(m[i]);
    }
    int r2 = sl_array_release(x);
    if (rc == SL_SUCCESS) rc = r2;
  }
  if (rc == SL_SUCCESS && bad) rc = sl_error(SL_E_NUMERIC, "percentile thresholding: the iterate holds NaN");
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc != SL_SUCCESS) {
    free(m);
    return rc;
  }
  qsort(m, (size_t)n, sizeof *m, cmp_double);
  int64_t total = n;
  uint64_t hi = 0, top = 0;
  if (n) memcpy(&top, &m[n - 1], sizeof top);
  SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, comm));
  SL_CHECK_MPI(MPI_Allreduce(&top, &hi, 1, MPI_UINT64_T, MPI_MAX, comm));
  if (total == 0) {
    free(m);
    *out = 0;
    return SL_SUCCESS;
  }
  double h = (double)(total - 1) * perc / 100.0;
  int64_t k[2] = {(int64_t)floor(h), 0};
  k[1] = k[0] + 1 < total ? k[0] + 1 : k[0];
  uint64_t lo2[2] = {0, 0}, hi2[2] = {hi, hi};
  while (lo2[0] < hi2[0] || lo2[1] < hi2[1]) { /* the smallest v with count(<= v) >= k + 1, for both k */
    uint64_t mid[2];
    int64_t cnt[2];
    for (int j = 0; j < 2; j++) {
      mid[j] = lo2[j] + (hi2[j] - lo2[j]) / 2;
      cnt[j] = count_le(m, n, from_bits(mid[j]));
    }
    SL_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPI_INT64_T, MPI_SUM, comm));
    for (int j = 0; j < 2; j++) {
      if (lo2[j] >= hi2[j]) continue;
      if (cnt[j] >= k[j] + 1) hi2[j] = mid[j];
      else lo2[j] = mid[j] + 1;
    }
  }
  free(m);
  double v0 = from_bits(lo2[0]), v1 = from_bits(lo2[1]);
  *out = v0 + (h - (double)k[0]) * (v1 - v0);
  return SL_SUCCESS;
}
