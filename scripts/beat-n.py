#!/usr/bin/env python3
"""beat-n.py DIR — time against the heartbeat period N, from a sweep of configs/beat-n.json.

Reads DIR/summary.csv (each variant's median time, its standard error and its promotions per
second, the column promotions_per_s: the drivers' stats.publishes over their timed repetitions),
writes DIR/plots/beat-n.dat (one block per benchmark and worker count: N, the median time,
its standard error, the promotions per second) and DIR/plots/beat-n.gp, and draws
DIR/plots/beat-n.png with gnuplot: for each benchmark, time against N (log scale) at each
worker count, thief promotion and the serial projection as horizontal lines.  Prints the
table it drew.  Variants named beat-N are heartbeat runs at period N us; 'thief' and
'serial' are the references.  Exit status 1 if DIR holds no such runs."""
import csv
import os
import subprocess
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: beat-n.py DIR (a sweep of configs/beat-n.json)")
    d = sys.argv[1]
    rows = list(csv.DictReader(open(os.path.join(d, "summary.csv"))))
    beat, ref = {}, {}
    for r in rows:
        v, b, p = r["variant"], r["benchmark"], int(r["workers"])
        if not r["time_median"]:
            continue
        t, se = float(r["time_median"]), float(r["time_se"] or 0)
        if v.startswith("beat-"):
            pr = float(r["promotions_per_s"]) if r.get("promotions_per_s") else float("nan")
            beat.setdefault((b, p), []).append((int(v[5:]), t, se, pr))
        elif v in ("thief", "serial"):
            ref[(b, v, p)] = t
    if not beat:
        sys.exit("beat-n.py: %s holds no beat-N runs (run configs/beat-n.json)" % d)
    os.makedirs(os.path.join(d, "plots"), exist_ok=True)
    dat = os.path.join(d, "plots", "beat-n.dat")
    benches = sorted({b for b, _ in beat})
    with open(dat, "w") as f:
        for b in benches:
            for p in sorted(q for c, q in beat if c == b):
                f.write("# %s P=%d (thief %s s, serial %s s)\n# N_us time_s se_s promotions_per_s\n" %
                        (b, p, ref.get((b, "thief", p), "?"), ref.get((b, "serial", 1), "?")))
                for n, t, se, pr in sorted(beat[(b, p)]):
                    f.write("%d %.6f %.6f %.0f\n" % (n, t, se, pr))
                    print("%-8s P=%-3d N=%6d us  %.4f s  (thief %.4f s, x%.2f)  %8.0f promotions/s" %
                          (b, p, n, t, ref.get((b, "thief", p), float("nan")),
                           t / ref.get((b, "thief", p), float("nan")), pr))
                f.write("\n\n")
    gp = os.path.join(d, "plots", "beat-n.gp")
    with open(gp, "w") as f:
        f.write("set terminal pngcairo size %d,420\nset output '%s'\n" % (520 * len(benches),
                                                                      os.path.join(d, "plots", "beat-n.png")))
        f.write("set multiplot layout 1,%d\nset logscale x\nset xlabel 'heartbeat period N (us)'\n"
                "set ylabel 'median time (s)'\nset key top left\nset yrange [0:*]\n" % len(benches))
        idx = 0
        for b in benches:
            plots = []
            for p in sorted(q for c, q in beat if c == b):
                plots.append("'%s' index %d using 1:2:3 with yerrorlines title 'beat, P=%d'" % (dat, idx, p))
                if (b, "thief", p) in ref:
                    plots.append("%g with lines dashtype 2 title 'thief, P=%d'" % (ref[(b, "thief", p)], p))
                idx += 1
            if (b, "serial", 1) in ref:
                plots.append("%g with lines dashtype 3 lc 'black' title 'serial'" % ref[(b, "serial", 1)])
            f.write("set title '%s'\nplot %s\n" % (b, ", ".join(plots)))
        f.write("unset multiplot\n")
    rc = subprocess.call(["gnuplot", gp])
    print("wrote %s, %s%s" % (dat, gp, "" if rc else " and " + os.path.join(d, "plots", "beat-n.png")))
    return rc


if __name__ == "__main__":
    sys.exit(main())
