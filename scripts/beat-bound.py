#!/usr/bin/env python3
"""beat-bound.py DIR [FORKSCOPE] — heartbeat's work bound, measured, from a sweep of
configs/beat-bound.json.

The heartbeat papers bound the work of a heartbeat run by (1 + tau/N) x the work without
promotions, tau the cost of one promotion and N the period.  The sweep runs one worker under
thief promotion (nobody asks on one worker: no promotion at all, "promotion off") and under
heartbeat promotion at several N (variants beat-N), with the breakdown on, so that each run
measures tau itself: summary.csv's promotion_ns, the time its worker spent promoting
(publishing when a beat's mark asks, and taking back slots it had published) over its
promotions.  The accounting reads the clock at each promotion, so the config times benchmark
B without it and measures tau on a copy named B-tau with the breakdown on; where there is no
B-tau, tau comes from B itself.

For each N this prints and writes to DIR/beat-bound.csv:
  ratio [lo, hi]   T1(beat-N) / T1(off), forkscope compare's paired estimate and 95% interval
  tau_ns           the measured tau (median over the runs)
  bound            1 + tau / N: the papers' bound, with the measured tau
  promoted         1 + promotions per second x tau: the share of the time that went to promoting
  verdict          "within" (the interval reaches the bound: not shown to exceed it), or
                   "exceeds" (the whole interval lies above it: something beyond the promotions
                   the owner pays for costs time, e.g. the heartbeat thread itself)
FORKSCOPE is the forkscope binary (default build/bin/forkscope).  Exit status 1 if DIR holds
no such runs or a comparison fails; the verdicts do not change it."""
import csv
import os
import subprocess
import sys


def verdict(lo, bound):
    """'within' unless the interval's lower end lies above the bound."""
    return "exceeds" if lo > bound else "within"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: beat-bound.py DIR [FORKSCOPE] (DIR: a sweep of configs/beat-bound.json)")
    d = sys.argv[1]
    fs = sys.argv[2] if len(sys.argv) == 3 else "build/bin/forkscope"
    try:
        rows = list(csv.DictReader(open(os.path.join(d, "summary.csv"))))
    except OSError as e:
        sys.exit("beat-bound.py: %s" % e)
    cells = {(r["benchmark"], r["variant"]): r for r in rows if r["workers"] == "1" and r["time_median"]}
    benches = sorted({b for b, v in cells if v == "thief" and not b.endswith("-tau")})
    beats = sorted({(b, int(v[5:])) for b, v in cells if v.startswith("beat-") and v[5:].isdigit() and b in benches})
    if not beats:
        sys.exit("beat-bound.py: %s holds no thief and beat-N runs on one worker (run configs/beat-bound.json)" % d)
    out = []
    for b, n in beats:
        c = cells.get((b + "-tau", "beat-%d" % n), cells[(b, "beat-%d" % n)])
        cdir = os.path.join(d, "bound-beat-%d" % n)
        r = subprocess.run([fs, "compare", d, "--a", "thief", "--b", "beat-%d" % n, "-o", cdir],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            sys.exit("beat-bound.py: forkscope compare failed for beat-%d:\n%s" % (n, r.stdout))
        est = [x for x in csv.DictReader(open(os.path.join(cdir, "compare.csv")))
               if x["metric"] == "time" and x["benchmark"] == b and x["workers"] == "1"]
        if len(est) != 1 or not all(est[0][k] for k in ("estimate", "lo", "hi")):
            sys.exit("beat-bound.py: %s/compare.csv has no time estimate with an interval for %s on one worker"
                     % (cdir, b))
        e = est[0]
        ratio, lo, hi = float(e["estimate"]), float(e["lo"]), float(e["hi"])
        tau = float(c["promotion_ns"]) if c.get("promotion_ns") else float("nan")
        rate = float(c["promotions_per_s"]) if c.get("promotions_per_s") else float("nan")
        bound = 1 + tau / (n * 1e3)
        promoted = 1 + rate * tau * 1e-9
        out.append((b, n, ratio, lo, hi, tau, rate, bound, promoted,
                    verdict(lo, bound) if bound == bound else "no tau"))
    with open(os.path.join(d, "beat-bound.csv"), "w") as f:
        f.write("benchmark,n_us,ratio,lo,hi,tau_ns,promotions_per_s,bound,promoted,verdict\n")
        for x in out:
            f.write("%s,%d,%.5f,%.5f,%.5f,%.2f,%.1f,%.6f,%.6f,%s\n" % x)
    print("%-8s %7s %26s %8s %10s %9s %9s  %s" % ("bench", "N (us)", "T1(beat)/T1(off) [95%]", "tau ns",
                                                  "promo/s", "1+tau/N", "promoted", "verdict"))
    for b, n, ratio, lo, hi, tau, rate, bound, promoted, v in out:
        print("%-8s %7d %8.4f [%.4f, %.4f] %8.1f %10.0f %9.5f %9.5f  %s" % (b, n, ratio, lo, hi, tau, rate,
                                                                           bound, promoted, v))
    print("(written to %s)" % os.path.join(d, "beat-bound.csv"))


if __name__ == "__main__":
    main()
