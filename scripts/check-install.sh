#!/usr/bin/env bash
# Checks what `make install` gives a user: installs into a temporary prefix (and once more through DESTDIR),
# then builds examples/poisson_cg.c out of the tree with pkg-config (shared and static) and with CMake's
# find_package(starlops), runs each build on 2 ranks, and imports the installed Python package. Usage: scripts/check-install.sh (from the clone).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
echo "== check-install: make install PREFIX=$prefix"
make --no-print-directory install PREFIX="$prefix" > "$tmp/install.log" 2>&1 || { tail -n 30 "$tmp/install.log"; exit 1; }
test -x "$prefix/bin/starlops_info" && test -f "$prefix/include/starlops.h" && test -f "$prefix/lib/libstarlops.a"
if ls "$prefix/bin" | grep -q '^mpi_\|unit_tests'; then echo "check-install: test programs were installed" >&2; exit 1; fi

echo "== check-install: DESTDIR staging"
make --no-print-directory install PREFIX=/opt/starlops-staged DESTDIR="$tmp/stage" > "$tmp/stage.log" 2>&1 ||
  { tail -n 30 "$tmp/stage.log"; exit 1; }
test -f "$tmp/stage/opt/starlops-staged/lib/pkgconfig/starlops.pc"
grep -q '^prefix=/opt/starlops-staged$' "$tmp/stage/opt/starlops-staged/lib/pkgconfig/starlops.pc"
test ! -e /opt/starlops-staged

src=$tmp/src
mkdir -p "$src"
cp examples/poisson_cg.c examples/example_util.h "$src/"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig # nothing else: StarPU's and MPI's flags are in starlops.pc
version=$(pkg-config --modversion starlops)
echo "== check-install: pkg-config finds starlops $version"
cc -O2 $(pkg-config --cflags starlops) "$src/poisson_cg.c" -o "$tmp/pc-shared" $(pkg-config --libs starlops)
# static: libstarlops.a and the libraries of Libs.private (StarPU, BLAS, FFTW, CUDA, NCCL, C++ runtime)
static_libs=$(pkg-config --static --libs starlops | sed -e 's/-lstarlops//')
cc -O2 $(pkg-config --cflags starlops) "$src/poisson_cg.c" -o "$tmp/pc-static" "$prefix/lib/libstarlops.a" $static_libs
if ldd "$tmp/pc-static" | grep -q libstarlops; then echo "check-install: the static build needs libstarlops.so" >&2; exit 1; fi

echo "== check-install: CMake find_package(starlops $version)"
cat > "$src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(poisson C)
find_package(starlops $version REQUIRED)
add_executable(pc-cmake poisson_cg.c)
target_link_libraries(pc-cmake PRIVATE starlops::starlops)
add_executable(pc-cmake-static poisson_cg.c)
target_link_libraries(pc-cmake-static PRIVATE starlops::starlops_static)
CMAKE
cmake -S "$src" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
cmake --build "$tmp/cmake" > "$tmp/cmake-build.log" 2>&1 || { cat "$tmp/cmake-build.log"; exit 1; }

export STARPU_HOME=$tmp/starpu-home STARPU_SILENT=1 STARPU_WORKERS_NOBIND=1 STARPU_NCPU=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$STARPU_HOME"
"$prefix/bin/starlops_info" > /dev/null
for exe in "$tmp/pc-shared" "$tmp/pc-static" "$tmp/cmake/pc-cmake" "$tmp/cmake/pc-cmake-static"; do
  timeout 300 mpirun -n 2 --bind-to none "$exe" --n 64 > "$tmp/run.log" 2>&1 || { tail -n 20 "$tmp/run.log"; exit 1; }
  echo "== check-install: $(basename "$exe"): $(grep -m1 -E 'PASSED|FAILED' "$tmp/run.log" || tail -n 1 "$tmp/run.log")"
done
# the installed Python package finds the installed library by itself
PYTHONPATH=$prefix/lib/python3/dist-packages timeout 300 mpirun -n 2 --bind-to none "${STARLOPS_PYTHON:-/usr/bin/python3}" -c "
import numpy as np, starlops as sl
assert sl.lib_path.startswith('$prefix'), sl.lib_path
x = sl.Array.from_numpy(np.arange(10.0))
assert abs(x.norm() - np.linalg.norm(np.arange(10.0))) < 1e-12
if sl.rank() == 0: print('python package', sl.__version__, 'from', sl.lib_path, ': PASSED')" > "$tmp/py.log" 2>&1 ||
  { tail -n 20 "$tmp/py.log"; exit 1; }
echo "== check-install: $(grep -m1 PASSED "$tmp/py.log")"
echo "== check-install: passed"
