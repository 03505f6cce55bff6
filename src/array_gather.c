/* Gather an array to one rank or to all, and scatter a global array into it. Blocks along any axis are
 * (outer, n_r, inner) slabs of the global (outer, N, inner) array. Up to INT_MAX elements a group the blocks move
 * by MPI_Gatherv / MPI_Allgatherv / MPI_Scatterv (int counts and displacements); past it (or with the test hook
 * STARLOPS_GATHER_P2P=1) each block is one message of a run datatype of any length (sl_mpi_run_type): from each
 * member to the root, from the root to each member, or broadcast from each member in turn. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GATHER_TAG 7713 /* the point-to-point blocks, on the group's communicator */

/* Element counts and displacements of the group members' blocks, in elements; *big when their total passes
 * INT_MAX (or the test hook asks for the point-to-point path) */
static void block_layout(const sl_array *a, int64_t *cnt, int64_t *displ, int *big)
{
  int64_t total = 0;
  for (int m = 0; m < a->group->size; m++) {
    cnt[m] = a->outer * a->counts[a->group->members[m]] * a->inner;
    displ[m] = total;
    total += cnt[m];
  }
  *big = total > INT_MAX || sl_ctx.set.gather_p2p;
}

/* global (outer, N, inner) <-> packed member blocks, one after another in group order. */
static void pack_members(const sl_array *a, void *packed, const void *global, const int64_t *displ, int to_packed)
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

/* The collectives' int counts and displacements (the totals fit: not big) */
static void int_layout(int n, const int64_t *cnt, const int64_t *displ, int *icnt, int *idispl)
{
  for (int m = 0; m < n; m++) {
    icnt[m] = (int)cnt[m];
    idispl[m] = (int)displ[m];
  }
}

/* The point-to-point path. dir 0: gather to group rank root (-1: to every member) from local into packed; dir 1:
 * scatter from root's packed into local. Every member's run datatype first, their creation agreed over the group. */
