# breakdown.gp — where the workers' time went (the config's "breakdown"): one panel per
# benchmark, one stacked bar per cell (variant, P), the parts in % of the workers' summed wall
# time: work, then the idle parts (search, wait, sleep) and the scheduler's overhead (steal,
# join, fiber, promote).
#   gnuplot DIR/plots/breakdown.gp                        -> DIR/plots/breakdown.png
#   gnuplot -e "term='pdfcairo'" DIR/plots/breakdown.gp   -> DIR/plots/breakdown.pdf
# Data: breakdown.dat next to this script, its panels in breakdown-settings.gp.
if (!exists("dir")) {
    dir = "."
    do for [i = strlen(ARG0):1:-1] {
        if (ARG0[i:i] eq "/") { dir = ARG0[1:i - 1]; break }
    }
}
load dir."/settings.gp"
load dir."/breakdown-settings.gp"
figure = "breakdown"

np = bd_npanels
ncol = (np <= 2) ? np : int(ceil(sqrt(np)))
nrow = (np + ncol - 1) / ncol
pwidth = 160 + 38 * bd_maxrows
width = ncol * pwidth
width = (width < 640) ? 640 : ((width > 2400) ? 2400 : width)
legpx = 40
height = 70 + 420 * nrow + legpx
load dir."/term.gp"

# the parts, in the data's column order (2..9), and their colours: work green, idle greys and
# blues, overhead reds and oranges
catname = "work search steal join wait fiber sleep promote"
catcolor = "#59a14f #9ecae9 #e15759 #f28e2b #6baed6 #b07aa1 #d9d9d9 #edc948"

top = 70.0 / height
leg = legpx * 1.0 / height
pw = 1.0 / ncol
ph = (1.0 - top - leg) / nrow
set multiplot
set label 101 "Where the time goes (% of the workers' wall time)" at screen 0.5, screen 1 - 0.3 * top center font ",13"
set label 102 experiment.(strlen(subtitle) ? "  —  ".subtitle : "") at screen 0.5, screen 1 - 0.7 * top center noenhanced
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border rgb "#333333"
set boxwidth 0.75 relative
set yrange [0:100]
set ylabel "% of P x T_P"
set xtics rotate by 30 right noenhanced nomirror font ",8"
set ytics nomirror
set grid ytics lc rgb "#e0e0e0"
unset key
do for [p = 1:np] {
    set origin ((p - 1) % ncol) * pw, 1 - top - ((p - 1) / ncol + 1) * ph
    set size pw, ph
    set title value(sprintf("bd_title_%d", p)) noenhanced
    plot for [k = 2:9] dir."/breakdown.dat" index (p - 1) using k:xtic(1) lc rgb word(catcolor, k - 1) notitle
}
# the legend: one row below the panels
unset title
unset label 101
unset label 102
set origin 0, 0
set size 1, leg
unset border
unset xtics
unset ytics
unset ylabel
unset grid
set xrange [0:1]
set yrange [0:1]
set key horizontal center center samplen 1.5
plot for [k = 1:8] NaN with boxes lc rgb word(catcolor, k) title word(catname, k)
unset multiplot
