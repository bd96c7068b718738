# nowhat.mk — a peer fragment that forgets PEER_WHAT_p: the Makefile refuses it, naming it
# (scripts/extra-kernel-test.sh).
PEERS              += nowhat
PEER_CHECKOUT_nowhat := nowhat
PEER_CHECK_nowhat  := nowhat.h
PEER_SRC_nowhat    := tests/extra_peer/toy.c
PEER_FLAGS_nowhat  := $(CC) -O2
