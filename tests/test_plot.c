/* test_plot.c — `forkscope plot`: the data files, the scripts and the figures.
 *
 * The fixture results directory (tests/fixtures/results/small) is copied to a temporary
 * directory, fitted and plotted: every data file, script and figure (PNG and PDF or SVG) must
 * exist and be non-empty, PNGs must start with the PNG signature, and gnuplot must not have
 * printed anything (no error, no warning).  Without gnuplot on PATH the command must fail
 * with HX_ETOOL and a clear message, the data files written all the same.  Missing data
 * (no serial cell, no fits.csv, a variant that did not run) must leave gaps, not failures. */
#include <limits.h>
#include <math.h>
#include <sys/stat.h>

#include "harness/cli/commands.h"
#include "harness/report/analysis.h"
#include "harness/util/errors.h"
#include "harness/report/plot.h"
#include "tests/testlib.h"
#include "tests/results_fixture.h"

/* ---- helpers ------------------------------------------------------------------------------- */


/* Runs `forkscope CMD dir` with stdout and stderr in dir/CMD.out and dir/CMD.err. */
static int run_cmd(const char *cmd, const char *dir) {
    char out[PATH_MAX], err[PATH_MAX];
    snprintf(out, sizeof out, "%.2000s/%s.out", dir, cmd);
    snprintf(err, sizeof err, "%.2000s/%s.err", dir, cmd);
    fflush(NULL);
    int so = dup(1), se = dup(2);
    ASSERT(freopen(out, "w", stdout));
    ASSERT(freopen(err, "w", stderr));
    char a0[16], a1[PATH_MAX];
    snprintf(a0, sizeof a0, "%s", cmd);
    snprintf(a1, sizeof a1, "%s", dir);
    char *argv[] = {a0, a1, NULL};
    int rc = !strcmp(cmd, "fit") ? hx_cmd_fit(2, argv) : hx_cmd_plot(2, argv);
    fflush(NULL);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    return rc;
}

static char *output_of(const char *dir, const char *name) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%.2000s/%s", dir, name);
    char *t = slurp(p);
    ASSERT_MSG(t, "no %s", p);
    return t;
}

/* dir/plots/name exists and is not empty; returns its first bytes in head (if not NULL). */
static void assert_file(const char *dir, const char *name, char *head, size_t hlen) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%.2000s/plots/%s", dir, name);
    struct stat st;
    ASSERT_MSG(!stat(p, &st), "%s missing", p);
    ASSERT_MSG(st.st_size > 0, "%s is empty", p);
    if (head) {
        FILE *f = fopen(p, "rb");
        ASSERT(f);
        size_t got = fread(head, 1, hlen, f);
        fclose(f);
        ASSERT_MSG(got == hlen, "%s shorter than %zu bytes", p, hlen);
    }
}

static int exists_in_plots(const char *dir, const char *name) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%.2000s/plots/%s", dir, name);
    return !access(p, F_OK);
}

static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

/* The words of the line of text that starts with prefix (after it), split at spaces, at most
 * max; returns how many.  Words point into a copy owned by the caller (*buf, free it). */
static int words_after(const char *text, const char *prefix, char **buf, char **w, int max) {
    const char *l = text;
    size_t n = strlen(prefix);
    while (l && strncmp(l, prefix, n))
        l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
    ASSERT_MSG(l, "no line starting with '%s' in:\n%s", prefix, text);
    *buf = strndup(l + n, strcspn(l + n, "\n"));
    int k = 0;
    for (char *t = strtok(*buf, " ,[]="); t && k < max; t = strtok(NULL, " ,[]="))
        w[k++] = t;
    return k;
}

/* What overhead.gp draws for variant var in benchmark bench's bar group: column pair k of
 * overhead.dat (columns 2k and 2k + 1, counting from 1, the benchmark's name being column 1)
 * is variant vname[ov_var[k]] of settings.gp, the pair the data file's "# columns:" header
 * names the same.  A value checked here is in the place the figure takes it from. */
