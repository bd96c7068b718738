# term.gp — sets the terminal and the output file of one figure.  Loaded by the figure
# scripts once they know the figure's size; not run alone.
#   in:  term    pngcairo | png | pdfcairo | svg  (settings.gp's default, or -e "term='pdfcairo'")
#        figure  the output's name without extension ("speedup")
#        width, height   the size in pixels (the PDF is the same size at 96 dpi)
#        dir     where the output goes (the directory of the scripts)
if (term eq "pngcairo") {
    set terminal pngcairo size width, height font "Sans,10" enhanced
    ext = "png"
} else {
    if (term eq "png") {
        set terminal png size width, height font ",9" enhanced
        ext = "png"
    } else {
        if (term eq "pdfcairo") {
            set terminal pdfcairo size width / 96.0, height / 96.0 font "Sans,7.5" enhanced
            ext = "pdf"
        } else {
            if (term eq "svg") {
                set terminal svg size width, height font "Sans,10" enhanced background rgb "white"
                ext = "svg"
            } else {
                exit error "term.gp: unknown terminal '".term."' (pngcairo, png, pdfcairo or svg)"
            }
        }
    }
}
set output dir."/".figure.".".ext
