/* Properties of the four element types. */
#include <limits.h>
#include <math.h>

#include "internal.h"

static const struct {
  const char *name;
  size_t size;
  int complex;
  sl_dtype real;
} dtypes[SL_NDTYPES] = {
  [SL_FLOAT32] = {"float32", 4, 0, SL_FLOAT32},
  [SL_FLOAT64] = {"float64", 8, 0, SL_FLOAT64},
  [SL_COMPLEX64] = {"complex64", 8, 1, SL_FLOAT32},
  [SL_COMPLEX128] = {"complex128", 16, 1, SL_FLOAT64},
};

int sl_dtype_valid(sl_dtype dt) { return (int)dt >= 0 && (int)dt < SL_NDTYPES; }
size_t sl_dtype_size(sl_dtype dt) { return sl_dtype_valid(dt) ? dtypes[dt].size : 0; }
const char *sl_dtype_name(sl_dtype dt) { return sl_dtype_valid(dt) ? dtypes[dt].name : NULL; }
int sl_dtype_is_complex(sl_dtype dt) { return sl_dtype_valid(dt) && dtypes[dt].complex; }
sl_dtype sl_dtype_real(sl_dtype dt) { return dtypes[dt].real; }

int64_t sl_first_nonfinite(const void *buf, int64_t n, sl_dtype dt)
{
  int c = sl_dtype_is_complex(dt) ? 2 : 1, dbl = sl_dtype_real(dt) == SL_FLOAT64;
  for (int64_t i = 0; i < n * c; i++)
    if (!isfinite(dbl ? ((const double *)buf)[i] : (double)((const float *)buf)[i])) return i / c;
  return -1;
}

MPI_Datatype sl_dtype_mpi(sl_dtype dt)
{
  switch (dt) {
  case SL_FLOAT32: return MPI_FLOAT;
  case SL_FLOAT64: return MPI_DOUBLE;
  case SL_COMPLEX64: return MPI_C_FLOAT_COMPLEX;
  default: return MPI_C_DOUBLE_COMPLEX;
  }
}

int sl_mpi_element_type(size_t elsize, MPI_Datatype *el)
{
  SL_CHECK_MPI(MPI_Type_contiguous((int)elsize, MPI_BYTE, el));
  SL_CHECK_MPI(MPI_Type_commit(el));
  return SL_SUCCESS;
}

int sl_mpi_run_type_pieces(int64_t n, size_t elsize, int64_t piece, MPI_Datatype *t)
{
  *t = MPI_DATATYPE_NULL;
  if (n < 0 || piece < 1 || piece > INT_MAX || n / piece > INT_MAX)
    return sl_error(SL_E_INVALID, "MPI datatype of %lld elements in pieces of %lld: out of range", (long long)n,
                    (long long)piece);
  MPI_Datatype el = MPI_DATATYPE_NULL, whole = MPI_DATATYPE_NULL, rest = MPI_DATATYPE_NULL, big = MPI_DATATYPE_NULL;
  int64_t q = n / piece, r = n % piece;
  int mpi = MPI_Type_contiguous((int)elsize, MPI_BYTE, &el);
  if (mpi == MPI_SUCCESS && q == 0) mpi = MPI_Type_contiguous((int)r, el, t);
  else if (mpi == MPI_SUCCESS) {
    mpi = MPI_Type_contiguous((int)piece, el, &whole);
    if (mpi == MPI_SUCCESS) mpi = MPI_Type_contiguous((int)q, whole, r ? &big : t);
    if (mpi == MPI_SUCCESS && r) mpi = MPI_Type_contiguous((int)r, el, &rest);
    if (mpi == MPI_SUCCESS && r) {
      int len[2] = {1, 1};
      MPI_Aint at[2] = {0, (MPI_Aint)(q * piece) * (MPI_Aint)elsize};
      MPI_Datatype parts[2] = {big, rest};
      mpi = MPI_Type_create_struct(2, len, at, parts, t);
    }
  }
  if (mpi == MPI_SUCCESS) mpi = MPI_Type_commit(t);
  MPI_Datatype *own[4] = {&el, &whole, &rest, &big};
  for (int i = 0; i < 4; i++)
    if (*own[i] != MPI_DATATYPE_NULL) MPI_Type_free(own[i]);
  if (mpi != MPI_SUCCESS) {
    if (*t != MPI_DATATYPE_NULL) MPI_Type_free(t);
    return sl_error_mpi(mpi, "MPI_Type_contiguous", __FILE__, __LINE__);
  }
  return SL_SUCCESS;
}

int sl_mpi_run_type(int64_t n, size_t elsize, MPI_Datatype *t) { return sl_mpi_run_type_pieces(n, elsize, (int64_t)1 << 30, t); }
