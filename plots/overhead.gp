# overhead.gp — the overhead T_1/T_s (a variant's time at P = 1 over the serial projection's)
# as grouped bars: one group per benchmark, one bar per variant, with standard errors; the
# dashed line at 1 is no overhead.  The paper's fib figures: libfork 8.8, OpenMP 41, TBB 57.
#   gnuplot DIR/plots/overhead.gp                        -> DIR/plots/overhead.png
#   gnuplot -e "term='pdfcairo'" DIR/plots/overhead.gp   -> DIR/plots/overhead.pdf
# Data: overhead.dat next to this script (NaN = no data: a gap), described by settings.gp (ov_*).
if (!exists("dir")) {
    dir = "."
    do for [i = strlen(ARG0):1:-1] {
        if (ARG0[i:i] eq "/") { dir = ARG0[1:i - 1]; break }
    }
}
load dir."/settings.gp"
figure = "overhead"

width = 200 + ov_nrows * (50 + 30 * ov_ncols)
width = (width < 640) ? 640 : ((width > 1400) ? 1400 : width)
height = 500
load dir."/term.gp"

set tmargin 5
set label 101 "Overhead T_1 / T_s" at screen 0.5, screen 1 - 22.0 / height center font ",13"
set label 102 experiment.(strlen(subtitle) ? "  —  ".subtitle : "") at screen 0.5, screen 1 - 48.0 / height center noenhanced
set style data histograms
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.9 relative
set xrange [-0.6 : ov_nrows - 0.4]
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set ylabel "T_1 / T_s  (time at P = 1 / serial time)"
set xtics noenhanced nomirror
set ytics nomirror
set grid ytics lc rgb "#e0e0e0"
set key outside below center horizontal Left reverse noenhanced samplen 2
# bar k of row i is centred at x = i + (k - (n + 1)/2) / (n + gap) in a clustered histogram
gap = 2                                         # as in the style below (a literal there)
barx(i, k) = i + (k - (ov_ncols + 1) / 2.0) / (ov_ncols + gap)
set style histogram errorbars gap 2 lw 1.2
plot for [k = 1:ov_ncols] dir."/overhead.dat" using (column(2 * k)):(column(2 * k + 1)):xtic(1) \
         lc rgb vcolor[ov_var[k]] title vname[ov_var[k]], \
     for [k = 1:ov_ncols] dir."/overhead.dat" \
         using (barx(column(0), k)):(column(2 * k) + column(2 * k + 1)):(sprintf(column(2 * k) < 100 ? "%.2f" : "%.0f", column(2 * k))) \
         with labels offset 0, 0.7 font ",8" notitle, \
     1 with lines dt 2 lw 1.2 lc rgb "#444444" title "no overhead: T_1 = T_s" enhanced
