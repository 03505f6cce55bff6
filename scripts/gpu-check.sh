#!/usr/bin/env bash
# The whole GPU check, for an offline GPU node: unpack the bundle, run the test suite with CUDA workers
# (once with the scheduler's own placement, once with every compute codelet forced onto the GPU), run the
# benchmarks, and print a short table last.
# Usage: scripts/gpu-check.sh LOGDIR [BUNDLE.tar.gz]
set -uo pipefail
logs=${1:?usage: gpu-check.sh LOGDIR [BUNDLE.tar.gz]}
tarball=${2:-bundle/starlops-bundle.tar.gz}
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
  "$@" > "$logs/$log" 2>&1
  local rc=$?
  rows+=("$(printf '| %-44s | %-4s | %4ss | %s |' "$name" "$([ $rc = 0 ] && echo ok || echo FAIL)" $((SECONDS - t0)) "$log")")
  echo "== $name: rc=$rc ($((SECONDS - t0)) s)"; tail -n 4 "$logs/$log"
  return $rc
}

step "GPU and driver" nvidia-smi.log nvidia-smi
step "starlops_info, 1 rank" info.log "$B/build/bin/starlops_info"
# the suite runs from a tree holding tests/npy_check.py
cd "$B"
step "test suite, dmdas placement" tests-dmdas.log "$B/build/tests/unit_tests" -j1
STARLOPS_CODELET_WHERE=cuda step "test suite, compute codelets forced on CUDA" tests-cuda.log \
  "$B/build/tests/unit_tests" -j1 --filter 'mpi/*'
step "CUDA kernels vs CPU kernels" tests-cuda-kernels.log "$B/build/tests/unit_tests" -j1 --filter 'cuda_kernels/*' --verbose
STARLOPS_CODELET_WHERE=cuda STARLOPS_CHUNK_BYTES=$((1 << 30)) step "bench_vec on the GPU (forced CUDA)" bench-gpu.log \
  "$B/build/bench/bench_vec" --sizes 64,256,1024,4096 --reps 10
STARPU_NCUDA=0 step "bench_vec on the CPUs (no CUDA worker)" bench-cpu.log \
  "$B/build/bench/bench_vec" --sizes 8,128,512 --reps 10
STARPU_NCPU=1 step "demo, 2 ranks sharing the GPU" demo.log mpirun -n 2 --bind-to none "$B/build/examples/demo_arrays" --verbose

# ---- the comm layer's backends (tests/mpi/mpi_comm checks every result against the formula) ----
T=$B/build/tests/mpi/mpi_comm
STARLOPS_COMM=nccl step "comm: NCCL, 1 rank" comm-nccl.log mpirun -n 1 --bind-to none "$T"
STARLOPS_COMM=mpi STARLOPS_CODELET_WHERE=cuda step "comm: host MPI, GPU data staged by StarPU, 2 ranks" comm-mpi-staged.log \
  mpirun -n 2 --bind-to none "$T"
STARLOPS_COMM=mpi STARLOPS_CODELET_WHERE=cuda STARLOPS_COMM_GPU_STAGING=1 step \
  "comm: host MPI, starlops' own GPU staging (known issue)" comm-mpi-ownstaging.log mpirun -n 2 --bind-to none "$T"
STARLOPS_COMM=mpi STARPU_NCUDA=0 step "comm: host MPI, CPU only, 4 ranks" comm-mpi-cpu.log mpirun -n 4 --bind-to none "$T"
# CUDA-aware MPI: the Open MPI built by scripts/build-openmpi-cuda.sh, relocated like the Debian one
# (it uses its own PMIx, so the Debian PMIx plugin path must not be set; an empty param-file variable
# crashes its launcher, so that one is unset too)
cuda_mpi() {
  env -u PMIX_MCA_mca_base_component_path -u OMPI_MCA_mca_base_param_files OPAL_PREFIX=$B/ompi-cuda \
    PATH=$B/ompi-cuda/bin:$PATH LD_LIBRARY_PATH=$B/ompi-cuda/lib:$LD_LIBRARY_PATH "$@"
}
if [ -d "$B/ompi-cuda" ]; then
  step "CUDA-aware Open MPI: ompi_info" ompi-cuda-info.log cuda_mpi bash -c \
    'ompi_info --parsable --all | grep -E "mpi_built_with_cuda_support:value|^ompi:version:full"'
  STARLOPS_COMM=mpi-cuda STARLOPS_CODELET_WHERE=cuda step "comm: CUDA-aware MPI, 2 ranks sharing the GPU" \
    comm-mpi-cuda.log cuda_mpi mpirun -n 2 --bind-to none "$T"
  STARPU_NCPU=6 STARLOPS_COMM=mpi-cuda STARLOPS_CODELET_WHERE=cuda step "bench_comm: CUDA-aware MPI, 2 ranks" bench-comm-mpi-cuda.log \
    cuda_mpi mpirun -n 2 --bind-to none "$B/build/bench/bench_comm" --reps 5 --overlap-mib 0
else
  echo "gpu-check: no ompi-cuda in the bundle (run scripts/build-openmpi-cuda.sh before make bundle)" | tee "$logs/comm-mpi-cuda.log"
fi
STARLOPS_COMM=nccl step "bench_comm: NCCL, 1 rank" bench-comm-nccl.log \
  mpirun -n 1 --bind-to none "$B/build/bench/bench_comm" --reps 5 --overlap-mib 0
STARLOPS_COMM=mpi STARPU_NCUDA=0 STARPU_NCPU=6 step "bench_comm: host MPI, 2 ranks, CPU" bench-comm-mpi.log \
  mpirun -n 2 --bind-to none "$B/build/bench/bench_comm" --reps 5 --overlap-mib 256
mkdir -p "$logs/trace"
STARLOPS_COMM=mpi STARPU_NCUDA=0 STARPU_NCPU=6 STARLOPS_TRACE=$logs/trace step "overlap, traced (FxT)" overlap-trace.log \
  mpirun -n 2 --bind-to none "$B/build/bench/bench_comm" --kinds none --reps 3 --overlap-mib 256

{
echo
echo "## GPU check summary"
echo "| step | rc | time | log |"
echo "|---|---|---|---|"
for r in "${rows[@]}"; do [ -n "$r" ] && echo "$r"; done
echo
grep -h "Synthesis" "$logs"/tests-*.log
echo; cat "$logs/bench-gpu.log" | grep "^|\|^#"
echo; cat "$logs/bench-cpu.log" | grep "^|\|^#"
echo; grep -h -E "^(mpi_comm|  stress)" "$logs"/comm-*.log
echo; grep -h -A3 "^overlap" "$logs"/bench-comm-mpi.log "$logs"/overlap-trace.log
} | tee "$logs/summary.txt"
# the device tool brings back few files: one archive of every log and trace, and the summary
tar -C "$logs" -czf "$root/logs.tar.gz" --exclude=summary.txt . && mv "$root/logs.tar.gz" "$logs/" \
  && find "$logs" -mindepth 1 ! -name logs.tar.gz ! -name summary.txt -delete
