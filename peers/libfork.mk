# libfork.mk — libfork (github.com/ConorWilliams/libfork), the paper's system, included by
# the Makefile: header-only C++23, built with clang++-19 (Debian's clang-19, installed by
# make setup; g++ 12 makes it 1.4x slower), hwloc on as its CMake build turns it on when
# hwloc is found.  Two drivers from one checkout: its busy and lazy pools.
PEERS         += libfork-busy libfork-lazy
LIBFORK_CXX   := clang++-19
LIBFORK_FLAGS := $(LIBFORK_CXX) -std=c++23 -O3 -DNDEBUG -march=$(PEER_MARCH) -pthread -DLF_USE_HWLOC
PEER_WHAT_libfork-busy := libfork, the paper's system: continuation stealing, coroutines, busy_pool, clang++-19
PEER_WHAT_libfork-lazy := libfork, the paper's system: continuation stealing, coroutines, lazy_pool (idle workers sleep), clang++-19
$(foreach p,libfork-busy libfork-lazy,$(eval PEER_CHECKOUT_$(p) := libfork)$(eval PEER_CHECK_$(p) := include/libfork.hpp) \
  $(eval PEER_INCLUDE_$(p) := include)$(eval PEER_SRC_$(p) := peers/libfork.cpp)$(eval PEER_LIBS_$(p) := -lstdc++) \
  $(eval PEER_NEEDS_$(p) := $(LIBFORK_CXX))$(eval PEER_NEEDS_WHY_$(p) := C++23, which make setup installs (Debian package clang-19)))
PEER_FLAGS_libfork-busy := $(LIBFORK_FLAGS)
PEER_FLAGS_libfork-lazy := $(LIBFORK_FLAGS) -DPEER_LIBFORK_LAZY
