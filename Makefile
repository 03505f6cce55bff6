# starlops top-level Makefile. The dependencies (Debian packages, StarPU built with MPI, FxT and CUDA)
# are installed by scripts/install-deps.sh when missing; the build itself is in mk/build.mk.
#   make                  library (shared + static), tools, examples, tests, benchmarks
#   make check            the whole test suite
#   make check-valgrind   the unit tests and the one-rank programs under valgrind
#   make demo             the main example on 2 ranks
#   make install PREFIX=  headers, libraries, tools, starlops.pc
#   make bundle           bundle/starlops-bundle.tar.gz for an offline GPU node
#   make doc              API reference with Doxygen (build/doc/html; needs doxygen: install-deps.sh --docs)
#   make clean
STARPU_PREFIX := $(shell bash scripts/install-deps.sh --print-prefix)
BUILD_MAKE = $(MAKE) --no-print-directory -f mk/build.mk STARPU_PREFIX=$(STARPU_PREFIX)

.PHONY: all check check-valgrind demo install bench bundle clean deps doc
all check check-valgrind demo install bench: deps
	+@$(BUILD_MAKE) $@

# A relocatable tarball for offline GPU nodes (docs/install.md); scripts/gpu-check.sh runs it there.
bundle: all
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
