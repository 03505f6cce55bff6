/* Gather an array to one rank or to all, and scatter a global array into it. Blocks along any axis are
 * (outer, n_r, inner) slabs of the global (outer, N, inner) array. */
#include <limits.h>
#include <stdlib.h>

#include "internal.h"

/* Element counts and displacements of the group members' blocks, in elements. */
static int block_layout(const sl_array *a, int *cnt, int *displ)
{
  int64_t total = 0;
  for (int m = 0; m < a->group->size; m++) {
    int64_t c = a->outer * a->counts[a->group->members[m]] * a->inner;
    if (total + c > INT_MAX)
      return sl_error(SL_E_INVALID, "gather/scatter: the array has more than INT_MAX elements per group");
    cnt[m] = (int)c;
    displ[m] = (int)total;
    total += c;
  }
  return SL_SUCCESS;
}

/* global (outer, N, inner) <-> packed member blocks, one after another in group order. */
static void pack_members(const sl_array *a, void *packed, const void *global, const int *displ, int to_packed)
{
  int64_t N = a->dims[a->axis], off = 0;
  for (int m = 0; m < a->group->size; m++) {
    int64_t n = a->counts[a->group->members[m]];
    char *p = (char *)packed + (size_t)displ[m] * a->elsize;
    char *g = (char *)global + (size_t)(off * a->inner) * a->elsize;
    if (to_packed) sl_copy_rows(p, n * a->inner, g, N * a->inner, a->outer, n * a->inner, a->elsize);
    else sl_copy_rows(g, N * a->inner, p, n * a->inner, a->outer, n * a->inner, a->elsize);
    off += n;
  }
}

static int group_rank_of(const sl_group *g, int world_rank)
{
  for (int m = 0; m < g->size; m++)
    if (g->members[m] == world_rank) return m;
  return -1;
}

static int check_args(const char *fn, const sl_array *a, int root, const void *global)
{
  int code = SL_SUCCESS;
  if (!a) code = sl_error(SL_E_INVALID, "%s: argument 1 (a) is NULL", fn);
  else if (a->nparts)
    code = sl_error(SL_E_INVALID, "%s: a stacked array is not accepted here (use its parts: sl_array_stack_part)", fn);
  else if (root < -1 || root >= sl_ctx.size)
    code = sl_error(SL_E_INVALID, "%s: argument 2 (root) = %d is not -1 or a rank in 0..%d", fn, root, sl_ctx.size - 1);
  else if (!global && (root == -1 || root == sl_ctx.rank))
    code = sl_error(SL_E_INVALID, "%s: argument 3 (global) is NULL on rank %d, which needs it", fn, sl_ctx.rank);
  return SL_AGREE(fn, code, SL_SAME_I("argument 2 (root)", root));
}

int sl_array_gather(sl_array *a, int root, void *global)
{
  SL_CHECK_INIT();
  SL_TRY(check_args("sl_array_gather", a, root, global));
  int receiver = root == -1 || root == sl_ctx.rank;
  void *local = NULL;
  SL_TRY(sl_array_acquire(a, SL_READ, &local));
  int rc = SL_SUCCESS;
  if (a->partition == SL_BROADCAST) {
    if (receiver) sl_copy_rows(global, 0, local, 0, 1, a->nlocal, a->elsize);
    sl_array_release(a);
    return SL_SUCCESS;
  }
  sl_group *g = a->group;
  int groot = root == -1 ? -1 : group_rank_of(g, root);
  if (root != -1 && groot < 0) { /* another mask group gathers its replica */
    sl_array_release(a);
    return SL_SUCCESS;
  }
  int *cnt = malloc(sizeof(int) * 2 * (size_t)g->size);
  MPI_Datatype el = MPI_DATATYPE_NULL;
  void *tmp = NULL;
  if (!cnt) rc = sl_error(SL_E_NOMEM, "sl_array_gather: out of memory");
  int *displ = cnt ? cnt + g->size : NULL;
  if (rc == SL_SUCCESS) rc = block_layout(a, cnt, displ);
  if (rc == SL_SUCCESS && receiver && a->outer > 1) {
    tmp = malloc((size_t)sl_array_global_size(a) * a->elsize);
    if (!tmp) rc = sl_error(SL_E_NOMEM, "sl_array_gather: out of memory");
  }
  rc = sl_agree(g->comm, rc);
  if (rc == SL_SUCCESS) {
    void *recv = tmp ? tmp : global;
    rc = sl_mpi_element_type(a->elsize, &el);
    int mpi = MPI_SUCCESS;
    if (rc == SL_SUCCESS)
      mpi = root == -1 ? MPI_Allgatherv(local, cnt[g->rank], el, recv, cnt, displ, el, g->comm)
                       : MPI_Gatherv(local, cnt[g->rank], el, recv, cnt, displ, el, groot, g->comm);
    if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Gatherv", __FILE__, __LINE__);
    if (rc == SL_SUCCESS && tmp) pack_members(a, tmp, global, displ, 0);
  }
  if (el != MPI_DATATYPE_NULL) MPI_Type_free(&el);
  free(tmp);
  free(cnt);
  sl_array_release(a);
  return rc;
}

