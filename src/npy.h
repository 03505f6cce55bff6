/* .npy header handling (npy_header.c), separate from the MPI-IO that reads and writes the data. */
#ifndef SL_NPY_H
#define SL_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "starlops.h"

struct npy_info {
  sl_dtype dtype;
  int ndim;
  int64_t dims[SL_MAX_DIMS];
  size_t header_len; /* bytes before the data */
};

/** Writes a version 1.0 header for a C-ordered array into out (its length, a multiple of 64, in *len). */
int npy_header_format(char *out, size_t cap, sl_dtype dt, int ndim, const int64_t *dims, size_t *len);
/** Parses the first n bytes of a file; path only names the file in error messages. */
int npy_header_parse(const unsigned char *buf, size_t n, const char *path, struct npy_info *info);

#endif
