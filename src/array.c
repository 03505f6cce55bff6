/* sl_array: creation (validated once, agreed by every rank), chunking into StarPU handles, destruction,
 * and the accessors. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

sl_dist sl_dist_default(void) { return (sl_dist){.partition = SL_SCATTER, .axis = 0}; }
sl_dist sl_dist_scatter(int axis) { return (sl_dist){.partition = SL_SCATTER, .axis = axis}; }
sl_dist sl_dist_broadcast(void) { return (sl_dist){.partition = SL_BROADCAST}; }

/* What each rank contributes to the one collective of array creation. */
struct create_record {
  int32_t code;
  int32_t has_local;
  int64_t local_n;
  uint64_t params;
  uint64_t mask;
};


int sl_size_product(int n, const int64_t *dims, int64_t elsize, int64_t *bytes)
{
  int64_t p = elsize;
  for (int i = 0; i < n; i++)
    if (dims[i] < 0 || __builtin_mul_overflow(p, dims[i], &p)) return SL_E_DIMS;
  *bytes = p;
  return SL_SUCCESS;
}

static int validate_local(int ndim, const int64_t dims[], sl_dtype dt, const sl_dist *d, int *axis)
{
  SL_CHECK_ARG(ndim >= 1 && ndim <= SL_MAX_DIMS, SL_E_INVALID,
               "sl_array_create: argument 2 (ndim) must be in 1..%d, got %d", SL_MAX_DIMS, ndim);
  SL_CHECK_ARG(dims != NULL, SL_E_INVALID, "sl_array_create: argument 3 (dims) is NULL");
  for (int i = 0; i < ndim; i++)
    SL_CHECK_ARG(dims[i] >= 1, SL_E_DIMS, "sl_array_create: argument 3 (dims): dims[%d] = %lld must be >= 1", i,
                 (long long)dims[i]);
  SL_CHECK_ARG(sl_dtype_valid(dt), SL_E_DTYPE, "sl_array_create: argument 4 (dt) is not a valid dtype (%d)", (int)dt);
  int64_t bytes = 0;
  SL_CHECK_ARG(sl_size_product(ndim, dims, (int64_t)sl_dtype_size(dt), &bytes) == SL_SUCCESS, SL_E_DIMS,
               "sl_array_create: argument 3 (dims): the array's size in bytes overflows 64 bits");
  SL_CHECK_ARG(d->partition == SL_SCATTER || d->partition == SL_BROADCAST, SL_E_DIST,
               "sl_array_create: argument 5 (dist): partition %d is neither SL_SCATTER nor SL_BROADCAST",
               (int)d->partition);
  *axis = d->axis < 0 ? d->axis + ndim : d->axis;
  if (d->partition == SL_BROADCAST) {
    *axis = 0;
    SL_CHECK_ARG(!d->mask && !d->local_n && !d->ghost_lo && !d->ghost_hi, SL_E_DIST,
                 "sl_array_create: argument 5 (dist): mask, local_n and ghosts apply to SL_SCATTER arrays only");
    return SL_SUCCESS;
  }
  SL_CHECK_ARG(*axis >= 0 && *axis < ndim, SL_E_DIST,
               "sl_array_create: argument 5 (dist): axis %d is out of range for %d dimensions", d->axis, ndim);
  for (int r = 0; d->mask && r < sl_ctx.size; r++)
    SL_CHECK_ARG(d->mask[r] >= 0, SL_E_DIST, "sl_array_create: argument 5 (dist): mask[%d] = %d is negative (mask values "
                 "are group numbers, >= 0)", r, d->mask[r]);
  SL_CHECK_ARG(!d->local_n || *d->local_n >= 0, SL_E_DIST,
               "sl_array_create: argument 5 (dist): local_n = %lld is negative", d->local_n ? (long long)*d->local_n : 0LL);
  SL_CHECK_ARG(d->ghost_lo >= 0 && d->ghost_hi >= 0, SL_E_DIST,
               "sl_array_create: argument 5 (dist): ghost widths must be >= 0, got %d and %d", d->ghost_lo, d->ghost_hi);
  return SL_SUCCESS;
}

