/* forkscope/config.h — every tunable of the runtime, in one place.
 *
 * Compile-time axes (they sit on the fork/join fast path, so a build fixes them):
 *   FK_STEAL   FK_STEAL_CONT (continuation stealing, default) or FK_STEAL_CHILD
 *   FK_STACK   FK_STACK_SEG (segmented geometric stacks, default), FK_STACK_LIN (linear),
 *              FK_STACK_NATIVE (frames in the tasks' own C stack frames; child stealing
 *              only: a join that must wait steals meanwhile instead of suspending), or
 *              FK_STACK_FIBER (frames in the tasks' C stack frames on stackful fibers; child
 *              stealing only: a join that must wait parks its fiber and the worker goes on
 *              with another fiber, the marl / FiberTaskingLib model)
 *   FK_STATS   1 (default): per-worker statistics of the slow paths (steals, sleeps,
 *              stacklets...), which cost nothing on the fork/join fast path; 2: also
 *              count every fork and call (a few instructions each); 0: no counters
 *   FK_DEBUG   1: cheap misuse checks that abort with a message; 0 (default): none
 * Run-time settings have defaults here; fk_pool_opts_init() applies the environment
 * (FORKSCOPE_* variables, see forkscope.h) on top of them. */
#ifndef FORKSCOPE_CONFIG_H
#define FORKSCOPE_CONFIG_H

#define FK_STEAL_CONT 1
#define FK_STEAL_CHILD 2
#define FK_STACK_SEG 1
#define FK_STACK_LIN 2
#define FK_STACK_NATIVE 3
#define FK_STACK_FIBER 4

#ifndef FK_STEAL
#define FK_STEAL FK_STEAL_CONT
#endif
#ifndef FK_STACK
#define FK_STACK FK_STACK_SEG
#endif
#ifndef FK_STATS
#define FK_STATS 1
#endif
#ifndef FK_DEBUG
#define FK_DEBUG 0
#endif

/* FK_ACCOUNT=1 (default): per-worker time accounting and traces can be switched on at run
 * time (fk_pool_opts.account; off by default, then a transition costs a load and a branch on
 * the slow paths); 0: compiled out. */
#ifndef FK_ACCOUNT
#define FK_ACCOUNT 1
#endif
/* Events each worker's trace log holds by default (24 bytes each; FORKSCOPE_TRACE_EVENTS) */
#ifndef FK_TRACE_EVENTS
#define FK_TRACE_EVENTS (1u << 20)
#endif

/* FK_SPAN=1: the span build (work and span of the DAG, runtime/span.c; one worker). */
#ifndef FK_SPAN
#define FK_SPAN 0
#endif
/* The span build's log of events and strand costs (MiB; FORKSCOPE_SPAN_LOG_MIB overrides) */
#ifndef FK_SPAN_LOG_MIB
#define FK_SPAN_LOG_MIB 1024
#endif
#if FK_SPAN && (FK_STEAL != FK_STEAL_CONT || (FK_STACK == FK_STACK_NATIVE || FK_STACK == FK_STACK_FIBER))
#error "FK_SPAN measures on continuation stealing with frame stacks (cont-seg, cont-lin): the serial order on one worker"
#endif
#if FK_STEAL != FK_STEAL_CONT && FK_STEAL != FK_STEAL_CHILD
#error "FK_STEAL must be FK_STEAL_CONT (1) or FK_STEAL_CHILD (2)"
#endif
#if FK_STACK != FK_STACK_SEG && FK_STACK != FK_STACK_LIN && FK_STACK != FK_STACK_NATIVE && FK_STACK != FK_STACK_FIBER
#error "FK_STACK must be FK_STACK_SEG (1), FK_STACK_LIN (2), FK_STACK_NATIVE (3) or FK_STACK_FIBER (4)"
#endif
#if FK_STACK == FK_STACK_NATIVE && FK_STEAL != FK_STEAL_CHILD
#error "native frames need child stealing: continuation stealing on the native C stack (Fibril's stack switching) is not implemented"
#endif
#if FK_STACK == FK_STACK_FIBER && FK_STEAL != FK_STEAL_CHILD
#error "fibers run tasks on their C stacks (native frames): they need child stealing (a parked fiber is the continuation)"
#endif
/* Frames in the tasks' own C stack frames (native and fiber builds): never resumed by a
 * worker, never on a frame stack. */
#define FK__NATIVE_FRAMES (FK_STACK == FK_STACK_NATIVE || FK_STACK == FK_STACK_FIBER)

/* The TLS model of the worker's hot state (forkscope/impl.h): "local-exec" (one instruction
 * per access) when the library is linked into an executable; "initial-exec" when it is
 * linked into a shared object. */
#ifndef FK_TLS_MODEL
#define FK_TLS_MODEL "local-exec"
#endif

