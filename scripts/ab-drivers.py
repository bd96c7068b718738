#!/usr/bin/env python3
# ab-drivers.py — paired A/B of driver binaries (two builds of one variant, say), the way
# docs/runtime.md's fast-path figures were taken: every round runs each driver once, in a
# shuffled order, pinned to one CPU, and each driver's best of R repetitions is divided by
# the first driver's in the same round; prints the median, quartiles and range of those
# ratios.  The first driver is the reference (the serial projection: no --workers).
#
#   scripts/ab-drivers.py ROUNDS "KERNEL ARGS" LABEL=DRIVER ... [--cpu N] [--reps R]
#   scripts/ab-drivers.py 7 "fib --n 38" serial=build/bin/fk-bench-serial \
#       old=/tmp/fk-bench-cont-lin.old new=build/bin/fk-bench-cont-lin
import argparse, json, random, statistics, subprocess, sys

ap = argparse.ArgumentParser(description="paired A/B rounds of driver binaries")
ap.add_argument("rounds", type=int)
ap.add_argument("kernel", help='the kernel and its options, e.g. "fib --n 38"')
ap.add_argument("drivers", nargs="+", help="LABEL=PATH; the first is the reference")
ap.add_argument("--cpu", default="1", help="the CPU every run is pinned to (taskset -c)")
ap.add_argument("--reps", default="3")
a = ap.parse_args()
bins = []
for d in a.drivers:
    if "=" not in d:
        sys.exit(f"ab-drivers: '{d}' is not LABEL=PATH")
    bins.append(d.split("=", 1))
ratios = {label: [] for label, _ in bins}
random.seed(1)
for r in range(a.rounds):
    t = {}
    order = bins[:]
    random.shuffle(order)
    for k, (label, path) in enumerate(order):
        args = ["taskset", "-c", a.cpu, path, "--kernel"] + a.kernel.split() + ["--reps", a.reps, "--warmup", "1"]
        if (label, path) != tuple(bins[0]):
            args += ["--workers", "1"]
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"ab-drivers: {' '.join(args)} exited with {p.returncode}: {p.stderr.strip()[-400:]}")
        t[label] = min(json.loads(p.stdout.strip().splitlines()[-1])["times"])
    for label, _ in bins:
        ratios[label].append(t[label] / t[bins[0][0]])
    print(f"round {r + 1}/{a.rounds}", file=sys.stderr)
print(f"{a.kernel}: time / {bins[0][0]}'s, {a.rounds} paired rounds, CPU {a.cpu}")
for label, _ in bins[1:]:
    v = sorted(ratios[label])
    q = len(v) // 4
    print(f"  {label:14s} median {statistics.median(v):.3f}  IQR [{v[q]:.3f}..{v[-1 - q]:.3f}]  "
          f"range [{v[0]:.3f}..{v[-1]:.3f}]")
