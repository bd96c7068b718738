# efficiency.gp — parallel efficiency speedup/P against workers P, one panel per benchmark,
# one line per variant, the ideal y = 1 dashed (the paper's Fig. 5b / 6b, Eq. 16).  At P = 1
# it is T_s/T_1: the inverse of the overhead.
#   gnuplot DIR/plots/efficiency.gp                        -> DIR/plots/efficiency.png
#   gnuplot -e "term='pdfcairo'" DIR/plots/efficiency.gp   -> DIR/plots/efficiency.pdf
# Data: scaling.dat next to this script, described by settings.gp; drawn by scaling.gp.
if (!exists("dir")) {
    dir = "."
    do for [i = strlen(ARG0):1:-1] {
        if (ARG0[i:i] eq "/") { dir = ARG0[1:i - 1]; break }
    }
}
load dir."/settings.gp"
figure = "efficiency"
fig_title = "Parallel efficiency (Eq. 16)"
ylabel_text = "efficiency  T_s / (P T_P)"
ycol = 4            # scaling.dat: efficiency and its standard error
secol = 5
ideal(x) = 1
ideal_title = "ideal: 1"
load dir."/scaling.gp"
