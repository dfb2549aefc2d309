/* cmd_plot.c: `gatelab plot KIND RUN.h5... --out FILE.png` (the figures
 * are analysis/figures/plot.c's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "figstyle.h"
#include "metrics.h" /* SINK_EPS_TEXT */
#include "plot.h"
#include "util.h"

typedef struct {
    const char *out;
} PlotOpts;
static const PlotOpts plot_defaults = {NULL};

static const OptRow plot_rows[] = {
    {'o', "out", OPT_STR, "FILE.png", 0, 0, NULL, "output image", 0, 1, &plot_defaults.out},
    FIGSTYLE_OPT_ROWS,
    {0}};
const OptTable plot_options = {
    .cmd = "plot",
    .operands = "KIND RUN.h5 [RUN2.h5 ...]",
    .about = "Draw one figure with gnuplot: FILE.png and its vector twins FILE.svg and\n"
             "FILE.pdf. FILE.dat and FILE.gp are written next to them so the figure\n"
             "can be restyled and redrawn by hand.\n",
    .rows = plot_rows,
    .more = plot_kinds_help,
    OPT_DEFAULTS(plot_defaults),
};

/* What the figures read from a run: its metrics and its last probe (when
 * it has probes). 0, or -1 with the reader's one line (a corrupt input). */
static int read_all(RunReader *r, char *why, size_t n) {
    RunTrain t;
    RunEval e;
    ProbeRecord p;
    long long *steps = NULL;
    int k = 0;
    if (runread_train(r, &t, why, n) != 0) return -1;
    runread_train_free(&t);
    if (runread_eval(r, &e, why, n) != 0) return -1;
    runread_eval_free(&e);
    if (runread_probe_steps(r, &steps, &k, why, n) != 0) return -1;
    free(steps);
    if (k > 0 && runread_probe(r, -1, &p, why, n) != 0) return -1;
    if (k > 0) runread_probe_free(&p);
    return 0;
}

/* The figure is five files: STEM.png, STEM.svg, STEM.pdf, STEM.dat and
 * STEM.gp (out is STEM.png, ol its length); 0 when every one may be
 * written (outpath.h), else -1 with the refusal printed. */
static int check_figure_out(const char *out, size_t ol) {
    char side[4][4200];
    snprintf(side[0], sizeof side[0], "%.*s.dat", (int)(ol - 4), out);
    snprintf(side[1], sizeof side[1], "%.*s.gp", (int)(ol - 4), out);
    snprintf(side[2], sizeof side[2], "%.*s.svg", (int)(ol - 4), out);
    snprintf(side[3], sizeof side[3], "%.*s.pdf", (int)(ol - 4), out);
    if (cu_check_out("plot", out, OUT_PNG) < 0 || cu_check_out("plot", side[0], OUT_GNUPLOT) < 0 ||
        cu_check_out("plot", side[1], OUT_GNUPLOT) < 0 ||
        cu_check_out("plot", side[2], OUT_SVG) < 0 || cu_check_out("plot", side[3], OUT_PDF) < 0)
        return -1;
    return 0;
}

int cmd_plot(int argc, char **argv) {
    PlotOpts o = plot_defaults;
    FigStyle fs = {0};
    OptParser op;
    opt_init(&op, &plot_options, argc, argv);
    for (int c; (c = opt_parse(&op, &o)) != OPT_END;) {
        if (c < 0) return opt_exit(c);
        if (figstyle_option(&fs, "plot", c, op.str) != 0) return 2;
    }
    const char *out = o.out;
    char err[1024] = "";
    figstyle_set(&fs);
    int opnd = op.optind;
    char kinds[256];
    plot_kind_names(kinds, sizeof kinds);
    if (opnd >= argc) {
        fprintf(stderr, "gatelab plot: missing KIND (%s; try --help)\n", kinds);
        return 2;
    }
    const char *kind = argv[opnd++];
    if (!plot_kind_known(kind)) {
        fprintf(stderr, "gatelab plot: unknown KIND '%s' (%s)\n", kind, kinds);
        return 2;
    }
    int n = argc - opnd;
    if (n < 1) {
        fprintf(stderr, "gatelab plot: no run files given\n");
        return 2;
    }
    if (!out) {
        fprintf(stderr, "gatelab plot: --out FILE.png is required\n");
        return 2;
    }
    size_t ol = strlen(out);
    if (ol < 5 || strcmp(out + ol - 4, ".png")) {
        fprintf(stderr, "gatelab plot: %s: output must be a .png file\n", out);
        return 2;
    }
    if (!strcmp(kind, "gate-hist") && n != 1) {
        fprintf(stderr,
                "gatelab plot: gate-hist takes exactly one run "
                "(got %d)\n",
                n);
        return 2;
    }
    /* every run readable first: what is wrong with an input exits 2, what
     * goes wrong drawing it (gnuplot, memory) exits 1 */
    for (int i = opnd; i < argc; i++) {
        char why[1024];
        RunReader *r = runread_open(argv[i], why, sizeof why);
        int bad = !r || read_all(r, why, sizeof why) != 0;
        if (r) runread_close(r);
        if (bad) {
            fprintf(stderr, "gatelab plot: %s\n", why);
            return 2;
        }
    }
    if (check_figure_out(out, ol) < 0) return 2;
    int rc = plot_figure(kind, argv + opnd, n, out, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "gatelab plot: %s\n", err);
        return rc == PLOT_BAD_INPUT ? 2 : 1; /* docs/failures.md: 2 bad input, 1 a failure */
    }
    printf("wrote %s (and .svg, .pdf)\n", out);
    return 0;
}
