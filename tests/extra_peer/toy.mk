# toy.mk — a peer kept outside peers/, as a user would add one, to test
# `make EXTRA_PEERS=tests/extra_peer/toy.mk` (scripts/extra-kernel-test.sh): a fixture, not
# a runtime.  Its "checkout" is a directory DIR/toy holding toy.h, which the test makes.
# A peer of your own starts from a copy of peers/lace.mk (a C peer) or peers/taskflow.mk
# (C++), as docs/suite.md says.
PEERS             += toy
PEER_WHAT_toy     := a test fixture: one thread, every fork a call; fib and nqueens only
PEER_CHECKOUT_toy := toy
PEER_CHECK_toy    := toy.h
PEER_SRC_toy      := tests/extra_peer/toy.c
PEER_FLAGS_toy    := $(CC) (no code of its own)
VAR_toy           := -DFK_BASELINE_PEER=1 -isystem $(PEERS_ABS)/toy
