/* Collective .npy read and write through MPI-IO: rank 0 handles the header, and every rank reads or
 * writes its own (outer, n, inner) slab through a subarray file view, so any P writes and any Q reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "npy.h"

#define NPY_PROBE 65536 /* header bytes rank 0 reads and broadcasts */

/* Sets a view of this rank's slab in the file (an empty one when it transfers nothing). */
static int set_view(MPI_File fh, const sl_array *a, size_t disp, int active, MPI_Datatype el, MPI_Datatype *ft)
{
  *ft = MPI_DATATYPE_NULL;
  MPI_Datatype view = el;
  if (active && a->nlocal > 0 && a->partition == SL_SCATTER) {
    int sizes[3] = {(int)a->outer, (int)a->dims[a->axis], (int)a->inner};
    int sub[3] = {(int)a->outer, (int)a->ldims[a->axis], (int)a->inner};
    int starts[3] = {0, (int)a->offset, 0};
    SL_CHECK_MPI(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, el, ft));
    SL_CHECK_MPI(MPI_Type_commit(ft));
    view = *ft;
  }
  SL_CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)disp, el, view, "native", MPI_INFO_NULL));
  return SL_SUCCESS;
}

/* Reads or writes this rank's slab (count 0 when inactive). */
static int transfer(MPI_File fh, sl_array *a, size_t disp, int active, int writing)
{
  MPI_Datatype el = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL;
  void *local = NULL;
  int rc = sl_array_acquire(a, writing ? SL_READ : SL_WRITE, &local);
  if (rc == SL_SUCCESS) rc = sl_mpi_element_type(a->elsize, &el);
  if (rc == SL_SUCCESS) rc = set_view(fh, a, disp, active, el, &ft);
  if (rc == SL_SUCCESS) {
    int count = active ? (int)a->nlocal : 0;
    MPI_Status st;
    int mpi = writing ? MPI_File_write_all(fh, local, count, el, &st) : MPI_File_read_all(fh, local, count, el, &st);
    if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, writing ? "MPI_File_write_all" : "MPI_File_read_all", __FILE__, __LINE__);
  }
  if (ft != MPI_DATATYPE_NULL) MPI_Type_free(&ft);
  if (el != MPI_DATATYPE_NULL) MPI_Type_free(&el);
  if (a->acquired) sl_array_release(a);
  return rc;
}

int sl_array_save_npy(sl_array *a, const char *path)
{
  SL_CHECK_INIT();
  int code = SL_SUCCESS;
  if (!a) code = sl_error(SL_E_INVALID, "sl_array_save_npy: argument 1 (a) is NULL");
  else if (!path) code = sl_error(SL_E_INVALID, "sl_array_save_npy: argument 2 (path) is NULL");
  else if (a->nparts) code = sl_error(SL_E_INVALID, "sl_array_save_npy: a stacked array is not accepted here (save its parts)");
  SL_TRY(sl_agree(sl_ctx.comm, code));
  char header[4096];
  size_t hlen = 0;
  SL_TRY(npy_header_format(header, sizeof header, a->dtype, a->ndim, a->dims, &hlen));
  MPI_File fh;
  int mpi = MPI_File_open(sl_ctx.comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  if (mpi != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(mpi, msg, &len);
    return sl_agree(sl_ctx.comm, sl_error(SL_E_IO, "sl_array_save_npy: cannot open '%s' for writing: %s", path, msg));
  }
  int rc = SL_SUCCESS;
  mpi = MPI_File_set_size(fh, 0);
  if (mpi == MPI_SUCCESS && sl_ctx.rank == 0) mpi = MPI_File_write_at(fh, 0, header, (int)hlen, MPI_BYTE, MPI_STATUS_IGNORE);
  if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_File_write_at", __FILE__, __LINE__);
  /* One replica writes: the mask group holding rank 0 (only rank 0 for a broadcast array). */
  int active = a->partition == SL_BROADCAST ? sl_ctx.rank == 0 : (!a->group->mask || a->group->mask[sl_ctx.rank] == a->group->mask[0]);
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc == SL_SUCCESS) rc = sl_agree(sl_ctx.comm, transfer(fh, a, hlen, active, 1));
  MPI_File_close(&fh);
  return rc;
}

/* Rank 0 reads the header and the file size; every rank parses the same bytes. */
static int read_header(const char *path, struct npy_info *info, long long *fsize)
{
  struct { int code; int n; long long size; } st = {SL_SUCCESS, 0, 0};
  unsigned char *buf = malloc(NPY_PROBE);
  if (!buf) return sl_error(SL_E_NOMEM, "sl_array_load_npy: out of memory");
  if (sl_ctx.rank == 0) {
    FILE *f = fopen(path, "rb");
    if (!f) {
      st.code = sl_error(SL_E_IO, "sl_array_load_npy: cannot open '%s': %s", path, strerror(errno));
    } else {
      st.n = (int)fread(buf, 1, NPY_PROBE, f);
      if (fseek(f, 0, SEEK_END) == 0) st.size = ftell(f);
      fclose(f);
    }
  }
  int rc = sl_agree(sl_ctx.comm, st.code);
  if (rc == SL_SUCCESS) {
    int mpi = MPI_Bcast(&st, sizeof st, MPI_BYTE, 0, sl_ctx.comm);
    if (mpi == MPI_SUCCESS) mpi = MPI_Bcast(buf, st.n, MPI_BYTE, 0, sl_ctx.comm);
    if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Bcast", __FILE__, __LINE__);
  }
  if (rc == SL_SUCCESS) rc = npy_header_parse(buf, (size_t)st.n, path, info);
  free(buf);
  *fsize = st.size;
  return rc;
}

int sl_array_load_npy(sl_array **out, const char *path, const sl_dist *dist)
{
  SL_CHECK_INIT();
  int code = SL_SUCCESS;
  if (!out) code = sl_error(SL_E_INVALID, "sl_array_load_npy: argument 1 (a) is NULL");
  else if (!path) code = sl_error(SL_E_INVALID, "sl_array_load_npy: argument 2 (path) is NULL");
  SL_TRY(sl_agree(sl_ctx.comm, code));
  *out = NULL;
  struct npy_info info;
  long long fsize = 0;
  SL_TRY(read_header(path, &info, &fsize));
  long long need = (long long)info.header_len;
  long long count = 1;
  for (int i = 0; i < info.ndim; i++) count *= info.dims[i];
  need += count * (long long)sl_dtype_size(info.dtype);
  if (fsize < need)
    return sl_error(SL_E_FORMAT, "sl_array_load_npy: '%s' is truncated: %lld bytes, the header promises %lld", path,
                    fsize, need);
  sl_array *a = NULL;
  SL_TRY(sl_array_create(&a, info.ndim, info.dims, info.dtype, dist));
  MPI_File fh;
  int mpi = MPI_File_open(sl_ctx.comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  int rc = mpi == MPI_SUCCESS ? SL_SUCCESS : sl_error(SL_E_IO, "sl_array_load_npy: MPI cannot open '%s'", path);
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc == SL_SUCCESS) {
    rc = sl_agree(sl_ctx.comm, transfer(fh, a, info.header_len, 1, 0));
    MPI_File_close(&fh);
  }
  if (rc != SL_SUCCESS) {
    sl_array_destroy(&a);
    return rc;
  }
  *out = a;
  return SL_SUCCESS;
}
