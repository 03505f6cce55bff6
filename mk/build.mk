# The real build; called by the top-level Makefile once the dependencies exist.
PREFIX ?= /usr/local
BUILD ?= build
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
HAVE_CUDA := $(shell [ -x $(NVCC) ] && echo 1)
HAVE_NCCL := $(shell [ -f $(CUDA_HOME)/include/nccl.h ] && echo 1)

MPI_CFLAGS := $(shell mpicc --showme:compile)
MPI_LIBS := $(shell mpicc --showme:link)
STARPU_INC := $(STARPU_PREFIX)/include/starpu/1.3
STARPU_LIBS := -L$(STARPU_PREFIX)/lib -Wl,-rpath,$(STARPU_PREFIX)/lib -lstarpumpi-1.3 -lstarpu-1.3

OPT ?= -O3
CFLAGS_BASE := -std=gnu11 $(OPT) -g -fPIC -Wall -Wextra -Wno-unused-parameter -Iinclude -Isrc \
  -isystem $(STARPU_INC) $(MPI_CFLAGS)
LIBS := $(STARPU_LIBS) $(MPI_LIBS) -lhwloc -lopenblas -lfftw3_threads -lfftw3f_threads -lfftw3 -lfftw3f -lm -lpthread
ifeq ($(HAVE_CUDA),1)
  CFLAGS_BASE += -DSL_HAVE_CUDA -isystem $(CUDA_HOME)/include
  LIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcusparse -lcufft -lcudart -lstdc++
  # CUDA_ARCHS: the GPU architectures to build machine code for (sm_XX), plus PTX of the last one so that
  # newer GPUs JIT it; default sm_80 and sm_90, and sm_100 when this nvcc knows it
  NVCC_KNOWN := $(shell $(NVCC) --list-gpu-arch 2>/dev/null)
  CUDA_ARCHS ?= 80 90 $(if $(filter compute_100,$(NVCC_KNOWN)),100)
  GENCODE := $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
    -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
  NVCCFLAGS := -O3 -g -Xcompiler -fPIC -std=c++17 -Iinclude -Isrc -DSL_HAVE_CUDA $(MPI_CFLAGS) $(GENCODE)
endif
ifeq ($(HAVE_NCCL),1)
  CFLAGS_BASE += -DSL_HAVE_NCCL
  LIBS += -lnccl
endif
ifdef SANITIZE
  CFLAGS_BASE += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
  LIBS += -fsanitize=$(SANITIZE)
endif
CFLAGS := $(CFLAGS_BASE) $(EXTRA_CFLAGS)

