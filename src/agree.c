/* Agreement of a collective call's verdict and of the arguments that must be equal on every rank: one
 * allreduce carries the worst local verdict and, for each value, its largest and smallest over the ranks. */
#include <stdint.h>
#include <string.h>

#include "internal.h"

sl_same sl_same_d(const char *name, double x)
{
  sl_same s = {name, 0, SL_SAME_DOUBLE};
  if (x == 0) x = 0; /* -0 and +0 agree */
  memcpy(&s.v, &x, sizeof x);
  return s;
}

sl_same sl_same_s(const char *name, const char *text)
{
  /* FNV-1a of the text; NULL hashes apart from "" */
  uint64_t h = text ? sl_fnv1a(SL_FNV1A_START, text, strlen(text)) : 1;
  return (sl_same){name, (int64_t)h, SL_SAME_TEXT};
}

static void describe(const sl_same *s, int64_t v, char *out, size_t n)
{
  if (s->kind == SL_SAME_DOUBLE) {
    double d;
    memcpy(&d, &v, sizeof d);
    snprintf(out, n, "%g", d);
  } else if (s->kind == SL_SAME_TEXT) {
    snprintf(out, n, "one text");
  } else {
    snprintf(out, n, "%lld", (long long)v);
  }
}

int sl_agree_same(MPI_Comm comm, const char *fn, int code, int n, const sl_same *vals)
{
  int rank;
  SL_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  int64_t stack[1 + 2 * 16], *buf = n <= 16 ? stack : malloc((size_t)(1 + 2 * n) * sizeof *buf);
  if (!buf) code = code ? code : sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  int64_t tmp[1];
  int64_t *b = buf ? buf : tmp;
  int m = buf ? 1 + 2 * n : 1;
  /* the worst (most negative) code wins, then the lowest rank */
  b[0] = ((int64_t)(-code) << 32) | (int64_t)(INT32_MAX - rank);
  for (int i = 0; buf && i < n; i++) {
    b[1 + 2 * i] = vals[i].v;
    b[2 + 2 * i] = ~vals[i].v; /* max of ~v is ~(min of v) */
  }
  char what[128];
  if (n > 0) snprintf(what, sizeof what, "the agreement of %s's arguments (a collective call)", fn);
  else snprintf(what, sizeof what, "an agreement of the ranks' verdicts (a collective call)");
  sl_watch_begin(what);
  int rc = MPI_Allreduce(MPI_IN_PLACE, b, m, MPI_INT64_T, MPI_MAX, comm);
  sl_watch_end();
  if (rc != MPI_SUCCESS) {
    if (buf != stack) free(buf);
    return sl_error_mpi(rc, "MPI_Allreduce", __FILE__, __LINE__);
  }
  int worst = (int)-(b[0] >> 32), from = INT32_MAX - (int)(b[0] & 0xffffffff);
  int out = SL_SUCCESS;
  if (worst != SL_SUCCESS) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", sl_last_error());
    rc = MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, from, comm);
    msg[sizeof msg - 1] = '\0';
    if (rc != MPI_SUCCESS) out = sl_error_mpi(rc, "MPI_Bcast", __FILE__, __LINE__);
    else out = from == rank ? worst : sl_error(worst, "%s", msg);
  } else if (buf) {
    for (int i = 0; i < n; i++) {
      int64_t hi = b[1 + 2 * i], lo = ~b[2 + 2 * i];
      if (hi == lo) continue;
      char a[64], c[64];
      describe(&vals[i], lo, a, sizeof a);
      describe(&vals[i], hi, c, sizeof c);
      if (vals[i].kind == SL_SAME_TEXT)
        out = sl_error(SL_E_INVALID, "%s: %s differs between ranks; it must be the same on every rank", fn, vals[i].name);
      else
        out = sl_error(SL_E_INVALID, "%s: %s differs between ranks (%s on some, %s on others); it must be the same "
                       "on every rank", fn, vals[i].name, a, c);
      break;
    }
  }
  if (buf != stack) free(buf);
  return out;
}

int sl_agree(MPI_Comm comm, int code) { return sl_agree_same(comm, "sl_agree", code, 0, NULL); }

void *sl_calloc_agreed(size_t size, const char *fn, int *rc)
{
  void *p = calloc(1, size);
  *rc = sl_agree(sl_ctx.comm, p ? SL_SUCCESS : sl_error(SL_E_NOMEM, "%s: out of memory", fn));
  if (*rc == SL_SUCCESS) return p;
  free(p);
  return NULL;
}

uint64_t sl_array_layout_key(uint64_t h, const sl_array *a)
{
  if (!a) return sl_fnv1a(h, "-", 1);
  const int64_t v[] = {a->ndim, (int64_t)a->dtype, (int64_t)a->partition, a->axis, a->nparts};
  h = sl_fnv1a(h, v, sizeof v);
  h = sl_fnv1a(h, a->dims, sizeof a->dims[0] * (size_t)a->ndim);
  for (int i = 0; i < a->nparts; i++) h = sl_array_layout_key(h, a->parts[i]);
  return h;
}
