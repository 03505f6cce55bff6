#!/usr/bin/env bash
# The whole GPU check, for an offline GPU node: unpack the bundle, run the test suite with CUDA workers
# (once with the scheduler's own placement, once with every compute codelet forced onto the GPU), run the
# benchmarks, and print a short table last.
# Usage: scripts/gpu-check.sh LOGDIR [BUNDLE.tar.gz] [all, or a comma list of suite, cuda, bench,
#   suite-many (the many_chunks tests), prox (TV denoising), python, nsbench, cudatests (CUDATESTS="prog:ranks ...", CUDATESTS_CHUNKED likewise with 4 chunks per block), solvers, latency, waits, ringbench, alongbench, patchbench, windowsbench, vecbench, ncu (NCU_PROG, NCU_ARGS, NCU_KERNELS, NCU_ENV), ext (user operators), keybench, stencilbench, kernelbench (STENCIL_KERNEL_ARGS), fftbench, summa, defaults, defaults-cpu, kernels, setup
#   (DEFAULT_PROGS, DEFAULTS_RANKS)]
# (suite, cuda and bench split the check into device calls of less than 10 minutes each: the whole test
# suite under dmdas; the suite with every compute codelet on the GPU, the examples and the comm backends;
# the benchmarks)
set -uo pipefail
logs=${1:?usage: gpu-check.sh LOGDIR [BUNDLE.tar.gz] [all|suite|cuda|bench]}
tarball=${2:-bundle/starlops-bundle.tar.gz}
part=${3:-all}
want() { [ "$part" = all ] || [[ ",$part," == *",$1,"* ]]; }
mkdir -p "$logs"
root=/tmp/starlops-gpu
rm -rf "$root" && mkdir -p "$root"
tar -xzf "$tarball" -C "$root" || { echo "gpu-check: cannot unpack $tarball"; exit 1; }
B=$root/starlops-bundle
export OPAL_PREFIX=$B/usr PATH=$B/usr/bin:$PATH
export LD_LIBRARY_PATH=$B/lib:$B/usr/lib/x86_64-linux-gnu/openmpi/lib:$B/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PMIX_MCA_mca_base_component_path=$B/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
export OMPI_MCA_mca_base_param_files=$B/etc/openmpi/openmpi-mca-params.conf
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1 NCCL_NVLS_ENABLE=0 PMIX_MCA_pcompress_base_silence_warning=1
export STARPU_HOME=$root/starpu-home STARPU_SILENT=1 STARPU_WORKERS_NOBIND=1 STARLOPS_BUILD=$B/build
mkdir -p "$STARPU_HOME"
declare -a rows

step() { # name, log, command...
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  # line-buffered, so that a step stopped by its time limit leaves what it printed
  timeout "${STEP_TIMEOUT:-420}" stdbuf -oL -eL "$@" > "$logs/$log" 2>&1
  local rc=$?
  rows+=("$(printf '| %-44s | %-4s | %4ss | %s |' "$name" "$([ $rc = 0 ] && echo ok || { [ $rc = 124 ] && echo TIME || echo FAIL; })" $((SECONDS - t0)) "$log")")
  echo "== $name: rc=$rc ($((SECONDS - t0)) s)"; tail -n 4 "$logs/$log"
  return $rc
}

step "GPU and driver" nvidia-smi.log nvidia-smi
step "starlops_info, 1 rank" info.log "$B/build/bin/starlops_info"
# the suite runs from a tree holding tests/npy_check.py
cd "$B"
E=$B/build/examples
if want suite; then
# the suite in steps of at most 420 s each (with the GPU the mpi programs take about 420 s in all on a 16-core
# H100 node, so they are two steps; the many-chunks runs, 16 workers per rank, are the part suite-many);
# the trace tests convert traces with starpu_fxt_tool and pajeng, which the bundle does not carry (CI runs them)
step "test suite, mpi programs p-z, dmdas placement" tests-dmdas-mpi2.log "$B/build/tests/unit_tests" -j1 \
  --filter 'mpi/mpi_[p-z]*'
step "test suite, other mpi tests, dmdas placement" tests-dmdas-mpi1.log "$B/build/tests/unit_tests" -j1 \
  --filter 'mpi/!(mpi_[p-z]*)'
step "test suite, the rest but many_chunks, dmdas placement" tests-dmdas.log "$B/build/tests/unit_tests" -j1 \
  --filter '!(many_chunks|python|trace|mpi)/*'
fi
if want suite-many; then
step "test suite many_chunks, dmdas placement" tests-dmdas-many.log "$B/build/tests/unit_tests" -j1 --filter 'many_chunks/*'
fi
if want cuda; then
# one chunk per block: the chunked codelets' CUDA implementations take that case (several chunks fall back
# to the CPUs); the suite part (dmdas) runs the default small chunks
# (two steps under 420 s each, as the suite part)
STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 30)) step "test suite p-z, compute codelets forced on CUDA" \
  tests-cuda-2.log "$B/build/tests/unit_tests" -j1 --filter 'mpi/mpi_[p-z]*'
STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 30)) step "test suite a-o, compute codelets forced on CUDA" \
  tests-cuda-1.log "$B/build/tests/unit_tests" -j1 --filter 'mpi/!(mpi_[p-z]*)'
