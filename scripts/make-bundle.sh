#!/usr/bin/env bash
# Builds bundle/starlops-bundle.tar.gz: a relocatable tree for an offline GPU node (no package access).
#   lib/                 every non-system shared library the binaries and Open MPI's plugins need
#                        (StarPU, StarPU-MPI, hwloc, FxT, Open MPI, PMIx, libevent, Criterion, ...;
#                         not glibc, libstdc++ or CUDA's own libraries, which the node has)
#   build/               starlops' library, tools, tests, examples and benchmarks, as in the build tree
#   usr/, etc/openmpi    Open MPI's launcher, plugins and help files laid out as Debian installs them;
#                        OPAL_PREFIX=<bundle>/usr relocates them
#   tests/npy_check.py, scripts/gpu-check.sh
# Usage: scripts/make-bundle.sh [BUILD_DIR]   (run after `make`)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=bundle
stage=$(mktemp -d)/starlops-bundle
mkdir -p "$stage/lib" "$stage/build" "$stage/tests" "$stage/scripts" "$out"
[ -f "$build/lib/libstarlops.so" ] || { echo "make-bundle: run make first ($build/lib/libstarlops.so missing)" >&2; exit 1; }

echo "==> make-bundle: starlops binaries"
for d in lib bin tests examples bench; do
  [ -d "$build/$d" ] && cp -a "$build/$d" "$stage/build/"
done
rm -rf "$stage"/build/tests/tmp-* "$stage"/build/tests/*.log
# the node runs the shared library (build/lib on LD_LIBRARY_PATH); the static one only makes the bundle larger
# than a device call carries (64 MiB with the tree)
rm -f "$stage/build/lib/libstarlops.a"
cp tests/npy_check.py "$stage/tests/"
cp -a python "$stage/" && find "$stage/python" -name __pycache__ -prune -exec rm -rf {} +
cp -a include "$stage/"  # the exports test reads the public headers from the tree root
cp scripts/gpu-check.sh "$stage/scripts/"

echo "==> make-bundle: Open MPI launcher and plugins"
ompi=/usr/lib/x86_64-linux-gnu/openmpi
mkdir -p "$stage/usr/bin" "$stage/usr/share" "$stage/usr/lib/x86_64-linux-gnu" "$stage/etc"
cp -a "$ompi" "$stage/usr/lib/x86_64-linux-gnu/"
rm -rf "$stage/usr/lib/x86_64-linux-gnu/openmpi/include"
[ -d /usr/lib/x86_64-linux-gnu/pmix2 ] && cp -a /usr/lib/x86_64-linux-gnu/pmix2 "$stage/usr/lib/x86_64-linux-gnu/"
rm -rf "$stage/usr/lib/x86_64-linux-gnu/pmix2/include"
cp -a /usr/share/openmpi "$stage/usr/share/"
[ -d /usr/share/pmix ] && cp -a /usr/share/pmix "$stage/usr/share/"
cp -a /etc/openmpi "$stage/etc/"
for b in orterun orted ompi_info; do cp -L "/usr/bin/$b" "$stage/usr/bin/"; done
ln -sf orterun "$stage/usr/bin/mpirun"
ln -sf orterun "$stage/usr/bin/mpiexec"

ompi_cuda=$(bash scripts/build-openmpi-cuda.sh --print-prefix)
if [ -f "$ompi_cuda/.complete" ]; then
  echo "==> make-bundle: CUDA-aware Open MPI from $ompi_cuda (as ompi-cuda/)"
  mkdir -p "$stage/ompi-cuda"
  cp -a "$ompi_cuda/bin" "$ompi_cuda/lib" "$ompi_cuda/etc" "$stage/ompi-cuda/"
  mkdir -p "$stage/ompi-cuda/share" && cp -a "$ompi_cuda/share/openmpi" "$stage/ompi-cuda/share/"
  rm -rf "$stage/ompi-cuda/lib/pkgconfig" "$stage"/ompi-cuda/lib/*.la "$stage"/ompi-cuda/lib/openmpi/*.la
else
  echo "==> make-bundle: no CUDA-aware Open MPI (scripts/build-openmpi-cuda.sh builds one); mpi-cuda runs skipped"
fi

echo "==> make-bundle: shared libraries (closure over every ELF file)"
system='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libresolv\.|libgcc_s\.|libstdc\+\+\.|libutil\.)'
changed=1
while [ "$changed" = 1 ]; do
  changed=0
  while IFS= read -r f; do
    { ldd "$f" 2>/dev/null || true; } | awk '/=>/ && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
      case "$path" in /usr/local/cuda*) continue ;; esac
      # the CUDA-aware Open MPI's own libraries stay in ompi-cuda/lib: lib/ holds Debian's, which the
      # default launcher needs (same names, different builds)
      case "$path" in "$ompi_cuda"/*) continue ;; esac
      [[ "$name" =~ $system ]] && continue
      # starlops itself stays in build/lib, once
      [[ "$name" == libstarlops.so* ]] && continue
      [ -e "$stage/lib/$name" ] || { cp -L "$path" "$stage/lib/$name"; echo "$name"; }
    done
  done < <(find "$stage" -type f \( -perm -u+x -o -name '*.so*' \) ! -name '*.py' ! -name '*.sh' | sort) \
    > "$stage/.new"
  [ -s "$stage/.new" ] && changed=1
  rm -f "$stage/.new"
done

tar -C "$(dirname "$stage")" -czf "$out/starlops-bundle.tar.gz" starlops-bundle
rm -rf "$(dirname "$stage")"
echo "==> make-bundle: $out/starlops-bundle.tar.gz ($(du -h "$out/starlops-bundle.tar.gz" | cut -f1))"
