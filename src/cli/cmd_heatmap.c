/* cmd_heatmap.c: `gatelab heatmap RUN.h5 --out FILE.png`: attention maps of
 * one probe as a figure in the format --out's extension names (PNG, SVG
 * or PDF; only that file is written): one head, a
 * layer x head grid, or two runs' heads at one layer side by side
 * (--compare). */
#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "figstyle.h"
#include "figlabel.h"
#include "heatmap.h"
#include "runstats.h" /* rs_arch_config, rs_layer_window */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int layer, head; /* -1: all */
} Sel;

/* Append the selected panels of one probe, each under its layer's window
 * of the run r (rs_layer_window); titles[] holds their text. */
static int add_panels(RunReader *r, const ProbeRecord *p, const char *label, Sel s, HeatPanel *pan,
                      char (*titles)[64], int n) {
    Config cfg;
    rs_arch_config(r, &cfg);
    for (int l = 0; l < p->L; l++) {
        if (s.layer >= 0 && l != s.layer) continue;
        for (int h = 0; h < p->H; h++) {
            if (s.head >= 0 && h != s.head) continue;
            const int absent = h >= runread_layer_heads(p, l); /* blank, titled so */
            snprintf(titles[n], 64, "%s%sL%d H%d%s", label ? label : "", label ? " " : "", l, h,
                     absent ? " absent" : "");
            pan[n].A = absent ? NULL : p->attention + ((size_t)l * p->H + h) * p->M * p->M;
            pan[n].T = p->M;
            pan[n].title = titles[n];
            pan[n].window = rs_layer_window(r, &cfg, l);
            n++;
        }
    }
    return n;
}

/* The panel label of run r's row in a comparison: "VARIANT sSEED @STEP",
 * its own probe's step; when either run is a checkpoint of `gatelab
 * inspect` the row's tag ("top", "bottom") instead, the title naming each
 * model in full (checkpoint variants share the architecture's long
 * prefix, cut at the panel's width). */
static void row_label(RunReader *r, const ProbeRecord *p, const char *tag, char *out, size_t n) {
    if (tag) snprintf(out, n, "%s", tag);
    else
        snprintf(out, n, "%.24s s%lld @%lld", runread_meta(r)->variant, runread_meta(r)->seed,
                 p->step);
}

static int check_sel(const char *path, const ProbeRecord *p, Sel s) {
    if (s.layer >= p->L || s.head >= p->H) {
        fprintf(stderr,
                "gatelab heatmap: %s has %d layers x %d heads; "
                "--%s %d is out of range\n",
                path, p->L, p->H, s.layer >= p->L ? "layer" : "head",
                s.layer >= p->L ? s.layer : s.head);
        return -1;
    }
    return 0;
}

static int render(const char *out, RunReader *r, const ProbeRecord *p, RunReader *r2,
                  const ProbeRecord *p2, Sel s, int log_scale, const float range[2]) {
    int per = (s.layer >= 0 ? 1 : p->L) * (s.head >= 0 ? 1 : p->H);
    int per2 = p2 ? (s.head >= 0 ? 1 : p2->H) : 0;
    HeatPanel *pan = calloc((size_t)(per + per2), sizeof *pan);
    char(*titles)[64] = calloc((size_t)(per + per2), sizeof *titles);
    if (!pan || !titles) {
        free(pan);
        free(titles);
        fprintf(stderr, "gatelab heatmap: out of memory\n");
        return 1;
    }
    int rows, cols;
    if (p2) {
        char l1[48], l2[48];
        int ck = fig_is_pretrained(r) || fig_is_pretrained(r2);
        row_label(r, p, ck ? "top" : NULL, l1, sizeof l1);
        row_label(r2, p2, ck ? "bottom" : NULL, l2, sizeof l2);
        int n = add_panels(r, p, l1, s, pan, titles, 0);
        add_panels(r2, p2, l2, s, pan, titles, n);
        rows = 2;
        cols = per > per2 ? per : per2;
        if (per != per2) {
            fprintf(stderr,
                    "gatelab heatmap: the runs have %d and %d heads at"
                    " layer %d; cannot set them side by side\n",
                    per, per2, s.layer);
            free(pan);
            free(titles);
            return 2;
        }
    } else {
        add_panels(r, p, NULL, s, pan, titles, 0);
        rows = s.layer >= 0 ? 1 : p->L;
        cols = s.head >= 0 ? 1 : p->H;
    }
    char title[600], n1[200], n2[200] = "", steps[96];
    fig_run_label(r, n1, sizeof n1);
    if (r2) fig_run_label(r2, n2, sizeof n2);
    int pt = fig_is_pretrained(r);
    const char *what = pt ? "inspected at step" : "probe step";
    if (p2 && p2->step != p->step)
        snprintf(steps, sizeof steps, "%ss %lld (top) and %lld (bottom)", what, p->step, p2->step);
    else snprintf(steps, sizeof steps, "%s %lld", what, p->step);
    snprintf(title, sizeof title, "%s%s%s%s, %s, %s, T = %d%s", n1, p2 ? " (top) vs " : "", n2,
             p2 ? " (bottom)" : "", fig_map_kind(p), steps, p->T, log_scale ? ", log10" : "");
    HeatmapStyle st = {log_scale, 0, range[0], range[1], 1, title, 1, NULL};
    char err[512];
    int rc = heatmap_write(out, pan, rows, cols, &st, err, sizeof err);
    if (rc < 0) fprintf(stderr, "gatelab heatmap: %s\n", err);
    else if (p2)
        printf("wrote %s (%d x %d panels%s; top row probe step %lld, bottom row "
               "probe step %lld)\n",
               out, rows, cols, log_scale ? ", log10 scale" : "", p->step, p2->step);
    else printf("wrote %s (%d x %d panels%s)\n", out, rows, cols, log_scale ? ", log10 scale" : "");
    free(pan);
    free(titles);
    return rc < 0 ? 1 : 0;
}