int sl_array_scatter(sl_array *a, int root, const void *global)
{
  SL_CHECK_INIT();
  SL_TRY(check_args("sl_array_scatter", a, root, global));
  void *local = NULL;
  SL_TRY(sl_array_acquire(a, SL_WRITE, &local));
  int rc = SL_SUCCESS;
  const void *src = global; /* the global array, once this rank has it */
  void *tmp = NULL;
  int scatterv = root != -1 && a->partition == SL_SCATTER && !a->group->mask;
  if (root != -1 && !scatterv) {
    /* Broadcast arrays and masked arrays (one replica per group) need the whole array on every rank. */
    if (sl_ctx.rank != root) {
      tmp = malloc((size_t)sl_array_global_size(a) * a->elsize);
      if (!tmp) rc = sl_error(SL_E_NOMEM, "sl_array_scatter: out of memory");
      src = tmp;
    }
    rc = sl_agree(sl_ctx.comm, rc);
    MPI_Datatype el = MPI_DATATYPE_NULL;
    if (rc == SL_SUCCESS) {
      rc = sl_agree(sl_ctx.comm, sl_mpi_run_type(sl_array_global_size(a), a->elsize, &el)); /* any size, one count */
      int mpi = MPI_SUCCESS;
      if (rc == SL_SUCCESS) mpi = MPI_Bcast((void *)src, 1, el, root, sl_ctx.comm);
      if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Bcast", __FILE__, __LINE__);
    }
    if (el != MPI_DATATYPE_NULL) MPI_Type_free(&el);
  }
  if (rc == SL_SUCCESS && !scatterv) {
    int64_t N = a->dims[a->axis], n = a->ldims[a->axis];
    sl_copy_rows(local, n * a->inner, (const char *)src + (size_t)(a->offset * a->inner) * a->elsize,
                 N * a->inner, a->outer, n * a->inner, a->elsize);
  } else if (rc == SL_SUCCESS) {
    sl_group *g = a->group;
    int *cnt = malloc(sizeof(int) * 2 * (size_t)g->size);
    if (!cnt) rc = sl_error(SL_E_NOMEM, "sl_array_scatter: out of memory");
    int *displ = cnt ? cnt + g->size : NULL;
    if (rc == SL_SUCCESS) rc = block_layout(a, cnt, displ);
    if (rc == SL_SUCCESS && sl_ctx.rank == root && a->outer > 1) {
      tmp = malloc((size_t)sl_array_global_size(a) * a->elsize);
      if (!tmp) rc = sl_error(SL_E_NOMEM, "sl_array_scatter: out of memory");
      else pack_members(a, tmp, (void *)global, displ, 1);
    }
    rc = sl_agree(g->comm, rc);
    MPI_Datatype el = MPI_DATATYPE_NULL;
    if (rc == SL_SUCCESS) {
      rc = sl_mpi_element_type(a->elsize, &el);
      int mpi = MPI_SUCCESS;
      if (rc == SL_SUCCESS)
        mpi = MPI_Scatterv(tmp ? tmp : global, cnt, displ, el, local, cnt[g->rank], el, group_rank_of(g, root), g->comm);
      if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Scatterv", __FILE__, __LINE__);
    }
    if (el != MPI_DATATYPE_NULL) MPI_Type_free(&el);
    free(cnt);
  }
  free(tmp);
  sl_array_release(a);
  return rc;
}