LIB_C := $(wildcard src/*.c src/codelets/*.c src/comm/*.c src/operators/*.c src/prox/*.c src/solvers/*.c)
LIB_CU := $(if $(HAVE_CUDA),$(wildcard src/codelets/*.cu))
LIB_OBJ := $(LIB_C:%.c=$(BUILD)/%.o) $(LIB_CU:%.cu=$(BUILD)/%.cu.o)
# The FFT's cuFFT callbacks: LTO-IR for every architecture, linked into cuFFT's kernels at plan time, carried in
# the library as a byte array (src/codelets/kernel_fft_cb.h)
ifeq ($(HAVE_CUDA),1)
  FFT_CB := $(BUILD)/src/codelets/lto/fft_weights_cb
  LIB_OBJ += $(FFT_CB).o
endif
# One version: the one include/starlops.h declares (SL_VERSION_*); the soname carries its major number.
VERSION := $(shell sed -n 's/^\#define SL_VERSION_STRING "\(.*\)"/\1/p' include/starlops.h)
VERSION_MAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME := libstarlops.so.$(VERSION_MAJOR)
LIB_SO := $(BUILD)/lib/libstarlops.so
LIB_A := $(BUILD)/lib/libstarlops.a
LINK_STARLOPS := -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) -lstarlops $(LIBS)
# Programs that test or measure internal parts (kernels, the comm layer) link the static library: the shared
# one exports only the functions the public headers declare.
LINK_INTERNAL := $(LIB_A) $(LIBS)
PUBLIC_H := $(wildcard include/*.h)
EXPORTS := $(BUILD)/lib/starlops.map

TOOLS := $(patsubst tools/%.c,$(BUILD)/bin/%,$(wildcard tools/*.c))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
MPI_TESTS := $(patsubst tests/mpi/%.c,$(BUILD)/tests/mpi/%,$(filter-out tests/mpi/mpi_check.c,$(wildcard tests/mpi/*.c)))
UNIT_TESTS := $(BUILD)/tests/unit_tests

.PHONY: all tests check check-valgrind demo install bench
all: $(LIB_SO) $(LIB_A) $(TOOLS) $(EXAMPLES) $(BENCHES)
# the test programs: built by make check (and make tests), not by make or make install
tests: $(MPI_TESTS) $(UNIT_TESTS)

$(BUILD)/%.o: %.c $(wildcard include/*.h src/*.h src/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/%.cu.o: %.cu $(wildcard include/*.h src/*/*.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

ifeq ($(HAVE_CUDA),1)
$(FFT_CB).fatbin: src/codelets/lto/fft_weights_cb.cu src/codelets/kernel_fft_cb.h
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -Iinclude -Isrc $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=lto_$(a)) -dc -fatbin $< -o $@
$(FFT_CB).c: $(FFT_CB).fatbin
	{ echo '#include <stddef.h>'; echo '_Alignas(16) const unsigned char sl_fft_cb_fatbin[] = {'; \
	  od -An -v -tu1 $< | sed 's/^ *//; s/  */,/g; s/$$/,/'; echo '};'; \
	  echo 'const size_t sl_fft_cb_fatbin_size = sizeof sl_fft_cb_fatbin;'; } > $@
$(FFT_CB).o: $(FFT_CB).c
	$(CC) $(CFLAGS) -c $< -o $@
endif

# The linker version script: every function a public header declares, nothing else.
$(EXPORTS): $(PUBLIC_H)
	@mkdir -p $(dir $@)
	{ echo '{ global:'; sed -nE 's/^(const )?(unsigned )?[A-Za-z_0-9]+[ *]+(sl_[a-z0-9_]+)\(.*/  \3;/p' $(PUBLIC_H) | sort -u; \
	  echo 'local: *; };'; } > $@
