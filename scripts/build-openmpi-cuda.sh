#!/usr/bin/env bash
# Builds a CUDA-aware Open MPI from Debian's own openmpi source package (4.1.4), for the CUDA-aware MPI
# backend (STARLOPS_COMM=mpi-cuda). Its libmpi.so.40 is ABI-compatible with Debian's, so starlops and StarPU,
# built against Debian's Open MPI, run with it by library path. Cached outside the clone, keyed by version
# and options; `make bundle` adds it to the GPU bundle when it exists. Not part of CI (about 20 minutes on
# 2 cores): the host-MPI tests do not need it.
# Usage: scripts/build-openmpi-cuda.sh [--print-prefix] [--jobs N]
# Environment: STARLOPS_DEPS (cache root, default /opt/starlops-deps), CUDA_HOME (default /usr/local/cuda).
set -euo pipefail

deps_root=${STARLOPS_DEPS:-/opt/starlops-deps}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
version=4.1.4
jobs=$(nproc)
print_prefix=0
while [ $# -gt 0 ]; do
  case "$1" in
    --print-prefix) print_prefix=1 ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "build-openmpi-cuda: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

flags=(--with-cuda="$cuda_home" --disable-mpi-fortran --disable-oshmem --without-ucx
  --enable-mca-no-build=btl-uct --with-hwloc=external --with-libevent=external --with-pmix=external)
key=$(echo "$version ${flags[*]}" | sha256sum | cut -c1-12)
prefix=$deps_root/openmpi-$version-cuda-$key
if [ "$print_prefix" = 1 ]; then echo "$prefix"; exit 0; fi

step() { echo "==> build-openmpi-cuda: $*"; }
fail() { echo "build-openmpi-cuda: FAILED at step '$1': $2" >&2; exit 1; }

if [ -f "$prefix/.complete" ]; then step "already built in $prefix"; exit 0; fi
[ -x "$cuda_home/bin/nvcc" ] || fail "cuda" "no CUDA toolkit at $cuda_home"
apt-get source --print-uris -q openmpi >/dev/null 2>&1 \
  || fail "deb-src" "no deb-src entry: run scripts/install-deps.sh first (it adds one)"
missing=()
for p in libpmix-dev libevent-dev libhwloc-dev dpkg-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" || fail "apt-get install" "see above"
fi

build=$deps_root/build-openmpi-$key
rm -rf "$build" && mkdir -p "$build" && cd "$build" || fail "build dir" "cannot create $build"
step "downloading Debian's openmpi source package"
apt-get source -q --download-only "openmpi=$version-3" || fail "apt-get source" "could not download openmpi"
# The upstream tarball inside the source package, without Debian's patches: those touch configure.ac and
# would make the build re-run automake 1.15, which Debian 12 does not have.
mkdir src && tar -C src --strip-components=1 -xf openmpi_$version.orig.tar.* || fail "unpack" "could not unpack the upstream tarball"
cd src
step "configure ${flags[*]} (about 9 minutes)"
./configure --prefix="$prefix" "${flags[@]}" > "$build/configure.log" 2>&1 \
  || { tail -30 "$build/configure.log" >&2; fail "configure" "see $build/configure.log"; }
step "make -j$jobs (about 12 minutes)"
make -j"$jobs" > "$build/make.log" 2>&1 || { grep -m20 -B2 -A5 "error" "$build/make.log" >&2; fail "make" "see $build/make.log"; }
make install > "$build/install.log" 2>&1 || { tail -30 "$build/install.log" >&2; fail "make install" "see $build/install.log"; }
"$prefix/bin/ompi_info" --parsable --all 2>/dev/null | grep -q "mpi_built_with_cuda_support:value:true" \
  || fail "check" "ompi_info does not report CUDA support"
touch "$prefix/.complete"
cd / && rm -rf "$build"
step "CUDA-aware Open MPI installed in $prefix"