/* Most workers a pool may have. */
#ifndef FK_MAX_WORKERS
#define FK_MAX_WORKERS 1024
#endif

/* Child stealing keeps forked children in the deque as fixed-size records: a thunk, the
 * parent link, the result address and this many 8-byte words of arguments (so a record is
 * one 64-byte cache line).  A task whose arguments do not fit fails to compile. */
#ifndef FK_RECORD_ARG_WORDS
#define FK_RECORD_ARG_WORDS 5
#endif

/* Initial deque capacity (slots, a power of two); deques double when full. */
#ifndef FK_DEQUE_INITIAL
#define FK_DEQUE_INITIAL 1024
#endif
/* 1: a thief's request publishes one private slot, not the oldest half (A/B runs; deque.c). */
#ifndef FK_PUBLISH_ONE
#define FK_PUBLISH_ONE 0
#endif
/* 1: a pop takes the slot its push returned, when the deque's cursor is just past it (a
 * compare, which the processor predicts), so that the cursor's value does not run from
 * store to load through every pop of the subtree before it (impl.h, fk__pop_record_at);
 * the slot's address then lives in a register across the child's call.  0: a pop stores
 * the loaded cursor less one.  The default is 1 for native frames (child-native) only:
 * measured on fib beside the serial projection (a Zen 5 VM, 11 paired rounds), 1 took
 * child-native from 0.99-1.00 to 0.86, and made child-seg, child-lin and cont-lin 5-10%
 * slower (a callee-saved register more, or two) and cont-seg 5% faster (on a 16-core Intel
 * server, over 4 code layouts, child-native showed no difference).  With FK_WREGS (below:
 * cont-seg and cont-lin by default) or FK_LIVE (child-native by default) the pop has a way
 * of its own and FK_POP_AT changes nothing; -DFK_WREGS=0 or -DFK_LIVE=0 with -DFK_POP_AT=1
 * gives the pop above on those builds. */
#ifndef FK_POP_AT
#define FK_POP_AT (FK_STACK == FK_STACK_NATIVE)
#endif

/* 1: the live mark (child-native's default; docs/runtime.md, "Which deque the live mark
 * needs").  A task gets the deque's cursor from its caller as a hidden parameter and keeps
 * it in a register: no push or pop stores it, and none loads it.  The push writes the
 * record's link last, the pop clears it before it reads split, and a thief that forces a
 * publication finds the owner's bottom by the slots whose link is set (the live mark).  The deque's slots
 * are one reserved mapping that never moves (FK_LIVE_SLOTS of them), and its bottom never
 * jumps: a pop that finds its slot stolen lowers top to the owner's cursor (with a tag, so
 * that a thief's stale CAS fails) and clears the marks the thieves left (models/force.pml
 * -DLIVE -DLOWER).  0: the cursor in the hot state, stored at every push and pop.  Native
 * frames on the C stack (child-native) only: a fiber's task moves between workers. */
#ifndef FK_LIVE
#define FK_LIVE (FK_STACK == FK_STACK_NATIVE)
#endif
#if FK_LIVE && FK_STACK != FK_STACK_NATIVE
#error "FK_LIVE=1 is built for child stealing with native frames only (child-native)"
#endif
/* FK_LIVE: the slots a worker's deque reserves (address space only, PROT_NONE, made usable
 * 64 KiB at a time as the deque first reaches them; halved down to 2^16 slots where the
 * address space is limited).  More records than that waiting on one worker is a fatal error. */
#ifndef FK_LIVE_SLOTS
#define FK_LIVE_SLOTS (1u << 22)
#endif

/* 1: the worker's registers.  A task on a frame stack with continuation stealing gets the
 * frame stack's top and the deque's cursor from its parent as two hidden parameters, and
 * keeps them in locals: the fork's push, the frame's allocation and the child's call take
 * them from registers, not from the thread-local hot state that the previous push, pop or
 * free stored (a chain through store-to-load forwarding, a few cycles a link, that
 * instruction counts do not show; Lace passes its deque head to every task the same way).
 * The cursor's stores stay (a thief that forces a publication reads it); the top is stored
 * only where the runtime reads it, in slow paths (the top's rule, forkscope/impl_task.h):
 * a fast clone's frame, allocated and freed without a slow path, stores nothing.  Where
 * something may have moved them (the cursor: a failed pop, a call; the top: FK_ALLOC,
 * FK_FREE, a join that arrived; both: a resumption) the locals are loaded again.  0: every access goes through the hot state.
 * Only continuation stealing with frame stacks (cont-seg, cont-lin) has it. */
