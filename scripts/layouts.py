#!/usr/bin/env python3
# layouts.py — the code-layout lottery from a sweep like configs/layouts.json: each build run
# as several copies whose code make layouts moved (variants named BASE-pN, "drivers":
# "build/layout/pN"), interleaved.  For every build, its T1/Ts in each copy, where Ts is, round
# by round, the median over the serial projection's copies (serial-pN) in that round: one
# layout of the serial code would move every ratio with it.  Then the least, the median and
# the most over the copies, and their spread (most / least), which is what the build's code
# position is worth, if it is more than noise: "p" is the share of 2000 shuffles of the copies'
# labels within each round that give a spread at least as large (a small p: the copies differ;
# a large one: the spread is the runs' own scatter).  With copies of Lace (lace-pN), each build
# against Lace's median the same way.
#
#   scripts/layouts.py DIR        (prints a table; writes DIR/layouts.csv)
import collections, csv, json, random, re, statistics, sys

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


def noise_p(by_pad, observed, rng):
    """the share of shuffles of the copies' labels within each round with a spread >= observed
    (only the rounds every copy ran)"""
    common = sorted(set.intersection(*(set(v) for v in by_pad.values())))
    if len(by_pad) < 2 or not common:
        return float("nan")
    cols = [[by_pad[p][k] for p in by_pad] for k in common]
    hits = 0
    for _ in range(SHUFFLES):
        for c in cols:
            rng.shuffle(c)
        meds = [statistics.median(c[i] for c in cols) for i in range(len(by_pad))]
        hits += max(meds) / min(meds) >= observed - 1e-12
    return (hits + 1) / (SHUFFLES + 1)


rng = random.Random(1)
rows = []
for bench, bases in sorted(times.items()):
    if "serial" not in bases:
        continue
    ts = per_round_median(bases["serial"])
    lace = per_round_median(bases["lace"]) if "lace" in bases else None
    print(f"{bench}: T1/Ts of each build's copies (Ts: the median of the {len(bases['serial'])} serial copies, "
          f"round by round){'; against Lace likewise' if lace else ''}; p: the spread's share among label shuffles")
    print(f"  {'build':22s} {'copies':>6s} {'least':>6s} {'median':>6s} {'most':>6s} {'spread':>6s} {'p':>6s}"
          + ("  x Lace: least median most" if lace else ""))
    for base, copies in sorted(bases.items(), key=lambda kv: (kv[0] != "serial", kv[0])):
        by_pad = ratios(copies, ts)
        if not by_pad:
            print(f"  {base:22s} (no round shared with the serial copies: left out)")
            continue
        v, sp = spread(by_pad)
        p = noise_p(by_pad, sp, rng)
        row = {"benchmark": bench, "build": base, "copies": len(v), "least": v[0], "median": statistics.median(v),
               "most": v[-1], "spread": sp, "p": p}
        text = f"  {base:22s} {len(v):6d} {v[0]:6.3f} {row['median']:6.3f} {v[-1]:6.3f} {sp:6.3f} {p:6.4f}"
        if lace:
            vl = sorted(statistics.median(x.values()) for x in ratios(copies, lace).values())
            if vl:
                row.update({"lace_least": vl[0], "lace_median": statistics.median(vl), "lace_most": vl[-1]})
                text += f"  {vl[0]:6.3f} {row['lace_median']:6.3f} {vl[-1]:6.3f}"
        rows.append(row)
        print(text)
fields = ["benchmark", "build", "copies", "least", "median", "most", "spread", "p", "lace_least", "lace_median",
          "lace_most"]
with open(d + "/layouts.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{r[k]:.4f}" if isinstance(r.get(k), float) else r.get(k, "")) for k in fields})
print(f"  ({d}/layouts.csv)")