static void overhead_value(const char *dir, const char *bench, const char *var, double *q, double *se) {
    char p[PATH_MAX], *b1, *b2, *b3, *b4, *vname[32], *ovvar[32], *cols[64], *row[64];
    snprintf(p, sizeof p, "%.2000s/plots/settings.gp", dir);
    char *settings = slurp(p);
    ASSERT(settings);
    int nv = words_after(settings, "array vname", &b1, vname, 32) - 1, /* first word: "[3]"'s 3 */
        nov = words_after(settings, "array ov_var", &b2, ovvar, 32) - 1;
    snprintf(p, sizeof p, "%.2000s/plots/overhead.dat", dir);
    char *data = slurp(p), quoted[128];
    ASSERT(data);
    int ncols = words_after(data, "# columns: ", &b3, cols, 64);
    snprintf(quoted, sizeof quoted, "\"%s\" ", bench);
    int nrow = words_after(data, quoted, &b4, row, 64) + 1; /* row[k]: column k + 2 */
    ASSERT_EQ(ncols, 1 + 2 * nov);
    ASSERT_EQ(nrow, ncols);
    int k = 0; /* the pair, from 1 */
    for (int i = 1; i <= nov; i++) {
        int v = atoi(ovvar[i]);
        ASSERT_MSG(v >= 1 && v <= nv, "ov_var[%d] = %d is not a variant (nvar %d)", i, v, nv);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strlen(vname[v]) - 2, vname[v] + 1); /* 'name' */
        ASSERT_MSG(!strcmp(cols[2 * i - 1], name), "overhead.dat's column %d is %s, settings.gp says %s", 2 * i,
                   cols[2 * i - 1], name);
        if (!strcmp(name, var))
            k = i;
    }
    ASSERT_MSG(k, "no column pair for %s in overhead.dat", var);
    char *end;
    *q = strtod(row[2 * k - 2], &end);
    ASSERT_MSG(!*end, "column %d of %s's row: '%s'", 2 * k, bench, row[2 * k - 2]);
    *se = strtod(row[2 * k - 1], &end);
    ASSERT_MSG(!*end, "column %d of %s's row: '%s'", 2 * k + 1, bench, row[2 * k - 1]);
    free(b1), free(b2), free(b3), free(b4), free(settings), free(data);
}

/* The vector format this gnuplot makes: pdf (pdfcairo) or svg. */
static const char *vector_ext(void) {
    return system("gnuplot -e \"set terminal pdfcairo\" >/dev/null 2>&1") == 0 ? "pdf" : "svg";
}

/* ---- cases ------------------------------------------------------------------------------------ */

