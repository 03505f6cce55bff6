/* Properties of the four element types. */
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