static int move_blocks(const sl_array *a, int dir, int root, void *local, void *packed, const int64_t *cnt,
                       const int64_t *displ)
{
  sl_group *g = a->group;
  const size_t el = a->elsize;
  MPI_Datatype *ty = calloc((size_t)g->size, sizeof *ty);
  int rc = ty ? SL_SUCCESS : sl_error(SL_E_NOMEM, "gather/scatter: out of memory");
  for (int m = 0; rc == SL_SUCCESS && m < g->size; m++) rc = sl_mpi_run_type(cnt[m], el, &ty[m]);
  rc = sl_agree(g->comm, rc);
  int mpi = MPI_SUCCESS;
  for (int m = 0; rc == SL_SUCCESS && mpi == MPI_SUCCESS && m < g->size; m++) {
    if (cnt[m] == 0) continue;
    char *at = packed ? (char *)packed + (size_t)displ[m] * el : NULL; /* NULL: a member that only sends or receives its own */
    if (root == -1) { /* every member receives every block */
      if (m == g->rank) memcpy(at, local, (size_t)cnt[m] * el);
      mpi = MPI_Bcast(at, 1, ty[m], m, g->comm);
    } else if (m == root) { /* the root's own block */
      if (g->rank == root) memcpy(dir ? local : at, dir ? at : local, (size_t)cnt[m] * el);
    } else if (g->rank == root) {
      mpi = dir ? MPI_Send(at, 1, ty[m], m, GATHER_TAG, g->comm) : MPI_Recv(at, 1, ty[m], m, GATHER_TAG, g->comm, MPI_STATUS_IGNORE);
    } else if (g->rank == m) {
      mpi = dir ? MPI_Recv(local, 1, ty[m], root, GATHER_TAG, g->comm, MPI_STATUS_IGNORE) : MPI_Send(local, 1, ty[m], root, GATHER_TAG, g->comm);
    }
  }
  if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, root == -1 ? "MPI_Bcast" : dir ? "MPI_Send" : "MPI_Recv", __FILE__, __LINE__);
  for (int m = 0; ty && m < g->size; m++)
    if (ty[m] != MPI_DATATYPE_NULL) MPI_Type_free(&ty[m]);
  free(ty);
  return rc;
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
  else if (a->session != sl_session()) code = sl_array_check_session(fn, a, "argument 1 (a)");
  else if (a->nparts)
    code = sl_error(SL_E_INVALID, "%s: a stacked array is not accepted here (use its parts: sl_array_stack_part)", fn);
  else if (root < -1 || root >= sl_ctx.size)
    code = sl_error(SL_E_INVALID, "%s: argument 2 (root) = %d is not -1 or a rank in 0..%d", fn, root, sl_ctx.size - 1);
  else if (!global && (root == -1 || root == sl_ctx.rank))
    code = sl_error(SL_E_INVALID, "%s: argument 3 (global) is NULL on rank %d, which needs it", fn, sl_ctx.rank);
  else code = sl_array_check_data(fn, a, "argument 1 (a)"); /* storage, not acquired */
  return SL_AGREE(fn, code, SL_SAME_I("argument 2 (root)", root), SL_SAME_LAYOUT("argument 1 (a: its layout)", code, a));
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
  int64_t *cnt = malloc(sizeof(int64_t) * 2 * (size_t)g->size);
  int *icnt = malloc(sizeof(int) * 2 * (size_t)g->size), big = 0;
  MPI_Datatype el = MPI_DATATYPE_NULL;
  void *tmp = NULL;
  if (!cnt || !icnt) rc = sl_error(SL_E_NOMEM, "sl_array_gather: out of memory");
  int64_t *displ = cnt ? cnt + g->size : NULL;
  if (rc == SL_SUCCESS) block_layout(a, cnt, displ, &big);
  if (rc == SL_SUCCESS && receiver && a->outer > 1) {
    tmp = malloc((size_t)sl_array_global_size(a) * a->elsize);
    if (!tmp) rc = sl_error(SL_E_NOMEM, "sl_array_gather: out of memory");
  }
  rc = sl_agree(g->comm, rc);
  void *recv = tmp ? tmp : global;
  if (rc == SL_SUCCESS && big) {
    rc = move_blocks(a, 0, groot, local, recv, cnt, displ);
  } else if (rc == SL_SUCCESS) {
    int *idispl = icnt + g->size;
    int_layout(g->size, cnt, displ, icnt, idispl);
    rc = sl_mpi_element_type(a->elsize, &el);
    int mpi = MPI_SUCCESS;
    if (rc == SL_SUCCESS)
      mpi = root == -1 ? MPI_Allgatherv(local, icnt[g->rank], el, recv, icnt, idispl, el, g->comm)
                       : MPI_Gatherv(local, icnt[g->rank], el, recv, icnt, idispl, el, groot, g->comm);
    if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Gatherv", __FILE__, __LINE__);
  }
  if (rc == SL_SUCCESS && tmp) pack_members(a, tmp, global, displ, 0);
  if (el != MPI_DATATYPE_NULL) MPI_Type_free(&el);
  free(tmp);
  free(cnt);
  free(icnt);
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
    int64_t *cnt = malloc(sizeof(int64_t) * 2 * (size_t)g->size);
    int *icnt = malloc(sizeof(int) * 2 * (size_t)g->size), big = 0;
    if (!cnt || !icnt) rc = sl_error(SL_E_NOMEM, "sl_array_scatter: out of memory");
    int64_t *displ = cnt ? cnt + g->size : NULL;
    if (rc == SL_SUCCESS) block_layout(a, cnt, displ, &big);
    if (rc == SL_SUCCESS && sl_ctx.rank == root && a->outer > 1) {
      tmp = malloc((size_t)sl_array_global_size(a) * a->elsize);
      if (!tmp) rc = sl_error(SL_E_NOMEM, "sl_array_scatter: out of memory");
      else pack_members(a, tmp, (void *)global, displ, 1);
    }
    rc = sl_agree(g->comm, rc);
    MPI_Datatype el = MPI_DATATYPE_NULL;
    void *send = tmp ? tmp : (void *)global;
    if (rc == SL_SUCCESS && big) {
      rc = move_blocks(a, 1, group_rank_of(g, root), local, send, cnt, displ);
    } else if (rc == SL_SUCCESS) {
      int *idispl = icnt + g->size;
      int_layout(g->size, cnt, displ, icnt, idispl);
      rc = sl_mpi_element_type(a->elsize, &el);
      int mpi = MPI_SUCCESS;
      if (rc == SL_SUCCESS)
        mpi = MPI_Scatterv(send, icnt, idispl, el, local, icnt[g->rank], el, group_rank_of(g, root), g->comm);
      if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Scatterv", __FILE__, __LINE__);
    }
    if (el != MPI_DATATYPE_NULL) MPI_Type_free(&el);
    free(cnt);
    free(icnt);
  }
  free(tmp);
  sl_array_release(a);
  return rc;
}