step "CUDA kernels vs CPU kernels" tests-cuda-kernels.log "$B/build/tests/unit_tests" -j1 --filter 'cuda_kernels/*' --verbose
step "stencil kernels on segments apart (CPU, CUDA)" tests-stencil-kernel.log "$B/build/tests/unit_tests" -j1 \
  --filter 'stencil_kernel/*' --verbose
STARPU_NCPU=1 step "demo, 2 ranks sharing the GPU" demo.log mpirun -n 2 --bind-to none "$E/demo_arrays" --verbose
# the FFT's plain cuFFT plans and weights kernel (the fallback where the callbacks cannot link)
STARLOPS_FFT_CALLBACKS=0 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 30)) step "FFT tests, plain cuFFT plans, 2 ranks" \
  fft-plain.log mpirun -n 2 --bind-to none "$B/build/tests/mpi/mpi_fft"
# the solvers with every compute codelet on the GPU, and on the CPUs only: the same iterations
STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 26)) step "poisson_cg 1024^2, CUDA, 1 rank" poisson-cuda.log \
  mpirun -n 1 --bind-to none "$E/poisson_cg" --n 1024 --niter 300 --tol 0 --check-every 300
STARPU_NCUDA=0 STARPU_NCPU=8 step "poisson_cg 1024^2, CPU, 1 rank" poisson-cpu.log \
  mpirun -n 1 --bind-to none "$E/poisson_cg" --n 1024 --niter 300 --tol 0 --check-every 300
STARLOPS_CODELET_WHERE=cuda step "least_squares, CUDA, 2 ranks" lsq-cuda.log \
  mpirun -n 2 --bind-to none "$E/least_squares" --dtype complex128 --damp 0.1 --quiet
STARLOPS_CODELET_WHERE=cuda step "sparse_fista, CUDA, 2 ranks" fista-cuda.log mpirun -n 2 --bind-to none "$E/sparse_fista" --quiet
fi
if want bench; then
STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 30)) step "bench_vec on the GPU (forced CUDA)" bench-gpu.log \
  "$B/build/bench/bench_vec" --sizes 64,256,1024,4096 --reps 10
STARPU_NCUDA=0 step "bench_vec on the CPUs (no CUDA worker)" bench-cpu.log \
  "$B/build/bench/bench_vec" --sizes 8,128,512 --reps 10
STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_ops: gemv and DGEMM vs cuBLAS" bench-ops-gpu.log \
  mpirun -n 1 --bind-to none "$B/build/bench/bench_ops" --sizes 8000 --gemm 8192,16384 --reps 5
STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_ops: gemv vs CBLAS, 1 CPU" bench-ops-cpu.log \
  mpirun -n 1 --bind-to none "$B/build/bench/bench_ops" --sizes 2000,8000 --reps 7
STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 28)) step "bench_stencil on the GPU" bench-stencil-gpu.log \
  mpirun -n 1 --bind-to none "$B/build/bench/bench_stencil" --sizes 4000,8000 --reps 7
STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_stencil, 1 CPU vs a plain loop" bench-stencil-cpu.log \
  mpirun -n 1 --bind-to none "$B/build/bench/bench_stencil" --sizes 2000,4000 --reps 7
STARPU_NCUDA=0 STARPU_NCPU=6 step "bench_stencil, 2 ranks x 6 CPUs (halo overlap)" bench-stencil-2r.log \
  mpirun -n 2 --bind-to none "$B/build/bench/bench_stencil" --sizes 2000,4000 --reps 7
STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 28)) step "bench_solvers on the GPU" bench-solvers-gpu.log \
  mpirun -n 1 --bind-to none "$B/build/bench/bench_solvers" --sizes 1000,4000 --ls 20000,2000 --niter 20 --reps 3
STARPU_NCUDA=0 STARPU_NCPU=6 step "bench_solvers, 2 ranks x 6 CPUs" bench-solvers-cpu.log \
  mpirun -n 2 --bind-to none "$B/build/bench/bench_solvers" --sizes 1000,2000 --ls 4000,1000 --niter 20 --reps 3
fi

# ---- focused: the newest test programs run directly with every compute codelet on the GPU (one chunk per
# block), a minute each, and the key benchmarks ----
# ---- what a user meets first (bench_setup): no variables set, the scheduler's own placement over 2 chunks
# per worker (STARLOPS_CODELET_WHERE=any), and the tuned run (forced CUDA, 1 GiB chunks); then the CPUs ----
if want setup; then
  for cfg in "default:" "any:STARLOPS_CODELET_WHERE=any" "tuned:STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 30))" \
             "cpu:STARPU_NCUDA=0"; do
    label=${cfg%%:*} envs=${cfg#*:}
    args="--setup 8000 --sizes 4000,16000 --cg 1000 --reps 5"
    [ "$label" = cpu ] && args="--setup 1000 --sizes 1000,4000 --cg 1000 --reps 5"
    STEP_TIMEOUT=150 step "bench_setup, $label" "bench-setup-$label.log" env $envs mpirun -n 1 --bind-to none \
      "$B/build/bench/bench_setup" $args
  done
fi
# ---- the vector operations alone: axpby beside a copy, the reductions beside a read-only kernel ----
if want vecbench; then
  STEP_TIMEOUT=180 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 30)) step "bench_vec on the GPU (forced CUDA)" \
    bench-vec-gpu.log mpirun -n 1 --bind-to none "$B/build/bench/bench_vec" --sizes 256,1024,4096 --reps 10 --phases
