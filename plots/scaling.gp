# scaling.gp — the figure of speedup.gp and efficiency.gp: a grid of panels, one per
# benchmark, and one legend below them all (colours and markers are per variant, the same in
# every panel).  Not run alone: the caller sets dir, figure, fig_title, ylabel_text, ycol and
# secol (columns of scaling.dat), ideal(x), ideal_title, and loads settings.gp (sc_*, vname,
# vcolor, vpt, cores, maxworkers, experiment, subtitle).
# Hollow markers: oversubscribed points (more workers than cores; shaded region).
# Dash-dot red: the work-span bound from bounds.dat (forkscope run with "span"); dotted orange:
# the burdened estimate.

np = sc_npanels
ncol = (np <= 1) ? 1 : ((np <= 3) ? np : int(ceil(sqrt(np))))
nrow = (np <= 1) ? 1 : (np + ncol - 1) / ncol
width = (ncol <= 1) ? 640 : 430 * ncol
# legend entries (variants and the ideal line) in rows of legcols: as many as fit the width,
# at about 7.5 pixels a character plus the line sample
nleg = words(sc_vars) + 1 + (exists("sc_anybound") ? sc_anybound + sc_anyburdened : 0)
maxlen = 14
do for [v in sc_vars] {
    maxlen = (strlen(vname[int(v)]) > maxlen) ? strlen(vname[int(v)]) : maxlen
}
legcols = int(0.9 * width / ((maxlen + 7) * 7.5))
legcols = (legcols < 1) ? 1 : legcols
legpx = 24 + 20 * ((nleg + legcols - 1) / legcols) + 18 * sc_over
height = 70 + 340 * nrow + legpx
load dir."/term.gp"

top = 70.0 / height                             # title block
leg = legpx * 1.0 / height
pw = 1.0 / ncol
ph = (1.0 - top - leg) / nrow

set multiplot
set label 101 fig_title at screen 0.5, screen 1 - 0.3 * top center font ",13"
set label 102 experiment.(strlen(subtitle) ? "  —  ".subtitle : "") at screen 0.5, screen 1 - 0.7 * top center noenhanced
set grid lc rgb "#e0e0e0"
set xlabel "workers P"
set ylabel ylabel_text
unset key
set tics nomirror
# whole-number worker tics: a step of 1, 2, 4, ... giving at most about 8 of them
xstep = (maxworkers <= 8) ? 1 : 2 ** int(ceil(log(maxworkers / 8.0) / log(2)))
set xtics xstep
do for [p = 1:np] {
    set origin ((p - 1) % ncol) * pw, 1 - top - ((p - 1) / ncol + 1) * ph
    set size pw, ph
    set title sc_title[p] noenhanced
    if (sc_count[p] == 0) {
        # nothing to draw: an empty frame saying why
        set label 1 sc_note[p] at graph 0.5, graph 0.5 center noenhanced tc rgb "#666666"
        set xrange [0:1]
        set yrange [0:1]
        unset xtics
        unset ytics
        plot -1 notitle
        unset label 1
        set xtics xstep
        set ytics
    } else {
        set xrange [0:*]
        set yrange [0:*]
        set offsets 0, graph 0.05, graph 0.08, 0
        if (cores > 0 && maxworkers > cores) {
            set object 1 rect from first cores, graph 0 to graph 1, graph 1 behind fc rgb "#eeeeee" fs solid noborder
            set label 2 sprintf("P > %d cores", cores) at first cores, graph 0.96 left offset 0.6, 0 tc rgb "#777777" font ",8"
        }
        kf = sc_first[p]
        kl = sc_first[p] + sc_count[p] - 1
        # the work-span bound (and the burdened estimate), from bounds.dat, if measured
        bcol = (ycol == 2) ? 2 : 4
        nb = (exists("sc_bound") && sc_bound[p] > 0) ? sc_bound[p] : 0
        plot for [k = kf:kl] dir."/scaling.dat" index k using 1:ycol with lines lw 1.5 lc rgb vcolor[sc_var[k + 1]] notitle, \
             for [k = kf:kl] dir."/scaling.dat" index k \
                 using 1:ycol:(column(ycol) - column(secol)):(column(ycol) + column(secol)):(vpt[sc_var[k + 1]] - $6) \
                 with yerrorbars pt variable ps 1.2 lw 1.2 lc rgb vcolor[sc_var[k + 1]] notitle, \
             ideal(x) with lines dt 2 lw 1.2 lc rgb "#444444" notitle, \
             for [j = 1:(nb >= 1)] dir."/bounds.dat" index (p - 1) using 1:bcol \
                 with lines dt 4 lw 2 lc rgb "#b03030" notitle, \
             for [j = 1:(nb >= 2)] dir."/bounds.dat" index (p - 1) using 1:(column(bcol + 1)) \
                 with lines dt 3 lw 2 lc rgb "#d08000" notitle
        unset object 1
        unset label 2
        set offsets 0, 0, 0, 0
    }
    unset label 101
    unset label 102
}

# the legend, below the panels; the note on oversubscription under it
set origin 0, 0
set size 1, leg
unset title
unset xlabel
unset ylabel
unset tics
unset grid
set border 0
set xrange [0:1]
set yrange [0:1]
if (sc_over) {
    set label 103 (cores > 0 && maxworkers > cores) ? \
        sprintf("hollow markers, shaded region: oversubscribed (more workers than the %d cores)", cores) : \
        "hollow markers: oversubscribed runs (more workers than cores)" \
        at screen 0.5, screen 11.0 / height center tc rgb "#555555" font ",9"
}
set key at screen 0.5, screen (leg * height + 18 * sc_over) / (2 * height) center center horizontal Left reverse \
    maxcols legcols samplen 2.5 width 1 noenhanced
nbk = !exists("sc_anybound") ? 0 : (sc_anyburdened ? 2 : sc_anybound)
btitle(j) = (j == 1) ? ((ycol == 2) ? "work-span bound min(P, T_1/T_∞)" : "work-span bound min(1, T_1/(P T_∞))") : \
                       "burdened estimate T_1/(T_1/P + burdened span)"
if (words(sc_vars) > 0) {  # (an iteration over an empty list still runs once: hence the test)
    plot -1 notitle, \
         for [v in sc_vars] keyentry with linespoints lw 1.5 pt vpt[int(v)] ps 1.2 lc rgb vcolor[int(v)] title vname[int(v)], \
         keyentry with lines dt 2 lw 1.2 lc rgb "#444444" title ideal_title enhanced, \
         for [j = 1:(nbk >= 1)] keyentry with lines dt 4 lw 2 lc rgb "#b03030" title btitle(1) enhanced, \
         for [j = 1:(nbk >= 2)] keyentry with lines dt 3 lw 2 lc rgb "#d08000" title btitle(2) enhanced
} else {
    plot -1 notitle, keyentry with lines dt 2 lw 1.2 lc rgb "#444444" title ideal_title enhanced
}
unset multiplot
