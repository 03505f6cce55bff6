/* The comm layer on 1 to 4 ranks: every collective in every dtype, with unequal and zero block sizes, on
 * the whole communicator, on a mask-like split and on the rows and columns of a process grid; a stress run
 * of 1000 collectives of random kinds and sizes interleaved with compute tasks; bad input. Every expected
 * value is computed here from the formula of the test data (val), never by the code under test. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "internal.h"
#include "comm/comm.h"

/* The test value of element i of rank r's data (component j: 0 real, 1 imaginary); small halves, exact in
 * float32 and in sums of four of them; not monotonic in r, so max and min are not just one rank's data. */
static double val(int r, int64_t i, int j, int salt)
{
  return (double)((r * 7 + i * 3 + j * 5 + salt) % 23) * 0.5 - 5.0;
}

static int ncomp(sl_dtype dt) { return sl_dtype_is_complex(dt) ? 2 : 1; }

static void put(sl_dtype dt, void *b, int64_t i, int j, double v)
{
  if (dt == SL_FLOAT32 || dt == SL_COMPLEX64) ((float *)b)[i * ncomp(dt) + j] = (float)v;
  else ((double *)b)[i * ncomp(dt) + j] = v;
}

static double get(sl_dtype dt, const void *b, int64_t i, int j)
{
  return dt == SL_FLOAT32 || dt == SL_COMPLEX64 ? ((const float *)b)[i * ncomp(dt) + j] : ((const double *)b)[i * ncomp(dt) + j];
}

/* A host buffer of n elements registered as a vector handle (NULL handle when n == 0). */
typedef struct {
  sl_dtype dt;
  int64_t n;
  void *ptr;
  starpu_data_handle_t h;
} vbuf;

static vbuf vb_new(sl_dtype dt, int64_t n, int r, int salt)
{
  vbuf v = {dt, n, NULL, NULL};
  size_t el = sl_dtype_size(dt);
  v.ptr = malloc((size_t)(n > 0 ? n : 1) * el);
  for (int64_t i = 0; i < n; i++)
    for (int j = 0; j < ncomp(dt); j++) put(dt, v.ptr, i, j, r >= 0 ? val(r, i, j, salt) : 777.0);
  if (n > 0) starpu_vector_data_register(&v.h, STARPU_MAIN_RAM, (uintptr_t)v.ptr, (uint32_t)n, el);
  return v;
}

static void vb_sync(vbuf *v)
{
  if (v->h) starpu_data_unregister(v->h);
  v->h = NULL;
}

static void vb_free(vbuf *v)
{
  vb_sync(v);
  free(v->ptr);
  v->ptr = NULL;
}

static int expect(const vbuf *v, int64_t i, int j, double want, const char *what, sl_dtype dt)
{
  double got = get(dt, v->ptr, i, j);
  if (got == want) return 0;
  CHECK(0, "%s (%s): element %lld.%d is %g, expected %g", what, sl_dtype_name(dt), (long long)i, j, got, want);
  return 1;
}

/* op over ranks of val(r, i, j): the reference of allreduce and reduce-scatter. */
static double reduce_ref(comm_op op, int P, int64_t i, int j, int salt)
{
  double acc = op == COMM_SUM ? 0 : val(0, i, j, salt);
  for (int r = 0; r < P; r++) {
    double v = val(r, i, j, salt);
    acc = op == COMM_SUM ? acc + v : (op == COMM_MAX ? fmax(acc, v) : fmin(acc, v));
  }
  return acc;
}

/* Block sizes, unequal, with zeros: count of rank r in a collective with seed s. */
static int64_t cnt(int r, int s, int64_t scale) { return ((r * 5 + s) % 4) * scale; }

/* ---- one collective of each kind; submit now, check after the wait -------------------------------- */
typedef struct pending {
  int kind;
  comm_channel *ch;
  sl_dtype dt;
  comm_op op;
  int salt, root, seed;
  int64_t scale;
  vbuf a, b;
  int64_t *c1, *d1, *c2, *d2;
  struct pending *next;
} pending;

static pending *queue;

enum { T_ALLREDUCE, T_ALLGATHERV, T_BCAST, T_REDUCE_SCATTER, T_ALLTOALLV, T_EXCHANGE, T_EXCHANGE_PERIODIC, T_NKINDS };
static const char *kind_names[T_NKINDS] = {"allreduce", "allgatherv", "bcast", "reduce_scatter", "alltoallv",
                                           "exchange", "exchange(periodic)"};

