# speedup.gp — parallel speedup T_s/T_P against workers P, one panel per benchmark, one line
# per variant, the ideal y = P dashed (the paper's Fig. 5a / 6a, Eq. 15).
#   gnuplot DIR/plots/speedup.gp                        -> DIR/plots/speedup.png
#   gnuplot -e "term='pdfcairo'" DIR/plots/speedup.gp   -> DIR/plots/speedup.pdf
# Data: scaling.dat next to this script (written by `forkscope plot`), described by
# settings.gp; the drawing itself is in scaling.gp, shared with efficiency.gp.
if (!exists("dir")) {
    dir = "."
    do for [i = strlen(ARG0):1:-1] {
        if (ARG0[i:i] eq "/") { dir = ARG0[1:i - 1]; break }
    }
}
load dir."/settings.gp"
figure = "speedup"
fig_title = "Parallel speedup (Eq. 15)"
ylabel_text = "speedup  T_s / T_P"
ycol = 2            # scaling.dat: speedup and its standard error
secol = 3
ideal(x) = x
ideal_title = "ideal: T_s / P"
load dir."/scaling.gp"