static struct create_record make_record(int code, int ndim, const int64_t dims[], sl_dtype dt, const sl_dist *d,
                                        int axis)
{
  struct create_record rec = {.code = code};
  if (code != SL_SUCCESS) return rec;
  uint64_t h = SL_FNV1A_START;
  int head[6] = {ndim, (int)dt, (int)d->partition, axis, d->ghost_lo, d->ghost_hi};
  h = sl_fnv1a(h, head, sizeof head);
  h = sl_fnv1a(h, dims, sizeof(int64_t) * (size_t)ndim);
  rec.params = sl_fnv1a(h, &(int){d->mask != NULL}, sizeof(int));
  rec.mask = d->mask ? sl_fnv1a(SL_FNV1A_START, d->mask, sizeof(int) * (size_t)sl_ctx.size) : 0;
  rec.has_local = d->local_n != NULL;
  rec.local_n = d->local_n ? *d->local_n : 0;
  return rec;
}

/* StarPU 1.3 vectors count elements in 32 bits. */
static int check_block_sizes(const int64_t *counts, int64_t n_axis, int64_t total)
{
  for (int r = 0; r < sl_ctx.size; r++)
    if (total / n_axis * counts[r] >= (int64_t)UINT32_MAX)
      return sl_error(SL_E_INVALID, "sl_array_create: rank %d's block has %lld elements; StarPU 1.3 limits a block to "
                      "2^32 - 1: use more ranks", r, (long long)(total / n_axis * counts[r]));
  return SL_SUCCESS;
}

/* Every rank reaches the same verdict from the same gathered records. */
static int check_records(const struct create_record *recs, int64_t n_axis, int64_t total, const sl_dist *d,
                         int64_t *counts)
{
  int P = sl_ctx.size;
  for (int r = 0; r < P; r++) {
    if (recs[r].params != recs[0].params)
      return sl_error(SL_E_INVALID, "sl_array_create: ndim, dims, dt, partition, axis, ghosts or the presence of a "
                      "mask differ between rank 0 and rank %d", r);
    if (recs[r].mask != recs[0].mask)
      return sl_error(SL_E_DIST, "sl_array_create: argument 5 (dist): the mask differs between rank 0 and rank %d", r);
    if (recs[r].has_local != recs[0].has_local)
      return sl_error(SL_E_DIST, "sl_array_create: argument 5 (dist): local_n is given on rank %d but not on rank %d",
                      recs[0].has_local ? 0 : r, recs[0].has_local ? r : 0);
  }
  if (d->partition == SL_BROADCAST) {
    for (int r = 0; r < P; r++) counts[r] = n_axis;
    return check_block_sizes(counts, n_axis, total);
  }
  int ghost = d->ghost_lo > d->ghost_hi ? d->ghost_lo : d->ghost_hi;
  if (ghost > n_axis)
    return sl_error(SL_E_DIST, "sl_array_create: argument 5 (dist): ghost widths %d and %d exceed the axis's length "
                    "%lld", d->ghost_lo, d->ghost_hi, (long long)n_axis);
  if (total / n_axis * ghost >= (int64_t)UINT32_MAX)
    return sl_error(SL_E_DIST, "sl_array_create: argument 5 (dist): a ghost layer of width %d has %lld elements; StarPU "
                    "1.3 limits a block to 2^32 - 1", ghost, (long long)(total / n_axis * ghost));
  /* Ranks of one mask group tile the axis; without a mask, all ranks form one group. */
  for (int r = 0; r < P; r++) {
    int gsize = 0, grank = 0;
    int64_t sum = 0;
    for (int q = 0; q < P; q++)
      if (!d->mask || d->mask[q] == d->mask[r]) {
        if (q == r) grank = gsize;
        gsize++;
        if (recs[0].has_local && (recs[q].local_n < 0 || recs[q].local_n > n_axis)) /* (and the sum cannot wrap) */
          return sl_error(SL_E_DIST, "sl_array_create: argument 5 (dist): local_n is %lld on rank %d, outside 0..%lld (the "
                          "axis's length)", (long long)recs[q].local_n, q, (long long)n_axis);
        sum += recs[q].local_n;
      }
    if (recs[0].has_local) {
      if (sum != n_axis)
        return sl_error(SL_E_DIST, "sl_array_create: argument 5 (dist): local_n sums to %lld over the ranks of rank "
                        "%d's group, but the axis has %lld elements", (long long)sum, r, (long long)n_axis);
      counts[r] = recs[r].local_n;
    } else {
      counts[r] = n_axis / gsize + (grank < n_axis % gsize ? 1 : 0);
    }
  }
  return check_block_sizes(counts, n_axis, total);
}

