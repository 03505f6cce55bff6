/* Launches the multi-rank test programs with mpirun on 1, 2, 3 and 4 ranks; each program compares every
 * result with a serial computation and exits non-zero on any failed check. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glob.h>
#include <sys/wait.h>

static const char *build_dir(void)
{
  const char *b = getenv("STARLOPS_BUILD");
  return b ? b : "build";
}

/* Runs cmd (its output already sent to log); on failure shows the log's tail. Returns the exit status. */
static int run_logged(const char *cmd, const char *prog, int np, const char *log)
{
  int st = system(cmd);
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  if (code != 0) {
    fprintf(stderr, "---- %s on %d ranks failed (status %d); log %s:\n", prog, np, code, log);
    char tail[600];
    snprintf(tail, sizeof tail, "tail -n 40 %s >&2", log);
    if (system(tail) != 0) fprintf(stderr, "(no log)\n");
  }
  return code;
}

/* Runs "env mpirun -n np <build>/tests/mpi/<prog> <args>" under a time limit; returns its exit status. */
static int run_env(const char *env, int np, const char *prog, const char *args)
{
  static int serial;
  char log[512], cmd[2048];
  snprintf(log, sizeof log, "%s/tests/%s-%d-%d.log", build_dir(), prog, np, serial++);
  snprintf(cmd, sizeof cmd,
           "STARPU_NCPU=1 %s timeout -k 10 300 mpirun -n %d --oversubscribe --bind-to none %s/tests/mpi/%s %s > %s 2>&1",
           env ? env : "", np, build_dir(), prog, args ? args : "", log);
  return run_logged(cmd, prog, np, log);
}

static int run(int np, const char *prog, const char *args) { return run_env(NULL, np, prog, args); }

static char *scratch_dir(void)
{
  static char dir[256];
  snprintf(dir, sizeof dir, "%s/tests/tmp-XXXXXX", build_dir());
  cr_assert_not_null(mkdtemp(dir));
  return dir;
}

