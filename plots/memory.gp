# memory.gp — calibrated peak memory against workers P, log-log, one panel per benchmark
# (matmul left out, as in the paper's Fig. 7, unless it is all there is): each variant's
# points with their standard errors and its fitted power law mem = a + b*M1*P^n (Eq. 17)
# drawn through them; each panel's legend gives the fitted exponent n ± its error.
#   gnuplot DIR/plots/memory.gp                        -> DIR/plots/memory.png
#   gnuplot -e "term='pdfcairo'" DIR/plots/memory.gp   -> DIR/plots/memory.pdf
# Data: memory.dat and memory-fit.dat next to this script, described by settings.gp (mem_*).
# Hollow markers: oversubscribed points (more workers than cores).
if (!exists("dir")) {
    dir = "."
    do for [i = strlen(ARG0):1:-1] {
        if (ARG0[i:i] eq "/") { dir = ARG0[1:i - 1]; break }
    }
}
load dir."/settings.gp"
figure = "memory"

np = mem_npanels
ncol = (np <= 1) ? 1 : ((np <= 3) ? np : int(ceil(sqrt(np))))
nrow = (np <= 1) ? 1 : (np + ncol - 1) / ncol
keyh = 17 * mem_maxkeys                         # room for each panel's legend, below it
width = (ncol <= 1) ? 640 : 430 * ncol
height = 70 + (330 + keyh) * nrow + 30
load dir."/term.gp"

top = 70.0 / height
foot = 30.0 / height
pw = 1.0 / ncol
ph = (1.0 - top - foot) / nrow

set multiplot
set label 101 "Peak memory and fits of Eq. 17: a + b M_1 P^n" at screen 0.5, screen 1 - 0.3 * top center font ",13"
set label 102 experiment.(strlen(subtitle) ? "  —  ".subtitle : "") at screen 0.5, screen 1 - 0.7 * top center noenhanced
if (mem_over) {
    set label 103 "hollow markers: oversubscribed (more workers than cores)" at screen 0.5, screen 0.5 * foot center tc rgb "#555555" font ",9"
}
set grid lc rgb "#e0e0e0"
set xlabel "workers P"
set ylabel "MRSS − calibrate (KiB)"
set tics nomirror
set bmargin mem_maxkeys + 4                     # the same plot area in every panel
set key outside below left Left reverse maxcols 1 samplen 2 spacing 1.1 noenhanced
do for [p = 1:np] {
    set origin ((p - 1) % ncol) * pw, 1 - top - ((p - 1) / ncol + 1) * ph
    set size pw, ph
    set title mem_title[p] noenhanced
    if (mem_count[p] == 0) {
        set label 1 mem_note[p] at graph 0.5, graph 0.5 center noenhanced tc rgb "#666666"
        unset logscale
        set xrange [0:1]
        set yrange [0:1]
        unset xtics
        unset ytics
        plot -1 notitle
        unset label 1
        set xtics
        set ytics
    } else {
        set logscale x 2
        set logscale y 10
        # y tics: 1-2-5 steps when the panel spans less than a factor 1000 (so that values can be
        # read: 1000 2000 5000 10000, not only the decades), 1-2-...-9 when less than 4, decades
        # beyond (a log axis with no power of ten inside it would have no labels at all)
        stats dir."/memory.dat" index mem_first[p]:(mem_first[p] + mem_count[p] - 1) using 3:4 nooutput
        ylo = (STATS_min_x > 0) ? STATS_min_x : 1
        yhi = STATS_max_y
        if (yhi < 1000 * ylo) {
            mant = (yhi < 4 * ylo) ? "1 2 3 4 5 6 7 8 9" : "1 2 5"
            set ytics nomirror (1)
            do for [e = floor(log10(ylo)) - 1 : ceil(log10(yhi))] {
                do for [m in mant] {
                    set ytics add (int(m) * 10.0 ** e)
                }
            }
        } else {
            set ytics nomirror autofreq
        }
        set autoscale xfix
        set autoscale yfix
        set offsets graph 0.06, graph 0.06, graph 0.12, graph 0.12
        kf = mem_first[p]
        kl = mem_first[p] + mem_count[p] - 1
        ff = mem_fitfirst[p]
        fl = mem_fitfirst[p] + mem_fitcount[p] - 1
        # the fitted curves (if any: an empty iteration still reads its data file once), the points
        # with their error bars, then the legend entries
        if (mem_fitcount[p] > 0) {
            plot for [k = ff:fl] dir."/memory-fit.dat" index k using 1:2 with lines lw 1.5 lc rgb vcolor[mem_fitvar[k + 1]] notitle, \
                 for [k = kf:kl] dir."/memory.dat" index k using 1:2:3:4:(vpt[mem_var[k + 1]] - $5) \
                     with yerrorbars pt variable ps 1.2 lw 1.2 lc rgb vcolor[mem_var[k + 1]] notitle, \
                 for [k = kf:kl] keyentry with linespoints lw 1.5 pt vpt[mem_var[k + 1]] ps 1.2 lc rgb vcolor[mem_var[k + 1]] title mem_key[k + 1]
        } else {
            plot for [k = kf:kl] dir."/memory.dat" index k using 1:2:3:4:(vpt[mem_var[k + 1]] - $5) \
                     with yerrorbars pt variable ps 1.2 lw 1.2 lc rgb vcolor[mem_var[k + 1]] notitle, \
                 for [k = kf:kl] keyentry with points pt vpt[mem_var[k + 1]] ps 1.2 lc rgb vcolor[mem_var[k + 1]] title mem_key[k + 1]
        }
        set offsets 0, 0, 0, 0
    }
    unset label 101
    unset label 102
    unset label 103
}
unset multiplot