static int chunk_count(int64_t nlocal, size_t elsize)
{
  if (nlocal == 0) return 0;
  uint64_t bytes = (uint64_t)nlocal * elsize;
  uint64_t n = (bytes + sl_ctx.chunk_bytes - 1) / sl_ctx.chunk_bytes;
  if (n > (uint64_t)sl_ctx.max_chunks) n = (uint64_t)sl_ctx.max_chunks;
  if (n > (uint64_t)nlocal) n = (uint64_t)nlocal;
  return n < 1 ? 1 : (int)n;
}

/* A host block of an array (its block, a ghost layer). With CUDA workers on the rank, StarPU's allocator pins
 * through cudaHostAlloc and aborts the process when that fails; the block is then allocated here and pinned
 * with starpu_memory_pin (left unpinned if that fails: its transfers are slower, nothing else changes). On a
 * rank without, StarPU's allocator (the host allocation cache's hooks, host_cache.c). NULL when out of
 * memory; *pinned tells host_free what to undo. */
static void *host_alloc(size_t bytes, int *pinned)
{
  void *p = NULL;
  *pinned = 0;
  if (sl_ctx.ncuda == 0) return starpu_malloc(&p, bytes) == 0 ? p : NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) return NULL;
  *pinned = starpu_memory_pin(p, bytes) == 0;
#ifdef SL_HAVE_CUDA
  if (!*pinned) (void)cudaGetLastError(); /* the failed registration's error is not left for a later check */
#endif
  return p;
}

static void host_free(void *p, size_t bytes, int pinned)
{
  if (!p) return;
  if (sl_ctx.ncuda == 0) { /* with its size, so that the host allocation cache can keep it */
    starpu_free_flags(p, bytes, STARPU_MALLOC_PINNED);
    return;
  }
  if (pinned) starpu_memory_unpin(p, bytes);
  free(p);
}

/* A block by storage (enum sl_storage): home-less chunks, each its own handle, which StarPU allocates on the
 * worker that first writes it (its zero fill; on a GPU from its cache of dropped blocks of the same size) and
 * which destruction drops without a copy back; else a host block (buffer, or a new one) split into chunks. */
static int register_block(sl_array *a, void *buffer, int storage)
{
  size_t bytes = (size_t)a->nlocal * a->elsize;
  a->nchunks = chunk_count(a->nlocal, a->elsize);
  int placed = storage == SL_STORE_TEMP || (storage == SL_STORE_USER && a->nchunks == 1);
  if (placed && a->nchunks == 1) {
    starpu_vector_data_register(&a->handle, -1, 0, (uint32_t)a->nlocal, a->elsize);
    a->placed = 1;
  } else if (placed && a->nchunks > 1) {
    a->chunk_h = calloc((size_t)a->nchunks, sizeof *a->chunk_h);
    if (!a->chunk_h) return sl_error(SL_E_NOMEM, "sl_array_create: out of memory");
    for (int c = 0; c < a->nchunks; c++)
      starpu_vector_data_register(&a->chunk_h[c], -1, 0, (uint32_t)sl_split_count(a->nlocal, a->nchunks, c), a->elsize);
    a->placed = 1;
  } else if (a->nlocal > 0) {
    if (buffer) {
      a->data = buffer;
    } else {
      int pin = 0;
      if (!(a->data = host_alloc(bytes, &pin)))
        return sl_error(SL_E_NOMEM, "sl_array_create: cannot allocate %zu bytes", bytes);
      a->pinned |= pin ? 1u : 0u;
      a->owns_data = 1; /* zeroed by a fill task (zero_fill), where the compute runs */
    }
    starpu_vector_data_register(&a->handle, STARPU_MAIN_RAM, (uintptr_t)a->data, (uint32_t)a->nlocal, a->elsize);
    if (a->nchunks > 1) {
      struct starpu_data_filter f = {.filter_func = starpu_vector_filter_block, .nchildren = (unsigned)a->nchunks};
      starpu_data_partition(a->handle, &f);
    }
  }
  if (a->nchunks > 0) {
    a->partials = calloc((size_t)a->nchunks, sizeof *a->partials);
    if (!a->partials) return sl_error(SL_E_NOMEM, "sl_array_create: out of memory");
    for (int c = 0; c < a->nchunks; c++) starpu_variable_data_register(&a->partials[c], -1, 0, 2 * sizeof(double));
  }
  int width[2] = {a->ghost_lo, a->ghost_hi};
  for (int s = 0; s < 2; s++) {
    int64_t n = a->outer * width[s] * a->inner;
    if (n == 0) continue;
    int pin = 0;
    if (!(a->ghost[s] = host_alloc((size_t)n * a->elsize, &pin)))
      return sl_error(SL_E_NOMEM, "sl_array_create: cannot allocate the ghost layers");
    a->pinned |= pin ? 2u << s : 0u;
    memset(a->ghost[s], 0, (size_t)n * a->elsize);
    starpu_vector_data_register(&a->ghost_handle[s], STARPU_MAIN_RAM, (uintptr_t)a->ghost[s], (uint32_t)n, a->elsize);
  }
  return SL_SUCCESS;
}