$(LIB_SO): $(LIB_OBJ) $(EXPORTS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(EXPORTS) -o $(BUILD)/lib/$(SONAME) $(LIB_OBJ) $(LIBS)
	ln -sf $(SONAME) $@
$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/%: tools/%.c bench/bench_util.h $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(LINK_STARLOPS)
$(BUILD)/examples/%: examples/%.c examples/example_util.h $(wildcard examples/*.h) $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(filter %.o,$^) -o $@ $(LINK_STARLOPS)
ifeq ($(HAVE_CUDA),1)
$(BUILD)/examples/custom_operator: $(BUILD)/examples/custom_operator_cuda.cu.o
endif
$(BUILD)/bench/%: bench/%.c bench/bench_util.h bench/bench_normal.h $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(filter %.o,$^) -o $@ $(LINK_STARLOPS)
ifeq ($(HAVE_CUDA),1)
$(BUILD)/bench/bench_vec: $(BUILD)/bench/bench_vec_ceiling.cu.o
endif
$(BUILD)/bench/bench_comm: bench/bench_comm.c bench/bench_util.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(LINK_INTERNAL)
$(BUILD)/bench/bench_stencil_kernel: bench/bench_stencil_kernel.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(LINK_INTERNAL)
$(BUILD)/tests/mpi/%: tests/mpi/%.c tests/mpi/mpi_check.c tests/mpi/mpi_check.h $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/mpi $< tests/mpi/mpi_check.c -o $@ $(LINK_STARLOPS) -llapacke
$(BUILD)/tests/mpi/mpi_comm: tests/mpi/mpi_comm.c tests/mpi/mpi_check.c tests/mpi/mpi_check.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/mpi $< tests/mpi/mpi_check.c -o $@ $(LINK_INTERNAL) -llapacke
$(UNIT_TESTS): $(wildcard tests/unit/*.c) $(LIB_A) $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(wildcard tests/unit/*.c) -o $@ $(LINK_INTERNAL) -lcriterion

# The test environment: a private StarPU home (bus calibration), quiet StarPU, MPI that yields when idle.
TEST_ENV := STARPU_HOME=$(abspath $(BUILD))/starpu-home STARPU_SILENT=1 STARPU_WORKERS_NOBIND=1 \
  OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1 STARLOPS_BUILD=$(abspath $(BUILD)) \
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# StarPU calibrates the bus once per home: one process does it first, so that the multi-rank programs never
# calibrate concurrently (two ranks writing the same bus files race).
check: all tests
	@mkdir -p $(BUILD)/starpu-home
	$(TEST_ENV) $(BUILD)/bin/starlops_info > /dev/null
	$(TEST_ENV) $(UNIT_TESTS) --jobs 1 -j1

# valgrind (memcheck, definite leaks) on the unit tests and on the multi-rank programs run as one rank.
VALGRIND := valgrind -q --num-callers=40 --error-exitcode=9 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
  --suppressions=tests/valgrind.supp
check-valgrind: all tests
	@mkdir -p $(BUILD)/starpu-home $(BUILD)/tests/vg
	$(TEST_ENV) $(VALGRIND) --trace-children=yes --trace-children-skip-by-arg='*starlops-trace*' $(UNIT_TESTS) -j1 --filter '[!m]*/*'
	$(TEST_ENV) STARPU_NCPU=1 STARLOPS_CHUNK_BYTES=100 $(VALGRIND) $(BUILD)/tests/mpi/mpi_errors $(BUILD)/tests/vg
	$(TEST_ENV) STARPU_NCPU=1 $(VALGRIND) $(BUILD)/tests/mpi/mpi_arrays
	$(TEST_ENV) STARPU_NCPU=1 $(VALGRIND) $(BUILD)/tests/mpi/mpi_hostile $(BUILD)/tests/vg
	$(TEST_ENV) STARPU_NCPU=1 STARLOPS_CHUNK_BYTES=100 $(VALGRIND) $(BUILD)/tests/mpi/mpi_shell $(BUILD)/tests/vg
	$(TEST_ENV) STARPU_NCPU=1 $(VALGRIND) $(BUILD)/tests/mpi/mpi_comm
	$(TEST_ENV) STARPU_NCPU=1 $(VALGRIND) $(BUILD)/tests/mpi/mpi_ops
	$(TEST_ENV) STARPU_NCPU=1 $(VALGRIND) $(BUILD)/tests/mpi/mpi_prox
	$(TEST_ENV) STARPU_NCPU=1 STARLOPS_MAX_CHUNKS=1 $(VALGRIND) $(BUILD)/tests/mpi/mpi_solvers
	$(TEST_ENV) STARPU_NCPU=1 STARLOPS_FFT_THREADS=2 $(VALGRIND) $(BUILD)/tests/mpi/mpi_fft
	for p in mpi_nsconv mpi_sliding mpi_restriction_axis mpi_fft_ext mpi_reinit; do \
	  $(TEST_ENV) STARPU_NCPU=1 $(VALGRIND) $(BUILD)/tests/mpi/$$p || exit 1; done
	$(TEST_ENV) env -u STARPU_NCPU -u STARPU_WORKERS_NOBIND $(VALGRIND) \
	  $(BUILD)/tests/mpi/mpi_cores node
	$(TEST_ENV) STARPU_NCPU=1 mpirun -n 2 --oversubscribe --bind-to none $(VALGRIND) $(BUILD)/tests/mpi/mpi_comm

demo: all
	@mkdir -p $(BUILD)/starpu-home
	$(TEST_ENV) STARPU_NCPU=1 mpirun -n 2 --oversubscribe --bind-to none $(BUILD)/examples/demo_arrays --verbose --out $(BUILD)/demo.npy
	$(TEST_ENV) STARPU_NCPU=1 mpirun -n 3 --oversubscribe --bind-to none $(BUILD)/examples/demo_ops --dtype complex128
	$(TEST_ENV) STARPU_NCPU=1 mpirun -n 2 --oversubscribe --bind-to none $(BUILD)/examples/poisson_cg --n 128
	$(TEST_ENV) STARPU_NCPU=1 mpirun -n 3 --oversubscribe --bind-to none $(BUILD)/examples/least_squares --quiet --dtype complex128 --damp 0.1
	$(TEST_ENV) STARPU_NCPU=1 mpirun -n 2 --oversubscribe --bind-to none $(BUILD)/examples/sparse_fista --quiet
	$(TEST_ENV) STARPU_NCPU=1 mpirun -n 3 --oversubscribe --bind-to none $(BUILD)/examples/mdd --quiet
	$(TEST_ENV) STARPU_NCPU=1 mpirun -n 2 --oversubscribe --bind-to none $(BUILD)/examples/custom_operator --quiet
	$(TEST_ENV) STARPU_NCPU=1 mpirun -n 2 --oversubscribe --bind-to none $(BUILD)/examples/tv_denoise --quiet
	$(TEST_ENV) STARPU_NCPU=1 PYTHONPATH=python STARLOPS_LIB=$(abspath $(BUILD))/lib/libstarlops.so \
	  mpirun -n 2 --oversubscribe --bind-to none $${STARLOPS_PYTHON:-/usr/bin/python3} python/examples/numpy_vs_starlops.py

# make install [PREFIX=/usr/local] [DESTDIR=staging]: the library (shared and static), the headers, the tools,
# starlops.pc (StarPU's and MPI's flags carried in: no other .pc file needed; Libs.private for static links)
# a CMake package (find_package(starlops): the targets starlops::starlops and starlops::starlops_static) and the
# Python package (PREFIX/lib/python3/dist-packages/starlops, which finds the library two levels up).
PC_CFLAGS := -I$(STARPU_INC) $(MPI_CFLAGS) $(if $(HAVE_CUDA),-I$(CUDA_HOME)/include)
PC_LIBS := $(MPI_LIBS) -lm
PC_PRIVATE := $(filter-out $(MPI_LIBS),$(LIBS))
CM_INCLUDES := $(STARPU_INC) $(shell mpicc --showme:incdirs) $(if $(HAVE_CUDA),$(CUDA_HOME)/include)
empty :=
space := $(empty) $(empty)
semi = $(subst $(space),;,$(strip $(1)))
INSTALL_DIR := $(DESTDIR)$(PREFIX)
install: $(LIB_SO) $(LIB_A) $(TOOLS)
	install -d $(INSTALL_DIR)/include $(INSTALL_DIR)/lib/pkgconfig $(INSTALL_DIR)/lib/cmake/starlops $(INSTALL_DIR)/bin
	install -m 644 include/starlops.h include/starlops_ext.h $(INSTALL_DIR)/include/
	install -m 755 $(BUILD)/lib/$(SONAME) $(INSTALL_DIR)/lib/$(SONAME)
	ln -sf $(SONAME) $(INSTALL_DIR)/lib/libstarlops.so
	install -m 644 $(LIB_A) $(INSTALL_DIR)/lib/
	install -m 755 $(TOOLS) $(INSTALL_DIR)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@CFLAGS@|$(PC_CFLAGS)|g' \
	    -e 's|@LIBS@|$(PC_LIBS)|g' -e 's|@PRIVATE@|$(PC_PRIVATE)|g' mk/starlops.pc.in > $(INSTALL_DIR)/lib/pkgconfig/starlops.pc
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@SONAME@|$(SONAME)|g' -e 's|@INCLUDES@|$(call semi,$(CM_INCLUDES))|g' \
	    -e 's|@LIBS@|$(call semi,$(PC_LIBS))|g' -e 's|@PRIVATE@|$(call semi,$(PC_PRIVATE))|g' \
	    mk/starlopsConfig.cmake.in > $(INSTALL_DIR)/lib/cmake/starlops/starlopsConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|g' mk/starlopsConfigVersion.cmake.in > $(INSTALL_DIR)/lib/cmake/starlops/starlopsConfigVersion.cmake
	install -d $(INSTALL_DIR)/lib/python3/dist-packages/starlops
	install -m 644 python/starlops/*.py $(INSTALL_DIR)/lib/python3/dist-packages/starlops/