fi
# ---- Nsight Compute on one benchmark's kernels, where the node has ncu: NCU_PROG (a bench program), NCU_ARGS,
# NCU_KERNELS (a regex of kernel names), NCU_ENV (variables for the run) ----
if want ncu; then
  ncu_bin=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  if [ -n "$ncu_bin" ]; then
    STEP_TIMEOUT=300 step "ncu: ${NCU_PROG:-bench_stencil} ${NCU_ARGS:-}" ncu.log mpirun -n 1 --bind-to none env ${NCU_ENV:-} "$ncu_bin" \
      --kernel-name "regex:${NCU_KERNELS:-.}" --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum \
      "$B/build/bench/${NCU_PROG:-bench_stencil}" ${NCU_ARGS:-}
  else
    echo "ncu: not on this node" > "$logs/ncu.log"
  fi
fi
if want kernels; then
  step "CUDA kernels vs CPU kernels" tests-cuda-kernels.log "$B/build/tests/unit_tests" -j1 --filter 'cuda_kernels/*' --verbose
  step "stencil kernels on segments apart (CPU, CUDA)" tests-stencil-kernel.log "$B/build/tests/unit_tests" -j1 \
    --filter 'stencil_kernel/*' --verbose
fi
if want cudatests; then
  for t in ${CUDATESTS:-mpi_ops:1 mpi_solvers:1 mpi_stencils:1 mpi_stencils:2 mpi_solvers:2}; do
    set -- ${t/:/ }
    STEP_TIMEOUT=${CUDATEST_TIMEOUT:-60} STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 30)) step "$1 on $2 rank(s), forced CUDA" \
      "cuda-$1-$2.log" mpirun -n "$2" --bind-to none "$B/build/tests/mpi/$1"
  done
  # the same programs with several chunks per block (CUDATESTS_CHUNKED="prog:ranks ..."): the per-chunk
  # programs (fused Krylov steps per chunk) on the GPU
  for t in ${CUDATESTS_CHUNKED:-}; do
    set -- ${t/:/ }
    STEP_TIMEOUT=${CUDATEST_TIMEOUT:-60} STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=4 STARLOPS_MAX_CHUNKS=4 \
      step "$1 on $2 rank(s), forced CUDA, 4 chunks" "cuda-chunked-$1-$2.log" mpirun -n "$2" --bind-to none "$B/build/tests/mpi/$1"
  done
fi
# ---- the Krylov solvers' steps on the GPU: the solver tests with default settings and with many chunks
# (reductions combined on the CPUs), then bench_solvers with every compute codelet on the GPU ----
if want solvers; then
  STEP_TIMEOUT=120 step "mpi_solvers on 2 ranks, no variables set" solvers-default.log \
    mpirun -n 2 --bind-to none "$B/build/tests/mpi/mpi_solvers"
  [ "${SOLVERS_MANY:-1}" = 1 ] && STEP_TIMEOUT=300 STARPU_NCPU=4 STARLOPS_MAX_CHUNKS=32 STARLOPS_CHUNK_BYTES=4 STARLOPS_TEST_MIN_CHUNKS=32 step \
    "mpi_solvers on 2 ranks x 4 CPUs, many chunks" solvers-many.log mpirun -n 2 --bind-to none "$B/build/tests/mpi/mpi_solvers"
  for fuse in 0 1; do
    STEP_TIMEOUT=90 STARLOPS_SOLVER_NO_FUSE=$fuse STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 28)) step \
      "bench_solvers on the GPU, no_fuse=$fuse" bench-solvers-gpu-nofuse$fuse.log mpirun -n 1 --bind-to none \
      "$B/build/bench/bench_solvers" --sizes 1000,4000 --ls 20000,2000 --niter 20 --reps 3
    STEP_TIMEOUT=90 STARLOPS_SOLVER_NO_FUSE=$fuse step "bench_setup CG, no variables set, no_fuse=$fuse" \
      bench-setup-cg-nofuse$fuse.log mpirun -n 1 --bind-to none "$B/build/bench/bench_setup" --setup 0 --sizes 1000 --cg 1000 --reps 5
  done
