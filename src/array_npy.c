/* Collective .npy read and write through MPI-IO: rank 0 handles the header, and every rank reads or
 * writes its own (outer, n, inner) slab through a subarray file view, so any P writes and any Q reads. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "npy.h"

#define NPY_PROBE 65536 /* header bytes rank 0 reads and broadcasts */

/* Sets a view of this rank's slab in the file (an empty one when it transfers nothing) and gives the memory
 * type that moves the local block in one count: outer runs of ldims[axis] * inner elements, N * inner apart
 * (one run where the block holds whole rows or there is one outer row), any size (sl_mpi_run_type). */
static int set_view(MPI_File fh, const sl_array *a, size_t disp, int active, MPI_Datatype el, MPI_Datatype *ft,
                    MPI_Datatype *mem)
{
  *ft = *mem = MPI_DATATYPE_NULL;
  /* the same verdict on every rank (before the collective set_view): from the agreed block table only */
  int partial = 0; /* some rank holds part of the axis: its slab is outer runs */
  for (int r = 0; a->partition == SL_SCATTER && r < sl_ctx.size; r++)
    partial |= a->counts[r] > 0 && a->counts[r] < a->dims[a->axis];
  SL_CHECK_ARG(!partial || a->outer <= INT_MAX, SL_E_INVALID, "npy: the array has %lld rows before its distributed "
               "axis; slabs of at most %d rows are read or written", (long long)a->outer, INT_MAX);
  MPI_Datatype view = el;
  MPI_Offset at = (MPI_Offset)disp;
  if (active && a->nlocal > 0) {
    int64_t N = a->dims[a->axis], run = a->ldims[a->axis] * a->inner;
    int whole = a->partition == SL_BROADCAST || a->ldims[a->axis] == N || a->outer == 1;
    if (a->partition == SL_SCATTER) at += (MPI_Offset)(a->offset * a->inner) * (MPI_Offset)a->elsize;
    SL_TRY(sl_mpi_run_type(a->nlocal, a->elsize, mem));
    view = *mem; /* one run in the file too: a view of single elements costs MPI-IO an entry per element */
    if (!whole) {
      MPI_Datatype r = MPI_DATATYPE_NULL;
      SL_TRY(sl_mpi_run_type(run, a->elsize, &r));
      int mpi = MPI_Type_create_hvector((int)a->outer, 1, (MPI_Aint)(N * a->inner) * (MPI_Aint)a->elsize, r, ft);
      MPI_Type_free(&r);
      SL_CHECK_MPI(mpi);
      SL_CHECK_MPI(MPI_Type_commit(ft));
      view = *ft;
    }
  }
  SL_CHECK_MPI(MPI_File_set_view(fh, at, el, view, "native", MPI_INFO_NULL));
  return SL_SUCCESS;
}

/* Reads or writes this rank's slab (nothing when inactive). */
static int transfer(MPI_File fh, const char *path, sl_array *a, size_t disp, int active, int writing)
{
  MPI_Datatype el = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL, mem = MPI_DATATYPE_NULL;
  void *local = NULL;
  int rc = sl_array_acquire(a, writing ? SL_READ : SL_WRITE, &local);
  if (rc == SL_SUCCESS) rc = sl_mpi_element_type(a->elsize, &el);
  if (rc == SL_SUCCESS) rc = set_view(fh, a, disp, active, el, &ft, &mem);
  if (rc == SL_SUCCESS) {
    int count = mem != MPI_DATATYPE_NULL ? 1 : 0;
    MPI_Datatype mt = mem != MPI_DATATYPE_NULL ? mem : el;
    MPI_Status st;
    int mpi = writing ? MPI_File_write_all(fh, local, count, mt, &st) : MPI_File_read_all(fh, local, count, mt, &st);
    if (mpi != MPI_SUCCESS) {
      char msg[MPI_MAX_ERROR_STRING] = "";
      int len = 0;
      MPI_Error_string(mpi, msg, &len);
      rc = sl_error(SL_E_IO, "%s: cannot %s '%s' on rank %d: %s", writing ? "sl_array_save_npy" : "sl_array_load_npy",
                    writing ? "write" : "read", path, sl_ctx.rank, msg);
    }
  }
  if (mem != MPI_DATATYPE_NULL) MPI_Type_free(&mem);
  if (ft != MPI_DATATYPE_NULL) MPI_Type_free(&ft);
  if (el != MPI_DATATYPE_NULL) MPI_Type_free(&el);
  if (a->acquired) sl_array_release(a);
  return rc;
}

