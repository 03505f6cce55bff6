/* Mask groups: one sub-communicator per distinct mask, created once (collectively) and shared by every
 * array with that mask, so no later operation re-splits a communicator. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "comm/comm.h"

static sl_group *groups;

static int same_mask(const int *a, const int *b)
{
  if (!a || !b) return a == b;
  return memcmp(a, b, sizeof(int) * (size_t)sl_ctx.size) == 0;
}

static void group_free(sl_group *g)
{
  if (g->mask && g->comm != MPI_COMM_NULL) MPI_Comm_free(&g->comm);
  if (g->mask) comm_channel_destroy(g->channel);
  free(g->members);
  free(g->mask);
  free(g);
}

int sl_group_get(const int *mask, sl_group **out)
{
  for (sl_group *g = groups; g; g = g->next)
    if (same_mask(g->mask, mask)) {
      *out = g;
      return SL_SUCCESS;
    }
  /* A new group, made by every rank (the masks were agreed equal, so every rank misses the cache alike): each
   * step that can fail on one rank alone is agreed over the whole communicator, so that either every rank
   * keeps the group or none does. */
  sl_group *g = calloc(1, sizeof *g);
  int rc = g ? SL_SUCCESS : sl_error(SL_E_NOMEM, "mask group: out of memory");
  size_t P = (size_t)sl_ctx.size;
  if (g) {
    g->comm = MPI_COMM_NULL;
    g->members = malloc(sizeof(int) * P);
    if (mask) g->mask = malloc(sizeof(int) * P);
    if (!g->members || (mask && !g->mask)) rc = sl_error(SL_E_NOMEM, "mask group: out of memory");
  }
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc == SL_SUCCESS && mask) {
    memcpy(g->mask, mask, sizeof(int) * P);
    int mpi = MPI_Comm_split(sl_ctx.comm, mask[sl_ctx.rank], sl_ctx.rank, &g->comm);
    if (mpi != MPI_SUCCESS) rc = sl_error_mpi(mpi, "MPI_Comm_split", __FILE__, __LINE__);
    else rc = comm_channel_create(g->comm, &g->channel); /* agreed within the group only */
    rc = sl_agree(sl_ctx.comm, rc);
  } else if (rc == SL_SUCCESS) {
    g->comm = sl_ctx.comm;
    g->channel = comm_world();
  }
  if (rc != SL_SUCCESS) {
    if (g) group_free(g);
    return rc;
  }
  /* Members in group-rank order: MPI_Comm_split with key = rank keeps the communicator's order. */
  g->size = 0;
  for (int r = 0; r < sl_ctx.size; r++)
    if (!mask || mask[r] == mask[sl_ctx.rank]) {
      if (r == sl_ctx.rank) g->rank = g->size;
      g->members[g->size++] = r;
    }
  g->next = groups;
  groups = g;
  *out = g;
  return SL_SUCCESS;
}

void sl_group_free_all(void)
{
  while (groups) {
    sl_group *next = groups->next;
    group_free(groups);
    groups = next;
  }
}
