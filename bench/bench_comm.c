/* bench_comm: each collective of the comm layer at message sizes from 8 B to 256 MiB, beside the raw call
 * of its backend in the same run (host MPI on host buffers; CUDA-aware MPI on device buffers; NCCL on a
 * stream), then an overlap test: a large allgather beside independent compute tasks.
 *   mpirun -n P bench_comm [--max-bytes B] [--min-bytes B] [--reps R] [--kinds k1,k2,..] [--overlap-mib M]
 * Message size = bytes of the buffer each rank contributes (allreduce, bcast: the vector; allgatherv: the
 * gathered vector, blocks of size/P; reduce-scatter: the vector reduced; alltoallv: the send buffer, size/P
 * per peer; exchange: size to each ring neighbour). Times are medians over R repeats, each after a barrier;
 * GB/s = size / time. "added" is starlops' time minus the raw call's. With STARLOPS_CODELET_WHERE=cuda the
 * starlops buffers live on the GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "starlops.h"
#include "bench_util.h"
#include "internal.h"
#include "comm/comm.h"
#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#ifdef SL_HAVE_NCCL
#include <nccl.h>
#endif

static void noop(void *buffers[], void *arg) {}

enum { K_AR, K_AG, K_BC, K_RS, K_A2A, K_EX, NK };
static const char *kname[NK] = {"allreduce", "allgatherv", "bcast", "reduce_scatter", "alltoallv", "exchange"};

typedef struct {
  int P, me, device; /* device: raw calls and starlops buffers on the GPU */
  comm_backend backend;
  int64_t n;         /* float64 elements per buffer */
  void *rs, *rr;     /* raw buffers (host or device) */
  starpu_data_handle_t hs, hr;
  int64_t *counts, *displs;
} ctx_t;

/* block of rank r when n elements are split over P ranks (pylops-style: the first n % P get one more) */
static int64_t share(int64_t n, int P, int r) { return n / P + (r < n % P); }

static void raw_call(ctx_t *c, int k)
{
  int P = c->P, me = c->me;
  int left = (me + P - 1) % P, right = (me + 1) % P;
#ifdef SL_HAVE_NCCL
  if (c->backend == COMM_BACKEND_NCCL) {
    ncclComm_t nc = (ncclComm_t)comm_world()->nccl;
    cudaStream_t s = 0;
    double *sb = c->rs, *rb = c->rr;
    switch (k) {
    case K_AR: ncclAllReduce(sb, sb, (size_t)c->n, ncclFloat64, ncclSum, nc, s); break;
    case K_BC: ncclBroadcast(sb, sb, (size_t)c->n, ncclFloat64, 0, nc, s); break;
    case K_AG:
      ncclGroupStart();
      for (int r = 0; r < P; r++)
        if (c->counts[r]) ncclBroadcast(sb, rb + c->displs[r], (size_t)c->counts[r], ncclFloat64, r, nc, s);
      ncclGroupEnd();
      break;
    case K_RS:
      ncclGroupStart();
      for (int r = 0; r < P; r++)
        if (c->counts[r]) ncclReduce(sb + c->displs[r], rb, (size_t)c->counts[r], ncclFloat64, ncclSum, r, nc, s);
      ncclGroupEnd();
      break;
    case K_A2A:
      ncclGroupStart();
      for (int r = 0; r < P; r++)
        if (c->counts[r]) {
          ncclSend(sb + c->displs[r], (size_t)c->counts[r], ncclFloat64, r, nc, s);
          ncclRecv(rb + c->displs[r], (size_t)c->counts[r], ncclFloat64, r, nc, s);
        }
      ncclGroupEnd();
      break;
    default:
      ncclGroupStart();
      if (P > 1) {
        ncclSend(sb, (size_t)c->n, ncclFloat64, right, nc, s);
        ncclRecv(rb, (size_t)c->n, ncclFloat64, left, nc, s);
      } else {
        cudaMemcpyAsync(rb, sb, (size_t)c->n * 8, cudaMemcpyDeviceToDevice, s);
      }
      ncclGroupEnd();
      break;
    }
    cudaStreamSynchronize(s);
    return;
  }
#endif
  MPI_Comm comm = sl_comm();
  int n = (int)c->n;
  int cnt[64], dsp[64];
  for (int r = 0; r < P && r < 64; r++) {
    cnt[r] = (int)c->counts[r];
    dsp[r] = (int)c->displs[r];
  }
  switch (k) {
  case K_AR: MPI_Allreduce(MPI_IN_PLACE, c->rs, n, MPI_DOUBLE, MPI_SUM, comm); break;
  case K_BC: MPI_Bcast(c->rs, n, MPI_DOUBLE, 0, comm); break;
  case K_AG: MPI_Allgatherv(c->rs, cnt[me], MPI_DOUBLE, c->rr, cnt, dsp, MPI_DOUBLE, comm); break;
  case K_RS: MPI_Reduce_scatter(c->rs, c->rr, cnt, MPI_DOUBLE, MPI_SUM, comm); break;
  case K_A2A: MPI_Alltoallv(c->rs, cnt, dsp, MPI_DOUBLE, c->rr, cnt, dsp, MPI_DOUBLE, comm); break;
  default:
    MPI_Sendrecv(c->rs, n, MPI_DOUBLE, right, 0, c->rr, n, MPI_DOUBLE, left, 0, comm, MPI_STATUS_IGNORE);
    break;
  }
}