typedef struct {
    const char *out, *other; /* other: --compare's run */
    Sel s;
    int log_scale;
    long long step; /* -1: the last probe */
} HeatmapOpts;
static const HeatmapOpts heatmap_defaults = {NULL, NULL, {-1, -1}, 0, -1};

static const OptRow heatmap_rows[] = {
    {'o', "out", OPT_STR, "FILE", 0, 0, NULL,
     "STEM.png, STEM.svg or STEM.pdf: that one file, in\n"
     "the format its extension names (a new path or a\n"
     "figure of that format)",
     0, 1, &heatmap_defaults.out},
    {'l', "layer", OPT_INT, "L", 0, 1 << 20, OPT_NO_DEF,
     "only layer L (with --head: a single head)", 0, 0, &heatmap_defaults.s.layer},
    {'H', "head", OPT_INT, "H", 0, 1 << 20, OPT_NO_DEF,
     "only head H (without --layer: every layer)", 0, 0, &heatmap_defaults.s.head},
    {'g', "log", OPT_FLAG, NULL, 0, 0, NULL, "colour by log10(a + 1e-4)", 0, 0,
     &heatmap_defaults.log_scale},
    {'r', "range", OPT_STR, "LO:HI", 0, 0, "the maps' own",
     "colour range in attention units,\n"
     "to share one scale across figures",
     0, 0, OPT_SPECIAL},
    {'s', "step", OPT_LL, "N", 0, LLONG_MAX, "the last", "probe at training step N", 0, 0,
     &heatmap_defaults.step},
    {'c', "compare", OPT_STR, "RUN", 0, 0, NULL,
     "second run: its heads at --layer L as a second row\n"
     "(its probe at --step N too; each row names its step)",
     0, 0, &heatmap_defaults.other},
    FIGSTYLE_OPT_ROWS,
    {0}};
const OptTable heatmap_options = {
    .cmd = "heatmap",
    .operands = "RUN.h5 [options]",
    .about = "Probe attention maps (mean over probe sequences) as PNG, SVG or PDF.\n",
    .rows = heatmap_rows,
    OPT_DEFAULTS(heatmap_defaults),
};

/* --range LO:HI: two finite numbers, LO < HI; 0 or -1. */
static int parse_range(const char *s, float range[2]) {
    char *end;
    double lo = strtod(s, &end);
    if (end == s || *end != ':') return -1;
    const char *b = end + 1;
    double hi = strtod(b, &end);
    if (end == b || *end || !isfinite(lo) || !isfinite(hi) || !(lo < hi)) return -1;
    range[0] = (float)lo, range[1] = (float)hi;
    return range[0] < range[1] ? 0 : -1;
}

int cmd_heatmap(int argc, char **argv) {
    HeatmapOpts o = heatmap_defaults;
    float range[2] = {0.0f, 0.0f};
    FigStyle fs = {0};
    OptParser op;
    opt_init(&op, &heatmap_options, argc, argv);
    for (int c; (c = opt_parse(&op, &o)) != OPT_END;) {
        if (c < 0) return opt_exit(c);
        if (c == 'r' && parse_range(op.str, range) < 0) {
            fprintf(stderr,
                    "gatelab heatmap: --range wants LO:HI, two numbers with LO < HI, got '%s'\n",
                    op.str);
            return 2;
        }
        if (figstyle_option(&fs, "heatmap", c, op.str) != 0) return 2;
    }
    const char *out = o.out, *other = o.other;
    const Sel s = o.s;
    figstyle_set(&fs);
    int opnd = op.optind;
    if (opnd != argc - 1 || !out) {
        fprintf(stderr, "gatelab heatmap: want one RUN.h5 and --out FILE.png "
                        "(gatelab heatmap --help)\n");
        return 2;
    }
    if (other && s.layer < 0) {
        fprintf(stderr, "gatelab heatmap: --compare needs --layer L\n");
        return 2;
    }
    if (o.log_scale && range[0] < range[1] && range[1] <= 0) {
        fprintf(stderr, "gatelab heatmap: --range with --log needs HI > 0\n");
        return 2;
    }
    char why[1024];
    if (heatmap_check_out(out, why, sizeof why) < 0) {
        fprintf(stderr, "gatelab heatmap: %s\n", why);
        return 2;
    }
    RunReader *r, *r2 = NULL;
    ProbeRecord p, p2;
    if (cu_load("heatmap", argv[opnd], o.step, &r, &p) < 0) return 2;
    int rc = check_sel(argv[opnd], &p, s) < 0 ? 2 : 0;
    /* the other run's probe at --step N too (its last without --step); the
     * rows are titled by their own steps, which need not match */
    if (rc == 0 && other && cu_load("heatmap", other, o.step, &r2, &p2) < 0) rc = 2;
    if (rc == 0 && r2 && check_sel(other, &p2, s) < 0) rc = 2;
    if (rc == 0) rc = render(out, r, &p, r2, r2 ? &p2 : NULL, s, o.log_scale, range);
    if (r2) {
        runread_probe_free(&p2);
        runread_close(r2);
    }
    runread_probe_free(&p);
    runread_close(r);
    return rc;
}
