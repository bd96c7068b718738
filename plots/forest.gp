# forest.gp — the forest plot of `forkscope compare`: one row per cell (benchmark, P), its
# ratio B/A with the 95% interval (on a log axis when the ratios span more than a factor
# of 4), the noise band shaded, the verdict as the
# marker; time on the left, calibrated peak memory on the right.
#   gnuplot DIR/forest.gp                        -> DIR/forest.png
#   gnuplot -e "term='pdfcairo'" DIR/forest.gp   -> DIR/forest.pdf
# Data: forest.dat next to this script (index 0 time, index 1 memory; columns: row, label,
# ratio, lo, hi, verdict 0 no change, 1 faster/smaller, 2 slower/larger, 3 inconclusive),
# described by forest-settings.gp (written by compare).
if (!exists("dir")) {
    dir = "."
    do for [i = strlen(ARG0):1:-1] {
        if (ARG0[i:i] eq "/") { dir = ARG0[1:i - 1]; break }
    }
}
load dir."/forest-settings.gp"
figure = "forest"

width = 1100
height = 150 + 26 * nrows
height = (height < 360) ? 360 : height
load dir."/term.gp"

set multiplot layout 1, 2 title title."\n".subtitle noenhanced
set logscale x
set yrange [nrows + 0.7 : 0.3]
set ytics nomirror noenhanced
set xtics nomirror
set grid xtics lc rgb "#e0e0e0"
set key outside top center horizontal samplen 1
set border 3

do for [m = 0:1] {
    set xlabel (m == 0 ? "time B/A" : "calibrated peak memory B/A")
    lo = (m == 0 ? xmin0 : xmin1)        # forest-settings.gp: the intervals and the band
    hi = (m == 0 ? xmax0 : xmax1)
    if (hi / lo > 4) { set logscale x; set xtics auto } else { unset logscale x; set xtics auto }
    set xrange [lo : hi]
    unset object 1
    set object 1 rect from 1 - band, graph 0 to 1 + band, graph 1 fc rgb "#e8e8e8" fs solid 1.0 noborder behind
    set arrow 1 from 1, graph 0 to 1, graph 1 nohead lc rgb "#888888" dt 2 back
    lower = (m == 0) ? "faster" : "smaller"
    higher = (m == 0) ? "slower" : "larger"
    if (m == 0) {
        plot dir."/forest.dat" index 0 using 3:1:4:5:ytic(2) with xerrorbars lc rgb "#666666" pt -1 notitle, \
             "" index 0 using ($6 == 0 ? $3 : NaN):1 with points pt 7 ps 1.2 lc rgb "#666666" title "no change", \
             "" index 0 using ($6 == 1 ? $3 : NaN):1 with points pt 9 ps 1.5 lc rgb "#1a9850" title lower, \
             "" index 0 using ($6 == 2 ? $3 : NaN):1 with points pt 11 ps 1.5 lc rgb "#d73027" title higher, \
             "" index 0 using ($6 == 3 ? $3 : NaN):1 with points pt 6 ps 1.2 lc rgb "#e08214" title "inconclusive"
    } else {
        set format y ""
        plot dir."/forest.dat" index 1 using 3:1:4:5 with xerrorbars lc rgb "#666666" pt -1 notitle, \
             "" index 1 using ($6 == 0 ? $3 : NaN):1 with points pt 7 ps 1.2 lc rgb "#666666" title "no change", \
             "" index 1 using ($6 == 1 ? $3 : NaN):1 with points pt 9 ps 1.5 lc rgb "#1a9850" title lower, \
             "" index 1 using ($6 == 2 ? $3 : NaN):1 with points pt 11 ps 1.5 lc rgb "#d73027" title higher, \
             "" index 1 using ($6 == 3 ? $3 : NaN):1 with points pt 6 ps 1.2 lc rgb "#e08214" title "inconclusive"
    }
}
unset multiplot