/* A block starlops allocated starts at zero: a fill task per chunk, run where the compute runs (on the GPU
 * there, so the host block is neither written nor copied up). */
static int zero_fill(sl_array *a)
{
  return a->owns_data || a->placed ? sl_array_fill(a, SL_REAL(0)) : SL_SUCCESS;
}

/* Ends the making of a, whose layout is set, with the storage asked (enum sl_storage; a host block is the
 * buffer given, or a zeroed new one). Hands a to *out, or destroys it on failure. */
static int give_storage(sl_array **out, sl_array *a, void *buffer, int storage)
{
  a->layout_only = storage == SL_STORE_LAYOUT;
  int rc = a->layout_only ? SL_SUCCESS : register_block(a, buffer, storage);
  if (a->layout_only) a->nchunks = chunk_count(a->nlocal, a->elsize);
  if (rc == SL_SUCCESS) rc = zero_fill(a);
  if (rc != SL_SUCCESS) {
    sl_array_destroy(&a);
    return rc;
  }
  *out = a;
  return SL_SUCCESS;
}

/* storage: SL_STORE_LAYOUT or SL_STORE_HOST (give_storage); wrap: buffer is the user's (sl_array_wrap); pre: the
 * caller's own verdict on its other arguments (an error already raised on this rank), agreed with the layout. */