/* alltoallv: block from rank r to rank q has ((r + 2q + seed) % 3) * scale elements, element i of it is
 * val(r, 1000 q + i); send blocks sit one element apart, receive blocks two apart (gaps stay untouched). */
static int64_t a2a_cnt(int r, int q, int s, int64_t scale) { return ((r + 2 * q + s) % 3) * scale; }

/* exchange: the message from rank r to its right neighbour has right_len(r) elements (may be 0), the one
 * to its left left_len(r); element i is val(r, i + 100 * direction). */
static int64_t right_len(int r, int s, int64_t scale) { return ((r + s) % 3) * scale; }
static int64_t left_len(int r, int s, int64_t scale) { return ((r + s + 1) % 3) * scale; }

static int submit_one(int kind, comm_channel *ch, sl_dtype dt, comm_op op, int seed, int64_t scale)
{
  pending *p = calloc(1, sizeof *p);
  p->kind = kind;
  p->ch = ch;
  p->dt = dt;
  p->op = op;
  p->seed = seed;
  p->salt = seed % 17;
  p->scale = scale;
  p->root = seed % ch->size;
  int P = ch->size, me = ch->rank, rc = SL_SUCCESS;
  int64_t n = (seed % 5) * scale + (seed % 2); /* may be 0 */
  switch (kind) {
  case T_ALLREDUCE:
    p->a = vb_new(dt, n, me, p->salt);
    if (n == 0) { /* a NULL buffer is refused: use a variable of no interest instead */
      free(p->a.ptr);
      p->a = vb_new(dt, 1, me, p->salt);
    }
    rc = comm_allreduce(ch, dt, op, p->a.h);
    break;
  case T_BCAST:
    p->a = vb_new(dt, n + 1, me == p->root ? me : -1, p->salt);
    rc = comm_bcast(ch, dt, p->root, p->a.h);
    break;
  case T_ALLGATHERV: {
    p->c1 = malloc(sizeof(int64_t) * (size_t)P);
    int64_t tot = 0;
    for (int r = 0; r < P; r++) tot += p->c1[r] = cnt(r, seed, scale);
    p->a = vb_new(dt, p->c1[me], me, p->salt);
    p->b = vb_new(dt, tot, -1, 0);
    rc = comm_allgatherv(ch, dt, p->a.h, p->b.h, p->c1);
    break;
  }
  case T_REDUCE_SCATTER: {
    p->c1 = malloc(sizeof(int64_t) * (size_t)P);
    int64_t tot = 0;
    for (int r = 0; r < P; r++) tot += p->c1[r] = cnt(r, seed, scale);
    p->a = vb_new(dt, tot, me, p->salt);
    p->b = vb_new(dt, p->c1[me], -1, 0);
    rc = comm_reduce_scatter(ch, dt, op, p->a.h, p->b.h, p->c1);
    break;
  }
  case T_ALLTOALLV: {
    p->c1 = malloc(sizeof(int64_t) * (size_t)P);
    p->d1 = malloc(sizeof(int64_t) * (size_t)P);
    p->c2 = malloc(sizeof(int64_t) * (size_t)P);
    p->d2 = malloc(sizeof(int64_t) * (size_t)P);
    int64_t so = 0, ro = 0;
    for (int q = 0; q < P; q++) {
      p->c1[q] = a2a_cnt(me, q, seed, scale);
      p->d1[q] = so;
      so += p->c1[q] + 1;
      p->c2[q] = a2a_cnt(q, me, seed, scale);
      p->d2[q] = ro;
      ro += p->c2[q] + 2;
    }
    p->a = vb_new(dt, so, -1, 0);
    for (int q = 0; q < P; q++)
      for (int64_t i = 0; i < p->c1[q]; i++)
        for (int j = 0; j < ncomp(dt); j++) put(dt, p->a.ptr, p->d1[q] + i, j, val(me, 1000 * q + i, j, p->salt));
    p->b = vb_new(dt, ro, -1, 0);
    rc = comm_alltoallv(ch, dt, p->a.h, p->c1, p->d1, p->b.h, p->c2, p->d2);
    break;
  }
  case T_EXCHANGE:
  case T_EXCHANGE_PERIODIC: {
    int periodic = kind == T_EXCHANGE_PERIODIC;
    int left = me > 0 ? me - 1 : (periodic ? P - 1 : -1), right = me < P - 1 ? me + 1 : (periodic ? 0 : -1);
    /* a: [to right | to left], b: [from left | from right], as four separate handles in c1..: use vbufs */
    vbuf *v = calloc(4, sizeof(vbuf));
    v[0] = vb_new(dt, right_len(me, seed, scale), -1, 0);
    v[1] = vb_new(dt, left_len(me, seed, scale), -1, 0);
    for (int64_t i = 0; i < v[0].n; i++)
      for (int j = 0; j < ncomp(dt); j++) put(dt, v[0].ptr, i, j, val(me, i, j, p->salt));
    for (int64_t i = 0; i < v[1].n; i++)
      for (int j = 0; j < ncomp(dt); j++) put(dt, v[1].ptr, i, j, val(me, i + 100, j, p->salt));
    v[2] = vb_new(dt, left >= 0 ? right_len(left, seed, scale) : 0, -1, 0);
    v[3] = vb_new(dt, right >= 0 ? left_len(right, seed, scale) : 0, -1, 0);
    comm_pair pairs[2] = {{right, 0, 1, v[0].h, v[3].h}, {left, 1, 0, v[1].h, v[2].h}};
    rc = comm_exchange(ch, dt, 2, pairs);
    p->c1 = (int64_t *)v; /* kept for the check */
    p->root = left;
    p->d1 = malloc(sizeof(int64_t));
    p->d1[0] = right;
    break;
  }
  }
  CHECK(rc == SL_SUCCESS, "%s submit (%s): %s", kind_names[kind], sl_dtype_name(dt), sl_last_error());
  p->next = queue;
  queue = p;
  return rc;
}