fi
# ---- the latency of a CG iteration (bench_setup, L^H L 1000^2) under StarPU's schedulers and settings ----
if want latency; then
  # LATENCY_CFGS: the configurations to run ("label:VAR=value"; a label given twice runs twice, in two processes)
  j=0
  for cfg in ${LATENCY_CFGS:-"dmdas:" "dmda:STARPU_SCHED=dmda" "eager:STARPU_SCHED=eager" "prio:STARPU_SCHED=prio" "lws:STARPU_SCHED=lws" \
             "ncpu1:STARPU_NCPU=1" "pipeline0:STARPU_CUDA_PIPELINE=0" "pipeline8:STARPU_CUDA_PIPELINE=8"}; do
    label=${cfg%%:*} envs=${cfg#*:}
    j=$((j + 1))
    STEP_TIMEOUT=60 step "bench_setup CG, $label" "bench-latency-$j-$label.log" env $envs mpirun -n 1 --bind-to none \
      "$B/build/bench/bench_setup" --setup 0 --sizes 1000 --cg 1000 --reps 5
  done
fi
# ---- waits for short tasks (docs/gpu.md#waiting-for-short-tasks): the benchmarks WAITS_BENCHES (all of
# cg-default, cg-cuda, stencil, vec, fft, nsconv) under each of WAITS_CONFIGS ("label:VAR=value VAR=value;..."; the
# default waits against polling ones), the configurations in turn, WAITS_REPS times (2); forced CUDA with 1 GiB
# chunks except cg-default (no variables set) ----
if want waits; then
  IFS=';' read -r -a wcfgs <<< "${WAITS_CONFIGS:-sleep:STARLOPS_CUDA_WORKER_SPIN=0 STARLOPS_WAIT_SPIN_US=0;poll:STARLOPS_CUDA_WORKER_SPIN=1 STARLOPS_WAIT_SPIN_US=100}"
  wb=",${WAITS_BENCHES:-cg-default,cg-cuda,stencil,vec,fft,nsconv},"
  cuda1g="STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 30))"
  # one benchmark under the configuration in hand, when WAITS_BENCHES names it: key, time limit, title, command
  waits_step() {
    local key=$1 limit=$2 title=$3
    shift 3
    [[ $wb == *,$key,* ]] || return 0
    STEP_TIMEOUT=$limit step "$title, $label" "waits-$key-$label.log" env $envs "$@"
  }
  for rep in $(seq "${WAITS_REPS:-2}"); do
    for cfg in "${wcfgs[@]}"; do
      label=${cfg%%:*}-$rep envs=${cfg#*:}
      waits_step cg-default 60 "bench_setup CG, no variables" \
        mpirun -n 1 --bind-to none "$B/build/bench/bench_setup" --setup 0 --sizes 1000 --cg 1000 --reps 5
      waits_step cg-cuda 60 "bench_setup CG, forced CUDA" \
        $cuda1g mpirun -n 1 --bind-to none "$B/build/bench/bench_setup" --setup 0 --sizes 1000 --cg 1000 --reps 5
      waits_step stencil 90 "bench_stencil 8000,12000, forced CUDA" \
        $cuda1g mpirun -n 1 --bind-to none "$B/build/bench/bench_stencil" --sizes 8000,12000 --reps 7
      waits_step vec 60 "bench_vec 256, forced CUDA" \
        $cuda1g mpirun -n 1 --bind-to none "$B/build/bench/bench_vec" --sizes 256 --reps 10
      waits_step fft 60 "bench_fft 2048, forced CUDA" \
        $cuda1g mpirun -n 1 --bind-to none "$B/build/bench/bench_fft" --sizes 2048 --reps 5
      waits_step nsconv 60 "bench_nsconv 4096, forced CUDA" \
        $cuda1g mpirun -n 1 --bind-to none "$B/build/bench/bench_nsconv" --sizes 4096 --taps 31
    done
  done
fi
# ---- host-MPI reductions: the ring (default) against libnbc and the blocking calls, 2 ranks x 6 CPU workers ----
if want ringbench; then
  for cfg in "ring:" "noring:STARLOPS_COMM_RING_BYTES=0" "noring-blocking1m:STARLOPS_COMM_RING_BYTES=0 STARLOPS_COMM_BLOCKING_BYTES=1048576"; do
    label=${cfg%%:*} envs=${cfg#*:}
    STEP_TIMEOUT=120 STARLOPS_COMM=mpi STARPU_NCUDA=0 STARPU_NCPU=6 step "bench_comm reductions, $label" "bench-ring-$label.log" \
      env $envs mpirun -n 2 --bind-to none "$B/build/bench/bench_comm" --kinds allreduce,reduce_scatter \
      --min-bytes 65536 --max-bytes 268435456 --reps 10 --overlap-mib 0
  done
  for seg in ${RING_SEGMENTS:-}; do
    STEP_TIMEOUT=120 STARLOPS_COMM_RING_SEGMENT_BYTES=$seg STARLOPS_COMM=mpi STARPU_NCUDA=0 STARPU_NCPU=6 step "bench_comm reductions, segments $seg" \
      "bench-ring-seg$seg.log" mpirun -n 2 --bind-to none "$B/build/bench/bench_comm" --kinds allreduce,reduce_scatter \
      --min-bytes 65536 --max-bytes 268435456 --reps 10 --overlap-mib 0
  done
  STEP_TIMEOUT=120 STARLOPS_COMM=mpi STARPU_NCUDA=0 STARPU_NCPU=3 step "bench_comm reductions, 4 ranks, ring" bench-ring-4ranks.log \
    mpirun -n 4 --bind-to none "$B/build/bench/bench_comm" --kinds allreduce,reduce_scatter \
    --min-bytes 65536 --max-bytes 268435456 --reps 10 --overlap-mib 0
fi
# ---- the proximal layer: TV denoising (PrimalDual, Gradient, L21) on the GPU and on the CPUs, with its time
# per iteration beside the sum of its steps ----
if want prox; then
  i=0
  for cfg in "forced CUDA, 1 rank:1:STARLOPS_CODELET_WHERE=cuda" "default placement, 1 rank:1:STARLOPS_CODELET_WHERE=auto" \
      "forced CUDA, 2 ranks:2:STARLOPS_CODELET_WHERE=cuda" "CPUs only, 1 rank:1:STARPU_NCUDA=0"; do
    IFS=: read -r what np envs <<< "$cfg"
    i=$((i + 1))
    # PROX_WHICH: a comma list of the configurations to run (1-4), each PROX_TIMES times (default once)
    [ -n "${PROX_WHICH:-}" ] && [[ ",$PROX_WHICH," != *",$i,"* ]] && continue
    for rep in $(seq "${PROX_TIMES:-1}"); do
    STEP_TIMEOUT=180 step "tv_denoise 2048^2, $what" "tv-$i-$rep.log" env $envs mpirun -n "$np" --bind-to none \
      "$E/tv_denoise" --quiet --n 2048
    done
  done
fi
# ---- NonStationaryConvolve1D and Sliding1D against their ceilings: the GPU (forced CUDA) beside a device-to-device copy, one
# CPU core beside a plain loop, the node's CPUs ----
if want nsbench; then
  STEP_TIMEOUT=180 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_nsconv on the GPU" bench-nsconv-gpu.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_nsconv" --sizes 4096,8192 --taps 5,11,31
  STEP_TIMEOUT=180 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_nsconv complex128 on the GPU" bench-nsconv-gpu-complex.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_nsconv" --complex --sizes 4096,8192 --taps 11,31
  STEP_TIMEOUT=180 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_nsconv along axis 0 on the GPU" bench-nsconv-gpu-axis0.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_nsconv" --axis 0 --sizes 4096,8192 --taps 5,11,31
  STEP_TIMEOUT=180 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_nsconv complex128 along axis 0 on the GPU" bench-nsconv-gpu-axis0-complex.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_nsconv" --axis 0 --complex --sizes 4096,8192 --taps 5,11,31
  STEP_TIMEOUT=180 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_nsconv, 1 CPU core" bench-nsconv-cpu1.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_nsconv" --sizes 2048,4096 --taps 11,31
  STEP_TIMEOUT=180 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_nsconv, 8 ranks x 1 CPU core" bench-nsconv-cpu8.log \
    mpirun -n 8 --bind-to none "$B/build/bench/bench_nsconv" --sizes 2048,4096 --taps 11,31
  STEP_TIMEOUT=180 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_sliding on the GPU" bench-sliding-gpu.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_sliding" --traces 2048 --samples 4096 --nwin 32,128
  STEP_TIMEOUT=180 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_sliding, 8 ranks x 1 CPU core" bench-sliding-cpu8.log \
    mpirun -n 8 --bind-to none "$B/build/bench/bench_sliding" --traces 256 --samples 4096 --nwin 32,128
fi
# ---- Patch2D with a dense matrix per patch against a GEMM of the same shape ----
if want patchbench; then
  STEP_TIMEOUT=120 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_patch on the GPU" bench-patch-gpu.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_patch" --traces 64 --sizes 512 --nwin 8,16
  STEP_TIMEOUT=120 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_patch on the GPU, one 4096^2 image" \
    bench-patch-gpu-image.log mpirun -n 1 --bind-to none "$B/build/bench/bench_patch" --traces 1 --sizes 4096 --nwin 8,16
  STEP_TIMEOUT=120 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_patch, 8 ranks x 1 CPU core" bench-patch-cpu8.log \
    mpirun -n 8 --bind-to none "$B/build/bench/bench_patch" --traces 16 --sizes 256 --nwin 8,16
  # the patches themselves (M = NULL) against a copy of the same bytes
  STEP_TIMEOUT=120 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_patch --windows on the GPU" \
    bench-patch-windows-gpu.log mpirun -n 1 --bind-to none "$B/build/bench/bench_patch" --traces 64 --sizes 512 --nwin 8,16 --windows
  STEP_TIMEOUT=120 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_patch --windows, 8 ranks x 1 CPU core" bench-patch-windows-cpu8.log \
    mpirun -n 8 --bind-to none "$B/build/bench/bench_patch" --traces 16 --sizes 256 --nwin 8,16 --windows
fi
# ---- Sliding1D's windows themselves (M = NULL, what any per-window operator composes with) against a copy ----
if want windowsbench; then
  STEP_TIMEOUT=180 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_sliding --windows on the GPU" \
    bench-windows-gpu.log mpirun -n 1 --bind-to none "$B/build/bench/bench_sliding" --traces 8192 --samples 4096 --nwin 32,128 --windows
  STEP_TIMEOUT=180 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_sliding --windows, 8 ranks x 1 CPU core" bench-windows-cpu8.log \
    mpirun -n 8 --bind-to none "$B/build/bench/bench_sliding" --traces 1024 --samples 4096 --nwin 32,128 --windows
  STEP_TIMEOUT=180 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_sliding --windows --along, 8 ranks x 1 CPU core" \
    bench-windows-along-cpu8.log mpirun -n 8 --bind-to none "$B/build/bench/bench_sliding" --traces 256 --samples 4096 \
    --nwin 32,128 --windows --along
fi
# ---- Sliding1D along the distributed axis (ghost windows and rows) against the same windows local ----
if want alongbench; then
  STEP_TIMEOUT=120 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_sliding --along on the GPU, 1 rank" \
    bench-sliding-along-gpu.log mpirun -n 1 --bind-to none "$B/build/bench/bench_sliding" --traces 256 --samples 131072 --nwin 32,128 --along --reps 10
  STEP_TIMEOUT=120 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_sliding --along, 8 ranks x 1 CPU core" bench-sliding-along-cpu8.log \
    mpirun -n 8 --bind-to none "$B/build/bench/bench_sliding" --traces 256 --samples 4096 --nwin 32,128 --along
  STEP_TIMEOUT=120 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_sliding --along, 2 ranks x 1 CPU core" bench-sliding-along-cpu2.log \
    mpirun -n 2 --bind-to none "$B/build/bench/bench_sliding" --traces 256 --samples 4096 --nwin 32,128 --along
  STEP_TIMEOUT=120 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_sliding --along --windows, 8 ranks x 1 CPU core" \
    bench-sliding-along-windows-cpu8.log mpirun -n 8 --bind-to none "$B/build/bench/bench_sliding" --traces 1024 --samples 4096 \
    --nwin 32,128 --along --windows
fi
# ---- the Python interface: the NumPy-vs-starlops example (forced CUDA and default placement) and CuPy
# arrays in and out (the node's python3 with NumPy and CuPy; no mpi4py needed) ----
if want python; then
  export PYTHONPATH=$B/python STARLOPS_LIB=$B/build/lib/libstarlops.so
  STARLOPS_CODELET_WHERE=cuda STEP_TIMEOUT=180 step "python example, forced CUDA, 1 rank" py-cuda-1.log \
    mpirun -n 1 --bind-to none python3 "$B/python/examples/numpy_vs_starlops.py" --n 32
  STEP_TIMEOUT=180 step "python example, default placement, 2 ranks" py-2.log \
    mpirun -n 2 --bind-to none python3 "$B/python/examples/numpy_vs_starlops.py" --n 32
  STARLOPS_CODELET_WHERE=cuda STEP_TIMEOUT=180 step "python: CuPy arrays in and out, forced CUDA" py-cupy.log \
    mpirun -n 1 --bind-to none python3 -c "
import cupy, numpy as np, starlops as sl
g = cupy.arange(12.0).reshape(4, 3)
x = sl.Array.from_numpy(g)
y = (2.0 * sl.FirstDerivative(x, axis=0, kind='forward').H @ x).to_cupy()
D = np.eye(4, k=1) - np.eye(4); D[-1] = 0  # forward differences, the last row zero
ref = 2.0 * D.T @ np.arange(12.0).reshape(4, 3)
assert isinstance(y, cupy.ndarray), type(y)
assert np.allclose(cupy.asnumpy(y), ref), cupy.asnumpy(y)
print('CuPy in and out: PASSED', sl.workers())"
  STARLOPS_CODELET_WHERE=cuda STEP_TIMEOUT=180 step "python: CuPy zero-copy, forced CUDA, 1 rank" py-cupy-zc-1.log \
    mpirun -n 1 --bind-to none python3 "$B/python/examples/cupy_zero_copy.py"
  STARLOPS_CODELET_WHERE=cuda STEP_TIMEOUT=180 step "python: CuPy zero-copy, forced CUDA, 2 ranks" py-cupy-zc-2.log \
    mpirun -n 2 --bind-to none python3 "$B/python/examples/cupy_zero_copy.py"
  unset PYTHONPATH STARLOPS_LIB
fi
# ---- user operators: the shell example's CUDA kernel (forced CUDA, checked against the dense reference on
# the host) and on the CPUs only; the shell test program ----
if want ext; then
  STARLOPS_CODELET_WHERE=cuda STEP_TIMEOUT=120 step "custom_operator, CUDA, 1 rank" ext-cuda-1.log \
    mpirun -n 1 --bind-to none "$E/custom_operator" --dims 301,256,259
  STARLOPS_CODELET_WHERE=cuda STEP_TIMEOUT=120 step "custom_operator, CUDA, 2 ranks" ext-cuda-2.log \
    mpirun -n 2 --bind-to none "$E/custom_operator"
  STARPU_NCUDA=0 STEP_TIMEOUT=120 step "custom_operator, CPUs only, 2 ranks" ext-cpu-2.log \
    mpirun -n 2 --bind-to none "$E/custom_operator" --dims 301,256,259
  STEP_TIMEOUT=120 step "mpi_shell, 2 ranks, default placement" ext-shell-2.log \
    mpirun -n 2 --bind-to none "$B/build/tests/mpi/mpi_shell" "$root"
fi
# ---- default placement: every test program as a user runs it, no forced codelets and no chunk override
# (the programs' own 100-byte chunks, at most 2 per worker: 32 per block with 16 workers), with the CUDA
# worker (DEFAULTS_RANKS, default "1 2") and with STARPU_NCUDA=0 on every core (part defaults-cpu) ----
DEFAULT_PROGS=${DEFAULT_PROGS:-mpi_arrays mpi_errors mpi_comm mpi_ops mpi_solvers mpi_stencils mpi_stack mpi_summa mpi_halo mpi_fft mpi_memory mpi_shell mpi_prox mpi_nsconv mpi_sliding mpi_fft_ext mpi_restriction_axis}
run_defaults() { # label, extra env...
  local label=$1; shift
  for np in ${DEFAULTS_RANKS:-1 2}; do
    for prog in $DEFAULT_PROGS; do
      mkdir -p "$root/scratch-$prog-$np"
      STEP_TIMEOUT=$((np == 1 ? 120 : 180)) step "$prog, $np rank(s), $label" "def-$label-$prog-$np.log" \
        env "$@" mpirun -n "$np" --bind-to none "$B/build/tests/mpi/$prog" "$root/scratch-$prog-$np"
    done
  done
}
want defaults && run_defaults default
want defaults-cpu && run_defaults cpu-only STARPU_NCUDA=0

if want summa; then
  for np in 1 2 4; do
    STEP_TIMEOUT=90 STARPU_NCUDA=0 STARPU_NCPU=3 step "bench_ops --summa, $np rank(s) x 3 CPUs" "bench-summa-$np.log" \
      mpirun -n $np --bind-to none "$B/build/bench/bench_ops" --sizes 500 --summa 2000,4000 --reps 3
  done
fi
if want fftbench; then
  STEP_TIMEOUT=120 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_fft on the GPU vs cuFFT" \
    bench-fft-gpu.log mpirun -n 1 --bind-to none "$B/build/bench/bench_fft" --sizes 2048,4096,8192 --reps 5
  STEP_TIMEOUT=120 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_fft, 1 CPU vs FFTW" bench-fft-cpu.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_fft" --sizes 1024,2048 --reps 3
  STEP_TIMEOUT=120 STARPU_NCUDA=0 STARPU_NCPU=4 step "bench_fft, 4 ranks x 4 CPUs" bench-fft-cpu4.log \
    mpirun -n 4 --bind-to none "$B/build/bench/bench_fft" --sizes 2048,4096 --reps 3
  STEP_TIMEOUT=120 STARLOPS_FFT_THREADS=1 STARPU_NCUDA=0 STARPU_NCPU=4 step "bench_fft, 4 ranks x 4 CPUs, 1 FFTW thread" \
    bench-fft-cpu4-t1.log mpirun -n 4 --bind-to none "$B/build/bench/bench_fft" --sizes 2048,4096 --reps 3
  STEP_TIMEOUT=120 STARPU_NCUDA=0 STARPU_NCPU=16 step "bench_fft, 1 rank x 16 CPUs" bench-fft-cpu16.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_fft" --sizes 2048,4096 --reps 3
fi
if want stencilbench || want kernelbench; then
  # STENCIL_KERNEL_ARGS: bench_stencil_kernel's arguments (e.g. --zplanes 4,16 --zrows 8,16 for the 3-D kernel's forms)
  STEP_TIMEOUT=${KERNELBENCH_TIMEOUT:-90} step "bench_stencil_kernel: the Laplacian kernels alone against a copy and the generic kernel (700^3: rows in bands)" bench-stencil-kernel.log \
    "$B/build/bench/bench_stencil_kernel" ${STENCIL_KERNEL_ARGS:---check --sizes 400,524,700 --reps 10}
fi
if want stencilbench || want keybench; then
  # STENCIL_CHUNK_BYTES and STENCIL_SIZES override the chunk size and the grid sizes
  sc=${STENCIL_CHUNK_BYTES:-$((1 << 28))} ss=${STENCIL_SIZES:-4000,8000}
  STEP_TIMEOUT=120 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$sc step "bench_stencil on the GPU" \
    bench-stencil-gpu.log mpirun -n 1 --bind-to none "$B/build/bench/bench_stencil" --sizes "$ss" --reps 5
  STEP_TIMEOUT=120 STARLOPS_STENCIL_EDGE_SERIAL=1 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$sc \
    step "bench_stencil on the GPU, edges after the interior" bench-stencil-gpu-serial.log \
    mpirun -n 1 --bind-to none -x STARLOPS_STENCIL_EDGE_SERIAL "$B/build/bench/bench_stencil" --sizes "$ss" --reps 5
  STEP_TIMEOUT=120 step "bench_stencil, no variables set" bench-stencil-default.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_stencil" --sizes "$ss" --reps 5
  STEP_TIMEOUT=120 STARLOPS_STENCIL_GENERIC=1 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$sc \
    step "bench_stencil on the GPU, generic kernel" bench-stencil-gpu-generic.log \
    mpirun -n 1 --bind-to none -x STARLOPS_STENCIL_GENERIC "$B/build/bench/bench_stencil" --sizes "$ss" --reps 5
fi
if want keybench; then
  STEP_TIMEOUT=120 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 34)) step "bench_ops: DGEMM vs cuBLAS" \
    bench-ops-gpu.log mpirun -n 1 --bind-to none "$B/build/bench/bench_ops" --sizes 8000 --gemm 8192,16384 --reps 3
  STEP_TIMEOUT=60 STARPU_NCUDA=0 STARPU_NCPU=1 step "bench_stencil, 1 CPU vs a plain loop" bench-stencil-cpu.log \
    mpirun -n 1 --bind-to none "$B/build/bench/bench_stencil" --sizes 2000,4000 --reps 5
  STEP_TIMEOUT=60 STARPU_NCUDA=0 STARPU_NCPU=6 step "bench_stencil, 2 ranks x 6 CPUs" bench-stencil-2r.log \
    mpirun -n 2 --bind-to none "$B/build/bench/bench_stencil" --sizes 2000,4000 --reps 5
  STEP_TIMEOUT=90 STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 28)) step "bench_solvers on the GPU" \
    bench-solvers-gpu.log mpirun -n 1 --bind-to none "$B/build/bench/bench_solvers" --sizes 1000,4000 --ls 20000,2000 --niter 20 --reps 3
  STEP_TIMEOUT=90 STARPU_NCUDA=0 STARPU_NCPU=6 step "bench_solvers, 2 ranks x 6 CPUs" bench-solvers-cpu.log \
    mpirun -n 2 --bind-to none "$B/build/bench/bench_solvers" --sizes 1000,2000 --ls 4000,1000 --niter 20 --reps 3
