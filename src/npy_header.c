/* The NumPy .npy header: format and parse (C order, little-endian float32/64, complex64/128). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "npy.h"

static const char *descr_of(sl_dtype dt)
{
  static const char *d[SL_NDTYPES] = {"<f4", "<f8", "<c8", "<c16"};
  return d[dt];
}

int npy_header_format(char *out, size_t cap, sl_dtype dt, int ndim, const int64_t *dims, size_t *len)
{
  char dict[1024], shape[512] = "";
  size_t used = 0;
  for (int i = 0; i < ndim; i++)
    used += (size_t)snprintf(shape + used, sizeof shape - used, "%lld,%s", (long long)dims[i],
                             i + 1 < ndim ? " " : "");
  if (ndim > 1) shape[used - 1] = '\0'; /* (3, 4) but (3,) */
  int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr_of(dt), shape);
  /* magic(6) + version(2) + length(2) + dict + padding + '\n', a multiple of 64 */
  size_t total = (10 + (size_t)dl + 1 + 63) / 64 * 64;
  if (total > cap || total - 10 > 65535) return sl_error(SL_E_INVALID, "npy header too long");
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  size_t hl = total - 10;
  out[8] = (char)(hl & 0xff);
  out[9] = (char)(hl >> 8);
  memcpy(out + 10, dict, (size_t)dl);
  memset(out + 10 + dl, ' ', total - 10 - (size_t)dl - 1);
  out[total - 1] = '\n';
  *len = total;
  return SL_SUCCESS;
}

/* Value of 'key' in the header dictionary: a pointer just after "'key':" and spaces. */
static const char *find_key(const char *dict, const char *key)
{
  char pat[32];
  snprintf(pat, sizeof pat, "'%s':", key);
  const char *p = strstr(dict, pat);
  if (!p) return NULL;
  p += strlen(pat);
  while (*p == ' ') p++;
  return p;
}

int npy_header_parse(const unsigned char *buf, size_t n, const char *path, struct npy_info *info)
{
  if (n < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
    return sl_error(SL_E_FORMAT, "'%s' is not a .npy file (bad magic string)", path);
  int major = buf[6];
  size_t hl, start;
  if (major == 1) {
    hl = (size_t)buf[8] | (size_t)buf[9] << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (n < 12) return sl_error(SL_E_FORMAT, "'%s': truncated .npy header", path);
    hl = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    start = 12;
  } else {
    return sl_error(SL_E_FORMAT, "'%s': unsupported .npy version %d", path, major);
  }
  if (start + hl > n) return sl_error(SL_E_FORMAT, "'%s': truncated .npy header", path);
  char *dict = malloc(hl + 1);
  if (!dict) return sl_error(SL_E_NOMEM, "npy: out of memory");
  memcpy(dict, buf + start, hl);
  dict[hl] = '\0';
  int rc = SL_SUCCESS;
  const char *d = find_key(dict, "descr"), *f = find_key(dict, "fortran_order"), *s = find_key(dict, "shape");
  if (!d || !f || !s) rc = sl_error(SL_E_FORMAT, "'%s': the .npy header lacks descr, fortran_order or shape", path);
  if (rc == SL_SUCCESS) {
    int found = 0;
    for (int t = 0; t < SL_NDTYPES && !found; t++) {
      char q[16];
      snprintf(q, sizeof q, "'%s'", descr_of((sl_dtype)t));
      if (strncmp(d, q, strlen(q)) == 0) {
        info->dtype = (sl_dtype)t;
        found = 1;
      }
    }
    if (!found)
      rc = sl_error(SL_E_DTYPE, "'%s': unsupported dtype %.12s (starlops reads <f4, <f8, <c8, <c16)", path, d);
  }
  if (rc == SL_SUCCESS && strncmp(f, "False", 5) != 0)
    rc = sl_error(SL_E_FORMAT, "'%s': Fortran-ordered arrays are not supported", path);
  if (rc == SL_SUCCESS) {
    if (*s != '(') rc = sl_error(SL_E_FORMAT, "'%s': malformed shape in the .npy header", path);
    info->ndim = 0;
    const char *p = s + 1;
    while (rc == SL_SUCCESS) {
      while (*p == ' ' || *p == ',') p++;
      if (*p == ')') break;
      char *end;
      long long v = strtoll(p, &end, 10);
      if (end == p || v < 0) rc = sl_error(SL_E_FORMAT, "'%s': malformed shape in the .npy header", path);
      else if (info->ndim == SL_MAX_DIMS) rc = sl_error(SL_E_DIMS, "'%s': more than %d dimensions", path, SL_MAX_DIMS);
      else info->dims[info->ndim++] = v;
      p = end;
    }
    if (rc == SL_SUCCESS && info->ndim == 0)
      rc = sl_error(SL_E_DIMS, "'%s': 0-dimensional arrays are not supported", path);
  }
  info->header_len = start + hl;
  free(dict);
  return rc;
}