TEST(plot_fixture_makes_every_file) {
    const char *dir = fresh_dir(1);
    ASSERT_EQ(run_cmd("fit", dir), HX_OK);
    int rc = run_cmd("plot", dir);
    char *err = output_of(dir, "plot.err"), *out = output_of(dir, "plot.out");
    ASSERT_MSG(rc == HX_OK, "plot returned %d; stderr:\n%s", rc, err);
    ASSERT_MSG(!*err, "gnuplot or plot said something on stderr:\n%s", err);
    static const char *const data[] = {"scaling.dat", "memory.dat", "memory-fit.dat", "overhead.dat",
                                       "settings.gp", "README.txt", "term.gp", "scaling.gp",
                                       "speedup.gp", "efficiency.gp", "memory.gp", "overhead.gp"};
    for (size_t i = 0; i < sizeof data / sizeof *data; i++)
        assert_file(dir, data[i], NULL, 0);
    static const char *const figs[] = {"speedup", "efficiency", "memory", "overhead"};
    const char *vext = vector_ext();
    for (size_t i = 0; i < 4; i++) {
        char name[64], head[8];
        snprintf(name, sizeof name, "%s.png", figs[i]);
        assert_file(dir, name, head, 8);
        ASSERT_MSG(!memcmp(head, png_sig, 8), "%s is not a PNG", name);
        ASSERT_STR_CONTAINS(out, name);
        snprintf(name, sizeof name, "%s.%s", figs[i], vext);
        assert_file(dir, name, head, 4);
        ASSERT_MSG(!memcmp(head, !strcmp(vext, "pdf") ? "%PDF" : "<?xm", 4), "%s: wrong format", name);
    }
    /* the printed output says where things went and how to redraw by hand */
    ASSERT_STR_CONTAINS(out, "redraw by hand: gnuplot");
    ASSERT_STR_CONTAINS(out, "T1: no successful serial run");
    ASSERT_STR_CONTAINS(out, "no memory fit drawn for 1 benchmark/variant pair (3 points, need 4): T1/cont-seg-busy");
    free(out);
    free(err);

    /* the data files: blocks named, values from summary.csv and fits.csv */
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/plots/scaling.dat", dir);
    char *t = slurp(p);
    ASSERT_STR_CONTAINS(t, "# fib cont-seg-busy\n1 0.9090909091 ");
    ASSERT_STR_CONTAINS(t, "\n2 1.785714286 0.02764259473 0.8928571429 ");
    ASSERT_STR_CONTAINS(t, "\n8 1.960784314 ");
    ASSERT(!strstr(t, "# T1")); /* no speedup without a serial cell */
    free(t);
    snprintf(p, sizeof p, "%s/plots/memory.dat", dir);
    t = slurp(p);
    ASSERT_STR_CONTAINS(t, "# T1 cont-seg-busy\n1 50 ");
    ASSERT_STR_CONTAINS(t, "# fib omp\n");
    free(t);
    snprintf(p, sizeof p, "%s/plots/memory-fit.dat", dir);
    t = slurp(p);
    ASSERT_STR_CONTAINS(t, "# fib cont-seg-busy: a = ");
    ASSERT_STR_CONTAINS(t, "# fib omp: a = ");
    ASSERT(!strstr(t, "# T1"));
    free(t);
    /* T1/Ts from the fixture's medians: omp 1.5/1.0, cont-seg-busy 1.1/1.0, each with the
     * ratio's standard error from the two medians' (0.0289 and 0.0115 over serial's 0.0115) */
    double q, se;
    overhead_value(dir, "fib", "omp", &q, &se);
    ASSERT_NEAR(q, 1.5, 1e-9);
    ASSERT_NEAR(se, 1.5 * sqrt(pow(0.02886751346 / 1.5, 2) + pow(0.01154700538 / 1.0, 2)), 1e-9);
    overhead_value(dir, "fib", "cont-seg-busy", &q, &se);
    ASSERT_NEAR(q, 1.1, 1e-9);
    ASSERT_NEAR(se, 1.1 * sqrt(pow(0.01154700538 / 1.1, 2) + pow(0.01154700538 / 1.0, 2)), 1e-9);
    snprintf(p, sizeof p, "%s/plots/settings.gp", dir);
    t = slurp(p);
    ASSERT_STR_CONTAINS(t, "array vname[3] = ['serial', 'omp', 'cont-seg-busy']");
    ASSERT_STR_CONTAINS(t, "sc_note[2] = ['', 'no serial run: speedup undefined']");
    free(t);
    remove_tmpdir();
}

TEST(redraw_by_hand) {
    /* the copied scripts find their data next to them, from any working directory */
    const char *dir = fresh_dir(1);
    ASSERT_EQ(run_cmd("fit", dir), HX_OK);
    ASSERT_EQ(run_cmd("plot", dir), HX_OK);
    char png[PATH_MAX], cmd[PATH_MAX + 128];
    snprintf(png, sizeof png, "%s/plots/memory.png", dir);
    ASSERT(unlink(png) == 0);
    snprintf(cmd, sizeof cmd, "cd / && gnuplot '%s/plots/memory.gp' 2>&1", dir);
    FILE *f = popen(cmd, "r");
    ASSERT(f);
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    ASSERT_EQ(pclose(f), 0);
    ASSERT_MSG(n == 0, "gnuplot said: %s", buf);
    struct stat st;
    ASSERT(!stat(png, &st) && st.st_size > 0);
    remove_tmpdir();
}