#ifndef FK_WREGS
#define FK_WREGS (!FK__NATIVE_FRAMES && FK_STEAL == FK_STEAL_CONT)
#endif
#if FK_WREGS && (FK__NATIVE_FRAMES || FK_STEAL != FK_STEAL_CONT)
#error "FK_WREGS=1 is built for continuation stealing with frame stacks only (cont-seg, cont-lin)"
#endif

/* Segmented stacks: bytes of the first stacklet of a stack (header included). */
#ifndef FK_STACKLET_BYTES
#define FK_STACKLET_BYTES 4096
#endif

/* Linear stacks: bytes reserved per stack (untouched pages cost nothing).
 * Run-time setting: fk_pool_opts.linear_stack_bytes, env FORKSCOPE_LINEAR_STACK. */
#ifndef FK_LINEAR_STACK_BYTES
#define FK_LINEAR_STACK_BYTES (256u << 20)
#endif

/* Native (pthread) stack of each worker.  The fast path recurses on it: a task tree
 * D levels deep needs roughly D times the C frame of its task function (~100-200 bytes
 * for the UTS task), so 256 MiB holds a million levels.  Only touched pages are resident.
 * Run-time setting: fk_pool_opts.thread_stack_bytes, env FORKSCOPE_THREAD_STACK. */
#ifndef FK_THREAD_STACK_BYTES
#define FK_THREAD_STACK_BYTES (256u << 20)
#endif

/* Fibers (FK_STACK_FIBER): the stack of each fiber (address space; only touched pages are
 * resident, and a pooled fiber keeps the pages it touched).  Tasks run on fibers, so this
 * bounds the depth of a task tree as FK_THREAD_STACK_BYTES does for native frames: the
 * same default, so that the same trees run (10,000 fibers reserve 2.5 TiB of the 128 TiB
 * of address space).  Run-time setting: fk_pool_opts.fiber_stack_bytes, env
 * FORKSCOPE_FIBER_STACK. */
#ifndef FK_FIBER_STACK_BYTES
#define FK_FIBER_STACK_BYTES (256u << 20)
#endif
/* Fibers: address space left without access below every fiber stack (an overflow faults in it). */
#ifndef FK_FIBER_GUARD_BYTES
#define FK_FIBER_GUARD_BYTES (64u << 10)
#endif
/* Fibers: the least stack a fiber gets (switch, signal frame, a few calls); a floor, not a setting. */
#define FK__FIBER_MIN_STACK (16u << 10)

/* Placement (runtime/place.h): every worker's C stack top, linear frame regions and deque
 * buffers sit at fixed addresses modulo this power of two, in every launch; a placed
 * mapping reserves this much more address space for a moment.  2^28 covers the address
 * bits that L1 caches and their predictors index and hash (12-27 on AMD's way predictor). */
#ifndef FK_PLACE_ALIGN
#define FK_PLACE_ALIGN ((uintptr_t)1 << 28)
#endif

/* Guard region below each worker's C stack (address space only).  A fault in it is
 * reported as a C stack overflow naming FORKSCOPE_THREAD_STACK. */
#ifndef FK_CSTACK_GUARD_BYTES
#define FK_CSTACK_GUARD_BYTES (1u << 20)
#endif

/* Idle policy.  A thief that fails this many steal rounds in a row backs off (busy) or
 * offers to sleep (lazy). */
#ifndef FK_STEAL_ROUNDS
#define FK_STEAL_ROUNDS 64
#endif
/* Random attempts per steal round, after the sweep of the closest victim group (victim.c). */
#ifndef FK__VICTIM_ROUND_RANDOM
#define FK__VICTIM_ROUND_RANDOM 8
#endif
/* Busy scheduler: longest pause (in pause instructions) between failed rounds, and the
 * number of consecutive failures after which it also yields the CPU. */
#ifndef FK_BUSY_MAX_PAUSE
#define FK_BUSY_MAX_PAUSE 1024
#endif
#ifndef FK_BUSY_YIELD_AFTER
#define FK_BUSY_YIELD_AFTER 1024
#endif

/* Greediness: a thief that has found no work for this long forces a victim holding private
 * work to publish it (a membarrier() in deque.c), one forcing at a time pool-wide and at
 * most once per half of it (and see FK_FORCE_SPACING).  The
 * default of fk_pool_opts.force_after_us (FORKSCOPE_FORCE_AFTER). */
#ifndef FK_FORCE_AFTER_NS
#define FK_FORCE_AFTER_NS 100000u
#endif
/* Heartbeat promotion (fk_pool_opts.promote = FK_PROMOTE_BEAT): the default period of the
 * beat, fk_pool_opts.beat_us (FORKSCOPE_BEAT_US), in ns. */
#ifndef FK_BEAT_NS
#define FK_BEAT_NS 100000u
#endif
/* ... and after a forcing that took t ns (the membarrier() mostly), none for SPACING x t
 * (at most SPACING_MAX_NS): forcing then costs the pool about 1/SPACING of its time,
 * whatever a membarrier() costs on the machine. */