static int array_new(sl_array **out, void *buffer, int wrap, int ndim, const int64_t dims[], sl_dtype dt,
                     const sl_dist *dist, int storage, int pre)
{
  SL_CHECK_INIT();
  sl_dist dflt = sl_dist_default();
  const sl_dist *d = dist ? dist : &dflt;
  int axis = 0;
  int code = pre != SL_SUCCESS ? pre : out ? SL_SUCCESS : sl_error(SL_E_INVALID, "sl_array_create: argument 1 (a) is NULL");
  if (code == SL_SUCCESS) code = validate_local(ndim, dims, dt, d, &axis);
  if (out) *out = NULL;

  int P = sl_ctx.size;
  /* This rank's allocations come before the gather: a failure is part of its record, which the gather agrees. */
  sl_array *a = calloc(1, sizeof *a);
  int64_t *counts = malloc(sizeof *counts * (size_t)P);
  if (a) a->session = sl_session();
  if (code == SL_SUCCESS && (!a || !counts)) code = sl_error(SL_E_NOMEM, "sl_array_create: out of memory");
  struct create_record mine = make_record(code, ndim, dims, dt, d, axis);
  /* The gathered records: on the stack up to 64 ranks; past that allocated, the ranks agreeing the allocation
   * before the gather (a rank without them could not take part in it). */
  struct create_record rstack[64], *recs = rstack;
  if (P > 64) {
    recs = malloc(sizeof *recs * (size_t)P);
    int rc = sl_agree(sl_ctx.comm, recs ? SL_SUCCESS : sl_error(SL_E_NOMEM, "sl_array_create: out of memory"));
    if (rc != SL_SUCCESS) {
      free(recs), free(a), free(counts);
      return rc;
    }
  }
  sl_watch_begin("sl_array_create's agreement of the layout (a collective call)");
  int rc = MPI_Allgather(&mine, sizeof mine, MPI_BYTE, recs, sizeof mine, MPI_BYTE, sl_ctx.comm);
  sl_watch_end();
  if (rc != MPI_SUCCESS) code = sl_error_mpi(rc, "MPI_Allgather", __FILE__, __LINE__);
  int first_bad = -1;
  for (int r = 0; r < P && first_bad < 0; r++)
    if (recs[r].code != SL_SUCCESS) first_bad = r;
  if (first_bad >= 0) {
    /* Only the failing rank knows why: everyone reports its message. */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", sl_last_error());
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, first_bad, sl_ctx.comm);
    code = sl_error(recs[first_bad].code, "%s", msg);
  }
  if (code == SL_SUCCESS) {
    int64_t total = 1;
    for (int i = 0; i < ndim; i++) total *= dims[i];
    code = check_records(recs, dims[axis], total, d, counts);
  }
  if (recs != rstack) free(recs);
  sl_group *group = NULL;
  if (code == SL_SUCCESS) code = sl_group_get(d->partition == SL_SCATTER ? d->mask : NULL, &group);
  if (code != SL_SUCCESS) {
    free(a), free(counts);
    return code;
  }

  a->ndim = ndim;
  a->dtype = dt;
  a->elsize = sl_dtype_size(dt);
  a->partition = d->partition;
  a->axis = axis;
  a->group = group;
  a->counts = counts;
  a->ghost_lo = d->ghost_lo;
  a->ghost_hi = d->ghost_hi;
  a->outer = a->inner = 1;
  for (int i = 0; i < ndim; i++) {
    a->dims[i] = a->ldims[i] = dims[i];
    if (i < axis) a->outer *= dims[i];
    if (i > axis) a->inner *= dims[i];
  }
  a->ldims[axis] = counts[sl_ctx.rank];
  for (int g = 0; g < group->rank && d->partition == SL_SCATTER; g++) a->offset += counts[group->members[g]];
  a->nlocal = a->outer * a->ldims[axis] * a->inner;
  if (storage == SL_STORE_LAYOUT) return give_storage(out, a, buffer, storage); /* nothing left that can fail */
  /* The storage is this rank's alone (an allocation that fails here, a NULL buffer to wrap where the block is
   * not empty): the ranks agree the outcome, or the others would go on to wait for this one. */
  code = wrap && !buffer && a->nlocal > 0
           ? sl_error(SL_E_INVALID, "sl_array_wrap: argument 2 (buffer) is NULL on rank %d, whose block has %lld "
                      "elements", sl_ctx.rank, (long long)a->nlocal)
           : SL_SUCCESS;
  sl_array *made = NULL;
  if (code == SL_SUCCESS) code = give_storage(&made, a, buffer, storage);
  else sl_array_destroy(&a);
  code = sl_agree(sl_ctx.comm, code);
  if (code != SL_SUCCESS) {
    sl_array_destroy(&made);
    return code;
  }
  *out = made;
  return SL_SUCCESS;
}

int sl_array_create(sl_array **a, int ndim, const int64_t dims[], sl_dtype dt, const sl_dist *dist)
{
  return array_new(a, NULL, 0, ndim, dims, dt, dist, SL_STORE_HOST, SL_SUCCESS);
}

int sl_layout_create(sl_array **a, int ndim, const int64_t dims[], sl_dtype dt, const sl_dist *dist)
{
  return array_new(a, NULL, 0, ndim, dims, dt, dist, SL_STORE_LAYOUT, SL_SUCCESS);
}

int sl_array_wrap(sl_array **a, void *buffer, int ndim, const int64_t dims[], sl_dtype dt, const sl_dist *dist)
{
  return array_new(a, buffer, 1, ndim, dims, dt, dist, SL_STORE_HOST, SL_SUCCESS);
}