TEST(no_gnuplot_on_path) {
    const char *dir = fresh_dir(1);
    ASSERT_EQ(run_cmd("fit", dir), HX_OK);
    setenv("PATH", "/nonexistent-dir-for-test", 1);
    int rc = run_cmd("plot", dir);
    char *err = output_of(dir, "plot.err");
    ASSERT_EQ(rc, HX_ETOOL);
    ASSERT_STR_CONTAINS(err, "gnuplot is not on PATH");
    ASSERT_STR_CONTAINS(err, "apt-get install gnuplot-nox");
    free(err);
    static const char *const data[] = {"scaling.dat", "memory.dat", "memory-fit.dat", "overhead.dat",
                                       "settings.gp", "speedup.gp", "README.txt"};
    for (size_t i = 0; i < sizeof data / sizeof *data; i++)
        assert_file(dir, data[i], NULL, 0);
    ASSERT(!exists_in_plots(dir, "speedup.png"));
    remove_tmpdir();
}

TEST(missing_inputs) {
    const char *dir = fresh_dir(0);
    int rc = run_cmd("plot", dir); /* no summary.csv */
    char *err = output_of(dir, "plot.err");
    ASSERT_EQ(rc, HX_EIO);
    ASSERT_STR_CONTAINS(err, "summary.csv: No such file or directory (run `forkscope fit DIR` first)");
    free(err);
    /* a summary by hand: one benchmark, no serial cell, no fits.csv, no env.json, one variant
     * with a failed cell: figures with gaps and notes, no overhead chart, no gnuplot warning */
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/summary.csv", dir);
    write_file(p, "benchmark,kernel,variant,workers,oversubscribed,n_ok,n_failed,failures,time_median,time_se,"
                  "mem_kib,mem_se_kib,speedup,speedup_se,efficiency,efficiency_se\n"
                  "uts-x,uts,child-lin-lazy,1,false,3,0,,1.0,0.01,200,3,,,,\n"
                  "uts-x,uts,child-lin-lazy,2,false,3,0,,0.6,0.01,350,3,,,,\n"
                  "uts-x,uts,child-lin-lazy,4,false,0,3,crash:3,,,,,,,,\n"
                  "uts-x,uts,weird-variant,1,false,3,0,,1.2,0.01,150,3,,,,\n");
    rc = run_cmd("plot", dir);
    err = output_of(dir, "plot.err");
    char *out = output_of(dir, "plot.out");
    ASSERT_MSG(rc == HX_OK, "rc %d: %s", rc, err);
    ASSERT_STR_CONTAINS(err, "fits.csv: No such file or directory: memory figure drawn without fits");
    ASSERT(!strstr(err, "gnuplot"));
    ASSERT_STR_CONTAINS(out, "no overhead chart");
    ASSERT_STR_CONTAINS(out, "uts-x/child-lin-lazy at P = 4: no successful run (crash:3): a gap");
    ASSERT(exists_in_plots(dir, "speedup.png") && exists_in_plots(dir, "memory.png"));
    ASSERT(!exists_in_plots(dir, "overhead.png"));
    free(err);
    free(out);
    remove_tmpdir();
}

TEST(not_run_notes_follow_the_config) {
    /* a variant missing from a benchmark is a note only when the config asked for it there:
     * fib-small names its own variants (omp only), uts-x takes the top-level list */
    const char *dir = fresh_dir(0);
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/summary.csv", dir);
    write_file(p, "benchmark,kernel,variant,workers,oversubscribed,n_ok,n_failed,failures,time_median,time_se,"
                  "mem_kib,mem_se_kib,speedup,speedup_se,efficiency,efficiency_se\n"
                  "uts-x,uts,cont-seg-busy,1,false,3,0,,1.0,0.01,200,3,,,,\n"
                  "uts-x,uts,cont-seg-busy,2,false,3,0,,0.6,0.01,350,3,,,,\n"
                  "fib-small,fib,omp,1,false,3,0,,0.2,0.01,150,3,,,,\n");
    snprintf(p, sizeof p, "%s/config.json", dir);
    write_file(p, "{\"name\": \"t\", \"benchmarks\": [{\"name\": \"uts-x\", \"kernel\": \"uts\"},"
                  " {\"name\": \"fib-small\", \"kernel\": \"fib\", \"variants\": [\"omp\"]}],"
                  " \"variants\": [\"cont-seg-busy\", \"omp\"], \"workers\": [1, 2]}\n");
    int rc = run_cmd("plot", dir);
    char *err = output_of(dir, "plot.err");
    char *out = output_of(dir, "plot.out");
    ASSERT_MSG(rc == HX_OK, "rc %d: %s", rc, err);
    ASSERT_STR_CONTAINS(out, "uts-x/omp: not run (no cells in summary.csv)");
    ASSERT_MSG(!strstr(out, "fib-small/cont-seg-busy"), "%s", out);
    free(err);
    free(out);
    remove_tmpdir();
}

