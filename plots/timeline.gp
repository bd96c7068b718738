# timeline.gp — a trace's timeline (forkscope trace): one row per worker, each span coloured by
# what the worker did (work, search, steal, join, wait, fiber, sleep, promote, the colours of
# breakdown.gp), each steal a thin line from the victim's row to the thief's, each promotion
# (a request answered: a thief's, a heartbeat's, or on cont-* a stolen frame's own) a small mark
# above its worker's row.
#   gnuplot DIR/timeline.gp                        -> DIR/timeline.png
#   gnuplot -e "term='pdfcairo'" DIR/timeline.gp   -> DIR/timeline.pdf
# Data: timeline.dat, steals.dat and promotes.dat next to this script, described by timeline-settings.gp.
if (!exists("dir")) {
    dir = "."
    do for [i = strlen(ARG0):1:-1] {
        if (ARG0[i:i] eq "/") { dir = ARG0[1:i - 1]; break }
    }
}
load dir."/timeline-settings.gp"
figure = "timeline"
width = 1100
height = 150 + 44 * tl_workers
load dir."/term.gp"

catname = "work search steal join wait fiber sleep promote"
catcolor = "#59a14f #9ecae9 #e15759 #f28e2b #6baed6 #b07aa1 #d9d9d9 #edc948"
set title tl_title.(strlen(tl_note) ? "\n(".tl_note.")" : "") noenhanced
set xlabel "time since the start of the trace (ms)"
set xrange [0 : tl_end_ms]
set yrange [-0.6 : tl_workers - 0.4] reverse
set ytics 1 nomirror
set format y "worker %g"
set xtics nomirror
set grid xtics lc rgb "#e0e0e0"
set style fill solid 1.0 noborder
set key outside below horizontal samplen 1.5
plot for [k = 1:8] dir."/timeline.dat" using (($2 + $3) / 2):($4 == k ? $1 : NaN):(($3 - $2) / 2):(0.36) \
         with boxxyerror lc rgb word(catcolor, k) title word(catname, k), \
     (tl_steals > 0 ? dir."/steals.dat" : NaN) using 1:2:(0):($3 - $2) with vectors nohead lw 0.6 lc rgb "#222222" \
         title "steal", \
     (exists("tl_promotes") && tl_promotes > 0 ? dir."/promotes.dat" : NaN) using 1:($2 - 0.42) \
         with points pt 11 ps 0.5 lc rgb "#000000" title "promote"
