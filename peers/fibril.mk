# fibril.mk — the Fibril peer (github.com/chaoran/fibril, x86-64 only), included by the
# Makefile.  Its runtime's C files at -O3 (its autotools build's default is -g -O2; -O3 as
# the issue's side-by-side measured it), -pthread, -fgnu89-inline (its headers' `extern
# inline` functions are gnu89-style: with C99 semantics each file would define them), and
# fibrili.c at -O0: its scheduler jumps back into fibrili_init's frame by saved rsp/rbp and
# pc, which gcc 12 at -O1 and above lays out differently (the process hangs at start, in
# malloc, at any worker count; measured).  Its headers are included as <fibril/...>: a link
# to DIR/fibril/src in build/peers/fibril/include; debug.h's "config.h" is an empty file.
PEERS                += fibril
PEER_WHAT_fibril     := Fibril: continuation stealing on native stacks, x86-64 only; at most one worker per CPU, forks nested at most 999 deep
PEER_CHECKOUT_fibril := fibril
PEER_CHECK_fibril    := src/fibrili.h
PEER_SKIP_fibril     := $(if $(filter x86_64,$(UNAME_M)),,x86-64 only (its stack switching is x86-64 assembly))
PEER_SRC_fibril      := peers/fibril.c
FIBRIL_FLAGS         := -O3 -fgnu89-inline -pthread
FIBRIL_SRC           := deque fibrili param pool runtime stack stats mutex
PEER_FLAGS_fibril    := $(CC) $(FIBRIL_FLAGS) (fibrili.c -O0)
CC_fibril            := $(CC)
# (our files as GNU C with gnu89 inlines for its headers: `asm` register variables, nested
# functions at each fork, `extern inline`; none of our headers has a non-static inline)
VAR_fibril           := -DFK_BASELINE_PEER=1 -std=gnu11 -fgnu89-inline -isystem $(BUILD)/peers/fibril/include \
                        -isystem $(BUILD)/peers/fibril/include/fibril -MD
EXTRA_OBJ_fibril     := $(patsubst %,$(BUILD)/peers/fibril/%.o,$(FIBRIL_SRC))
ifneq ($(PEERS_DIR),)
$(BUILD)/peers/fibril/include/fibril: $(PEERS_ABS)/fibril/src/fibrili.h
	@mkdir -p $(@D)
	ln -sfn $(PEERS_ABS)/fibril/src $@
	touch $(BUILD)/peers/fibril/config.h
$(BUILD)/peers/fibril/%.o: $(PEERS_ABS)/fibril/src/%.c $(BUILD)/peers/fibril/include/fibril $(BUILD)/peers/fibril/.checkout
	$(CC) $(FIBRIL_FLAGS) $(if $(filter fibrili,$*),-O0) -MMD -MP -I$(BUILD)/peers/fibril -I$(PEERS_ABS)/fibril/src -c $< -o $@
$(patsubst %.c,$(BUILD)/rel/fibril/%.o,$(BENCH_SRC) peers/fibril.c): $(BUILD)/peers/fibril/include/fibril
endif
