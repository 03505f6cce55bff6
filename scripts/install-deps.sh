#!/usr/bin/env bash
# Installs everything starlops needs on Debian 12, idempotently:
#   1. Debian packages (Open MPI, hwloc, FxT, Criterion, OpenBLAS + LAPACKE, FFTW, pajeng, recutils, ...)
#   2. StarPU 1.3.10 from Debian's source package, with StarPU-MPI and FxT, and with CUDA when nvcc exists,
#      into a cached prefix outside the clone, keyed by version, options and patches
#      (scripts/patches/starpu-1.3.10-*.patch, applied in name order).
# Usage: scripts/install-deps.sh [--print-prefix] [--no-cuda] [--jobs N] [--docs]
#   --docs also installs doxygen (for make doc; not needed to build or test)
# Environment: STARLOPS_DEPS (cache root, default /opt/starlops-deps), CUDA_HOME (default /usr/local/cuda).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
deps_root=${STARLOPS_DEPS:-/opt/starlops-deps}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
starpu_version=1.3.10
patch_files=("$here"/patches/starpu-$starpu_version-*.patch)
jobs=$(nproc)
use_cuda=auto
print_prefix=0
docs=0

while [ $# -gt 0 ]; do
  case "$1" in
    --print-prefix) print_prefix=1 ;;
    --no-cuda) use_cuda=no ;;
    --jobs) jobs=$2; shift ;;
    --docs) docs=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

if [ "$use_cuda" = auto ]; then
  if [ -x "$cuda_home/bin/nvcc" ]; then use_cuda=yes; else use_cuda=no; fi
fi

configure_flags=(--enable-mpi --with-fxt --enable-maxcpus=128 --enable-maxcudadev=8 --enable-maxbuffers=16 --enable-blocking-drivers
  --disable-opencl --disable-socl --disable-build-doc --disable-build-examples --disable-build-tests
  --disable-fortran --disable-openmp --disable-starpufft --disable-starpurm --disable-mlr)
if [ "$use_cuda" = yes ]; then
  configure_flags+=(--enable-cuda "--with-cuda-dir=$cuda_home")
else
  configure_flags+=(--disable-cuda)
fi
key=$( (echo "$starpu_version ${configure_flags[*]}"; cat "${patch_files[@]}") | sha256sum | cut -c1-12)
prefix=$deps_root/starpu-$starpu_version-$key

if [ "$print_prefix" = 1 ]; then echo "$prefix"; exit 0; fi

step() { echo "==> install-deps: $*"; }
fail() { echo "install-deps: FAILED at step '$1': $2" >&2; exit 1; }

packages=(build-essential pkg-config patch dpkg-dev openmpi-bin libopenmpi-dev libhwloc-dev libfxt-dev
  libcriterion-dev libopenblas-dev liblapacke-dev libfftw3-dev pajeng recutils python3-numpy gnuplot-nox
  python3-pytest python3-mpi4py)
[ "$docs" = 1 ] && packages+=(doxygen)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing Debian packages: ${missing[*]}"
  [ "$(id -u)" = 0 ] || fail "debian packages" "need root to apt-get install ${missing[*]}"
  apt-get update -q || fail "apt-get update" "could not read the package lists"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" || fail "apt-get install" "see the apt output above"
else
  step "Debian packages already installed"
fi

if [ -f "$prefix/.complete" ]; then
  step "StarPU $starpu_version (cuda=$use_cuda) already built in $prefix"
  exit 0
fi

step "building StarPU $starpu_version (cuda=$use_cuda) into $prefix"
src_list=/etc/apt/sources.list.d/starlops-deb-src.sources
if ! apt-get source --print-uris -q starpu >/dev/null 2>&1; then
  step "adding a deb-src entry for Debian's source packages"
  [ "$(id -u)" = 0 ] || fail "deb-src" "need root to add $src_list"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$src_list"
  apt-get update -q || fail "apt-get update" "could not read the source package lists"
fi

build=$deps_root/build-$key
rm -rf "$build" && mkdir -p "$build" || fail "build dir" "cannot create $build"
cd "$build"
step "downloading Debian's starpu source package"
apt-get source -q --download-only "starpu=$starpu_version+dfsg-2" || apt-get source -q --download-only starpu \
  || fail "apt-get source" "could not download the starpu source package"
dpkg-source -x starpu_*.dsc src >/dev/null || fail "dpkg-source" "could not unpack the starpu source"
cd src
grep -q "^$starpu_version" STARPU-VERSION 2>/dev/null || [ "$(cat STARPU-VERSION 2>/dev/null)" = "" ] || true
for p in "${patch_files[@]}"; do
  step "applying $(basename "$p")"
  patch -p1 < "$p" || fail "patch" "$(basename "$p") does not apply"
done
step "configure ${configure_flags[*]}"
./configure --prefix="$prefix" "${configure_flags[@]}" > "$build/configure.log" 2>&1 \
  || { tail -30 "$build/configure.log" >&2; fail "configure" "see $build/configure.log"; }
step "make -j$jobs (a few minutes)"
make -j"$jobs" > "$build/make.log" 2>&1 || { grep -m20 -B2 -A5 "error" "$build/make.log" >&2; fail "make" "see $build/make.log"; }
step "make install"
make install > "$build/install.log" 2>&1 || { tail -30 "$build/install.log" >&2; fail "make install" "see $build/install.log"; }
touch "$prefix/.complete"
cd / && rm -rf "$build"
step "StarPU installed in $prefix"