static int starlops_call(ctx_t *c, int k)
{
  comm_channel *ch = comm_world();
  int P = c->P, me = c->me;
  int left = (me + P - 1) % P, right = (me + 1) % P;
  starpu_data_handle_t mine = c->hs;
  switch (k) {
  case K_AR: return comm_allreduce(ch, SL_FLOAT64, COMM_SUM, c->hs);
  case K_BC: return comm_bcast(ch, SL_FLOAT64, 0, c->hs);
  case K_AG: return comm_allgatherv(ch, SL_FLOAT64, c->counts[me] ? mine : NULL, c->hr, c->counts);
  case K_RS: return comm_reduce_scatter(ch, SL_FLOAT64, COMM_SUM, c->hs, c->counts[me] ? c->hr : NULL, c->counts);
  case K_A2A: return comm_alltoallv(ch, SL_FLOAT64, c->hs, c->counts, c->displs, c->hr, c->counts, c->displs);
  default: {
    comm_pair p = {right, 0, 0, c->hs, NULL};
    comm_pair q = {left, 0, 0, NULL, c->hr};
    if (P == 1) {
      comm_pair self = {0, 0, 0, c->hs, c->hr};
      return comm_exchange(ch, SL_FLOAT64, 1, &self);
    }
    comm_pair pq[2] = {p, q};
    return comm_exchange(ch, SL_FLOAT64, 2, pq);
  }
  }
}

/* Handles sized for kind k: hs is the send (or in-place) buffer, hr the receive buffer. */
static void setup(ctx_t *c, int k, int64_t n, void *host_s, void *host_r)
{
  int P = c->P, me = c->me;
  c->n = n;
  int64_t off = 0;
  for (int r = 0; r < P; r++) {
    c->counts[r] = share(n, P, r);
    c->displs[r] = off;
    off += c->counts[r];
  }
  if (k == K_A2A) /* n / P to every peer; a rank receives what every peer sends it */
    for (int r = 0; r < P; r++) {
      c->counts[r] = n / P;
      c->displs[r] = r * (n / P);
    }
  int64_t ns = n, nr = n;
  if (k == K_AG) ns = c->counts[me];
  if (k == K_RS) nr = c->counts[me];
  c->hs = c->hr = NULL;
  if (ns > 0) starpu_vector_data_register(&c->hs, STARPU_MAIN_RAM, (uintptr_t)host_s, (uint32_t)ns, 8);
  if (nr > 0 && k != K_AR && k != K_BC) starpu_vector_data_register(&c->hr, STARPU_MAIN_RAM, (uintptr_t)host_r, (uint32_t)nr, 8);
#ifdef SL_HAVE_CUDA
  if (c->device) { /* keep the valid copies on the GPU: the timed collectives then start there */
    int node = starpu_worker_get_memory_node(0);
    int ids[1];
    if (starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, 1) == 1) node = (int)starpu_worker_get_memory_node(ids[0]);
    if (c->hs) starpu_data_fetch_on_node(c->hs, (unsigned)node, 0);
    if (c->hr) starpu_data_fetch_on_node(c->hr, (unsigned)node, 0);
  }
