/* The .npy header: what we write parses back, and what NumPy writes (byte for byte) parses. */
#include <criterion/criterion.h>
#include <string.h>

#include "npy.h"

Test(npy_header, round_trip_every_dtype_and_rank)
{
  int64_t dims[4] = {7, 1, 3, 100000};
  for (int dt = 0; dt < SL_NDTYPES; dt++)
    for (int nd = 1; nd <= 4; nd++) {
      char buf[256];
      size_t len = 0;
      cr_assert_eq(npy_header_format(buf, sizeof buf, (sl_dtype)dt, nd, dims, &len), SL_SUCCESS);
      cr_expect_eq(len % 64, 0, "header length %zu is a multiple of 64", len);
      cr_expect_eq(buf[len - 1], '\n');
      struct npy_info info;
      cr_assert_eq(npy_header_parse((unsigned char *)buf, len, "t", &info), SL_SUCCESS, "%s", sl_last_error());
      cr_expect_eq(info.dtype, (sl_dtype)dt);
      cr_expect_eq(info.ndim, nd);
      cr_expect_eq(info.header_len, len);
      for (int i = 0; i < nd; i++) cr_expect_eq(info.dims[i], dims[i]);
    }
}

Test(npy_header, parses_numpy_output)
{
  /* numpy.save(f, numpy.zeros((2, 3), numpy.complex64)) writes exactly this header */
  const char *dict = "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }";
  unsigned char buf[128];
  memset(buf, ' ', sizeof buf);
  memcpy(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
  memcpy(buf + 10, dict, strlen(dict));
  buf[127] = '\n';
  struct npy_info info;
  cr_assert_eq(npy_header_parse(buf, sizeof buf, "t", &info), SL_SUCCESS, "%s", sl_last_error());
  cr_expect_eq(info.dtype, SL_COMPLEX64);
  cr_expect_eq(info.ndim, 2);
  cr_expect_eq(info.dims[1], 3);
  cr_expect_eq(info.header_len, 128);
}

Test(npy_header, rejects_bad_headers)
{
  struct npy_info info;
  cr_expect_eq(npy_header_parse((const unsigned char *)"NUMPY", 5, "t", &info), SL_E_FORMAT);
  const char *bad[][2] = {
    {"{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", "int64"},
    {"{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", "fortran"},
    {"{'descr': '<f8', 'fortran_order': False, 'shape': (), }", "0-d"},
    {"{'descr': '<f8', 'shape': (2,), }", "no fortran_order"},
    {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, x), }", "bad shape"},
  };
  int codes[] = {SL_E_DTYPE, SL_E_FORMAT, SL_E_DIMS, SL_E_FORMAT, SL_E_FORMAT};
  for (int i = 0; i < 5; i++) {
    unsigned char buf[128];
    memset(buf, ' ', sizeof buf);
    memcpy(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
    memcpy(buf + 10, bad[i][0], strlen(bad[i][0]));
    buf[127] = '\n';
    cr_expect_eq(npy_header_parse(buf, sizeof buf, "t", &info), codes[i], "%s", bad[i][1]);
    cr_expect(strlen(sl_last_error()) > 0);
  }
  unsigned char v9[12] = "\x93NUMPY\x09\x00\x00\x00";
  cr_expect_eq(npy_header_parse(v9, sizeof v9, "t", &info), SL_E_FORMAT, "unknown version");
  unsigned char shortbuf[12] = "\x93NUMPY\x01\x00\x76\x00";
  cr_expect_eq(npy_header_parse(shortbuf, sizeof shortbuf, "t", &info), SL_E_FORMAT, "truncated header");
}
