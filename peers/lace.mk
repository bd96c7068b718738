# lace.mk — the Lace peer (github.com/trolando/lace), included by the Makefile (see its
# "peers" section for what each PEER_*_p variable means).  Lace is one C file; its CMake
# Release build compiles it with -O3 -DNDEBUG -pipe -march=native (here -march=$(PEER_MARCH)),
# and its lace_config.h with every option OFF (0).
PEERS              += lace
PEER_WHAT_lace     := Lace: child stealing, leapfrogging, native stacks
PEER_CHECKOUT_lace := lace
PEER_CHECK_lace    := src/lace.h
PEER_SRC_lace      := peers/lace.c
LACE_FLAGS         := -std=gnu11 -O3 -DNDEBUG -pipe -march=$(PEER_MARCH) -pthread
PEER_FLAGS_lace    := $(CC) $(LACE_FLAGS)
CC_lace            := $(CC)
# (-MD after the -MMD of CFLAGS_BASE: the peer's -isystem headers are dependencies too)
VAR_lace           := -DFK_BASELINE_PEER=1 -isystem $(PEERS_ABS)/lace/src -isystem $(BUILD)/peers/lace -MD
EXTRA_OBJ_lace     := $(BUILD)/peers/lace/lace.o
ifneq ($(PEERS_DIR),)
$(BUILD)/peers/lace/lace_config.h: $(PEERS_ABS)/lace/src/lace_config.h.in
	@mkdir -p $(@D)
	sed -E 's/^#cmakedefine01 ([A-Za-z_0-9]+).*/#define \1 0/' $< > $@
$(BUILD)/peers/lace/lace.o: $(PEERS_ABS)/lace/src/lace.c $(BUILD)/peers/lace/lace_config.h $(BUILD)/peers/lace/.checkout
	$(CC) $(LACE_FLAGS) -MMD -MP -I$(BUILD)/peers/lace -I$(PEERS_ABS)/lace/src -c $< -o $@
$(patsubst %.c,$(BUILD)/rel/lace/%.o,$(BENCH_SRC) peers/lace.c): $(BUILD)/peers/lace/lace_config.h
endif