#endif
}

static void teardown(ctx_t *c)
{
  if (c->hs) starpu_data_unregister(c->hs);
  if (c->hr) starpu_data_unregister(c->hr);
}

/* The overlap test: an allgather of `bytes` alone, compute alone, both together. */
static void overlap(ctx_t *c, int64_t bytes, int reps)
{
  int P = c->P, me = c->me;
  int64_t n = bytes / 8;
  double *hs = malloc((size_t)n * 8), *hr = malloc((size_t)n * 8);
  for (int64_t i = 0; i < n; i++) hs[i] = i;
  setup(c, K_AG, n, hs, hr);
  int64_t dims[1] = {(int64_t)4 << 20}; /* 32 MiB of float64 per rank of independent work */
  sl_array *x, *y;
  sl_array_create(&x, 1, dims, SL_FLOAT64, NULL);
  sl_array_create(&y, 1, dims, SL_FLOAT64, NULL);
  sl_array_fill(x, SL_REAL(1.0));
  sl_array_fill(y, SL_REAL(2.0));
  sl_wait();
  /* calibrate the amount of compute to about the allgather's time */
  double tc[16], tk[16], tb[16];
  for (int r = 0; r < reps; r++) {
    MPI_Barrier(sl_comm());
    double t0 = bench_now();
    starlops_call(c, K_AG);
    sl_wait();
    tc[r] = bench_now() - t0;
  }
  double t_comm = bench_median(tc, reps);
  /* calibrate: double the number of axpby calls until the compute alone takes 1.2x the transfer alone
   * (the same K on every rank), so that the whole transfer can hide behind it */
  int K = 1;
  double t0;
  for (;;) {
    MPI_Barrier(sl_comm());
    t0 = bench_now();
    for (int i = 0; i < K; i++) sl_array_axpby(y, SL_REAL(1e-9), x, SL_REAL(1.0));
    sl_wait();
    double t = bench_now() - t0, tmax = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, sl_comm());
    if (tmax >= 1.2 * t_comm || K >= 4096) break;
    K *= 2;
  }
  for (int r = 0; r < reps; r++) {
    MPI_Barrier(sl_comm());
    t0 = bench_now();
    for (int i = 0; i < K; i++) sl_array_axpby(y, SL_REAL(1e-9), x, SL_REAL(1.0));
    sl_wait();
    tk[r] = bench_now() - t0;
    MPI_Barrier(sl_comm());
    t0 = bench_now();
    if (getenv("STARLOPS_TRACE")) starpu_fxt_trace_user_event_string("overlap: allgather + compute");
    starlops_call(c, K_AG);
    for (int i = 0; i < K; i++) sl_array_axpby(y, SL_REAL(1e-9), x, SL_REAL(1.0));
    sl_wait();
    tb[r] = bench_now() - t0;
  }
  double t_comp = bench_median(tk, reps), t_both = bench_median(tb, reps);
  /* overlap = time saved by running both together; hidden = its share of the transfer */
  double saved = t_comm + t_comp - t_both, hidden = saved / t_comm;
  if (hidden < 0) hidden = 0;
  if (hidden > 1) hidden = 1;
  double g[4] = {t_comm, t_comp, t_both, hidden}, gmax[4];
  MPI_Reduce(g, gmax, 4, MPI_DOUBLE, MPI_MAX, 0, sl_comm());
  if (me == 0) {
    printf("\noverlap: allgatherv of %.0f MiB on %d ranks beside %d axpby tasks on 32 MiB vectors\n",
           (double)bytes / 1048576.0, P, K);
    printf("%-12s %-12s %-12s %-10s\n", "comm ms", "compute ms", "both ms", "hidden");
    printf("%-12.2f %-12.2f %-12.2f %-10.2f\n", 1e3 * g[0], 1e3 * g[1], 1e3 * g[2], hidden);
    printf("(hidden = (comm + compute - both) / comm, the share of the transfer hidden behind compute, on rank 0;\n"
           " compute >= comm by calibration; max over ranks of the times: %.2f %.2f %.2f ms)\n",
           1e3 * gmax[0], 1e3 * gmax[1], 1e3 * gmax[2]);
  }
  teardown(c);
  sl_array_destroy(&x);
  sl_array_destroy(&y);
  free(hs);
  free(hr);
}