/* The hash of path resolved against this rank's working directory (a relative path names different files on
 * ranks started in different directories), for the agreement: the directory as the shell names it ($PWD,
 * where it is the working directory), else getcwd's; an absolute path hashes as its text. SL_E_IO (fn) when
 * the working directory cannot be read. */
static int resolved_path(const char *fn, const char *path, uint64_t *h)
{
  *h = sl_fnv1a(SL_FNV1A_START, path, strlen(path));
  if (path[0] == '/') return SL_SUCCESS;
  char cwd[PATH_MAX];
  const char *dir = getenv("PWD");
  struct stat a, b;
  if (!dir || dir[0] != '/' || stat(dir, &a) != 0 || stat(".", &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
    if (!getcwd(cwd, sizeof cwd))
      return sl_error(SL_E_IO, "%s: argument 2 (path) '%s' is relative and the working directory cannot be read on rank %d: %s",
                      fn, path, sl_ctx.rank, strerror(errno));
    dir = cwd;
  }
  *h = sl_fnv1a(sl_fnv1a(sl_fnv1a(SL_FNV1A_START, dir, strlen(dir)), "/", 1), path, strlen(path));
  return SL_SUCCESS;
}
#define SL_SAME_RESOLVED(h) SL_SAME_KEY("argument 2 (path), resolved against each rank's working directory", (h))

int sl_array_save_npy(sl_array *a, const char *path)
{
  SL_CHECK_INIT();
  int code = SL_SUCCESS;
  if (!a) code = sl_error(SL_E_INVALID, "sl_array_save_npy: argument 1 (a) is NULL");
  else if (a->session != sl_session()) code = sl_array_check_session("sl_array_save_npy", a, "argument 1 (a)");
  else if (!path) code = sl_error(SL_E_INVALID, "sl_array_save_npy: argument 2 (path) is NULL");
  else if (a->nparts) code = sl_error(SL_E_INVALID, "sl_array_save_npy: a stacked array is not accepted here (save its parts)");
  else code = sl_array_check_data("sl_array_save_npy", a, "argument 1 (a)"); /* storage, not acquired */
  struct stat sb;
  if (code == SL_SUCCESS && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
    code = sl_error(SL_E_IO, "sl_array_save_npy: '%s' exists and is not a regular file (on rank %d)", path, sl_ctx.rank);
  uint64_t rp = 0;
  if (code == SL_SUCCESS) code = resolved_path("sl_array_save_npy", path, &rp);
  SL_TRY(SL_AGREE("sl_array_save_npy", code, sl_same_s("argument 2 (path)", path), SL_SAME_RESOLVED(rp),
                  SL_SAME_LAYOUT("argument 1 (a: its layout)", code, a)));
  char header[4096];
  size_t hlen = 0;
  SL_TRY(npy_header_format(header, sizeof header, a->dtype, a->ndim, a->dims, &hlen));
  /* rank 0 creates the file and writes the header with plain POSIX calls first: a target that refuses or
   * drops writes (a device, /proc) is then one agreed error before any collective file operation */
  int hrc = SL_SUCCESS;
  if (sl_ctx.rank == 0) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) hrc = sl_error(SL_E_IO, "sl_array_save_npy: cannot open '%s' for writing: %s", path, strerror(errno));
    else {
      ssize_t w = pwrite(fd, header, hlen, 0);
      if (w != (ssize_t)hlen)
        hrc = sl_error(SL_E_IO, "sl_array_save_npy: cannot write '%s': %s", path, w < 0 ? strerror(errno) : "short write");
      if (close(fd) != 0 && hrc == SL_SUCCESS)
        hrc = sl_error(SL_E_IO, "sl_array_save_npy: cannot write '%s': %s", path, strerror(errno));
    }
  }
  SL_TRY(sl_agree(sl_ctx.comm, hrc));
  MPI_File fh = MPI_FILE_NULL;
  int mpi = MPI_File_open(sl_ctx.comm, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  int orc = SL_SUCCESS;
  if (mpi != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(mpi, msg, &len);
    orc = sl_error(SL_E_IO, "sl_array_save_npy: cannot open '%s' for writing: %s", path, msg);
  }
  orc = sl_agree(sl_ctx.comm, orc); /* the open may fail on some ranks only (a file the kernel keeps apart) */
  if (orc != SL_SUCCESS) {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
    return orc;
  }
  int64_t total = 0;
  if (sl_size_product(a->ndim, a->dims, (int64_t)a->elsize, &total) != SL_SUCCESS) total = -1;
  /* One replica writes: the mask group holding rank 0 (only rank 0 for a broadcast array). */
  int active = a->partition == SL_BROADCAST ? sl_ctx.rank == 0 : (!a->group->mask || a->group->mask[sl_ctx.rank] == a->group->mask[0]);
  int rc = sl_agree(sl_ctx.comm, transfer(fh, path, a, hlen, active, 1));
  if (rc == SL_SUCCESS) { /* the file must hold what was written (some targets accept writes and keep nothing) */
    MPI_Offset got = -1;
    mpi = MPI_File_sync(fh);
    if (mpi == MPI_SUCCESS) mpi = MPI_File_get_size(fh, &got);
    if (mpi != MPI_SUCCESS || (long long)got != (long long)hlen + total)
      rc = sl_error(SL_E_IO, "sl_array_save_npy: '%s' holds %lld bytes after writing %lld: the write did not reach the file",
                    path, (long long)got, (long long)hlen + total);
    rc = sl_agree(sl_ctx.comm, rc);
  }
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
  /* every rank reads the file: each checks that it sees it, a regular file of one size */
  struct stat sb;
  int64_t size = -1;
  if (code == SL_SUCCESS) {
    if (stat(path, &sb) != 0)
      code = sl_error(SL_E_IO, "sl_array_load_npy: cannot open '%s' on rank %d: %s", path, sl_ctx.rank, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
      code = sl_error(SL_E_IO, "sl_array_load_npy: '%s' is not a regular file (on rank %d)", path, sl_ctx.rank);
    else size = (int64_t)sb.st_size;
  }
  uint64_t rp = 0;
  if (code == SL_SUCCESS) code = resolved_path("sl_array_load_npy", path, &rp);
  SL_TRY(SL_AGREE("sl_array_load_npy", code, sl_same_s("argument 2 (path)", path), SL_SAME_RESOLVED(rp),
                  SL_SAME_I("the size of the file argument 2 (path) names", size)));
  *out = NULL;
  struct npy_info info;
  long long fsize = 0;
  SL_TRY(read_header(path, &info, &fsize));
  int64_t bytes = 0;
  if (sl_size_product(info.ndim, info.dims, (int64_t)sl_dtype_size(info.dtype), &bytes) != SL_SUCCESS)
    return sl_error(SL_E_FORMAT, "sl_array_load_npy: '%s': the shape in the header overflows 64-bit sizes", path);
  long long need = (long long)info.header_len + (long long)bytes;
  if (fsize < need)
    return sl_error(SL_E_FORMAT, "sl_array_load_npy: '%s' is truncated: %lld bytes, the header promises %lld", path,
                    fsize, need);
  sl_array *a = NULL;
  SL_TRY(sl_array_create(&a, info.ndim, info.dims, info.dtype, dist));
  MPI_File fh = MPI_FILE_NULL;
  int mpi = MPI_File_open(sl_ctx.comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  int rc = mpi == MPI_SUCCESS ? SL_SUCCESS : sl_error(SL_E_IO, "sl_array_load_npy: MPI cannot open '%s'", path);
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc == SL_SUCCESS) rc = sl_agree(sl_ctx.comm, transfer(fh, path, a, info.header_len, 1, 0));
  if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
  if (rc != SL_SUCCESS) {
    sl_array_destroy(&a);
    return rc;
  }
  *out = a;
  return SL_SUCCESS;
}
