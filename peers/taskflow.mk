# taskflow.mk — the Taskflow peer (github.com/taskflow/taskflow), included by the Makefile:
# header-only C++20 (its CMake build's standard), Release flags -O3 -DNDEBUG, g++.
PEERS                  += taskflow
PEER_WHAT_taskflow     := Taskflow: tf::Subflow recursion, work-stealing executor
PEER_CHECKOUT_taskflow := taskflow
PEER_CHECK_taskflow    := taskflow/taskflow.hpp
PEER_SRC_taskflow      := peers/taskflow.cpp
PEER_FLAGS_taskflow    := $(CXX) -std=c++20 -O3 -DNDEBUG -pthread
PEER_LIBS_taskflow     := -lstdc++