static int check_one(pending *p)
{
  int P = p->ch->size, me = p->ch->rank, bad = 0, nc = ncomp(p->dt);
  sl_dtype dt = p->dt;
  const char *w = kind_names[p->kind];
  switch (p->kind) {
  case T_ALLREDUCE:
    vb_sync(&p->a);
    for (int64_t i = 0; i < p->a.n && !bad; i++)
      for (int j = 0; j < nc; j++) bad += expect(&p->a, i, j, reduce_ref(p->op, P, i, j, p->salt), w, dt);
    break;
  case T_BCAST:
    vb_sync(&p->a);
    for (int64_t i = 0; i < p->a.n && !bad; i++)
      for (int j = 0; j < nc; j++) bad += expect(&p->a, i, j, val(p->root, i, j, p->salt), w, dt);
    break;
  case T_ALLGATHERV: {
    vb_sync(&p->b);
    int64_t off = 0;
    for (int r = 0; r < P; r++) {
      for (int64_t i = 0; i < p->c1[r] && !bad; i++)
        for (int j = 0; j < nc; j++) bad += expect(&p->b, off + i, j, val(r, i, j, p->salt), w, dt);
      off += p->c1[r];
    }
    break;
  }
  case T_REDUCE_SCATTER: {
    vb_sync(&p->b);
    int64_t off = 0;
    for (int r = 0; r < me; r++) off += p->c1[r];
    for (int64_t i = 0; i < p->c1[me] && !bad; i++)
      for (int j = 0; j < nc; j++) bad += expect(&p->b, i, j, reduce_ref(p->op, P, off + i, j, p->salt), w, dt);
    break;
  }
  case T_ALLTOALLV:
    vb_sync(&p->b);
    for (int q = 0; q < P; q++) {
      for (int64_t i = 0; i < p->c2[q] && !bad; i++)
        for (int j = 0; j < nc; j++) bad += expect(&p->b, p->d2[q] + i, j, val(q, 1000 * me + i, j, p->salt), w, dt);
      for (int j = 0; j < nc && !bad; j++) bad += expect(&p->b, p->d2[q] + p->c2[q], j, 777.0, "alltoallv gap", dt);
    }
    break;
  case T_EXCHANGE:
  case T_EXCHANGE_PERIODIC: {
    vbuf *v = (vbuf *)p->c1;
    int left = p->root, right = (int)p->d1[0];
    vb_sync(&v[2]);
    vb_sync(&v[3]);
    for (int64_t i = 0; i < v[2].n && !bad; i++)
      for (int j = 0; j < nc; j++) bad += expect(&v[2], i, j, val(left, i, j, p->salt), "exchange from left", dt);
    for (int64_t i = 0; i < v[3].n && !bad; i++)
      for (int j = 0; j < nc; j++) bad += expect(&v[3], i, j, val(right, i + 100, j, p->salt), "exchange from right", dt);
    for (int k = 0; k < 4; k++) vb_free(&v[k]);
    free(v);
    p->c1 = NULL;
    break;
  }
  }
  vb_free(&p->a);
  vb_free(&p->b);
  free(p->c1);
  free(p->d1);
  free(p->c2);
  free(p->d2);
  return bad;
}