int sl_array_wrap_device(sl_array **a, void *dev_ptr, int device, int ndim, const int64_t dims[], sl_dtype dt,
                         const sl_dist *dist)
{
  SL_CHECK_INIT();
  const char *fn = "sl_array_wrap_device";
  int rc = SL_SUCCESS, node = -1;
  if (!a) rc = sl_error(SL_E_INVALID, "%s: argument 1 (a) is NULL", fn);
  else if (dist && (dist->ghost_lo || dist->ghost_hi))
    rc = sl_error(SL_E_INVALID, "%s: argument 7 (dist): ghost layers are not offered on a device buffer", fn);
  else {
    int w = starpu_worker_get_by_devid(STARPU_CUDA_WORKER, device);
    if (w < 0)
      rc = sl_error(SL_E_BACKEND, "%s: argument 3 (device = %d): this rank has no CUDA worker on that device (%d CUDA "
                    "workers)", fn, device, sl_ctx.ncuda);
    else node = (int)starpu_worker_get_memory_node((unsigned)w);
  }
  sl_array *t = NULL;
  SL_TRY(array_new(&t, NULL, 0, ndim, dims, dt, dist, SL_STORE_LAYOUT, rc)); /* rc agreed with the layout */
  rc = dev_ptr || t->nlocal == 0 ? SL_SUCCESS
                                 : sl_error(SL_E_INVALID, "%s: argument 2 (dev_ptr) is NULL on rank %d, whose block has %lld "
                                            "elements", fn, sl_ctx.rank, (long long)t->nlocal);
  /* the layout becomes an array of one chunk whose home is the device buffer */
  t->layout_only = 0;
  t->nchunks = t->nlocal > 0 ? 1 : 0;
  if (rc == SL_SUCCESS && t->nchunks) {
    t->partials = calloc(1, sizeof *t->partials);
    if (!t->partials) rc = sl_error(SL_E_NOMEM, "%s: out of memory", fn);
  }
  if (rc == SL_SUCCESS && t->nchunks) {
    starpu_vector_data_register(&t->handle, node, (uintptr_t)dev_ptr, (uint32_t)t->nlocal, t->elsize);
    starpu_variable_data_register(&t->partials[0], -1, 0, 2 * sizeof(double));
    t->placed = 1;
    t->device_home = 1 + node;
  }
  rc = sl_agree(sl_ctx.comm, rc);
  if (rc != SL_SUCCESS) {
    sl_array_destroy(&t);
    return rc;
  }
  *a = t;
  return SL_SUCCESS;
}

int sl_array_sync(sl_array *a)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "sl_array_sync: argument 1 (a) is NULL");
  SL_TRY(sl_array_check_session("sl_array_sync", a, "argument 1 (a)"));
  SL_CHECK_ARG(!a->acquired, SL_E_STATE, "sl_array_sync: argument 1 (a) is acquired by the host; release it first");
  for (int i = 0; i < a->nparts; i++) SL_TRY(sl_array_sync(a->parts[i]));
  if (a->layout_only || (a->placed && !a->device_home)) return sl_wait(); /* no buffer of the caller's */
  sl_watch_begin("sl_array_sync (the tasks writing the array)");
  int rc = 0;
  for (int c = 0; c < a->nchunks && rc == 0; c++) {
    starpu_data_handle_t h = sl_array_chunk(a, c);
    rc = a->device_home ? starpu_data_acquire_on_node(h, a->device_home - 1, STARPU_R) : starpu_data_acquire(h, STARPU_R);
    if (rc == 0) starpu_data_release_on_node(h, a->device_home ? a->device_home - 1 : STARPU_MAIN_RAM);
  }
  sl_watch_end();
  if (rc != 0) return sl_error_starpu(rc, "starpu_data_acquire", __FILE__, __LINE__);
  return sl_async_error_take();
}

int sl_array_clone(sl_array **out, const sl_array *like, int storage)
{
  *out = NULL;
  SL_TRY(sl_array_check_session(NULL, like, "the array to copy the layout of"));
  if (like->nparts) return sl_stack_clone(out, like, storage);
  sl_array *a = calloc(1, sizeof *a);
  int64_t *counts = malloc(sizeof *counts * (size_t)sl_ctx.size);
  if (!a || !counts) {
    free(a);
    free(counts);
    return sl_error(SL_E_NOMEM, "sl_array_create_like: out of memory");
  }
  memcpy(counts, like->counts, sizeof *counts * (size_t)sl_ctx.size);
  a->session = sl_session();
  a->ndim = like->ndim;
  memcpy(a->dims, like->dims, sizeof a->dims);
  memcpy(a->ldims, like->ldims, sizeof a->ldims);
  a->dtype = like->dtype;
  a->elsize = like->elsize;
  a->partition = like->partition;
  a->axis = like->axis;
  a->group = like->group; /* groups live until sl_finalize */
  a->counts = counts;
  a->offset = like->offset;
  a->nlocal = like->nlocal;
  a->outer = like->outer;
  a->inner = like->inner;
  a->ghost_lo = like->ghost_lo;
  a->ghost_hi = like->ghost_hi;
  return give_storage(out, a, NULL, storage);
}