fi

# CUDA-aware MPI: the Open MPI built by scripts/build-openmpi-cuda.sh, relocated like the Debian one
# (it uses its own PMIx, so the Debian PMIx plugin path must not be set; an empty param-file variable
# crashes its launcher, so that one is unset too)
cuda_mpi=(env -u PMIX_MCA_mca_base_component_path -u OMPI_MCA_mca_base_param_files OPAL_PREFIX=$B/ompi-cuda
  PATH=$B/ompi-cuda/bin:$PATH LD_LIBRARY_PATH=$B/ompi-cuda/lib:$LD_LIBRARY_PATH)
# ---- the comm layer's backends (tests/mpi/mpi_comm checks every result against the formula) ----
if want cuda; then
T=$B/build/tests/mpi/mpi_comm
STARLOPS_COMM=nccl step "comm: NCCL, 1 rank" comm-nccl.log mpirun -n 1 --bind-to none "$T"
STARLOPS_COMM=mpi STARLOPS_CODELET_WHERE=cuda step "comm: host MPI, GPU data staged by StarPU, 2 ranks" comm-mpi-staged.log \
  mpirun -n 2 --bind-to none "$T"
STARLOPS_COMM=mpi STARLOPS_CODELET_WHERE=cuda STARLOPS_COMM_GPU_STAGING=1 step \
  "comm: host MPI, starlops' own GPU staging (known issue)" comm-mpi-ownstaging.log mpirun -n 2 --bind-to none "$T"