static int drain(void)
{
  CHECK_OK(sl_wait());
  int bad = 0, n = 0;
  while (queue) {
    pending *p = queue;
    queue = p->next;
    bad += check_one(p);
    free(p);
    n++;
  }
  return bad;
}

/* Every kind, dtype and op on one channel; sizes with zeros. */
static void all_kinds(comm_channel *ch, const char *name, int64_t scale)
{
  int seed = 1;
  for (int dt = 0; dt < 4; dt++)
    for (int kind = 0; kind < T_NKINDS; kind++)
      for (int op = 0; op < COMM_NOPS; op++) {
        if ((kind != T_ALLREDUCE && kind != T_REDUCE_SCATTER) && op > 0) continue;
        if (sl_dtype_is_complex((sl_dtype)dt) && op != COMM_SUM) continue;
        for (int s = 0; s < 2; s++) submit_one(kind, ch, (sl_dtype)dt, (comm_op)op, seed++ + s * 7, scale);
      }
  int bad = drain();
  CHECK(bad == 0, "%s: %d wrong results", name, bad);
  if (sl_rank() == 0) printf("  every collective, dtype and op on %s (scale %lld): %s\n", name, (long long)scale, bad ? "FAILED" : "ok");
}

/* comm_allreduce_n: three buffers of different sizes reduced by one collective task, every op and dtype. */
static void multi_allreduce(comm_channel *ch, const char *name)
{
  int bad = 0, P = ch->size;
  for (int dt = 0; dt < 4; dt++)
    for (int op = 0; op < COMM_NOPS; op++) {
      if (sl_dtype_is_complex((sl_dtype)dt) && op != COMM_SUM) continue;
      int64_t sizes[3] = {1, 5, 2500};
      vbuf v[3];
      starpu_data_handle_t h[3];
      for (int k = 0; k < 3; k++) {
        v[k] = vb_new((sl_dtype)dt, sizes[k], ch->rank, 3 + k);
        h[k] = v[k].h;
      }
      CHECK_OK(comm_allreduce_n(ch, (sl_dtype)dt, (comm_op)op, 3, h));
      CHECK_OK(sl_wait());
      for (int k = 0; k < 3; k++) {
        vb_sync(&v[k]);
        for (int64_t i = 0; i < sizes[k] && !bad; i++)
          for (int j = 0; j < ncomp((sl_dtype)dt); j++)
            bad += expect(&v[k], i, j, reduce_ref((comm_op)op, P, i, j, 3 + k), "allreduce_n", (sl_dtype)dt);
        vb_free(&v[k]);
      }
    }
  CHECK(bad == 0, "%s: allreduce of three buffers: %d wrong", name, bad);
  if (sl_rank() == 0) printf("  allreduce of three buffers in one task on %s: %s\n", name, bad ? "FAILED" : "ok");
}

/* 1000 collectives of random kinds and sizes, the same sequence on every rank, interleaved with compute
 * tasks on an independent array; everything checked. */