int sl_array_create_like(sl_array **a, const sl_array *like)
{
  SL_CHECK_INIT();
  int rc = a ? SL_SUCCESS : sl_error(SL_E_INVALID, "sl_array_create_like: argument 1 (a) is NULL");
  if (rc == SL_SUCCESS && !like) rc = sl_error(SL_E_INVALID, "sl_array_create_like: argument 2 (like) is NULL");
  if (rc == SL_SUCCESS) rc = sl_array_check_session("sl_array_create_like", like, "argument 2 (like)");
  sl_array *tmp = NULL;
  if (rc == SL_SUCCESS) rc = sl_array_clone(&tmp, like, SL_STORE_USER);
  /* the layout was agreed when `like` was made; the allocation can differ, and so can the array a rank passes */
  rc = SL_AGREE("sl_array_create_like", rc, SL_SAME_LAYOUT("argument 2 (like: its layout)", rc, like));
  if (rc != SL_SUCCESS) {
    sl_array_destroy(&tmp);
    return rc;
  }
  *a = tmp;
  return SL_SUCCESS;
}

int sl_array_destroy(sl_array **pa)
{
  if (!pa || !*pa) return SL_SUCCESS;
  if (!sl_ctx.initialized) /* StarPU has stopped: its handles are gone with it */
    return sl_error(SL_E_STATE, "sl_array_destroy: called after sl_finalize; destroy arrays before it");
  sl_array *a = *pa;
  SL_TRY(sl_array_check_session("sl_array_destroy", a, "argument 1"));
  if (a->in_stack)
    return sl_error(SL_E_STATE, "sl_array_destroy: argument 1 is a part of a stacked array (sl_array_stack_part); destroy the "
                    "stack, which frees its parts");
  if (a->nparts) {
    sl_stack_free(a);
    *pa = NULL;
    return SL_SUCCESS;
  }
  if (a->acquired) sl_array_release(a);
  if (a->ghosts_acquired) sl_array_release_ghosts(a);
  if (a->handle) {
    if (a->nchunks > 1) starpu_data_unpartition(a->handle, STARPU_MAIN_RAM);
    starpu_data_unregister(a->handle);
  }
  for (int c = 0; a->chunk_h && c < a->nchunks; c++)
    if (a->chunk_h[c]) starpu_data_unregister(a->chunk_h[c]);
  free(a->chunk_h);
  for (int c = 0; a->partials && c < a->nchunks; c++)
    if (a->partials[c]) starpu_data_unregister(a->partials[c]);
  for (int s = 0; s < 2; s++) {
    if (a->ghost_handle[s]) starpu_data_unregister(a->ghost_handle[s]);
    host_free(a->ghost[s], (size_t)(a->outer * (s ? a->ghost_hi : a->ghost_lo) * a->inner) * a->elsize, a->pinned & (2u << s));
  }
  if (a->owns_data) host_free(a->data, (size_t)a->nlocal * a->elsize, a->pinned & 1u);
  free(a->partials);
  free(a->counts);
  free(a);
  *pa = NULL;
  return SL_SUCCESS;
}

starpu_data_handle_t sl_array_chunk(const sl_array *a, int c)
{
  if (!a || c < 0 || c >= a->nchunks || a->session != sl_session()) return NULL; /* an earlier session's are gone */
  if (a->chunk_h) return a->chunk_h[c];
  if (!a->handle) return NULL;
  return a->nchunks > 1 ? starpu_data_get_sub_data(a->handle, 1, c) : a->handle;
}

int sl_array_same_split(const sl_array *a, const sl_array *b)
{
  return a->partition == b->partition && a->axis == b->axis && !memcmp(a->counts, b->counts, sizeof(int64_t) * (size_t)sl_ctx.size);
}

static int same_dims(const sl_array *a, const sl_array *b)
{
  return a->ndim == b->ndim && !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->ndim);
}

int sl_array_same_layout(const sl_array *a, const sl_array *b)
{
  if (a->nparts != b->nparts) return 0;
  for (int i = 0; i < a->nparts; i++)
    if (!sl_array_same_layout(a->parts[i], b->parts[i])) return 0;
  return a->nparts || (same_dims(a, b) && a->dtype == b->dtype && sl_array_same_split(a, b) && a->group == b->group &&
                       a->nchunks == b->nchunks);
}

int sl_array_check_session(const char *fn, const sl_array *a, const char *an)
{
  return !a || a->session == sl_session() ? SL_SUCCESS : sl_error_stale(fn, an);
}

