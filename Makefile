# forkscope — one Makefile for the runtime, the benchmarks, the harness and the tests.
#
#   make / make all   build everything (release)
#   make check        install missing packages, build, run every test
#   make run          install, build, run configs/quick.json, draw its plots
#   make bench        fib overhead table (T1/Ts, Ts/T2 for every variant), quiet machine only
#   make check-tsan   runtime tests under ThreadSanitizer
#   make check-asan   runtime tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make check-debug  runtime tests with FK_DEBUG misuse checks
#   make check-aarch64  the fiber switch cross-compiled for aarch64, run under qemu-user
#   make check-slurm  forkscope slurm end to end on a one-node and a four-node SLURM cluster it makes
#   make check-model  the SPIN models of the protocols (models/), and their mutations refuted
#   make check-small  deque and runtime tests with 4-slot deques (growth and wrap all the time)
#   make check-chaos  deque and runtime tests with random yields/sleeps at protocol steps
#   make check-fuzz   every parser's fuzz target: regressions, then 5 s from its corpus
#   make check-selftest  the summary of make check fails on what it must (sabotaged copies)
#   make peers PEERS_DIR=DIR        peer drivers (fk-bench-lace) from the checkouts in DIR
#   make check-peers PEERS_DIR=DIR  build and test them (make check PEERS_DIR=DIR includes it)
#   make bundle       build/forkscope-bundle-<rev>.tar.gz: forkscope, every driver (the peers
#                     with PEERS_DIR=DIR), their libraries, configs and plots, for a machine
#                     without a compiler (docs/bundle.md)
#   make layouts      build/layout/pN/fk-bench-*: every driver linked again with its code moved
#                     by N = 0, 16, 32, 48 bytes (configs/layouts.json, scripts/layouts.py)
#   make warnings     compile everything with gcc and clang, warnings as errors
#   make BUILD=build-mine EXTRA_KERNELS='DIR/*.c' ...  kernels of your own in every driver and the
#                     harness (docs/suite.md; template: tests/extra_kernel/squares.c)
#   make clean
#
# Objects go to build/<mode>/<variant>/; a variant is a value on each compile-time axis
# (stealing: cont|child; task frames: seg|lin frame stacks, or native C frames and fibers for
# child stealing), the span build (span), a baseline (serial, omp, omp-llvm, tbb), or
# "common" for code that does not depend on one.  Every object depends on a flags file that
# changes only when its flags change, and on the headers it includes (-MMD).

.DEFAULT_GOAL := all
SHELL := /bin/bash

# Every core by default: `make check` and `make run` as the README gives them build in a
# sub-make with -j$(nproc), unless this make was given a -j (its jobserver is used then);
# JOBS=-j1 on the command line builds serially.  (GNU make 4.3 shows a command line -j in
# MAKEFLAGS only to recipes, not while it reads this file: hence the test in the recipe.)
NPROC := $(shell nproc 2>/dev/null || echo 1)
JOBS   = $$(case " $(MAKEFLAGS) " in *" -j"*|*jobserver*) ;; *) echo -j$(NPROC);; esac)

# A fresh machine: say what to run rather than stop at a compiler error.  `make check`,
# `make run` and `make bench` install what is missing themselves (scripts/setup.sh).
NEEDED_HEADERS  := /usr/include/jansson.h /usr/include/hwloc.h /usr/include/gsl/gsl_errno.h \
                   /usr/include/papi.h /usr/include/nettle/sha1.h /usr/include/Rmath.h \
                   /usr/include/oneapi/tbb.h
MISSING_HEADERS := $(filter-out $(wildcard $(NEEDED_HEADERS)),$(NEEDED_HEADERS))
ifneq ($(MISSING_HEADERS),)
ifeq ($(filter setup check run bench clean,$(MAKECMDGOALS)),)
$(error $(MISSING_HEADERS) not found: the build needs Debian packages that are not installed. \
  Run scripts/setup.sh (as root), or `make check` / `make run`, which install them first)
endif
endif

BUILD   := build
CC      := gcc
CLANG   := clang
MODES   := rel debug tsan asan

, := ,
VARIANTS := cont-seg cont-lin child-seg child-lin child-native child-fiber
BASELINES := serial omp omp-llvm tbb

WARN := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wpointer-arith \
        -Wwrite-strings -Wundef -Wformat=2 -Wvla -Wcast-align -Wnull-dereference \
        -Wmissing-include-dirs -Wold-style-definition
WERROR ?=
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -pthread -Iruntime/include -Iruntime -I. -MMD -MP $(WARN) $(WERROR)

# ---- kernels from outside the tree ---------------------------------------------------------
# make EXTRA_KERNELS='DIR/*.c' compiles each file, a kernel file like kernels/NAME.c for its
# kernel NAME (docs/suite.md's template: tests/extra_kernel/squares.c), into every driver and
# test and, its description, into the harness, which then runs it like a built-in one; a
# NAME_tbb.cpp beside it is its TBB version.  A name that is a built-in kernel's, or not
# [a-z][a-z0-9_]* of at most 15 characters, is refused before anything is compiled.  Use a
# BUILD=DIR of its own: every object is rebuilt with the list (BENCH_EXTRA_KERNELS).
EXTRA_KERNELS ?=
EXTRA_KERNEL_SRC   := $(abspath $(wildcard $(EXTRA_KERNELS)))
EXTRA_KERNEL_NAMES := $(basename $(notdir $(EXTRA_KERNEL_SRC)))
EXTRA_KERNEL_TBB   := $(wildcard $(patsubst %.c,%_tbb.cpp,$(EXTRA_KERNEL_SRC)))
BUILTIN_KERNELS    := $(shell sed -n '/^\#define BENCH_KERNEL_LIST/,/^$$/p' bench/options.h | grep -o '\bX([a-z0-9_]*)' | \
                        sed 's/X(\(.*\))/\1/')
# (names a kernel file may not take: the symbols bench_NAME and bench_NAME_desc would clash)
RESERVED_KERNELS   := calibrate kernels find variant descs desc_find opt_find opt_index set_opt ctx_init vals_set \
                      vals_defaults cli_parse build_flags build_git peer_name peer_what peer_revision peer_flags \
                      peer_start peer_stop peer_noop peer_mn_model tbb_start tbb_stop tbb_noop tbb_arena