static void stress(comm_channel *world, comm_channel *sub)
{
  uint64_t rng = 0x9e3779b97f4a7c15ULL;
  int64_t dims[1] = {5000};
  sl_array *x = NULL;
  CHECK_OK(sl_array_create(&x, 1, dims, SL_FLOAT64, NULL));
  CHECK_OK(sl_array_fill(x, SL_REAL(1.0)));
  int nscale = 0, bad = 0;
  for (int k = 0; k < 1000; k++) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    int kind = (int)(rng % T_NKINDS);
    sl_dtype dt = (sl_dtype)((rng >> 8) % 4);
    comm_op op = sl_dtype_is_complex(dt) ? COMM_SUM : (comm_op)((rng >> 12) % COMM_NOPS);
    int64_t scale = (rng >> 16) % 8 == 0 ? 3000 : 1 + (int64_t)((rng >> 20) % 5);
    submit_one(kind, (rng >> 24) % 3 == 0 ? sub : world, dt, op, (int)((rng >> 28) % 1000), scale);
    if (k % 7 == 0) {
      CHECK_OK(sl_array_scale(x, SL_REAL(-1.0)));
      nscale++;
    }
    if (k % 250 == 249) bad += drain();
  }
  bad += drain();
  CHECK(bad == 0, "stress: %d wrong results", bad);
  sl_scalar *s;
  CHECK_OK(sl_scalar_create(&s, SL_FLOAT64));
  CHECK_OK(sl_array_sum(x, s));
  double v = 0;
  CHECK_OK(sl_scalar_get(s, &v));
  CHECK(v == (nscale % 2 ? -5000.0 : 5000.0), "stress: the compute tasks gave %g", v);
  sl_scalar_destroy(&s);
  sl_array_destroy(&x);
  long alloc = 0, served = 0;
  comm_pool_stats(&alloc, &served);
  if (served > 100) CHECK(alloc * 4 < served, "staging pool: %ld allocations for %ld requests", alloc, served);
  if (sl_rank() == 0)
    printf("  stress: 1000 collectives with %d compute tasks: %s (staging pool: %ld buffers for %ld requests)\n",
           nscale, bad ? "FAILED" : "ok", alloc, served);
}

/* Host MPI without a CUDA worker: a collective needs no worker (comm_direct.c). A task adds 1 to the buffer
 * on the first CPU worker, then every CPU worker is held by a task that waits for a flag; an allreduce
 * submitted after them must still complete (seen through an acquisition callback on its buffer) before the
 * flag is set, and include the task's write (it starts from the thread that finished the task). As a task
 * (STARLOPS_COMM_TASKS=1, a CUDA worker, a traced run) it would wait for a worker: the check is skipped
 * there. */
static int hold_flag, reduced;

static void add_one(void *buffers[], void *arg)
{
  double *p = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
  for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++) p[i] += 1.0;
}

static void hold_worker(void *buffers[], void *arg)
{
  double t0 = MPI_Wtime();
  while (!__atomic_load_n(&hold_flag, __ATOMIC_ACQUIRE) && MPI_Wtime() - t0 < 60) sched_yield();
}

static void reduced_cb(void *arg) { __atomic_store_n(&reduced, 1, __ATOMIC_RELEASE); }

static void without_workers(comm_channel *ch)
{
  if (!comm_direct_enabled()) return;
  static struct starpu_codelet cl, cl_add;
  starpu_codelet_init(&cl);
  cl.name = "test_hold_worker";
  cl.cpu_funcs[0] = hold_worker;
  cl.nbuffers = 0;
  starpu_codelet_init(&cl_add);
  cl_add.name = "test_add_one";
  cl_add.cpu_funcs[0] = add_one;
  cl_add.nbuffers = 1;
  cl_add.modes[0] = STARPU_RW;
  int ids[STARPU_NMAXWORKERS];
  int n = (int)starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids, STARPU_NMAXWORKERS);
  hold_flag = reduced = 0;
  vbuf v = vb_new(SL_FLOAT64, 5, ch->rank, 11);
  struct starpu_task *w0 = starpu_task_create();
  w0->cl = &cl_add;
  w0->handles[0] = v.h;
  w0->execute_on_a_specific_worker = 1;
  w0->workerid = (unsigned)ids[0];
  CHECK(starpu_task_submit(w0) == 0, "submitting the task that writes the buffer");
  for (int w = 0; w < n; w++) {
    struct starpu_task *t = starpu_task_create();
    t->cl = &cl;
    t->execute_on_a_specific_worker = 1;
    t->workerid = (unsigned)ids[w];
    CHECK(starpu_task_submit(t) == 0, "submitting the task that holds worker %d", ids[w]);
  }
  CHECK_OK(comm_allreduce(ch, SL_FLOAT64, COMM_SUM, v.h));
  CHECK(starpu_data_acquire_on_node_cb(v.h, STARPU_MAIN_RAM, STARPU_R, reduced_cb, NULL) == 0, "acquire_cb");
  double t0 = MPI_Wtime();
  while (!__atomic_load_n(&reduced, __ATOMIC_ACQUIRE) && MPI_Wtime() - t0 < 5) sched_yield();
  int done = __atomic_load_n(&reduced, __ATOMIC_ACQUIRE);
  CHECK(done, "an allreduce waited for a worker while all %d CPU workers were busy", n);
  if (done) /* the values, read while the workers are still held */
    for (int64_t i = 0; i < v.n; i++) (void)expect(&v, i, 0, reduce_ref(COMM_SUM, ch->size, i, 0, 11) + ch->size, "allreduce beside busy workers", SL_FLOAT64);
  __atomic_store_n(&hold_flag, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&reduced, __ATOMIC_ACQUIRE)) sched_yield();
  starpu_data_release_on_node(v.h, STARPU_MAIN_RAM);
  CHECK_OK(sl_wait());
  vb_free(&v);
  if (sl_rank() == 0) printf("  a collective while every CPU worker is busy: %s\n", done ? "completed" : "FAILED");
}