int sl_array_check_data(const char *fn, const sl_array *a, const char *an)
{
  if (!a) return SL_SUCCESS; /* the callers name a NULL themselves */
  SL_TRY(sl_array_check_session(fn, a, an));
  SL_CHECK_ARG(!a->layout_only, SL_E_INVALID, "%s: %s is a layout without storage (an operator's domain or range): make an "
               "array like it (sl_array_create_like, sl_op_create_domain)", fn, an);
  /* a task on an array the host holds waits for its release: refused instead of waiting for ever */
  SL_CHECK_ARG(!a->acquired, SL_E_STATE, "%s: %s is acquired by the host; release it first", fn, an);
  for (int i = 0; i < a->nparts; i++) {
    SL_CHECK_ARG(!a->parts[i]->acquired, SL_E_STATE, "%s: %s: its part %d is acquired by the host; release it first", fn, an, i);
    SL_TRY(sl_array_check_data(fn, a->parts[i], an));
  }
  return SL_SUCCESS;
}

int sl_array_check_same(const sl_array *a, const char *an, const sl_array *b, const char *bn)
{
  SL_CHECK_ARG(a != NULL, SL_E_INVALID, "%s is NULL", an);
  SL_CHECK_ARG(b != NULL, SL_E_INVALID, "%s is NULL", bn);
  SL_TRY(sl_array_check_session(NULL, a, an));
  if (b->session != sl_session()) { /* the callers put the call's name in an ("fn: argument ..."): name it for b too */
    const char *colon = strstr(an, ": ");
    char fn[96];
    snprintf(fn, sizeof fn, "%.*s", colon ? (int)(colon - an) : 0, an);
    return sl_error_stale(colon ? fn : NULL, bn);
  }
  if (a->nparts || b->nparts) {
    if (a->nparts != b->nparts)
      return sl_error(SL_E_DIST, "%s and %s differ: %d and %d stacked parts (0: a plain array)", an, bn, a->nparts, b->nparts);
    for (int i = 0; i < a->nparts; i++) {
      int rc = sl_array_check_same(a->parts[i], an, b->parts[i], bn);
      if (rc != SL_SUCCESS) return sl_error(rc, "%s (part %d)", sl_last_error(), i);
    }
    return SL_SUCCESS;
  }
  if (!same_dims(a, b)) return sl_error(SL_E_DIMS, "%s and %s have different dims", an, bn);
  if (a->dtype != b->dtype)
    return sl_error(SL_E_DTYPE, "%s is %s but %s is %s", an, sl_dtype_name(a->dtype), bn, sl_dtype_name(b->dtype));
  if (!sl_array_same_split(a, b) || a->group != b->group)
    return sl_error(SL_E_DIST, "%s and %s are distributed differently (partition, axis, local dims or mask)", an, bn);
  return SL_SUCCESS;
}

/* Accessors: NULL gives 0 (ndim, nchunks), -1 (sizes, offsets, axis, dtype, partition) or NULL (dims). */
int sl_array_ndim(const sl_array *a) { return a ? a->ndim : 0; }
sl_dtype sl_array_dtype(const sl_array *a) { return a ? a->dtype : (sl_dtype)-1; }
const int64_t *sl_array_dims(const sl_array *a) { return a ? a->dims : NULL; }
const int64_t *sl_array_local_dims(const sl_array *a) { return a ? a->ldims : NULL; }
int64_t sl_array_local_offset(const sl_array *a) { return a ? a->offset : -1; }
int64_t sl_array_local_size(const sl_array *a)
{
  if (!a) return -1;
  int64_t n = a->nlocal;
  for (int i = 0; i < a->nparts; i++) n += sl_array_local_size(a->parts[i]);
  return n;
}
sl_partition sl_array_partition(const sl_array *a) { return a ? a->partition : (sl_partition)-1; }
int sl_array_axis(const sl_array *a) { return a ? a->axis : -1; }
int sl_array_nchunks(const sl_array *a) { return a ? a->nchunks : 0; }

int64_t sl_array_global_size(const sl_array *a)
{
  if (!a) return -1;
  int64_t n = 1;
  for (int i = 0; i < a->ndim; i++) n *= a->dims[i];
  return n;
}

int64_t sl_array_count_of(const sl_array *a, int r) { return a && a->counts && r >= 0 && r < sl_ctx.size ? a->counts[r] : -1; }
