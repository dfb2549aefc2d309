/* cmd_heatmap.c: `gatelab heatmap RUN.h5 --out FILE.png`: attention maps of
 * one probe as a PNG: one head, a layer x head grid, or two runs' heads at
 * one layer side by side (--compare). */
#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "heatmap.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int layer, head; /* -1: all */
} Sel;

/* Append the selected panels of one probe; titles[] holds their text. */
static int add_panels(const ProbeRecord *p, const char *label, Sel s, HeatPanel *pan,
                      char (*titles)[64], int n) {
    for (int l = 0; l < p->L; l++) {
        if (s.layer >= 0 && l != s.layer) continue;
        for (int h = 0; h < p->H; h++) {
            if (s.head >= 0 && h != s.head) continue;
            snprintf(titles[n], 64, "%s%sL%d H%d", label ? label : "", label ? " " : "", l, h);
            pan[n].A = p->attention + ((size_t)l * p->H + h) * p->M * p->M;
            pan[n].T = p->M;
            pan[n].title = titles[n];
            n++;
        }
    }
    return n;
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
                  const ProbeRecord *p2, Sel s, int log_scale) {
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
        char l1[40], l2[40];
        snprintf(l1, sizeof l1, "%.24s s%lld", runread_meta(r)->variant, runread_meta(r)->seed);
        snprintf(l2, sizeof l2, "%.24s s%lld", runread_meta(r2)->variant, runread_meta(r2)->seed);
        int n = add_panels(p, l1, s, pan, titles, 0);
        add_panels(p2, l2, s, pan, titles, n);
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
        add_panels(p, NULL, s, pan, titles, 0);
        rows = s.layer >= 0 ? 1 : p->L;
        cols = s.head >= 0 ? 1 : p->H;
    }
    char title[200];
    snprintf(title, sizeof title, "%.40s S%lld%s%.40s%s, PROBE STEP %lld, T = %d%s",
             runread_meta(r)->variant, runread_meta(r)->seed, p2 ? " (TOP) VS " : "",
             p2 ? runread_meta(r2)->variant : "", p2 ? " (BOTTOM)" : "", p->step, p->T,
             log_scale ? ", LOG10" : "");
    HeatmapStyle st = {log_scale, 0, 0.0f, 0.0f, 1, title, 1};
    char err[512];
    int rc = heatmap_write_png(out, pan, rows, cols, &st, err, sizeof err);
    if (rc < 0) fprintf(stderr, "gatelab heatmap: %s\n", err);
    else printf("wrote %s (%d x %d panels%s)\n", out, rows, cols, log_scale ? ", log10 scale" : "");
    free(pan);
    free(titles);
    return rc < 0 ? 1 : 0;
}

static const OptRow heatmap_rows[] = {
    {'o', "out", OPT_STR, "FILE.png", 0, 0, NULL, "PNG to write (a new path or an existing PNG)", 0,
     1},
    {'l', "layer", OPT_INT, "L", 0, 1 << 20, NULL, "only layer L (with --head: a single head)", 0,
     0},
    {'H', "head", OPT_INT, "H", 0, 1 << 20, NULL, "only head H (without --layer: every layer)", 0,
     0},
    {'g', "log", OPT_FLAG, NULL, 0, 0, NULL, "colour by log10(a + 1e-4)", 0, 0},
    {'s', "step", OPT_INT, "N", 0, LLONG_MAX, "the last", "probe at training step N", 0, 0},
    {'c', "compare", OPT_STR, "RUN", 0, 0, NULL,
     "second run: its heads at --layer L as a second row", 0, 0},
    {0}};
const OptTable heatmap_options = {"heatmap", "RUN.h5 [options]",
                                  "Probe attention maps (mean over probe sequences) as a PNG.\n",
                                  NULL, heatmap_rows};

int cmd_heatmap(int argc, char **argv) {
    const char *out = NULL, *other = NULL;
    long long step = -1;
    Sel s = {-1, -1};
    int log_scale = 0;
    OptParser op;
    opt_init(&op, &heatmap_options, argc, argv);
    for (int c; (c = opt_next(&op)) != OPT_END;) {
        switch (c) {
        case OPT_HELP: return 0;
        case OPT_BAD: return 2;
        case 'o': out = op.str; break;
        case 'c': other = op.str; break;
        case 'g': log_scale = 1; break;
        case 'l': s.layer = (int)op.num; break;
        case 'H': s.head = (int)op.num; break;
        case 's': step = op.num; break;
        }
    }
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
    if (cu_check_out("heatmap", out, OUT_PNG) < 0) return 2;
    RunReader *r, *r2 = NULL;
    ProbeRecord p, p2;
    if (cu_load("heatmap", argv[opnd], step, &r, &p) < 0) return 2;
    int rc = check_sel(argv[opnd], &p, s) < 0 ? 2 : 0;
    /* the other run's last probe: its steps need not match ours */
    if (rc == 0 && other && cu_load("heatmap", other, -1, &r2, &p2) < 0) rc = 2;
    if (rc == 0 && r2 && check_sel(other, &p2, s) < 0) rc = 2;
    if (rc == 0) rc = render(out, r, &p, r2, r2 ? &p2 : NULL, s, log_scale);
    if (r2) {
        runread_probe_free(&p2);
        runread_close(r2);
    }
    runread_probe_free(&p);
    runread_close(r);
    return rc;
}