STARLOPS_COMM=mpi STARPU_NCUDA=0 step "comm: host MPI, CPU only, 4 ranks" comm-mpi-cpu.log mpirun -n 4 --bind-to none "$T"
if [ -d "$B/ompi-cuda" ]; then
  step "CUDA-aware Open MPI: ompi_info" ompi-cuda-info.log "${cuda_mpi[@]}" bash -c \
    'ompi_info --parsable --all | grep -E "mpi_built_with_cuda_support:value|^ompi:version:full"'
  STARLOPS_COMM=mpi-cuda STARLOPS_CODELET_WHERE=cuda step "comm: CUDA-aware MPI, 2 ranks sharing the GPU" \
    comm-mpi-cuda.log "${cuda_mpi[@]}" mpirun -n 2 --bind-to none "$T"
else
  echo "gpu-check: no ompi-cuda in the bundle (run scripts/build-openmpi-cuda.sh before make bundle)" | tee "$logs/comm-mpi-cuda.log"
fi
fi
if want bench; then
STARLOPS_COMM=nccl step "bench_comm: NCCL, 1 rank" bench-comm-nccl.log \
  mpirun -n 1 --bind-to none "$B/build/bench/bench_comm" --reps 3 --overlap-mib 0
STARLOPS_COMM=mpi STARPU_NCUDA=0 STARPU_NCPU=6 step "bench_comm: host MPI, 2 ranks, CPU" bench-comm-mpi.log \
  mpirun -n 2 --bind-to none "$B/build/bench/bench_comm" --reps 3 --overlap-mib 256
