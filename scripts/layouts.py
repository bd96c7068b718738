#!/usr/bin/env python3
# layouts.py — the code-layout lottery from a sweep like configs/layouts.json: each build run
# as several copies whose code make layouts moved (variants named BASE-pN, "drivers":
# "build/layout/pN"), interleaved.  For every build, its T1/Ts in each copy, where Ts is, round
# by round, the median over the serial projection's copies (serial-pN) in that round: one
# layout of the serial code would move every ratio with it.  Then the least, the median and
# the most over the copies, and their spread (most / least), which is what the build's code
# position alone is worth: a fast-path change smaller than that is not shown by one build.
# With copies of Lace (lace-pN), each build's median against Lace's median the same way.
#
#   scripts/layouts.py DIR        (prints a table; writes DIR/layouts.csv)
import collections, csv, json, re, statistics, sys

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


rows = []
for bench, bases in sorted(times.items()):
    if "serial" not in bases:
        continue
    ts = per_round_median(bases["serial"])
    lace = per_round_median(bases["lace"]) if "lace" in bases else None
    print(f"{bench}: T1/Ts of each build's copies (Ts: the median of the {len(bases['serial'])} serial copies, "
          f"round by round){'; against Lace likewise' if lace else ''}")
    print(f"  {'build':22s} {'copies':>6s} {'least':>6s} {'median':>6s} {'most':>6s} {'spread':>6s}"
          + ("  x Lace: least median most" if lace else ""))
    for base, copies in sorted(bases.items(), key=lambda kv: (kv[0] != "serial", kv[0])):
        ratio = {p: statistics.median(per[k] / ts[k] for k in per if k in ts) for p, per in copies.items()}
        v = sorted(ratio.values())
        row = {"benchmark": bench, "build": base, "copies": len(v), "least": v[0], "median": statistics.median(v),
               "most": v[-1], "spread": v[-1] / v[0]}
        text = f"  {base:22s} {len(v):6d} {v[0]:6.3f} {row['median']:6.3f} {v[-1]:6.3f} {row['spread']:6.3f}"
        if lace:
            vl = sorted(statistics.median(per[k] / lace[k] for k in per if k in lace) for per in copies.values())
            row.update({"lace_least": vl[0], "lace_median": statistics.median(vl), "lace_most": vl[-1]})
            text += f"  {vl[0]:6.3f} {row['lace_median']:6.3f} {vl[-1]:6.3f}"
        rows.append(row)
        print(text)
fields = ["benchmark", "build", "copies", "least", "median", "most", "spread", "lace_least", "lace_median", "lace_most"]
with open(d + "/layouts.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{r[k]:.4f}" if isinstance(r.get(k), float) else r.get(k, "")) for k in fields})
print(f"  ({d}/layouts.csv)")