int main(int argc, char **argv)
{
  int64_t max_bytes = (int64_t)256 << 20, min_bytes = 8, overlap_mib = 64;
  int reps = 9, want[NK] = {1, 1, 1, 1, 1, 1};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) max_bytes = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--min-bytes") && i + 1 < argc) min_bytes = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--overlap-mib") && i + 1 < argc) overlap_mib = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--kinds") && i + 1 < argc) {
      const char *list = argv[++i];
      for (int k = 0; k < NK; k++) want[k] = strstr(list, kname[k]) != NULL;
    } else {
      fprintf(stderr, "usage: bench_comm [--max-bytes B] [--min-bytes B] [--reps R] [--kinds a,b] [--overlap-mib M]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (reps > 16) reps = 16;
  if (sl_init(&argc, &argv, NULL) != SL_SUCCESS) {
    fprintf(stderr, "bench_comm: sl_init: %s\n", sl_last_error());
    return 1;
  }
  ctx_t c = {.P = sl_size(), .me = sl_rank(), .backend = comm_backend_get()};
  const char *where = getenv("STARLOPS_CODELET_WHERE");
  c.device = (where && !strcmp(where, "cuda") && sl_ncuda_workers() > 0) || c.backend == COMM_BACKEND_NCCL;
  int raw_device = c.backend != COMM_BACKEND_MPI; /* host MPI cannot take device pointers */
  c.counts = calloc((size_t)c.P, sizeof(int64_t));
  c.displs = calloc((size_t)c.P, sizeof(int64_t));
  size_t cap = (size_t)max_bytes > 64 ? (size_t)max_bytes : 64;
  double *hs = NULL, *hr = NULL;
  starpu_malloc((void **)&hs, cap);
  starpu_malloc((void **)&hr, cap);
  memset(hs, 0, cap);
  memset(hr, 0, cap);
  c.rs = hs;
  c.rr = hr;
  const char *raw_name = "MPI (host buffers)";
#ifdef SL_HAVE_CUDA
  if (raw_device) {
    cudaSetDevice(0);
    if (cudaMalloc(&c.rs, cap) != cudaSuccess || cudaMalloc(&c.rr, cap) != cudaSuccess) {
      fprintf(stderr, "bench_comm: cudaMalloc of %zu bytes failed\n", cap);
      return 1;
    }
    cudaMemset(c.rs, 0, cap);
    cudaMemset(c.rr, 0, cap);
    raw_name = c.backend == COMM_BACKEND_NCCL ? "NCCL (device buffers)" : "MPI (device buffers)";
  }
#else
  (void)raw_device;
#endif
  if (c.me == 0) {
    printf("bench_comm: %d ranks, backend %s, starlops buffers on %s, raw call: %s, collectives %s\n", c.P,
           sl_comm_backend_name(), c.device ? "the GPU" : "the host", raw_name,
           comm_direct_enabled() ? "without a task (rank 0)" : "as tasks (rank 0)");
    printf("%-15s %12s %10s %10s %9s %9s %9s %6s\n", "collective", "bytes", "raw us", "starlops", "added us",
           "raw GB/s", "sl GB/s", "ratio");
  }
  for (int w = 0; w < 2; w++) {
    /* the runtime's floor: a task that does nothing, submitted and waited for the way every collective is
     * (STARPU_NOWHERE: never reaches a worker; CPU: runs on a worker, as a collective does) */
    static struct starpu_codelet nowhere_cl = {.where = STARPU_NOWHERE, .nbuffers = 0, .name = "nowhere"};
    static struct starpu_codelet cpu_cl = {.cpu_funcs = {noop}, .nbuffers = 0, .name = "noop"};
    double te[16];
    for (int r = 0; r < reps; r++) {
      MPI_Barrier(sl_comm());
      double t0 = bench_now();
      starpu_task_insert(w ? &cpu_cl : &nowhere_cl, 0);
      sl_wait();
      te[r] = bench_now() - t0;
    }
    double t = bench_median(te, reps), tm;
    MPI_Reduce(&t, &tm, 1, MPI_DOUBLE, MPI_MAX, 0, sl_comm());
    if (c.me == 0)
      printf("%-15s %12s %10s %10.1f   (StarPU floor: one empty task, %s)\n", w ? "noop task" : "nowhere task", "-", "-",
             1e6 * tm, w ? "on a CPU worker" : "no worker");
  }
  for (int k = 0; k < NK; k++) {
    if (!want[k]) continue;
    for (int64_t bytes = min_bytes; bytes <= max_bytes; bytes = bytes < max_bytes && bytes * 8 > max_bytes ? max_bytes : bytes * 8) {
      int64_t n = bytes / 8 > 0 ? bytes / 8 : 1;
      setup(&c, k, n, hs, hr);
      double tr[16], ts[16];
      raw_call(&c, k); /* warm-up */
      starlops_call(&c, k);
      sl_wait();
      for (int r = 0; r < reps; r++) {
        MPI_Barrier(sl_comm());
        double t0 = bench_now();
        raw_call(&c, k);
        tr[r] = bench_now() - t0;
        MPI_Barrier(sl_comm());
        t0 = bench_now();
        int rc = starlops_call(&c, k);
        if (rc == SL_SUCCESS) rc = sl_wait();
        ts[r] = bench_now() - t0;
        if (rc != SL_SUCCESS) fprintf(stderr, "bench_comm: %s: %s\n", kname[k], sl_last_error());
      }
      double t[2] = {bench_median(tr, reps), bench_median(ts, reps)}, tm[2];
      MPI_Reduce(t, tm, 2, MPI_DOUBLE, MPI_MAX, 0, sl_comm());
      if (c.me == 0)
        printf("%-15s %12lld %10.1f %10.1f %9.1f %9.3f %9.3f %6.2f\n", kname[k], (long long)(n * 8), 1e6 * tm[0],
               1e6 * tm[1], 1e6 * (tm[1] - tm[0]), (double)n * 8 / tm[0] / 1e9, (double)n * 8 / tm[1] / 1e9,
               tm[0] / tm[1]);
      teardown(&c);
    }
  }
  if (overlap_mib > 0) overlap(&c, overlap_mib << 20, reps < 5 ? reps : 5);
  fflush(stdout);
#ifdef SL_HAVE_CUDA
  if (c.rs != hs) {
    cudaFree(c.rs);
    cudaFree(c.rr);
  }
#endif
  starpu_free(hs);
  starpu_free(hr);
  free(c.counts);
  free(c.displs);
  sl_finalize();
  return 0;
}