static void bad_input(comm_channel *ch)
{
  vbuf z = vb_new(SL_COMPLEX128, 4, ch->rank, 0), d = vb_new(SL_FLOAT64, 4, ch->rank, 0);
  int64_t counts[4] = {1, 1, 1, 1}, neg[4] = {-1, 0, 0, 0};
  CHECK(mc_same_error_everywhere(comm_allreduce(ch, SL_COMPLEX128, COMM_MAX, z.h), SL_E_INVALID),
        "complex max refused");
  CHECK(strstr(sl_last_error(), "complex") != NULL, "message names complex: %s", sl_last_error());
  CHECK(mc_same_error_everywhere(comm_allreduce(ch, SL_FLOAT64, COMM_SUM, NULL), SL_E_INVALID), "NULL buffer");
  CHECK(mc_same_error_everywhere(comm_allreduce(NULL, SL_FLOAT64, COMM_SUM, d.h), SL_E_INVALID), "NULL channel");
  CHECK(mc_same_error_everywhere(comm_allreduce(ch, (sl_dtype)9, COMM_SUM, d.h), SL_E_INVALID), "bad dtype");
  CHECK(mc_same_error_everywhere(comm_bcast(ch, SL_FLOAT64, ch->size, d.h), SL_E_INVALID), "root too large");
  CHECK(strstr(sl_last_error(), "root") != NULL, "message names root: %s", sl_last_error());
  CHECK(mc_same_error_everywhere(comm_allgatherv(ch, SL_FLOAT64, d.h, z.h, counts), SL_E_INVALID),
        "allgatherv: send does not match counts");
  CHECK(mc_same_error_everywhere(comm_allgatherv(ch, SL_FLOAT64, NULL, d.h, neg), SL_E_INVALID), "negative count");
  CHECK(mc_same_error_everywhere(comm_reduce_scatter(ch, SL_FLOAT64, COMM_SUM, d.h, d.h, counts), SL_E_INVALID),
        "reduce-scatter in place refused");
  CHECK(mc_same_error_everywhere(comm_alltoallv(ch, SL_FLOAT64, d.h, counts, counts, d.h, counts, NULL), SL_E_INVALID),
        "alltoallv: displacements out of the buffer");
  struct starpu_data_filter halves = {.filter_func = starpu_vector_filter_block, .nchildren = 2};
  starpu_data_partition(d.h, &halves);
  CHECK(mc_same_error_everywhere(comm_allreduce(ch, SL_FLOAT64, COMM_SUM, d.h), SL_E_INVALID), "partitioned handle");
  CHECK(strstr(sl_last_error(), "partitioned") != NULL, "message names the partition: %s", sl_last_error());
  starpu_data_unpartition(d.h, STARPU_MAIN_RAM);
  comm_pair bad_tag = {0, 40000, 0, d.h, NULL};
  CHECK(mc_same_error_everywhere(comm_exchange(ch, SL_FLOAT64, 1, &bad_tag), SL_E_INVALID), "tag out of range");
  comm_pair bad_peer = {ch->size, 0, 0, d.h, NULL};
  CHECK(mc_same_error_everywhere(comm_exchange(ch, SL_FLOAT64, 1, &bad_peer), SL_E_INVALID), "peer out of range");
  CHECK_OK(sl_wait());
  vb_free(&z);
  vb_free(&d);
  if (sl_rank() == 0) printf("  bad input: %s\n", mc_failures ? "FAILED" : "ok");
}

