/* gnuplot.h — gnuplot for every command that draws (plot, compare): the program and its
 * terminals, the scripts, one figure drawn.
 *
 * The scripts are looked up in $FORKSCOPE_PLOTS, else in plots/ or share/forkscope/plots/ of
 * the first ancestor of the executable's directory that has one (build/bin/forkscope ->
 * ./plots; an installed tree or make bundle's, bin/forkscope -> share/forkscope/plots), else
 * ./plots. */
#ifndef HX_REPORT_GNUPLOT_H
#define HX_REPORT_GNUPLOT_H

#include <limits.h>

/* gnuplot on $PATH and its terminals: raster pngcairo (else png), vector pdfcairo (else svg). */
typedef struct hx_gnuplot {
    char path[PATH_MAX];
    const char *raster, *vector; /* NULL: none */
    int ok;                      /* found, runs, has a raster terminal */
} hx_gnuplot;

/* Fills *g.  0 with g->ok = 0 if gnuplot is not on $PATH (the caller says what that means);
 * HX_ETOOL with a message if it is there but does not run or has no raster terminal. */
int hx_gnuplot_find(hx_gnuplot *g);

/* Copies the gnuplot scripts (the .gp files of plots/) into dir.  0; HX_ETOOL
 * if they are not found, HX_EIO if one cannot be copied (messages on stderr). */
int hx_gnuplot_install_scripts(const char *dir);

#define HX_DRAWN_MAX 16
typedef struct hx_drawn {
    char files[HX_DRAWN_MAX][PATH_MAX]; /* the figures written, in order */
    int n, warnings;                    /* warnings: drawings gnuplot printed something for */
} hx_drawn;

/* Runs dir/FIGURE.gp once per terminal of g (raster, then vector) into dir/FIGURE.png and
 * .pdf (or .svg), checking that each file was written; adds them to *drawn.  0;
 * HX_EINTERNAL if gnuplot failed (its output printed); -ENAMETOOLONG. */
int hx_gnuplot_draw(const hx_gnuplot *g, const char *dir, const char *figure, hx_drawn *drawn);

#endif