ifneq ($(EXTRA_KERNELS),)
$(foreach w,$(EXTRA_KERNELS),$(if $(wildcard $(w)),,$(error EXTRA_KERNELS: $(w): no such file (a path is relative to \
  the repository's root, where make runs))))
$(foreach f,$(EXTRA_KERNEL_SRC),$(if $(filter %.c,$(f)),,$(error EXTRA_KERNELS: $(f): not a kernel file NAME.c (a \
  NAME_tbb.cpp beside NAME.c is found by itself))))
$(foreach k,$(EXTRA_KERNEL_NAMES),$(if $(filter $(k),$(BUILTIN_KERNELS)),\
  $(error EXTRA_KERNELS: $(filter %/$(k).c,$(EXTRA_KERNEL_SRC)) is named like the built-in kernel $(k): rename it)))
$(foreach k,$(EXTRA_KERNEL_NAMES),$(if $(filter $(k),$(RESERVED_KERNELS)),\
  $(error EXTRA_KERNELS: $(filter %/$(k).c,$(EXTRA_KERNEL_SRC)): $(k) is a reserved name: rename it)))
$(foreach k,$(EXTRA_KERNEL_NAMES),$(if $(filter ok,$(shell printf '%s\n' '$(subst ','\'',$(k))' | grep -qxE '[a-z][a-z0-9_]{0,14}' && echo ok)),,\
  $(error EXTRA_KERNELS: $(k): a kernel's file is NAME.c with NAME of [a-z][a-z0-9_]*, at most 15 characters)))
$(if $(filter-out 1,$(foreach k,$(sort $(EXTRA_KERNEL_NAMES)),$(words $(filter $(k),$(EXTRA_KERNEL_NAMES))))),\
  $(error EXTRA_KERNELS: two files of one name: $(EXTRA_KERNEL_SRC)))
CFLAGS_BASE += "-DBENCH_EXTRA_KERNELS(X)=$(foreach k,$(EXTRA_KERNEL_NAMES),X($(k)))"
endif

# Release and debug builds are not position-independent: a task's resume points and a
# record's thunk are then one-instruction stores of 32-bit addresses (PIE needs a lea and a
# store each).  Sanitizer builds stay PIE, as the sanitizers' runtimes expect.
MODE_rel   := -O3 -g -DNDEBUG -fno-pie
MODE_debug := -O1 -g -DFK_DEBUG=1 -fno-pie
MODE_tsan  := -O1 -g -fsanitize=thread -Wno-tsan -DFK_DEBUG=1
MODE_asan  := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -DFK_DEBUG=1
# Deques that start at 4 slots: growth and wraps under steals all the time (make check-small)
MODE_small := -O2 -g -DFK_DEBUG=1 -DFK_DEQUE_INITIAL=4 -fno-pie
SMALL_VARIANTS := cont-seg child-seg child-fiber
SMALL_TESTS := test_deque test_runtime
# ... and with FK_POP_AT=1 (forkscope/config.h: on by default for child-native only), so that
# both its paths, the slot its push returned and the fall-back when a wrap or growth moved
# the cursor, run on every pop kind (make check-small); with FK_WREGS=0, so that cont-lin
# there keeps the pop that reads the hot state tested (FK_WREGS=1, the default of cont-seg
# and cont-lin, is tested with 4-slot deques on cont-seg, in small); with FK_LIVE=0, so that
# child-native there runs the ring with its stored cursor (FK_LIVE, child-native's default,
# has a deque of its own, which neither grows nor wraps: every other suite tests it)
MODE_popat := $(MODE_small) -DFK_POP_AT=1 -DFK_WREGS=0 -DFK_LIVE=0
POPAT_VARIANTS := cont-lin child-seg child-native
# Random yields and sleeps at every protocol step (runtime/chaos.h; make check-chaos)
MODE_chaos := -O1 -g -DFK_DEBUG=1 -DFK_CHAOS=1 -fno-pie
CHAOS_VARIANTS := cont-seg child-seg child-native child-fiber
# ... and test_account's reader cases, each thread's clock off by its own offset (its other
# cases check timings, which the sleeps upset)
CHAOS_TESTS := $(SMALL_TESTS) test_account
CHAOS_CASES_test_account := ::read_while_running$(,)read_while_running_many

VAR_cont-seg  := -DFK_STEAL=1 -DFK_STACK=1
VAR_cont-lin  := -DFK_STEAL=1 -DFK_STACK=2
VAR_child-seg := -DFK_STEAL=2 -DFK_STACK=1
VAR_child-lin := -DFK_STEAL=2 -DFK_STACK=2
VAR_child-native := -DFK_STEAL=2 -DFK_STACK=3
VAR_child-fiber := -DFK_STEAL=2 -DFK_STACK=4
# The span build (runtime/span.c): cont-lin on one worker, every strand timed, work and span
# of the fork-join DAG (fk-bench-span, forkscope span)
VAR_span      := -DFK_STEAL=1 -DFK_STACK=2 -DFK_SPAN=1
VAR_serial    := -DFK_BASELINE_SERIAL=1
VAR_omp       := -DFK_BASELINE_OMP=1 -fopenmp
VAR_tbb       := -DFK_BASELINE_TBB=1
VAR_omp-llvm  := -DFK_BASELINE_OMP=1 -fopenmp
VAR_common    :=
# The kernels' descriptions alone (bench/options.h): each kernel file compiled without its
# runtime code, for the harness
VAR_desc      := -DBENCH_DESCRIBE_ONLY=1

# GCC splits a task's fast clone into an inlinable head (the code before FK_BEGIN: a leaf
# test) and the rest only if the rest runs on fewer than 70% of calls by its estimate;
# recursive tasks run it on ~75%.  At 80% the head is split off and inlined into the forks
# and calls, so a leaf child costs a test, not a call (as GCC already does for Lace's
# exported tasks).  The serial projection is noinline: unaffected.
TUNE_gcc := --param partial-inlining-entry-probability=80

LDMODE_rel   := -no-pie
LDMODE_debug := -no-pie
LDMODE_small := -no-pie
LDMODE_popat := -no-pie
LDMODE_chaos := -no-pie

# Compiler per variant: the LLVM OpenMP baseline is clang + libomp, all else $(CC).
$(foreach v,$(VARIANTS) span serial omp tbb common desc,$(eval CC_$(v) := $(CC)))
CC_omp-llvm := $(CLANG)

# The TBB baseline's kernels are C++ (kernels/tbb.cpp, g++): linked into its driver and its
# suite tests, which then link with g++'s runtime and oneTBB.
CXX         := g++
CXXFLAGS_BASE := -std=c++17 -D_GNU_SOURCE -pthread -I. -MMD -MP -Wall -Wextra -Wshadow $(WERROR)
EXTRA_SRC_tbb  := kernels/tbb.cpp $(wildcard kernels/*_tbb.cpp) $(EXTRA_KERNEL_TBB) # (a kernel's own: NAME_tbb.cpp)
EXTRA_LIBS_tbb := -ltbb -lstdc++

# The git revision of the source tree ("-dirty" if it has uncommitted changes), recorded in
# every driver so that a sweep comparing two builds can say which is which.
GIT_REV := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)

# ---- sources -----------------------------------------------------------------------------
RUNTIME_SRC := $(wildcard runtime/*.c)
# The bench driver: one executable per variant, every kernel in each.
BENCH_SRC   := bench/driver.c bench/args.c bench/registry.c bench/options.c bench/papi.c $(wildcard kernels/*.c) $(wildcard uts/*.c) \
               $(EXTRA_KERNEL_SRC)
BENCH_LIBS  := -ljansson -lnettle -lhwloc -lpapi -lm

# The harness (the forkscope CLI): variant-independent ("common"); tests of the harness link
# every harness object but main.o.
# (the peers' list the Makefile generates from peers/*.mk: harness/config/variants.h's hx_peer_rows)
PEER_LIST_C     := $(BUILD)/gen/peers.c
HARNESS_SRC     := $(wildcard harness/*.c harness/*/*.c) bench/options.c uts/tree.c uts/rng.c $(PEER_LIST_C) # the option parser; UTS counts
HARNESS_LIB_SRC := $(filter-out harness/main.c,$(HARNESS_SRC))
# Every kernel file, of which the harness links the description (VAR_desc): $(call desc_objs,MODE)
KERNEL_SRC      := $(wildcard kernels/*.c) uts/uts.c $(EXTRA_KERNEL_SRC)
desc_objs        = $(patsubst %.c,$(BUILD)/$(1)/desc/%.o,$(KERNEL_SRC))
HARNESS_LIBS    := -ljansson -lgsl -lgslcblas -lRmath -lnettle -lhwloc -lm
COMMON_TESTS    := $(patsubst tests/%.c,%,$(wildcard tests/test_config.c tests/test_sweep.c tests/test_fit.c \
                     tests/test_plot.c tests/test_util.c tests/test_compare.c))
# The CLI's `topology` command prints the runtime's view of a topology through the public
# header (fk_topology_describe), and env.json records the runtime's clock (fk_clock_get),
# linked from the default build's library (the harness's tests: the same mode's).
HARNESS_RT_LIB  := $(BUILD)/rel/cont-seg/libforkscope.a

# ---- rules -------------------------------------------------------------------------------
# $(1) mode, $(2) variant
define OBJ_RULES
$(BUILD)/$(1)/$(2)/%.o: %.c $(BUILD)/$(1)/$(2)/.flags
	@mkdir -p $$(@D)
	$$(CC_$(2)) $$(CFLAGS_BASE) $$(TUNE_$$(CC_$(2))) $$(MODE_$(1)) $$(VAR_$(2)) -c $$< -o $$@

$(BUILD)/$(1)/$(2)/%.o: %.cpp $(BUILD)/$(1)/$(2)/.flags
	@mkdir -p $$(@D)
	$$(CXX) $$(CXXFLAGS_BASE) $$(MODE_$(1)) $$(VAR_$(2)) -c $$< -o $$@

$(BUILD)/$(1)/$(2)/.flags: FORCE
	@mkdir -p $$(@D)
	@echo '$$(CC_$(2)) $$(CFLAGS_BASE) $$(TUNE_$$(CC_$(2))) $$(MODE_$(1)) $$(VAR_$(2))' | cmp -s - $$@ || \
	  echo '$$(CC_$(2)) $$(CFLAGS_BASE) $$(TUNE_$$(CC_$(2))) $$(MODE_$(1)) $$(VAR_$(2))' > $$@

$(BUILD)/$(1)/$(2)/libforkscope.a: $$(patsubst %.c,$(BUILD)/$(1)/$(2)/%.o,$$(RUNTIME_SRC))
	@rm -f $$@
	ar rcs $$@ $$^

# The flags a driver was built with and the source's git revision, for its JSON output
# (rewritten only when they change).
$(BUILD)/$(1)/$(2)/buildinfo.c: $(BUILD)/$(1)/$(2)/.flags FORCE
	@{ printf 'const char bench_build_flags[] = "%s";\n' "$$$$(sed 's/"/\\"/g' $$<)"; \
	   printf 'const char bench_build_git[] = "%s";\n' '$(GIT_REV)'; } > $$@.tmp; \
	 cmp -s $$@.tmp $$@ || mv $$@.tmp $$@; rm -f $$@.tmp
$(BUILD)/$(1)/$(2)/buildinfo.o: $(BUILD)/$(1)/$(2)/buildinfo.c
	$$(CC_$(2)) -c $$< -o $$@
endef
$(foreach m,$(MODES),$(foreach v,$(VARIANTS) span $(BASELINES) common desc,$(eval $(call OBJ_RULES,$(m),$(v)))))
$(foreach v,$(SMALL_VARIANTS),$(eval $(call OBJ_RULES,small,$(v))))
$(foreach v,$(POPAT_VARIANTS),$(eval $(call OBJ_RULES,popat,$(v))))
$(foreach v,$(CHAOS_VARIANTS),$(eval $(call OBJ_RULES,chaos,$(v))))

.PHONY: FORCE
FORCE:

# ---- tests -------------------------------------------------------------------------------
# Runtime tests are built per variant: tests/test_X.c -> build/<mode>/<v>/tests/test_X
RT_TESTS := test_runtime test_stack test_deque test_account $(if $(wildcard tests/test_topology.c),test_topology)
# A runtime test may link other objects of tests/: TEST_OBJS_<test>.
TEST_OBJS_test_runtime := tests/shared_tasks.o
TEST_OBJS_test_span    := tests/shared_tasks.o
# ... and other libraries: TEST_LIBS_<test> (test_account reads the traces it writes).
TEST_LIBS_test_account := -ljansson
define TEST_RULES
$(BUILD)/$(1)/$(2)/tests/$(3): $(BUILD)/$(1)/$(2)/tests/$(3).o $(addprefix $(BUILD)/$(1)/$(2)/,$(TEST_OBJS_$(3))) $(BUILD)/$(1)/$(2)/libforkscope.a
	$$(CC_$(2)) $$(MODE_$(1)) $$(LDMODE_$(1)) -pthread $$^ -o $$@ -lhwloc -lm $(TEST_LIBS_$(3))
endef
$(foreach m,$(MODES),$(foreach v,$(VARIANTS),$(foreach t,$(RT_TESTS),$(eval $(call TEST_RULES,$(m),$(v),$(t))))))
# The span build's own test (known DAGs), in the release and sanitizer builds
$(foreach m,rel asan,$(eval $(call TEST_RULES,$(m),span,test_span)))
span_tests = $(BUILD)/$(1)/span/tests/test_span
$(foreach v,$(SMALL_VARIANTS),$(foreach t,$(SMALL_TESTS),$(eval $(call TEST_RULES,small,$(v),$(t)))))
small_tests = $(foreach v,$(SMALL_VARIANTS),$(foreach t,$(SMALL_TESTS),$(BUILD)/small/$(v)/tests/$(t)))
$(foreach v,$(POPAT_VARIANTS),$(foreach t,$(SMALL_TESTS),$(eval $(call TEST_RULES,popat,$(v),$(t)))))
popat_tests = $(foreach v,$(POPAT_VARIANTS),$(foreach t,$(SMALL_TESTS),$(BUILD)/popat/$(v)/tests/$(t)))
$(foreach v,$(CHAOS_VARIANTS),$(foreach t,$(CHAOS_TESTS),$(eval $(call TEST_RULES,chaos,$(v),$(t)))))
chaos_tests = $(foreach v,$(CHAOS_VARIANTS),$(foreach t,$(CHAOS_TESTS),$(BUILD)/chaos/$(v)/tests/$(t)$(CHAOS_CASES_$(t))))

rt_tests = $(foreach v,$(VARIANTS),$(foreach t,$(RT_TESTS),$(BUILD)/$(1)/$(v)/tests/$(t))) $(BUILD)/$(1)/common/tests/test_fiber

# The fiber switch and stacks (runtime/fiber.c, guard.c) do not depend on a variant: tested
# once per mode, and cross-compiled for aarch64 and run under qemu-user (make check-aarch64).
FIBER_TEST_OBJS := tests/test_fiber.o runtime/fiber.o runtime/guard.o
define FIBER_TEST_RULES
$(BUILD)/$(1)/common/tests/test_fiber: $(addprefix $(BUILD)/$(1)/common/,$(FIBER_TEST_OBJS))
	$$(CC) $$(MODE_$(1)) $$(LDMODE_$(1)) -pthread $$^ -o $$@ -lm
endef
$(foreach m,$(MODES),$(eval $(call FIBER_TEST_RULES,$(m))))
AARCH64_CC := aarch64-linux-gnu-gcc
$(BUILD)/aarch64/tests/test_fiber: tests/test_fiber.c runtime/fiber.c runtime/guard.c runtime/fiber.h runtime/guard.h \
                                   runtime/include/forkscope/config.h \
                                   tests/testlib.h Makefile
	@mkdir -p $(@D)
	$(AARCH64_CC) -std=c11 -D_GNU_SOURCE -pthread -I. -Iruntime -Iruntime/include $(WARN) $(WERROR) -O2 -g -static \
	  $(filter %.c,$^) -o $@ -lm

# Benchmark-suite tests (UTS, kernels) are built per variant like the runtime tests, linked
# with the kernel and UTS objects of that variant (no driver main).
SUITE_TESTS := $(patsubst tests/%.c,%,$(wildcard tests/test_uts.c tests/test_kernels.c))
SUITE_SRC   := $(wildcard kernels/*.c) $(wildcard uts/*.c) bench/registry.c bench/options.c $(EXTRA_KERNEL_SRC)
define SUITE_TEST_RULES
$(BUILD)/$(1)/$(2)/tests/$(3): $(BUILD)/$(1)/$(2)/tests/$(3).o $$(patsubst %.c,$(BUILD)/$(1)/$(2)/%.o,$$(SUITE_SRC)) \
                              $$(patsubst %.cpp,$(BUILD)/$(1)/$(2)/%.o,$$(EXTRA_SRC_$(2))) $(4)
	$$(CC_$(2)) $$(MODE_$(1)) $$(LDMODE_$(1)) $$(VAR_$(2)) -pthread $$^ -o $$@ $$(BENCH_LIBS) $$(EXTRA_LIBS_$(2))
endef
$(foreach m,$(MODES),$(foreach v,$(VARIANTS),$(foreach t,$(SUITE_TESTS),$(eval $(call SUITE_TEST_RULES,$(m),$(v),$(t),$(BUILD)/$(m)/$(v)/libforkscope.a)))))
$(foreach m,$(MODES),$(foreach v,$(BASELINES),$(foreach t,$(SUITE_TESTS),$(eval $(call SUITE_TEST_RULES,$(m),$(v),$(t),)))))
suite_tests = $(foreach v,$(VARIANTS) $(BASELINES),$(foreach t,$(SUITE_TESTS),$(BUILD)/$(1)/$(v)/tests/$(t)))

# ---- bench drivers ---------------------------------------------------------------------------
# build/bin/fk-bench-V: release build of the driver for variant V.  ($(3): the directory,
# $(4): an object linked first, make layouts' padding.)
define DRIVER_RULES
$(3)/fk-bench-$(1): $(4) $$(patsubst %.c,$(BUILD)/rel/$(1)/%.o,$$(BENCH_SRC)) \
                            $$(patsubst %.cpp,$(BUILD)/rel/$(1)/%.o,$$(EXTRA_SRC_$(1))) $(BUILD)/rel/$(1)/buildinfo.o $(2)
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(MODE_rel) $$(LDMODE_rel) $$(VAR_$(1)) -pthread $$^ -o $$@ $$(BENCH_LIBS) $$(EXTRA_LIBS_$(1))
endef
$(foreach v,$(VARIANTS) span,$(eval $(call DRIVER_RULES,$(v),$(BUILD)/rel/$(v)/libforkscope.a,$(BUILD)/bin,)))
$(foreach v,$(BASELINES),$(eval $(call DRIVER_RULES,$(v),,$(BUILD)/bin,)))

# make layouts: the same drivers linked again with their code moved, to tell a change's
# effect from where the linker happened to put the fast path (docs/runtime.md, "Code
# layout").  build/layout/pN/fk-bench-V is build/bin/fk-bench-V's objects linked after N
# bytes of padding that starts on a 64-byte boundary, so that every function of the
# driver's .text lies N bytes (mod 64) past where it lies in the p0 copy: the same code in
# other positions against the processor's 32- and 64-byte fetch and decode windows.  (Only
# .text moves: the cold parts (.text.unlikely, noreturn functions such as fk__fatal), main
# (.text.startup) and the C runtime's start-up code stay.)  LAYOUT_PADS: the paddings;
# LAYOUT_DRIVERS: which drivers (the peers when PEERS_DIR is given).  configs/layouts.json
# runs them.
LAYOUT_PADS    ?= 0 16 32 48
LAYOUT_DRIVERS ?= $(VARIANTS) serial
LAYOUT_COPIES   = $(foreach p,$(LAYOUT_PADS),$(foreach v,$(LAYOUT_DRIVERS),$(BUILD)/layout/p$(p)/fk-bench-$(v)))
$(BUILD)/layout/pad%.o:
	@mkdir -p $(@D)
	@case '$*' in ''|*[!0-9]*) echo "make layouts: LAYOUT_PADS holds '$*', not a number of bytes" >&2; exit 2;; esac
	printf '\t.text\n\t.p2align 6\nfk__layout_pad:\n\t.skip %s, 0xcc\n\t.section .note.GNU-stack,"",@progbits\n' '$*' | \
	  $(CC) -c -x assembler - -o $@
.PRECIOUS: $(BUILD)/layout/pad%.o
$(foreach p,$(LAYOUT_PADS),$(foreach v,$(filter $(VARIANTS) span,$(LAYOUT_DRIVERS)),\
  $(eval $(call DRIVER_RULES,$(v),$(BUILD)/rel/$(v)/libforkscope.a,$(BUILD)/layout/p$(p),$(BUILD)/layout/pad$(p).o))))
$(foreach p,$(LAYOUT_PADS),$(foreach v,$(filter $(BASELINES),$(LAYOUT_DRIVERS)),\
  $(eval $(call DRIVER_RULES,$(v),,$(BUILD)/layout/p$(p),$(BUILD)/layout/pad$(p).o))))
DRIVERS := $(foreach v,$(VARIANTS) span $(BASELINES),$(BUILD)/bin/fk-bench-$(v))

# ---- peers: other runtimes, built from the user's checkouts -------------------------------
# `make peers PEERS_DIR=DIR` builds build/bin/fk-bench-PEER for each peer whose checkout
# DIR/CHECKOUT exists (any subset; each missing one is named and skipped): the same driver as
# every other variant (bench/), with the kernels written in this project against the peer's
# API (peers/*.c, *.cpp), linked with the peer's own code compiled in place, with the flags
# its own build uses (recorded in the driver's JSON, with the compiler and the checkout's git
# revision).  Nothing of a peer is copied into this repository.
# Each peer is a fragment, peers/NAME.mk (EXTRA_PEERS='FILE.mk ...' adds peers of your own),
# that adds its name p to PEERS and sets:
#   PEER_WHAT_p      what it is, one line (forkscope variants; no double quote, backslash or |)
#   PEER_CHECKOUT_p  the checkout's name in DIR        PEER_CHECK_p  a file that must exist in it
#   PEER_SRC_p       our kernels for it: a .c file (compiled as the driver's C files are, with
#                    VAR_p) or a .cpp file (compiled with PEER_FLAGS_p against the checkout, or
#                    its PEER_INCLUDE_p directory)
#   PEER_FLAGS_p     what its code is compiled with, its compiler first
#   and as it needs: VAR_p (default -DFK_BASELINE_PEER=1), CC_p (default $(CC)), EXTRA_OBJ_p
#   (objects of its own code, with their rules), PEER_LIBS_p (linked besides), PEER_SKIP_p (a
#   reason it is not built here), PEER_NEEDS_p and PEER_NEEDS_WHY_p (a command it needs, and
#   where that comes from).
# Which kernels a peer runs its driver says (fk-bench-PEER --kernels: those its PEER_SRC
# defines, kernels/peer.h), and the harness plans with that.  EXTRA_PEERS, like EXTRA_KERNELS,
# belongs to a BUILD of its own and to every make of it: the harness's list is regenerated
# from what each make is given.
PEERS_DIR   ?=
EXTRA_PEERS ?=
PEERS       :=
# The instruction set the peers whose own builds say -march=native (Lace, libfork) are built
# for: a stated baseline rather than this machine's, so that their drivers run on the
# machine a bundle is carried to (make bundle: its BUNDLE.txt states it).  x86-64-v3: AVX2,
# BMI2, FMA (Haswell, Zen 1 and later); PEER_MARCH=native for the peers' own choice.
# forkscope's own builds take no -march (x86-64, the compiler's default).
PEER_MARCH ?= x86-64-v3
PEERS_ABS := $(if $(PEERS_DIR),$(abspath $(PEERS_DIR)))
UNAME_M   := $(shell uname -m)
$(foreach f,$(EXTRA_PEERS),$(if $(wildcard $(f)),,$(error EXTRA_PEERS: $(f): no such file))$(if $(filter %.mk,$(f)),,\
  $(error EXTRA_PEERS: $(f): a peer is a Makefile fragment, NAME.mk (see peers/lace.mk))))
include $(sort $(wildcard peers/*.mk)) $(EXTRA_PEERS)
# (a peer's name: a driver's and a variant's, so not one of theirs nor an axis value's prefix;
# its texts go into C strings and shell words: no double quote, backslash or |, nor ' but in
# PEER_WHAT_p)
PEER_NAMES_TAKEN := $(VARIANTS) span $(BASELINES) common desc peers gen bin fuzz
$(foreach p,$(PEERS),$(if $(filter-out 1,$(words $(filter $(p),$(PEERS)))),$(error peer $(p) is defined twice (peers/*.mk, EXTRA_PEERS)))\
  $(if $(filter ok,$(shell printf '%s\n' '$(subst ','\'',$(p))' | grep -qxE '[a-z][a-z0-9]*(-[a-z0-9]+)*' && [ $$(printf %s '$(subst ','\'',$(p))' | wc -c) -le 22 ] && echo ok)),,\
    $(error peer $(p): a peer's name is lower-case words joined by '-', at most 22 characters))\
  $(if $(filter $(p) $(firstword $(subst -, ,$(p))),$(PEER_NAMES_TAKEN) cont child),\
    $(error peer $(p): the name (or its first word) is a build's or a variant axis value's: rename it))\
  $(foreach v,WHAT CHECKOUT CHECK SRC FLAGS,$(if $(PEER_$(v)_$(p)),,$(error peer $(p): its fragment sets no PEER_$(v)_$(p))))\
  $(foreach v,WHAT CHECKOUT CHECK SKIP NEEDS NEEDS_WHY FLAGS,$(if $(findstring ",$(PEER_$(v)_$(p)))$(findstring \,$(PEER_$(v)_$(p)))$(findstring |,$(PEER_$(v)_$(p)))$(if $(filter WHAT,$(v)),,$(findstring ',$(PEER_$(v)_$(p)))),\
    $(error peer $(p): PEER_$(v)_$(p) holds a double quote, backslash, |$(if $(filter WHAT,$(v)),, or '))))\
  $(if $(CC_$(p)),,$(eval CC_$(p) := $(CC)))$(if $(VAR_$(p)),,$(eval VAR_$(p) := -DFK_BASELINE_PEER=1)))
# The harness's list of peers, from the fragments (hx_peer_rows, harness/config/variants.h);
# rewritten only when it changes.
$(PEER_LIST_C): FORCE
	@mkdir -p $(@D)
	@{ echo '/* peers.c: generated by the Makefile from the fragments peers/NAME.mk and EXTRA_PEERS; do not edit */'; \
	   echo '#include "harness/config/variants.h"'; echo 'const hx_peer_row hx_peer_rows[] = {'; \
	   $(foreach p,$(PEERS),printf '    {"%s", "%s"},\n' '$(p)' '$(subst ','\'',$(PEER_WHAT_$(p)))';) \
	   echo '    {0, 0},'; echo '};'; } > $@.tmp; cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
ifneq ($(PEERS_DIR),)
$(foreach p,$(PEERS),$(eval $(call OBJ_RULES,rel,$(p))))
# A C++ peer's kernels: compiled with the peer's compiler and flags against its checkout
# (-isystem: its headers' warnings are not ours), with our warnings on our code.
define PEER_CXX_RULES
EXTRA_OBJ_$(1) += $(BUILD)/peers/$(1)/kernels.o
$(BUILD)/peers/$(1)/kernels.o: $(PEER_SRC_$(1)) $(BUILD)/peers/$(1)/.checkout
	@mkdir -p $$(@D)
	$(PEER_FLAGS_$(1)) -D_GNU_SOURCE -I. -isystem $(PEERS_ABS)/$(PEER_CHECKOUT_$(1))$(if $(PEER_INCLUDE_$(1)),/$(PEER_INCLUDE_$(1))) \
	  -MD -MP -Wall -Wextra -Wshadow $(WERROR) -c $$< -o $$@
endef
$(foreach p,$(PEERS),$(if $(filter %.cpp,$(PEER_SRC_$(p))),$(eval $(call PEER_CXX_RULES,$(p)))))
# A peer's stamp: its flags, the checkout's path, git revision and uncommitted changes;
# rewritten (and its objects rebuilt) only when one of them changes.
$(BUILD)/peers/%/.checkout: FORCE
	@mkdir -p $(@D)
	@d=$(PEERS_ABS)/$(PEER_CHECKOUT_$*); top=$$(git -C $$d rev-parse --show-toplevel 2>/dev/null); \
	 { echo '$(PEER_FLAGS_$*) $(VAR_$*)'; echo "$$d"; \
	   if [ "$$top" = "$$(cd $$d && pwd -P)" ]; then git -C $$d rev-parse HEAD; git -C $$d status --porcelain | sha1sum; fi; \
	 } > $@.tmp; cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
.PRECIOUS: $(BUILD)/peers/%/.checkout
$(foreach p,$(PEERS),$(eval $(patsubst %.c,$(BUILD)/rel/$(p)/%.o,$(filter %.c,$(PEER_SRC_$(p)))): $(BUILD)/peers/$(p)/.checkout))

# What a peer driver reports about its peer: the checkout's git revision and the flags.
$(BUILD)/peers/%/peerinfo.c: FORCE
	@mkdir -p $(@D)
	@{ d=$(PEERS_ABS)/$(PEER_CHECKOUT_$*); top=$$(git -C $$d rev-parse --show-toplevel 2>/dev/null); \
	   if [ "$$top" = "$$(cd $$d && pwd -P)" ]; then rev=$$(git -C $$d rev-parse HEAD); \
	   else rev="unknown (not a git checkout)"; fi; \
	   dirty=$$(git -C $$d status --porcelain 2>/dev/null | head -1); \
	   cc=$$($(firstword $(PEER_FLAGS_$*)) --version | head -1 | sed 's/"/\\"/g'); \
	   printf 'const char bench_peer_revision[] = "%s%s (%s)";\n' "$$rev" "$${dirty:+-dirty}" "$$d"; \
	   printf 'const char bench_peer_flags[] = "%s [%s]";\n' '$(PEER_FLAGS_$*)' "$$cc"; } > $@.tmp; \
	 cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
.PRECIOUS: $(BUILD)/peers/%/peerinfo.c
$(BUILD)/peers/%/peerinfo.o: $(BUILD)/peers/%/peerinfo.c
	$(CC) -c $< -o $@
define PEER_DRIVER_RULES
$(2)/fk-bench-$(1): $(3) $$(patsubst %.c,$(BUILD)/rel/$(1)/%.o,$$(BENCH_SRC) $(filter %.c,$(PEER_SRC_$(1)))) \
                            $(BUILD)/rel/$(1)/buildinfo.o $(BUILD)/peers/$(1)/peerinfo.o $$(EXTRA_OBJ_$(1))
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(MODE_rel) $$(LDMODE_rel) -pthread $$^ -o $$@ $$(BENCH_LIBS) $(PEER_LIBS_$(1))
endef
$(foreach p,$(PEERS),$(eval $(call PEER_DRIVER_RULES,$(p),$(BUILD)/bin,)))
$(foreach l,$(LAYOUT_PADS),$(foreach p,$(PEERS),\
  $(eval $(call PEER_DRIVER_RULES,$(p),$(BUILD)/layout/p$(l),$(BUILD)/layout/pad$(l).o))))
else
$(foreach p,$(PEERS),$(BUILD)/bin/fk-bench-$(p)):
	@echo "$@: a peer driver is built from a checkout: make peers PEERS_DIR=DIR" >&2; exit 2
endif

peers:
	@if [ -z "$(PEERS_DIR)" ]; then echo "make peers: give PEERS_DIR=DIR, a directory holding checkouts named $(sort $(foreach p,$(PEERS),$(PEER_CHECKOUT_$(p))))" >&2; exit 2; fi
	@if [ ! -d "$(PEERS_DIR)" ]; then echo "make peers: PEERS_DIR=$(PEERS_DIR) is not a directory" >&2; exit 2; fi
	@built=""; for facts in $(foreach p,$(PEERS),'$(p)|$(PEER_CHECKOUT_$(p))|$(PEER_CHECK_$(p))|$(PEER_SKIP_$(p))|$(PEER_NEEDS_$(p))|$(PEER_NEEDS_WHY_$(p))'); do \
	   IFS='|' read -r p c f skip needs why <<< "$$facts"; \
	   if [ ! -e "$(PEERS_ABS)/$$c/$$f" ]; then echo "peers: $$p: no checkout at $(PEERS_ABS)/$$c (no $$c/$$f; skipped)"; \
	   elif [ -n "$$skip" ]; then echo "peers: $$p: $$skip; skipped"; \
	   elif [ -n "$$needs" ] && ! command -v $$needs >/dev/null; then \
	     echo "peers: $$p: needs $$needs ($$why)" >&2; exit 1; \
	   else $(MAKE) --no-print-directory PEERS_DIR=$(PEERS_ABS) $(BUILD)/bin/fk-bench-$$p || exit 1; built="$$built $$p"; fi; done; \
	 echo "peers built:$${built:- none}"
# One line a peer: name, checkout, the file that must exist in it, and a reason it is not
# built here (scripts/peers-test.sh reads it).
peer-facts:
	@$(foreach p,$(PEERS),printf '%s\t%s\t%s\t%s\n' '$(p)' '$(PEER_CHECKOUT_$(p))' '$(PEER_CHECK_$(p))' '$(PEER_SKIP_$(p))';)

# build/bin/fk-switch: the context-switch microbenchmark (fibers, raw switch, thread hand-off).
FK_SWITCH := $(BUILD)/bin/fk-switch
$(FK_SWITCH): $(BUILD)/rel/common/bench/fk_switch.o $(BUILD)/rel/common/runtime/fiber.o $(BUILD)/rel/common/runtime/guard.o
	@mkdir -p $(@D)
	$(CC) $(MODE_rel) $(LDMODE_rel) -pthread $^ -o $@

# ---- the harness ------------------------------------------------------------------------------
$(BUILD)/bin/forkscope: $(patsubst %.c,$(BUILD)/rel/common/%.o,$(HARNESS_SRC)) $(call desc_objs,rel) $(HARNESS_RT_LIB)
	@mkdir -p $(@D)
	$(CC) $(MODE_rel) $(LDMODE_rel) -pthread $^ -o $@ $(HARNESS_LIBS)

define COMMON_TEST_RULES
$(BUILD)/$(1)/common/tests/$(2): $(BUILD)/$(1)/common/tests/$(2).o $$(patsubst %.c,$(BUILD)/$(1)/common/%.o,$$(HARNESS_LIB_SRC)) $$(call desc_objs,$(1)) \
                                 $(BUILD)/$(1)/cont-seg/libforkscope.a
	$$(CC) $$(MODE_$(1)) $$(LDMODE_$(1)) -pthread $$^ -o $$@ $$(HARNESS_LIBS)
endef
$(foreach m,$(MODES),$(foreach t,$(COMMON_TESTS),$(eval $(call COMMON_TEST_RULES,$(m),$(t)))))
common_tests = $(foreach t,$(COMMON_TESTS),$(BUILD)/$(1)/common/tests/$(t))
# The harness's facts about every kernel and configuration (scripts/golden-test.sh compares them
# with tests/golden/facts.txt): a tool, not a test.
$(eval $(call COMMON_TEST_RULES,rel,golden_facts))
GOLDEN_FACTS := $(BUILD)/rel/common/tests/golden_facts

# ---- fuzz targets (libFuzzer) ------------------------------------------------------------------
# build/fuzz/fuzz_X from fuzz/fuzz_X.c: clang -fsanitize=fuzzer,address,undefined, every object
# instrumented (compiled with the cont-seg variant's flags; the harness ignores them).
# make check-fuzz (in make check): each target replays its regression inputs
# (fuzz/regressions/X/) and its committed corpus (fuzz/corpus/X/), then fuzzes for
# FUZZ_SECONDS (default 5); make fuzz: FUZZ_SECONDS=600 each, new inputs kept in
# build/fuzz/corpus/X (see fuzz/README.md).
FUZZ_TARGETS := config results csv output cli topology
FUZZ_CC      := $(CLANG)
MODE_fuzz    := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_LINK    := -fsanitize=fuzzer,address,undefined
FUZZ_FLAGS   := $(FUZZ_CC) $(CFLAGS_BASE) $(MODE_fuzz) $(VAR_cont-seg)
$(BUILD)/fuzz/.flags: FORCE
	@mkdir -p $(@D)
	@echo '$(FUZZ_FLAGS)' | cmp -s - $@ || echo '$(FUZZ_FLAGS)' > $@
$(BUILD)/fuzz/obj/%.o: %.c $(BUILD)/fuzz/.flags
	@mkdir -p $(@D)
	$(FUZZ_FLAGS) -c $< -o $@
fuzz_objs = $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(1))
# (the kernels' descriptions, for the harness's targets)
$(BUILD)/fuzz/desc/%.o: %.c $(BUILD)/fuzz/.flags
	@mkdir -p $(@D)
	$(FUZZ_FLAGS) $(VAR_desc) -c $< -o $@
FUZZ_DESC_OBJ := $(patsubst %.c,$(BUILD)/fuzz/desc/%.o,$(KERNEL_SRC))
FUZZ_RT_SRC := $(RUNTIME_SRC)
# Each target links the harness library (with the runtime it calls: env.json's clock) unless
# it says otherwise.
FUZZ_SRC_cli     := bench/args.c bench/registry.c bench/options.c $(wildcard kernels/*.c) $(wildcard uts/*.c) \
                    $(EXTRA_KERNEL_SRC) $(FUZZ_RT_SRC)
FUZZ_SRC_topology := $(FUZZ_RT_SRC)
FUZZ_LIBS_cli     := $(BENCH_LIBS)
FUZZ_LIBS_topology := -lhwloc -lm
define FUZZ_RULES
$(BUILD)/fuzz/fuzz_$(1): $$(call fuzz_objs,fuzz/fuzz_$(1).c $$(or $$(FUZZ_SRC_$(1)),$$(HARNESS_LIB_SRC) $$(FUZZ_RT_SRC))) \
                        $$(if $$(FUZZ_SRC_$(1)),,$$(FUZZ_DESC_OBJ))
	$$(FUZZ_CC) $$(FUZZ_LINK) -pthread $$^ -o $$@ $$(or $$(FUZZ_LIBS_$(1)),$$(HARNESS_LIBS))
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call FUZZ_RULES,$(t))))
FUZZERS := $(foreach t,$(FUZZ_TARGETS),$(BUILD)/fuzz/fuzz_$(t))
FUZZ_SECONDS ?= 5

# ---- top-level targets ---------------------------------------------------------------------
.PHONY: install uninstall peers peer-facts check-peers bundle layouts all setup check check-rel check-small check-chaos check-model check-slurm check-fuzz fuzz check-debug check-tsan check-asan check-aarch64 check-selftest warnings bench run clean

# The default experiment: configs/quick.json into results/quick (table, fits, plots).
RUN_CONFIG ?= configs/quick.json
run: setup
	@$(MAKE) --no-print-directory $(JOBS) $(DRIVERS) $(BUILD)/bin/forkscope
	$(BUILD)/bin/forkscope run $(RUN_CONFIG) --resume

# The fib overhead table through the harness: configs/overhead.json (T1/Ts and Ts/T2 of
# every runtime build as medians of per-round ratios; instructions, data reads and data
# writes per fib call by callgrind --cache-sim=yes, in instructions.csv and report.md) into
# results/overhead (the previous one kept as results/overhead.prev).
# With PEERS_DIR=DIR the peers whose checkouts DIR holds are built first and run beside.
# Run it on a quiet machine: anything else running spoils the times (not the counts).
bench: setup $(DRIVERS) $(BUILD)/bin/forkscope $(if $(PEERS_DIR),peers)
	@rm -rf results/overhead.prev; if [ -d results/overhead ]; then mv results/overhead results/overhead.prev; fi
	$(BUILD)/bin/forkscope run configs/overhead.json -o results/overhead
	@sed -n '/^## Overhead/,/^## Memory/p' results/overhead/report.md | sed '$$d'

# (the peers' copies: with PEERS_DIR, of each peer make peers has built)
layouts: $(LAYOUT_COPIES) $(BUILD)/bin/forkscope
	@if [ -n "$(PEERS_DIR)" ]; then for p in $(PEERS); do \
	   if [ -e $(BUILD)/bin/fk-bench-$$p ]; then $(MAKE) --no-print-directory PEERS_DIR=$(PEERS_ABS) \
	     $(foreach l,$(LAYOUT_PADS),$(BUILD)/layout/p$(l)/fk-bench-$$p) || exit 1; fi; done; fi
	@echo "layouts: $(foreach p,$(LAYOUT_PADS),$(BUILD)/layout/p$(p)) (.text moved by $(LAYOUT_PADS) bytes mod 64)"

all: $(call rt_tests,rel) $(call suite_tests,rel) $(call common_tests,rel) $(call span_tests,rel) $(DRIVERS) $(FK_SWITCH) $(if $(HARNESS_SRC),$(BUILD)/bin/forkscope)

setup:
	@scripts/setup.sh

# A relocatable tarball of this build (scripts/bundle.sh, docs/bundle.md): bin/forkscope,
# libexec/forkscope/ (every driver in build/bin; the peers when built, or with PEERS_DIR=DIR
# built first), lib/ (the shared libraries they load beyond glibc, found by $ORIGIN run
# paths), share/forkscope/ (configs, gnuplot scripts, BUNDLE.txt: build id, glibc floor).
BUNDLE := $(BUILD)/forkscope-bundle-$(GIT_REV).tar.gz
bundle: $(DRIVERS) $(FK_SWITCH) $(BUILD)/bin/forkscope $(if $(PEERS_DIR),peers)
	@BUILD=$(BUILD) scripts/bundle.sh $(BUNDLE)

# make install PREFIX=... DESTDIR=...: forkscope, its drivers, each runtime build's library
# (release and FK_DEBUG) with its pkg-config file, the headers, configs, gnuplot scripts and
# the manual page (scripts/install.sh; docs/runtime.md).  make uninstall removes them.
PREFIX ?= /usr/local
INSTALL_LIBS := $(foreach m,rel debug,$(foreach v,$(VARIANTS),$(BUILD)/$(m)/$(v)/libforkscope.a))
install: $(DRIVERS) $(FK_SWITCH) $(BUILD)/bin/forkscope $(INSTALL_LIBS)
	@BUILD=$(BUILD) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) \
	  FK_INSTALL_VARIANTS='$(foreach v,$(VARIANTS),$(v)=$(VAR_$(v));)' scripts/install.sh
uninstall:
	@PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install.sh --uninstall

# ---- make check: the suites, what each promises to run, and their summary ---------------------
# SUITE_<name> lists what suite <name> runs (a test binary, BIN::CASE,... for some of its
# cases, or a script that prints "N passed, N failed"); check-<name> runs exactly that list,
# and `make check` writes the same lists to build/check-manifest, so that the summary
# (scripts/run-tests.sh --summary) fails, naming it, for every promised binary that did not
# run -- it did not build, its suite was skipped -- as well as for a non-zero exit, a skip
# tests/skips does not expect, and a failed make.
# (the M:N workloads under the sanitizers: their barriers, counters and hand-offs are runtime
# code paths the runtime tests reach less often)
MN_SAN = $(foreach v,child-fiber cont-seg,$(BUILD)/$(1)/$(v)/tests/test_kernels)
SAN_SUITE = $(call rt_tests,$(1)) $(addsuffix ::mn_kernels_verified$(,)mn_workloads_lines,$(call MN_SAN,$(1)))
SUITE_rel      = $(call rt_tests,rel) $(call suite_tests,rel) $(call common_tests,rel) $(call span_tests,rel) scripts/span-test.sh scripts/compile-fail.sh \
                 scripts/switch-smoke.sh scripts/check-layout.py scripts/trace-test.sh scripts/deep-join-test.sh \
                 scripts/bundle-test.sh scripts/tools-test.sh scripts/golden-test.sh scripts/extra-kernel-test.sh \
                 scripts/beat-suite.sh scripts/install-test.sh
SUITE_model    = scripts/check-models.sh
SUITE_slurm    = scripts/slurm-e2e.sh scripts/slurm-nodes.sh
SUITE_fuzz     = scripts/run-fuzz.sh
SUITE_debug    = $(call rt_tests,debug)
SUITE_small    = $(small_tests) $(popat_tests)
SUITE_chaos    = $(chaos_tests)
SUITE_tsan     = $(call SAN_SUITE,tsan)
SUITE_asan     = $(call SAN_SUITE,asan) $(call span_tests,asan)
SUITE_aarch64  = scripts/qemu-aarch64-test.sh
SUITE_selftest = scripts/selftest.sh
SUITE_peers    = scripts/peers-test.sh
CHECK_SUITES   := rel model slurm fuzz debug small chaos tsan asan aarch64 peers selftest
# What a suite's list needs built (binaries, not scripts; BIN::CASES is BIN)
suite_bins = $(filter $(BUILD)/%,$(foreach b,$(SUITE_$(1)),$(firstword $(subst ::, ,$(b)))))
CHECK_BUILD = $(sort $(foreach s,$(CHECK_SUITES),$(call suite_bins,$(s)))) $(DRIVERS) $(FK_SWITCH) \
              $(BUILD)/bin/forkscope $(BUILD)/aarch64/tests/test_fiber $(FUZZERS) $(GOLDEN_FACTS) $(LAYOUT_COPIES)
# (exported: every suite's scripts/run-tests.sh writes and reads this build tree's files)
export TEST_MANIFEST := $(BUILD)/check-manifest
export TEST_TOTALS   := $(BUILD)/test-totals

# Build in parallel (-k: all that builds), then run the suites one after another (their
# output stays readable); the summary judges both makes' statuses with the manifest.
check: setup
	@rm -f $(TEST_TOTALS); mkdir -p $(BUILD)
	@printf '%s\t%s\n' $(foreach s,$(CHECK_SUITES),$(foreach b,$(SUITE_$(s)),$(s) $(b))) > $(TEST_MANIFEST)
	@$(MAKE) --no-print-directory $(JOBS) -k $(CHECK_BUILD); b=$$?; \
	 $(MAKE) --no-print-directory -j1 -k $(addprefix check-,$(CHECK_SUITES)); s=$$?; \
	 scripts/run-tests.sh --summary --make-status build=$$b --make-status suites=$$s

check-rel: $(call suite_bins,rel) $(DRIVERS) $(FK_SWITCH) $(BUILD)/bin/forkscope $(GOLDEN_FACTS) $(LAYOUT_COPIES)
	@scripts/run-tests.sh rel $(SUITE_rel)
# The peers whose checkouts PEERS_DIR holds (make peers); without PEERS_DIR, one skip line.
check-peers: $(if $(PEERS_DIR),peers) $(BUILD)/bin/forkscope $(BUILD)/bin/fk-bench-serial $(BUILD)/bin/fk-bench-cont-seg
	@PEERS_DIR=$(PEERS_ABS) BUILD=$(BUILD) scripts/run-tests.sh peers $(SUITE_peers)
check-aarch64: $(BUILD)/aarch64/tests/test_fiber
	@scripts/run-tests.sh aarch64 $(SUITE_aarch64)
check-debug: $(call suite_bins,debug)
	@scripts/run-tests.sh debug $(SUITE_debug)
# Deques of 4 slots (growth and wrap under steals all the time), FK_DEBUG checks on
check-small: $(call suite_bins,small)
	@scripts/run-tests.sh small $(SUITE_small)

# The same with random yields and sleeps at every protocol step (FK_CHAOS, runtime/chaos.h)
check-chaos: $(call suite_bins,chaos)
	@TEST_TIMEOUT_SCALE=4 scripts/run-tests.sh chaos $(SUITE_chaos)

# The protocols' SPIN models (models/), verified at small bounds, and their mutations refuted
check-model:
	@scripts/run-tests.sh model $(SUITE_model)

# Every parser fuzzed briefly from its corpus, its regressions replayed (fuzz/)
check-fuzz: $(FUZZERS)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/run-tests.sh fuzz $(SUITE_fuzz)
# Long fuzzing: FUZZ_SECONDS per target (default 600), new inputs in build/fuzz/corpus/
fuzz: $(FUZZERS)
	@FUZZ_SECONDS=$(if $(filter command line,$(origin FUZZ_SECONDS)),$(FUZZ_SECONDS),600) FUZZ_KEEP=1 scripts/run-fuzz.sh

# forkscope slurm end to end on a one-node SLURM cluster and on four nodes in namespaces, made
# by the tests (slurm-wlm, munge, iproute2)
check-slurm: $(BUILD)/bin/forkscope $(DRIVERS)
	@scripts/run-tests.sh slurm $(SUITE_slurm)

check-tsan: $(call suite_bins,tsan)
	@TEST_TIMEOUT_SCALE=6 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1" scripts/run-tests.sh tsan $(SUITE_tsan)
check-asan: $(call suite_bins,asan)
	@TEST_TIMEOUT_SCALE=4 ASAN_OPTIONS="detect_leaks=1 allocator_may_return_null=1" UBSAN_OPTIONS="print_stacktrace=1" scripts/run-tests.sh asan $(SUITE_asan)

# The suite tests itself: sabotaged copies in a temporary directory (a suite missing, a
# non-zero exit after a clean closing line, a model search cut short, an unexpected skip)
# must each make the summary fail, and the unsabotaged controls pass.
check-selftest:
	@scripts/run-tests.sh selftest $(SUITE_selftest)

warnings:
	@$(MAKE) --no-print-directory BUILD=build/warn-gcc CC=$(CC) WERROR=-Werror all
	@$(MAKE) --no-print-directory BUILD=build/warn-clang CC=$(CLANG) WERROR=-Werror all

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
