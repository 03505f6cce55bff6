/* Status codes and their names; calls before sl_init fail cleanly. */
#include <criterion/criterion.h>
#include <string.h>

#include "starlops.h"

Test(errors, every_code_has_its_own_name)
{
  for (int c = SL_E_RUNTIME; c <= SL_SUCCESS; c++)
    for (int d = SL_E_RUNTIME; d < c; d++) cr_expect_str_neq(sl_strerror(c), sl_strerror(d));
  cr_expect(strstr(sl_strerror(SL_E_DIMS), "dimension") != NULL);
  cr_expect(strstr(sl_strerror(42), "unknown") != NULL);
}

Test(errors, calls_before_init_report_the_state)
{
  sl_scalar *s = NULL;
  cr_expect_eq(sl_scalar_create(&s, SL_FLOAT64), SL_E_STATE);
  cr_expect(strstr(sl_last_error(), "sl_init") != NULL);
  cr_expect_eq(sl_wait(), SL_E_STATE);
  cr_expect_eq(sl_finalize(), SL_E_STATE);
  cr_expect_eq(sl_array_fill(NULL, SL_REAL(0)), SL_E_STATE);
}

Test(dtypes, sizes_and_names)
{
  cr_expect_eq(sl_dtype_size(SL_FLOAT32), 4);
  cr_expect_eq(sl_dtype_size(SL_COMPLEX128), 16);
  cr_expect_eq(sl_dtype_size((sl_dtype)9), 0);
  cr_expect_str_eq(sl_dtype_name(SL_COMPLEX64), "complex64");
  cr_expect_null(sl_dtype_name((sl_dtype)-1));
  cr_expect(sl_dtype_is_complex(SL_COMPLEX64) && !sl_dtype_is_complex(SL_FLOAT64));
}