if [ -d "$B/ompi-cuda" ]; then
  STARPU_NCPU=6 STARLOPS_COMM=mpi-cuda STARLOPS_CODELET_WHERE=cuda step "bench_comm: CUDA-aware MPI, 2 ranks" bench-comm-mpi-cuda.log \
    "${cuda_mpi[@]}" mpirun -n 2 --bind-to none "$B/build/bench/bench_comm" --reps 3 --overlap-mib 0
fi
fi

{
echo
echo "## GPU check summary"
echo "| step | rc | time | log |"
echo "|---|---|---|---|"
for r in "${rows[@]}"; do [ -n "$r" ] && echo "$r"; done
echo
grep -h "Synthesis" "$logs"/tests-*.log 2>/dev/null
for f in bench-setup-default bench-setup-any bench-setup-tuned bench-setup-cpu bench-summa-1 bench-summa-2 bench-summa-4 bench-ops-gpu bench-ops-cpu bench-stencil-gpu bench-stencil-cpu bench-stencil-2r bench-solvers-gpu bench-solvers-cpu; do
  [ -f "$logs/$f.log" ] && { echo; echo "### $f"; grep "^|\|^#" "$logs/$f.log"; }
done
for f in "$logs"/waits-*.log; do [ -f "$f" ] && { echo; echo "### $(basename "$f" .log)"; grep "^|" "$f"; }; done
for f in "$logs"/def-*.log; do [ -f "$f" ] && printf '%-44s %s\n' "$(basename "$f" .log)" "$(grep -h "ranks: \|FAIL" "$f" | head -n 2 | tr '\n' ' ')"; done
for f in "$logs"/cuda-mpi_*.log; do [ -f "$f" ] && { echo "### $(basename "$f")"; grep -v "^\[vm\|pmix\|dlopen\|Perhaps" "$f" | tail -n 6; }; done
grep -h "^poisson_cg\|^  CGLS\|^  LSQR\|^  FISTA\|^  ISTA" "$logs"/poisson-*.log "$logs"/lsq-*.log "$logs"/fista-*.log 2>/dev/null
echo; grep -h -E "^(mpi_comm|  stress)" "$logs"/comm-*.log 2>/dev/null
echo; grep -h -A3 "^overlap" "$logs"/bench-comm-mpi.log 2>/dev/null
} | tee "$logs/summary.txt"
# the device tool brings back few files: one archive of every log and trace, and the summary
tar -C "$logs" -czf "$root/logs.tar.gz" --exclude=summary.txt . && mv "$root/logs.tar.gz" "$logs/" \
  && find "$logs" -mindepth 1 ! -name logs.tar.gz ! -name summary.txt -delete
