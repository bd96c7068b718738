#!/usr/bin/env python3
# layouts.py — the code-layout lottery from a sweep like configs/layouts.json: each build run
# as several copies whose code make layouts moved (variants named BASE-pN, "drivers":
# "build/layout/pN"), interleaved.  For every build, its T1/Ts in each copy, where Ts is, round
# by round, the median over the serial projection's copies (serial-pN) in that round: one
# layout of the serial code would move every ratio with it.  Then the least, the median and
# the most over the copies, and their spread (most / least), which is what the build's code
# position is worth, if it is more than noise: "p" is the share of 2000 shuffles of the copies'
# labels within each round in which the copies' mean log T1/Ts lie at least as far apart as they
# do (a small p: the copies differ; a large one: they cannot be told apart).  The shuffles assume no copy holds a fixed place in
# the round: configs/layouts.json's "paired" order draws each round's order afresh (with
# "interleaved" the copies run in config order, and a place in the round could pass for a
# layout).  The spread and p use the rounds every copy ran.  With copies of Lace (lace-pN),
# each build against Lace's per-round median the same way (a round's Ts or Lace median is over
# the copies that ran in it).
#
#   scripts/layouts.py DIR        (prints a table; writes DIR/layouts.csv)
import collections, csv, json, math, random, re, statistics, sys

SHUFFLES = 2000

if len(sys.argv) != 2:
    sys.exit("usage: layouts.py DIR (a results directory of a sweep like configs/layouts.json)")
d = sys.argv[1]
try:
    lines = open(d + "/raw.jsonl").read().splitlines()
except OSError as e:
    sys.exit(f"layouts.py: {e}")
# times[bench][base][pad][round] = time of that copy's run in that round
times = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(dict)))
for line in lines:
    try:
        r = json.loads(line)
    except ValueError:
        continue  # (a torn last line of an interrupted sweep)
    m = re.fullmatch(r"(.+)-p([0-9]+)", r.get("variant", ""))
    if not m or r.get("kind") != "timed" or r.get("status") != "ok" or r.get("workers") != 1:
        continue
    times[r["benchmark"]][m.group(1)][int(m.group(2))][r["rep"]] = r["time_s"]
if not any("serial" in t for t in times.values()):
    sys.exit(f"layouts.py: {d}: no P = 1 runs of copies named serial-pN (a sweep like configs/layouts.json, after make layouts)")


def per_round_median(copies):
    """round -> the median over the copies' times in that round"""
    rounds = collections.defaultdict(list)
    for per in copies.values():
        for k, t in per.items():
            rounds[k].append(t)
    return {k: statistics.median(v) for k, v in rounds.items()}


def ratios(copies, ref):
    """pad -> {round: the copy's time / ref's in that round}, for the rounds both have"""
    out = {p: {k: t / ref[k] for k, t in per.items() if k in ref} for p, per in copies.items()}
    return {p: v for p, v in out.items() if v}


def spread(by_pad):
    med = sorted(statistics.median(v.values()) for v in by_pad.values())
    return med, med[-1] / med[0]


def shared(by_pad):
    """by_pad kept to the rounds every copy has (the spread and its shuffles use the same ones)"""
    common = set.intersection(*(set(v) for v in by_pad.values()))
    return {p: {k: v[k] for k in common} for p, v in by_pad.items()}, len(common)


def log_range(cols, ncopies):
    """the range of the copies' mean log ratio (cols: one list per round, a ratio per copy)"""
    means = [sum(c[i] for c in cols) / len(cols) for i in range(ncopies)]
    return max(means) - min(means)


def noise_p(by_pad, rng):
    """the share of shuffles of the copies' labels within each round whose range of the copies'
    mean log ratio is at least the observed one (a mean of logs, not the median: over two-valued
    rounds a median jumps between the values, and the test would lose its power)"""
    rounds = sorted(next(iter(by_pad.values())))
    cols = [[math.log(by_pad[p][k]) for p in by_pad] for k in rounds]
    observed = log_range(cols, len(by_pad))
    hits = 0
    for _ in range(SHUFFLES):
        for c in cols:
            rng.shuffle(c)
        hits += log_range(cols, len(by_pad)) >= observed - 1e-12
    return (hits + 1) / (SHUFFLES + 1)


def fmt_p(p):
    if p != p:
        return "     -"
    return "<0.001" if p < 0.001 else f"{p:6.3f}"


rows = []
for bench, bases in sorted(times.items()):
    if "serial" not in bases:
        continue
    ts = per_round_median(bases["serial"])
    lace = per_round_median(bases["lace"]) if "lace" in bases else None
    print(f"{bench}: T1/Ts of each build's copies (Ts: the median of the serial copies that ran in the round)"
          f"{'; against Lace likewise' if lace else ''}; the rounds every copy ran; p: the spread's share among "
          f"{SHUFFLES} label shuffles within rounds, of the copies' mean log ratio (meaningful when the config's order "
          f"draws each round's afresh)")
    print(f"  {'build':22s} {'copies':>6s} {'rounds':>6s} {'least':>6s} {'median':>6s} {'most':>6s} {'spread':>6s} {'p':>6s}"
          + ("  x Lace: least median most" if lace else ""))
    for base, copies in sorted(bases.items(), key=lambda kv: (kv[0] != "serial", kv[0])):
        by_pad, n = shared(ratios(copies, ts)) if ratios(copies, ts) else ({}, 0)
        if n == 0:
            print(f"  {base:22s} (no round that every copy and the serial copies ran: left out)")
            continue
        v, sp = spread(by_pad)
        p = noise_p(by_pad, random.Random(f"{bench}/{base}")) if len(by_pad) > 1 else float("nan")
        row = {"benchmark": bench, "build": base, "copies": len(v), "rounds": n, "least": v[0],
               "median": statistics.median(v), "most": v[-1], "spread": sp, "p": p}
        text = (f"  {base:22s} {len(v):6d} {n:6d} {v[0]:6.3f} {row['median']:6.3f} {v[-1]:6.3f} {sp:6.3f} {fmt_p(p)}")
        if lace:
            vl = sorted(statistics.median(x.values()) for x in ratios(copies, lace).values())
            if vl:
                row.update({"lace_least": vl[0], "lace_median": statistics.median(vl), "lace_most": vl[-1]})
                text += f"  {vl[0]:6.3f} {row['lace_median']:6.3f} {vl[-1]:6.3f}"
        rows.append(row)
        print(text)
fields = ["benchmark", "build", "copies", "rounds", "least", "median", "most", "spread", "p", "lace_least", "lace_median",
          "lace_most"]
with open(d + "/layouts.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{r[k]:.4f}" if isinstance(r.get(k), float) else r.get(k, "")) for k in fields})
print(f"  ({d}/layouts.csv)")