#ifndef FK_FORCE_SPACING
#define FK_FORCE_SPACING 20u
#endif
#ifndef FK_FORCE_SPACING_MAX_NS
#define FK_FORCE_SPACING_MAX_NS 2000000u
#endif
/* Native frames: a join waiting for stolen children steals back from their thief
 * (leapfrogging: only the awaited child's descendants, so the C stack grows only as deep as
 * the task tree), and after every FK_LEAP_TRIES failed tries once from anyone, but only
 * while the worker's C stack is shallower than FK_LEAP_RANDOM_STACK bytes (run-time
 * setting: fk_pool_opts.leap_stack_bytes, env FORKSCOPE_LEAP_STACK): that bounds the C
 * stack at that plus one task tree's depth of frames.  1: a steal from anyone after each
 * failed leap.  Measured on a 16-core Xeon, UTS T3 at P = 16 (issue 19): 32 (Lace's
 * LACE_LEAP_RANDOM cadence) left the joins waiting 30% of their time and 1.3x child-seg's
 * time, 4 left 13-19%, 1 left 10% and child-seg's time; the thief of a scope's last
 * stolen child (the one a join leaps to) has often finished it, and holds nothing of the
 * scope's other children. */
#ifndef FK_LEAP_TRIES
#define FK_LEAP_TRIES 1
#endif
#ifndef FK_LEAP_RANDOM_STACK
#define FK_LEAP_RANDOM_STACK (16u << 20)
#endif

/* ---- the version and the build's name at link time -----------------------------------------
 * FK_VERSION_*: this header's version (the installed .pc files' Version:).  FK__ABI_SYM names
 * what the inline code of this header and the library must agree on: the stealing, the frame
 * stack, FK_DEBUG, the span build, the worker's registers, the pop's form, a record's size.
 * The library defines the symbol of its own build (sched.c) and every root a program runs
 * refers to the symbol of the flags it was compiled with (FK_RUN), so that compiling with one
 * build's flags and linking another build's library fails to link, naming the build the code
 * was compiled for (abi2 since 0.24: fk_times has FK_TIME_PROMOTE) (e.g. undefined reference to `fk__abi2_steal2_stack3_debug0_span0_wregs0_popat2_words5'; popat2: FK_LIVE). */
#define FK_VERSION_MAJOR 0
#define FK_VERSION_MINOR 24
#define FK_VERSION_PATCH 0
#define FK_VERSION "0.24.0"
#if FK_DEBUG
#define FK__ABI_DEBUG 1
#else
#define FK__ABI_DEBUG 0
#endif
#if FK_SPAN
#define FK__ABI_SPAN 1
#else
#define FK__ABI_SPAN 0
#endif
#if FK_WREGS /* (2: the top's rule, forkscope/impl_task.h) */
#define FK__ABI_WREGS 2
#else
#define FK__ABI_WREGS 0
#endif
#if FK_LIVE /* (the pop of the live mark: 2) */
#define FK__ABI_POPAT 2
#elif FK_POP_AT
#define FK__ABI_POPAT 1
#else
#define FK__ABI_POPAT 0
#endif
#if FK_STEAL == FK_STEAL_CONT
#define FK__ABI_STEAL 1
#elif FK_STEAL == FK_STEAL_CHILD
#define FK__ABI_STEAL 2
#else
#error "FK_STEAL must be FK_STEAL_CONT (1) or FK_STEAL_CHILD (2)"
#endif
#if FK_STACK == FK_STACK_SEG
#define FK__ABI_STACK 1
#elif FK_STACK == FK_STACK_LIN
#define FK__ABI_STACK 2
#elif FK_STACK == FK_STACK_NATIVE
#define FK__ABI_STACK 3
#elif FK_STACK == FK_STACK_FIBER
#define FK__ABI_STACK 4
#else
#error "FK_STACK must be FK_STACK_SEG (1), FK_STACK_LIN (2), FK_STACK_NATIVE (3) or FK_STACK_FIBER (4)"
#endif
#define FK__ABI_CAT(st, sk, d, sp, w, p, n) fk__abi2_steal##st##_stack##sk##_debug##d##_span##sp##_wregs##w##_popat##p##_words##n
#define FK__ABI_XCAT(st, sk, d, sp, w, p, n) FK__ABI_CAT(st, sk, d, sp, w, p, n)
#define FK__ABI_SYM                                                                                   \
    FK__ABI_XCAT(FK__ABI_STEAL, FK__ABI_STACK, FK__ABI_DEBUG, FK__ABI_SPAN, FK__ABI_WREGS, FK__ABI_POPAT, \
                 FK_RECORD_ARG_WORDS)

#endif