#define RANKS_TEST(prog)                                                                              \
  Test(mpi, prog##_1_rank, .timeout = 400) { cr_expect_eq(run(1, #prog, scratch_dir()), 0); }         \
  Test(mpi, prog##_2_ranks, .timeout = 400) { cr_expect_eq(run(2, #prog, scratch_dir()), 0); }        \
  Test(mpi, prog##_3_ranks, .timeout = 400) { cr_expect_eq(run(3, #prog, scratch_dir()), 0); }        \
  Test(mpi, prog##_4_ranks, .timeout = 400) { cr_expect_eq(run(4, #prog, scratch_dir()), 0); }

RANKS_TEST(mpi_arrays)
RANKS_TEST(mpi_errors)
RANKS_TEST(mpi_hostile)
RANKS_TEST(mpi_comm)
RANKS_TEST(mpi_ops)
RANKS_TEST(mpi_solvers)
RANKS_TEST(mpi_stencils)
RANKS_TEST(mpi_stack)
RANKS_TEST(mpi_summa)
RANKS_TEST(mpi_halo)
RANKS_TEST(mpi_fft)
RANKS_TEST(mpi_memory)
RANKS_TEST(mpi_shell)
RANKS_TEST(mpi_prox)
RANKS_TEST(mpi_nsconv)
RANKS_TEST(mpi_restriction_axis)
RANKS_TEST(mpi_fft_ext)
RANKS_TEST(mpi_sliding)

/* Many chunks per block, as on a many-core node (a block is cut into up to twice as many chunks as the rank
 * has workers): every program on 1 rank with 4 CPU workers and chunks of one element (up to 1024 per
 * block), and on 3 ranks with 32 chunks per block; the programs check that their arrays really have that
 * many chunks. */
#define MANY_CHUNKS_TEST(prog)                                                                                  \
  Test(many_chunks, prog##_1_rank_4_workers, .timeout = 400)                                                    \
  {                                                                                                             \
    cr_expect_eq(run_env("STARPU_NCPU=4 STARLOPS_MAX_CHUNKS=1024 STARLOPS_CHUNK_BYTES=4 STARLOPS_TEST_MIN_CHUNKS=40", \
                         1, #prog, scratch_dir()),                                                              \
                 0);                                                                                            \
  }                                                                                                             \
  Test(many_chunks, prog##_3_ranks, .timeout = 400)                                                             \
  {                                                                                                             \
    cr_expect_eq(run_env("STARLOPS_MAX_CHUNKS=32 STARLOPS_CHUNK_BYTES=4 STARLOPS_TEST_MIN_CHUNKS=32", 3, #prog,   \
                         scratch_dir()),                                                                        \
                 0);                                                                                            \
  }

MANY_CHUNKS_TEST(mpi_arrays)
MANY_CHUNKS_TEST(mpi_errors)
MANY_CHUNKS_TEST(mpi_comm)
MANY_CHUNKS_TEST(mpi_ops)
MANY_CHUNKS_TEST(mpi_solvers)
MANY_CHUNKS_TEST(mpi_stencils)
MANY_CHUNKS_TEST(mpi_stack)
MANY_CHUNKS_TEST(mpi_summa)
MANY_CHUNKS_TEST(mpi_halo)
MANY_CHUNKS_TEST(mpi_fft)
MANY_CHUNKS_TEST(mpi_shell)
MANY_CHUNKS_TEST(mpi_prox)
MANY_CHUNKS_TEST(mpi_nsconv)
MANY_CHUNKS_TEST(mpi_restriction_axis)
MANY_CHUNKS_TEST(mpi_fft_ext)
MANY_CHUNKS_TEST(mpi_sliding)
/* Chunks of one element with no cap on their number: the ghost planes of the distributed axis are packed
 * from every chunk of a block, past the 64 a fixed table once held. */
Test(many_chunks, mpi_stencils_2_ranks_unbounded, .timeout = 400)
{
  cr_expect_eq(run_env("STARLOPS_MAX_CHUNKS=1000000 STARLOPS_CHUNK_BYTES=4 STARLOPS_TEST_MIN_CHUNKS=65", 2, "mpi_stencils",
                       scratch_dir()),
               0);
}

/* FFTW's threaded plans: every CPU transform on two threads, whatever its size (by default only large
 * transforms on ranks with several CPU workers take them). */
Test(mpi, mpi_fft_2_ranks_fftw_threads, .timeout = 400)
{
  cr_expect_eq(run_env("STARLOPS_FFT_THREADS=2", 2, "mpi_fft", scratch_dir()), 0);
}

/* The redistributions' MPI transport (by default the ranks of one node write into each other's shared-memory
 * segments): the FFTs and redistributions again with MPI's all-to-all. */
Test(mpi, mpi_fft_3_ranks_redistribution_through_mpi, .timeout = 400)
{
  cr_expect_eq(run_env("STARLOPS_COMM_SHM=0", 3, "mpi_fft", scratch_dir()), 0);
}

/* The names of the shared-memory segments starlops has in /dev/shm (the redistributions remove theirs once
 * every rank has mapped them), as one string. */
static void shm_names(char *out, size_t n)
{
  glob_t g;
  out[0] = 0;
  if (glob("/dev/shm/starlops-*", 0, NULL, &g) != 0) return;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    strncat(out, g.gl_pathv[i], n - strlen(out) - 1);
    strncat(out, " ", n - strlen(out) - 1);
  }
  globfree(&g);
}

/* Past 2^31 - 1 elements a group, gather and scatter move each rank's block as one message of any length; the test
 * hook STARLOPS_GATHER_P2P=1 takes that path at every size: the array tests (whose checks gather, to one rank and
 * to all, and scatter from one and from all, over masks and every axis) pass through it. */
Test(mpi, gather_scatter_as_block_messages, .timeout = 400)
{
  cr_expect_eq(run_env("STARLOPS_GATHER_P2P=1", 2, "mpi_arrays", NULL), 0);
  cr_expect_eq(run_env("STARLOPS_GATHER_P2P=1", 3, "mpi_arrays", NULL), 0);
}

/* A rank that cannot make its shared-memory segment (test hook STARLOPS_COMM_SHM_FAIL_RANK) makes every rank
 * keep MPI's all-to-all for that plan: no hang, the same results. No run leaves a segment's name behind. */
Test(mpi, redistribution_falls_back_to_mpi_on_every_rank, .timeout = 400)
{
  char before[4096], after[4096];
  shm_names(before, sizeof before);
  cr_expect_eq(run_env("STARLOPS_COMM_SHM_FAIL_RANK=1", 3, "mpi_fft", scratch_dir()), 0);
  cr_expect_eq(run_env("STARLOPS_COMM_SHM_FAIL_RANK=0", 2, "mpi_fft_ext", scratch_dir()), 0);
  cr_expect_eq(run(4, "mpi_fft", scratch_dir()), 0);
  shm_names(after, sizeof after);
  cr_expect_str_eq(after, before, "segments left in /dev/shm: %s (before: %s)", after, before);
}

/* The rank's CPU kernels on helper threads bound to the workers' cores (StarPU binding its two workers, as it
 * does unless told not to): FFTW's loops, NonStationaryConvolve1D's slices, MatrixMult's row blocks and the
 * windowed operators' outer indices on three threads whatever the size, two ranks of which each runs such tasks on two workers at once. */
Test(mpi, bound_helper_threads, .timeout = 600)
{
  const char *env = "STARPU_WORKERS_NOBIND=0 STARPU_NCPU=2 STARLOPS_FFT_THREADS=3 STARLOPS_TASK_THREADS=3";
  cr_expect_eq(run_env(env, 1, "mpi_fft", scratch_dir()), 0);
  cr_expect_eq(run_env(env, 1, "mpi_nsconv", scratch_dir()), 0);
  cr_expect_eq(run_env(env, 2, "mpi_nsconv", scratch_dir()), 0);
  cr_expect_eq(run_env(env, 2, "mpi_ops", scratch_dir()), 0);
  cr_expect_eq(run_env(env, 2, "mpi_sliding", scratch_dir()), 0);
}

/* Ranks sharing a node share its cores: with no worker count and no binding set, each rank's CPU workers,
 * StarPU-MPI thread and comm threads sit on its own cores (1, 2 and 3 ranks: more ranks than the CI machine's
 * cores; one rank: a worker on every core); the
 * user's STARPU_NCPU keeps the count, STARPU_WORKERS_NOBIND the threads unbound, STARLOPS_PLACEMENT=starpu
 * StarPU's own placement. */
Test(mpi, ranks_share_the_node_cores, .timeout = 400)
{
  const char *unset = "env -u STARPU_NCPU -u STARPU_WORKERS_NOBIND";
  char env[256];
  cr_expect_eq(run_env(unset, 1, "mpi_cores", "node"), 0);
  cr_expect_eq(run_env(unset, 2, "mpi_cores", "node"), 0);
  cr_expect_eq(run_env(unset, 3, "mpi_cores", "node"), 0);
  /* the comm layer's own threads (progress, and a channel thread that a worker's task starts) on the rank's cores */
  snprintf(env, sizeof env, "%s STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES=1", unset);
  cr_expect_eq(run_env(env, 3, "mpi_cores", "node"), 0);
  cr_expect_eq(run_env("env -u STARPU_WORKERS_NOBIND STARPU_NCPU=2", 2, "mpi_cores", "node 2"), 0);
  snprintf(env, sizeof env, "%s STARPU_WORKERS_NOBIND=1", unset);
  cr_expect_eq(run_env(env, 2, "mpi_cores", "nobind"), 0);
  snprintf(env, sizeof env, "%s STARLOPS_PLACEMENT=starpu", unset);
  cr_expect_eq(run_env(env, 2, "mpi_cores", "starpu"), 0);
}

/* One chunk per block (STARLOPS_MAX_CHUNKS=1, as on a GPU node by default): library temporaries (operator
 * scratch, solver work vectors) are then placed blocks with no host home, zero-filled by a task. */
#define ONE_CHUNK_TEST(prog)                                                                                    \
  Test(one_chunk, prog##_2_ranks, .timeout = 400)                                                               \
  {                                                                                                             \
    cr_expect_eq(run_env("STARLOPS_MAX_CHUNKS=1", 2, #prog, scratch_dir()), 0);                                 \
  }
/* one chunk: the fused Krylov tasks (codelet_krylov.c) on one rank, and on 3 ranks with a masked group
 * beside a lone replica (every rank agrees whether CG fuses around its allreduces) */
Test(one_chunk, mpi_solvers_1_rank, .timeout = 400)
{
  cr_expect_eq(run_env("STARLOPS_MAX_CHUNKS=1", 1, "mpi_solvers", scratch_dir()), 0);
}
Test(one_chunk, mpi_solvers_3_ranks, .timeout = 400)
{
  cr_expect_eq(run_env("STARLOPS_MAX_CHUNKS=1", 3, "mpi_solvers", scratch_dir()), 0);
}
ONE_CHUNK_TEST(mpi_ops)
/* one chunk: a product of stencils as one task (L^H L on one rank; S F along a local axis on two) */
ONE_CHUNK_TEST(mpi_stencils)
Test(one_chunk, mpi_stencils_1_rank, .timeout = 400)
{
  cr_expect_eq(run_env("STARLOPS_MAX_CHUNKS=1", 1, "mpi_stencils", scratch_dir()), 0);
}
/* and on 4 ranks, one of which owns nothing (it declines the one-task product, the others take it) */
Test(one_chunk, mpi_stencils_4_ranks, .timeout = 400)
{
  cr_expect_eq(run_env("STARLOPS_MAX_CHUNKS=1", 4, "mpi_stencils", scratch_dir()), 0);
}
ONE_CHUNK_TEST(mpi_solvers)
ONE_CHUNK_TEST(mpi_stack)
ONE_CHUNK_TEST(mpi_memory)
ONE_CHUNK_TEST(mpi_prox)

/* dmda-family schedulers run a per-worker hook when a task ends: collectives released by the progress
 * thread must end on a worker thread (comm_progress.c). */
/* Every collective that can be a blocking call on its channel's thread made one (threshold 1 byte); then
 * every allreduce of one buffer (the window below STARLOPS_COMM_RING_ALLREDUCE_BYTES from 1 byte) with the
 * rings on for the rest. */
Test(mpi, collectives_blocking_on_channel_threads, .timeout = 600)
{
  cr_expect_eq(run_env("STARLOPS_COMM_BLOCKING_BYTES=1", 3, "mpi_comm", scratch_dir()), 0);
  cr_expect_eq(run_env("STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES=1 STARLOPS_COMM_RING_BYTES=1", 3, "mpi_comm", scratch_dir()), 0);
  cr_expect_eq(run_env("STARLOPS_COMM_BLOCKING_BYTES=1", 2, "mpi_solvers", scratch_dir()), 0);
}

/* Every allreduce and reduce-scatter of a byte per rank or more a ring of point-to-point messages
 * (comm_ring.c), in segments of 16 bytes (up to 64 per block, two in flight): odd sizes, empty blocks and
 * segments, sub-communicators of one rank, the solvers' scalars. */
Test(mpi, collectives_as_rings, .timeout = 600)
{
  const char *env = "STARLOPS_COMM_RING_BYTES=1 STARLOPS_COMM_RING_SEGMENT_BYTES=16";
  cr_expect_eq(run_env(env, 3, "mpi_comm", scratch_dir()), 0);
  cr_expect_eq(run_env(env, 4, "mpi_comm", scratch_dir()), 0);
  cr_expect_eq(run_env(env, 2, "mpi_solvers", scratch_dir()), 0);
  cr_expect_eq(run_env("STARLOPS_COMM_RING_BYTES=1 STARLOPS_COMM_RING_SEGMENT_BYTES=1000000", 3, "mpi_comm", scratch_dir()), 0);
}

/* Every collective a task (STARLOPS_COMM_TASKS=1: the path of ranks with a CUDA worker), on CPU workers:
 * non-blocking calls, the rings in small segments, blocking calls on the channel's thread, the solvers. */
Test(mpi, collectives_as_tasks, .timeout = 600)
{
  cr_expect_eq(run_env("STARLOPS_COMM_TASKS=1", 3, "mpi_comm", scratch_dir()), 0);
  cr_expect_eq(run_env("STARLOPS_COMM_TASKS=1 STARLOPS_COMM_RING_BYTES=1 STARLOPS_COMM_RING_SEGMENT_BYTES=16", 2, "mpi_comm", scratch_dir()), 0);
  cr_expect_eq(run_env("STARLOPS_COMM_TASKS=1 STARLOPS_COMM_BLOCKING_BYTES=1", 2, "mpi_solvers", scratch_dir()), 0);
}

/* Waits that poll before they sleep (host_wait.c): the scalars, the solvers' convergence tests and sl_wait read
 * the same values as the waits that sleep at once (the CUDA-worker setting is accepted and unused without one);
 * starlops_info reports the setting. */
Test(mpi, waits_that_poll_first, .timeout = 600)
{
  cr_expect_eq(run_env("STARLOPS_WAIT_SPIN_US=50 STARLOPS_CUDA_WORKER_SPIN=1", 2, "mpi_solvers", scratch_dir()), 0);
  cr_expect_eq(run_env("STARLOPS_WAIT_SPIN_US=1000", 3, "mpi_arrays", scratch_dir()), 0);
  /* the setting as starlops_info reports it (unset, the same program checks the default) */
  cr_expect_eq(run_env("STARLOPS_WAIT_SPIN_US=250", 2, "mpi_cores", "nobind"), 0);
}

/* The host allocation cache (host_cache.c) off, and with a cap that holds one vector of mpi_memory's on 2 ranks
 * (the oldest blocks dropped as others come): the results stay right; starlops_info reports the cap. */
Test(mpi, host_cache_settings, .timeout = 600)
{
  cr_expect_eq(run_env("STARLOPS_HOST_CACHE_MB=0", 2, "mpi_memory", scratch_dir()), 0);
  cr_expect_eq(run_env("STARLOPS_HOST_CACHE_MB=100", 2, "mpi_memory", scratch_dir()), 0);
  cr_expect_eq(run_env("STARLOPS_HOST_CACHE_MB=0", 2, "mpi_cores", "nobind"), 0);
  cr_expect_eq(run_env("STARLOPS_HOST_CACHE_MB=64", 2, "mpi_cores", "nobind"), 0);
}

Test(mpi, mpi_comm_under_dmdas_2_ranks, .timeout = 400)
{
  cr_expect_eq(run_env("STARPU_SCHED=dmdas", 2, "mpi_comm", NULL), 0);
}

/* sl_init again after sl_finalize (MPI the program's): the first session's scalar is refused, the second works. */
Test(mpi, init_again_after_finalize, .timeout = 400)
{
  cr_expect_eq(run(1, "mpi_reinit", NULL), 0);
  cr_expect_eq(run(3, "mpi_reinit", NULL), 0);
}

/* STARLOPS_COMM: a backend this machine cannot give is a clear error on every rank; only auto falls back. */
Test(mpi, comm_backend_selection, .timeout = 400)
{
  cr_expect_eq(run_env("STARLOPS_COMM=mpi", 2, "mpi_comm_select", "0 mpi"), 0);
  cr_expect_eq(run_env("STARLOPS_COMM=bogus", 2, "mpi_comm_select", "-1 STARLOPS_COMM"), 0);
  cr_expect_eq(run_env("STARLOPS_COMM=auto STARPU_NCUDA=0 STARLOPS_CODELET_WHERE=any", 3, "mpi_comm_select", "0 mpi"), 0);
  cr_expect_eq(run_env("STARLOPS_COMM=nccl STARPU_NCUDA=0 STARLOPS_CODELET_WHERE=any", 2, "mpi_comm_select", "-6 nccl is not available"), 0);
  cr_expect_eq(run_env("STARLOPS_COMM=mpi-cuda STARPU_NCUDA=0 STARLOPS_CODELET_WHERE=any", 3, "mpi_comm_select", "-6 mpi-cuda is not available"), 0);
}

/* Every STARLOPS_* setting is validated by sl_init: a bad value fails on every rank with the same message,
 * naming the variable. */
Test(mpi, settings_are_validated, .timeout = 400)
{
  const char *bad[][2] = {{"STARLOPS_CHUNK_BYTES=-5", "STARLOPS_CHUNK_BYTES"}, {"STARLOPS_CHUNK_BYTES=lots", "STARLOPS_CHUNK_BYTES"},
                          {"STARLOPS_MAX_CHUNKS=0", "STARLOPS_MAX_CHUNKS"},    {"STARLOPS_CODELET_WHERE=gpu", "STARLOPS_CODELET_WHERE"},
                          {"STARLOPS_STENCIL_NO_OVERLAP=yes", "STARLOPS_STENCIL_NO_OVERLAP"},
                          {"STARLOPS_FFTW_PLANNER=fast", "STARLOPS_FFTW_PLANNER"},
                          {"STARLOPS_FFT_CALLBACKS=yes", "STARLOPS_FFT_CALLBACKS"},
                          {"STARLOPS_COMM_SPIN_US=-1", "STARLOPS_COMM_SPIN_US"},
                          {"STARLOPS_WAIT_SPIN_US=soon", "STARLOPS_WAIT_SPIN_US"},
                          {"STARLOPS_CUDA_WORKER_SPIN=2", "STARLOPS_CUDA_WORKER_SPIN"},
                          {"STARLOPS_COMM_BLOCKING_BYTES=big", "STARLOPS_COMM_BLOCKING_BYTES"},
                          {"STARLOPS_COMM_RING_BYTES=-1", "STARLOPS_COMM_RING_BYTES"},
                          {"STARLOPS_COMM_RING_SEGMENT_BYTES=0", "STARLOPS_COMM_RING_SEGMENT_BYTES"},
                          {"STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES=1MiB", "STARLOPS_COMM_ALLREDUCE_BLOCKING_BYTES"},
                          {"STARLOPS_COMM_RING_ALLREDUCE_BYTES=-2", "STARLOPS_COMM_RING_ALLREDUCE_BYTES"},
                          {"STARLOPS_TASK_THREADS=many", "STARLOPS_TASK_THREADS"},
                          {"STARLOPS_TASK_THREADS=1025", "STARLOPS_TASK_THREADS"},
                          {"STARLOPS_PLACEMENT=cores", "STARLOPS_PLACEMENT"},
                          {"STARLOPS_COMM_TASKS=yes", "STARLOPS_COMM_TASKS"},
                          {"STARLOPS_COMM_SHM=no", "STARLOPS_COMM_SHM"},
                          {"STARLOPS_COMM_SHM_FAIL_RANK=-1", "STARLOPS_COMM_SHM_FAIL_RANK"},
                          {"STARLOPS_GATHER_P2P=yes", "STARLOPS_GATHER_P2P"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char args[128];
    snprintf(args, sizeof args, "-1 %s", bad[i][1]);
    cr_expect_eq(run_env(bad[i][0], 2, "mpi_comm_select", args), 0, "%s", bad[i][0]);
  }
  cr_expect_eq(run_env("STARLOPS_CODELET_WHERE=auto STARLOPS_MAX_CHUNKS=7 STARLOPS_CHUNK_BYTES=1000", 2, "mpi_comm_select", "0 mpi"), 0);
}

/* Runs prog on np ranks with env set on the last rank only (settings that differ between ranks). */
static int run_last_env(const char *env, int np, const char *prog, const char *args)
{
  char wrapped[1024];
  snprintf(wrapped, sizeof wrapped, "sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = %d ]; then export %s; fi; exec %s/tests/mpi/%s %s'",
           np - 1, env, build_dir(), prog, args ? args : "");
  static int serial;
  char log[512], cmd[2048];
  snprintf(log, sizeof log, "%s/tests/%s-last-env-%d.log", build_dir(), prog, serial++);
  snprintf(cmd, sizeof cmd, "STARPU_NCPU=1 timeout -k 10 300 mpirun -n %d --oversubscribe --bind-to none %s > %s 2>&1", np,
           wrapped, log);
  return run_logged(cmd, prog, np, log);
}

/* Settings that differ between ranks are one error on every rank (no hang), naming the variable; bad worker
 * counts and timeouts are refused before StarPU sees them. */
Test(mpi, settings_must_match_across_ranks, .timeout = 400)
{
  char trace[512];
  snprintf(trace, sizeof trace, "STARLOPS_TRACE=%s/tests/trace-last-rank", build_dir());
  cr_expect_eq(run_last_env("STARLOPS_COMM=nccl", 2, "mpi_comm_select", "-1 STARLOPS_COMM"), 0);
  cr_expect_eq(run_last_env(trace, 3, "mpi_comm_select", "-1 STARLOPS_TRACE"), 0);
  cr_expect_eq(run_last_env("STARLOPS_CHUNK_BYTES=1000", 2, "mpi_comm_select", "-1 STARLOPS_CHUNK_BYTES"), 0);
  cr_expect_eq(run_last_env("STARLOPS_CHUNK_BYTES=-5", 3, "mpi_comm_select", "-1 STARLOPS_CHUNK_BYTES"), 0);
  cr_expect_eq(run_last_env("STARLOPS_CODELET_WHERE=cpu", 2, "mpi_comm_select", "-1 STARLOPS_CODELET_WHERE"), 0);
  cr_expect_eq(run_last_env("STARLOPS_COMM_BLOCKING_BYTES=1", 2, "mpi_comm_select", "-1 STARLOPS_COMM_BLOCKING_BYTES"), 0);
  cr_expect_eq(run_last_env("STARLOPS_COMM_RING_BYTES=0", 2, "mpi_comm_select", "-1 STARLOPS_COMM_RING_BYTES"), 0);
  cr_expect_eq(run_last_env("STARLOPS_COMM_RING_ALLREDUCE_BYTES=0", 2, "mpi_comm_select", "-1 STARLOPS_COMM_RING_ALLREDUCE_BYTES"), 0);
  cr_expect_eq(run_last_env("STARLOPS_TASK_THREADS=3", 3, "mpi_comm_select", "-1 STARLOPS_TASK_THREADS"), 0);
  cr_expect_eq(run_last_env("STARLOPS_PLACEMENT=starpu", 2, "mpi_comm_select", "-1 STARLOPS_PLACEMENT"), 0);
  cr_expect_eq(run_last_env("STARLOPS_COMM_TASKS=1", 2, "mpi_comm_select", "-1 STARLOPS_COMM_TASKS"), 0);
  cr_expect_eq(run_last_env("STARLOPS_COMM_SHM=0", 3, "mpi_comm_select", "-1 STARLOPS_COMM_SHM"), 0);
  cr_expect_eq(run_env("STARPU_NCPU=-1", 2, "mpi_comm_select", "-1 STARPU_NCPU"), 0);
  cr_expect_eq(run_env("STARPU_NCPU=0", 1, "mpi_comm_select", "-1 STARPU_NCPU"), 0);
  cr_expect_eq(run_env("STARLOPS_TIMEOUT=soon", 2, "mpi_comm_select", "-1 STARLOPS_TIMEOUT"), 0);
}

/* The watchdog: a rank that skips a collective makes the others print what they wait for and abort the job
 * after STARLOPS_TIMEOUT seconds; with a generous timeout a normal run is unaffected. */
Test(mpi, watchdog_ends_a_job_whose_rank_skipped_a_collective, .timeout = 400)
{
  char log[512], cmd[2048];
  snprintf(log, sizeof log, "%s/tests/mpi_watchdog.log", build_dir());
  snprintf(cmd, sizeof cmd,
           "STARPU_NCPU=1 STARLOPS_TIMEOUT=2 timeout -k 10 120 mpirun -n 2 --oversubscribe --bind-to none "
           "%s/tests/mpi/mpi_watchdog > %s 2>&1",
           build_dir(), log);
  int st = system(cmd);
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  cr_expect(code != 0 && code != 124 && code != 137, "the job must end through the watchdog's abort, status %d", code);
  char grep[1200];
  snprintf(grep, sizeof grep, "grep -q 'starlops watchdog: rank 0 has waited' %s && grep -q 'sl_array_norm' %s", log, log);
  cr_expect_eq(system(grep), 0, "the log %s must say which rank waits and in which call", log);
  cr_expect_eq(run_env("STARLOPS_TIMEOUT=200", 3, "mpi_solvers", NULL), 0);
}

/* Written on 3 ranks, checked by NumPy, read back on 1, 2 and 4; written by NumPy, read on 3. */
Test(mpi, npy_files_move_between_rank_counts_and_numpy, .timeout = 600)
{
  const char *dir = scratch_dir();
  for (int dt = 0; dt < 4; dt++) {
    char args[512], cmd[1024];
    snprintf(args, sizeof args, "write %s/w%d.npy %d %d", dir, dt, dt, dt % 3);
    cr_expect_eq(run(3, "mpi_npy", args), 0, "write on 3 ranks, dtype %d", dt);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/npy_check.py check %s/w%d.npy %d", dir, dt, dt);
    cr_expect_eq(system(cmd), 0, "numpy reads what starlops wrote (dtype %d)", dt);
    snprintf(args, sizeof args, "read %s/w%d.npy %d", dir, dt, dt);
    cr_expect_eq(run(dt % 2 ? 4 : 2, "mpi_npy", args), 0, "read back, dtype %d", dt);
    cr_expect_eq(run(1, "mpi_npy", args), 0, "read back on 1 rank, dtype %d", dt);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/npy_check.py make %s/p%d.npy %d", dir, dt, dt);
    cr_expect_eq(system(cmd), 0, "numpy writes dtype %d", dt);
    snprintf(args, sizeof args, "read %s/p%d.npy %d", dir, dt, dt);
    cr_expect_eq(run(3, "mpi_npy", args), 0, "starlops reads what numpy wrote (dtype %d)", dt);
  }
}

/* A traced 2-rank run converts into StarVZ inputs, a summary and a Gantt chart; a traced region holds fewer
 * tasks than the whole run. */
static long traced_tasks(const char *dir, const char *env)
{
  char cmd[2048], path[600];
  snprintf(cmd, sizeof cmd,
           "%s STARLOPS_TRACE=%s STARPU_NCPU=1 timeout -k 10 300 mpirun -n 2 --oversubscribe --bind-to none "
           "%s/examples/demo_ops --rows 60 --cols 40 > %s/run.log 2>&1 && bash scripts/starlops-trace %s > %s/convert.log 2>&1",
           env, dir, build_dir(), dir, dir, dir);
  if (system(cmd) != 0) {
    snprintf(cmd, sizeof cmd, "tail -n 20 %s/run.log %s/convert.log >&2", dir, dir);
    if (system(cmd) != 0) fprintf(stderr, "(no logs)\n");
    return -1;
  }
  const char *must[] = {"tasks.csv", "paje.csv", "summary.txt", "gantt.png"};
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, must[i]);
    FILE *f = fopen(path, "r");
    cr_expect_not_null(f, "%s was not written", path);
    if (!f) return -1;
    fclose(f);
  }
  snprintf(path, sizeof path, "%s/summary.txt", dir);
  FILE *f = fopen(path, "r");
  long n = -1;
  if (f && fscanf(f, "traced span: %*f ms, %ld tasks", &n) != 1) n = -1;
  if (f) fclose(f);
  return n;
}

/* Collective tasks (sl_allreduce, sl_exchange, ...) in a converted trace's tasks.csv. */
static long traced_collectives(const char *dir)
{
  char cmd[700];
  snprintf(cmd, sizeof cmd, "grep -c 'sl_allreduce\\|sl_allgatherv\\|sl_bcast\\|sl_reduce_scatter\\|sl_alltoallv\\|sl_exchange' %s/tasks.csv", dir);
  FILE *p = popen(cmd, "r");
  long n = -1;
  if (p && fscanf(p, "%ld", &n) != 1) n = -1;
  if (p) pclose(p);
  return n;
}

Test(trace, run_converts_and_region_limits_it, .timeout = 400)
{
  char *whole = strdup(scratch_dir()), *region = strdup(scratch_dir());
  long all = traced_tasks(whole, "");
  /* traced, collectives are tasks (untraced, host MPI without a CUDA worker runs them without one) */
  long colls = traced_collectives(whole);
  cr_expect_gt(colls, 0, "collective tasks in the whole-run trace: %ld", colls);
  long part = traced_tasks(region, "STARLOPS_TRACE_REGION=1");
  cr_expect_gt(all, 0, "tasks in the whole-run trace: %ld", all);
  cr_expect_gt(part, 0, "tasks in the region trace: %ld", part);
  cr_expect_lt(part, all, "the region (%ld tasks) should hold fewer tasks than the whole run (%ld)", part, all);
  free(whole);
  free(region);
}

/* The testing driver: every operator with --check (dot test) on 2 ranks, sizes that do not divide. */
Test(driver, starlops_testing_check_all_operators, .timeout = 400)
{
  const char *dts[] = {"float64", "complex128", "float32"};
  for (int i = 0; i < 3; i++) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "STARPU_NCPU=1 timeout -k 10 300 mpirun -n 2 --oversubscribe --bind-to none %s/bin/starlops_testing "
             "-o all -n 101 -m 77 --nrhs 2 --dtype %s --check --niter 1 > %s/tests/driver-%s.log 2>&1",
             build_dir(), dts[i], build_dir(), dts[i]);
    cr_expect_eq(system(cmd), 0, "starlops_testing --check (%s): see %s/tests/driver-%s.log", dts[i], build_dir(), dts[i]);
  }
}

Test(driver, starlops_testing_check_all_solvers, .timeout = 400)
{
  const char *dts[] = {"float64", "complex128"};
  for (int i = 0; i < 2; i++) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "STARPU_NCPU=1 timeout -k 10 300 mpirun -n 2 --oversubscribe --bind-to none %s/bin/starlops_testing "
             "-o solvers -n 90 -m 40 --dtype %s --check > %s/tests/driver-solvers-%s.log 2>&1",
             build_dir(), dts[i], build_dir(), dts[i]);
    cr_expect_eq(system(cmd), 0, "starlops_testing -o solvers --check (%s): see %s/tests/driver-solvers-%s.log", dts[i],
                 build_dir(), dts[i]);
  }
}

/* --out writes the forward result as .npy, --in reads x back from it (on another rank count) */
Test(driver, starlops_testing_npy_in_out, .timeout = 400)
{
  char cmd[1024], *dir = scratch_dir();
  snprintf(cmd, sizeof cmd,
           "STARPU_NCPU=1 timeout -k 10 200 mpirun -n 2 --oversubscribe --bind-to none %s/bin/starlops_testing "
           "-o laplacian -n 30 -m 20 --niter 1 --out %s/y.npy > %s/out.log 2>&1 && "
           "STARPU_NCPU=1 timeout -k 10 200 mpirun -n 3 --oversubscribe --bind-to none %s/bin/starlops_testing "
           "-o laplacian -n 30 -m 20 --niter 1 --check --in %s/y.npy > %s/in.log 2>&1",
           build_dir(), dir, dir, build_dir(), dir, dir);
  cr_expect_eq(system(cmd), 0, "starlops_testing --out/--in: see %s/out.log and in.log", dir);
  FILE *f = fopen(strcat(dir, "/y.npy"), "rb");
  cr_expect_not_null(f, "no y.npy written");
  if (f) fclose(f);
}

/* The Python interface's pytest suite (python/tests) on 1 and 2 ranks, with Debian's python3 (numpy, pytest,
 * mpi4py from install-deps.sh; $STARLOPS_PYTHON overrides) and this build's library. */
static int run_pytest(int np)
{
  const char *py = getenv("STARLOPS_PYTHON");
  char log[512], cmd[2048];
  snprintf(log, sizeof log, "%s/tests/pytest-%d.log", build_dir(), np);
  snprintf(cmd, sizeof cmd,
           "STARPU_NCPU=1 PYTHONPATH=python STARLOPS_LIB=%s/lib/libstarlops.so timeout -k 10 300 mpirun -n %d "
           "--oversubscribe --bind-to none %s -m pytest -q -p no:cacheprovider --color=no python/tests > %s 2>&1",
           build_dir(), np, py && *py ? py : "/usr/bin/python3", log);
  return run_logged(cmd, "pytest python/tests", np, log);
}
Test(python, pytest_1_rank, .timeout = 400) { cr_expect_eq(run_pytest(1), 0); }
Test(python, pytest_2_ranks, .timeout = 400) { cr_expect_eq(run_pytest(2), 0); }
