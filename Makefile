# starlops top-level Makefile. The dependencies (Debian packages, StarPU built with MPI, FxT and CUDA)
# are installed by scripts/install-deps.sh when missing; the build itself is in mk/build.mk.
#   make                  library (shared + static), tools, examples, benchmarks
#   make check            the test programs, then the whole test suite
#   make check-valgrind   the unit tests and the one-rank programs under valgrind
#   make demo             the main example on 2 ranks
#   make install          headers, libraries, tools, starlops.pc, the CMake package (PREFIX, default /usr/local;
#                         DESTDIR for staging)
#   make bundle           bundle/starlops-bundle.tar.gz for an offline GPU node
#   make doc              API reference with Doxygen (build/doc/html; needs doxygen: install-deps.sh --docs)
#   make clean
# StarPU's prefix (STARPU_PREFIX=... on the command line skips the script): a recursive variable, so that the
# script is asked only when a recipe needs it (not by make clean or make doc)
STARPU_PREFIX ?= $(shell bash scripts/install-deps.sh --print-prefix)
BUILD_MAKE = $(MAKE) --no-print-directory -f mk/build.mk STARPU_PREFIX=$(STARPU_PREFIX)

.PHONY: all tests check check-valgrind demo install bench bundle clean deps doc
all tests check check-valgrind demo install bench: deps
	+@$(BUILD_MAKE) $@

# A relocatable tarball for offline GPU nodes (docs/install.md); scripts/gpu-check.sh runs it there.
bundle: deps
	+@$(BUILD_MAKE) all tests
	bash scripts/make-bundle.sh

doc:
	@command -v doxygen >/dev/null 2>&1 || { echo "make doc: doxygen is missing: bash scripts/install-deps.sh --docs (or apt-get install doxygen)" >&2; exit 1; }
	@mkdir -p build/doc
	doxygen Doxyfile
	@echo "API reference: build/doc/html/index.html"

deps:
	@if [ ! -f $(STARPU_PREFIX)/.complete ] || ! command -v mpicc >/dev/null 2>&1 \
	    || ! pkg-config --exists criterion 2>/dev/null; then bash scripts/install-deps.sh; fi

clean:
	rm -rf build