TEST(gnuplot_error_is_a_failure) {
    /* scripts from a directory where one of them is broken */
    const char *dir = fresh_dir(1);
    ASSERT_EQ(run_cmd("fit", dir), HX_OK);
    char sdir[512], p[PATH_MAX];
    snprintf(sdir, sizeof sdir, "%.100s/scripts", dir);
    ASSERT(mkdir(sdir, 0777) == 0);
    static const char *const names[] = {"term.gp", "scaling.gp", "speedup.gp", "efficiency.gp", "memory.gp",
                                        "overhead.gp", "forest.gp", "breakdown.gp", "timeline.gp"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", sdir, names[i]);
        write_file(p, i == 2 ? "set terminal bogus-terminal\n" : "# empty\n");
    }
    setenv("FORKSCOPE_PLOTS", sdir, 1);
    int rc = run_cmd("plot", dir);
    char *err = output_of(dir, "plot.err");
    ASSERT_EQ(rc, HX_EINTERNAL);
    ASSERT_STR_CONTAINS(err, "gnuplot failed on");
    ASSERT_STR_CONTAINS(err, "speedup.gp");
    free(err);
    /* and a directory without the scripts: HX_ETOOL, naming where it looked */
    setenv("FORKSCOPE_PLOTS", "/nonexistent-scripts", 1);
    rc = run_cmd("plot", dir);
    err = output_of(dir, "plot.err");
    ASSERT_EQ(rc, HX_ETOOL);
    ASSERT_STR_CONTAINS(err, "/nonexistent-scripts");
    free(err);
    remove_tmpdir();
}

TEST(style_table_is_fixed) {
    const char *c1, *c2;
    int p1, p2;
    /* known variants: fixed, distinct colours, neighbours never share a marker */
    static const char *const known[] = {"serial", "omp", "omp-llvm", "cont-seg-busy", "cont-seg-lazy", "cont-lin-busy",
                                        "cont-lin-lazy", "child-seg-busy", "child-seg-lazy", "child-lin-busy",
                                        "child-lin-lazy", "child-native-busy", "child-native-lazy", "tbb"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        int r = hx_plot_style(known[i], &c1, &p1);
        ASSERT_EQ(r, (long long)i);
        ASSERT(c1[0] == '#' && strlen(c1) == 7 && p1 % 2 == 1 && p1 >= 5);
        for (size_t j = 0; j < i; j++) {
            hx_plot_style(known[j], &c2, &p2);
            ASSERT_MSG(strcmp(c1, c2), "%s and %s share a colour", known[i], known[j]);
        }
        if (i) {
            hx_plot_style(known[i - 1], &c2, &p2);
            ASSERT(p1 != p2);
        }
    }
    /* unknown: deterministic, after the known ones */
    int r1 = hx_plot_style("cont-seg-busy*", &c1, &p1), r2 = hx_plot_style("cont-seg-busy*", &c2, &p2);
    long long nknown = (long long)(sizeof known / sizeof *known);
    ASSERT(r1 == nknown && r2 == nknown && c1 == c2 && p1 == p2);
}

int main(int argc, char **argv) {
    return test_main(argc, argv,
                     (struct test_case[]){
                         TEST_CASE(plot_fixture_makes_every_file, 30),
                         TEST_CASE(redraw_by_hand, 30),
                         TEST_CASE(no_gnuplot_on_path, 20),
                         TEST_CASE(missing_inputs, 30),
                         TEST_CASE(not_run_notes_follow_the_config, 30),
                         TEST_CASE(gnuplot_error_is_a_failure, 30),
                         TEST_CASE(style_table_is_fixed, 10),
                         {0},
                     });
}