/* The datatypes that move blocks past 2^31 - 1 elements (sl_mpi_run_type), built here with pieces of 3 to
 * 7 elements so that small blocks take the same path: the size is n elements, and a broadcast from the
 * last rank with one count of it delivers exactly the n elements (the bytes after them untouched). */
static void run_types(void)
{
  int P = sl_size(), me = sl_rank();
  const size_t sizes[2] = {8, 16};
  for (int k = 0; k < 2; k++)
    for (int64_t piece = 3; piece <= 7; piece += 4)
      for (int64_t n = 0; n <= 17; n++) {
        MPI_Datatype t;
        CHECK_OK(sl_mpi_run_type_pieces(n, sizes[k], piece, &t));
        MPI_Count sz = -1, lb = -1, ext = -1;
        MPI_Type_size_x(t, &sz);
        MPI_Type_get_extent_x(t, &lb, &ext);
        CHECK(sz == (MPI_Count)(n * (int64_t)sizes[k]) && lb == 0 && ext == sz,
              "run type of %lld x %zu B in pieces of %lld: size %lld, lb %lld, extent %lld", (long long)n, sizes[k],
              (long long)piece, (long long)sz, (long long)lb, (long long)ext);
        unsigned char buf[18 * 16];
        for (size_t i = 0; i < sizeof buf; i++) buf[i] = me == P - 1 ? (unsigned char)(i * 7 + 1) : 0xEE;
        MPI_Bcast(buf, 1, t, P - 1, sl_comm());
        int bad = 0;
        for (size_t i = 0; i < sizeof buf; i++) {
          unsigned char want = (int64_t)i < n * (int64_t)sizes[k] || me == P - 1 ? (unsigned char)(i * 7 + 1) : 0xEE;
          bad += buf[i] != want;
        }
        CHECK(bad == 0, "broadcast of %lld x %zu B in pieces of %lld: %d bytes wrong", (long long)n, sizes[k],
              (long long)piece, bad);
        MPI_Type_free(&t);
      }
  MPI_Datatype t = MPI_DATATYPE_NULL;
  CHECK(sl_mpi_run_type_pieces(-1, 8, 3, &t) == SL_E_INVALID && t == MPI_DATATYPE_NULL, "a negative count is refused");
  CHECK(sl_mpi_run_type_pieces((int64_t)1 << 40, 8, 3, &t) == SL_E_INVALID, "more than INT_MAX pieces are refused");
  if (me == 0) printf("  datatypes of any size: %s\n", mc_failures ? "FAILED" : "ok");
}

int main(int argc, char **argv)
{
  mc_init(&argc, &argv);
  int P = sl_size(), me = sl_rank();
  if (me == 0) printf("mpi_comm on %d ranks, backend %s\n", P, sl_comm_backend_name());
  comm_channel *world = comm_world();
  all_kinds(world, "the whole communicator", 1);
  all_kinds(world, "the whole communicator", 2500);

  /* a mask-like split: even and odd ranks */
  MPI_Comm split, rows, cols;
  comm_channel *sub = NULL, *row = NULL, *col = NULL;
  MPI_Comm_split(sl_comm(), me % 2, me, &split);
  CHECK_OK(comm_channel_create(split, &sub));
  all_kinds(sub, "even/odd sub-communicators", 3);
  /* the rows and columns of a pr x pc grid */
  int pr = 1;
  for (int d = 1; d * d <= P; d++)
    if (P % d == 0) pr = d;
  int pc = P / pr;
  MPI_Comm_split(sl_comm(), me / pc, me, &rows);
  MPI_Comm_split(sl_comm(), me % pc, me, &cols);
  CHECK_OK(comm_channel_create(rows, &row));
  CHECK_OK(comm_channel_create(cols, &col));
  all_kinds(row, "grid rows", 2);
  all_kinds(col, "grid columns", 2);

  multi_allreduce(world, "the whole communicator");
  multi_allreduce(sub, "even/odd sub-communicators");
  stress(world, sub);
  without_workers(world);
  bad_input(world);
  run_types();

  comm_channel_destroy(sub);
  comm_channel_destroy(row);
  comm_channel_destroy(col);
  MPI_Comm_free(&split);
  MPI_Comm_free(&rows);
  MPI_Comm_free(&cols);
  return mc_finish("mpi_comm");
}
