/* report_util.c: what the long-context and stability sections share:
 * whether figures are drawn, drawing a linked figure, grouping runs by
 * name, "m ± s" cells, opening a run's head, and plot.h's key-run rule
 * over groups. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* variant_key */
#include "metrics.h"
#include "plot.h"
#include "report_priv.h"
#include "stats.h"
#include "runname.h"
#include "runfile_read.h"
#include "runschema.h"
#include "util.h" /* dir_make */

static int figures_on = 1; /* report_set_figures (report.h) */
void report_set_figures(int on) { figures_on = on != 0; }
int report_figures_on(void) { return figures_on; }

/* Draw figdir/name (figdir created when missing) and link it from the
 * report; a figure that cannot be drawn, or is not drawn (--no-figures),
 * is a line in the report, not a failure. */
void draw_figure(FILE *f, const char *figdir, const char *name, const char *alt, const PlotAxes *ax,
                 const PlotSeries *s, int ns) {
    char path[1200], err[512];
    if (!figures_on) {
        fprintf(f, "\n- figure %s not drawn (`--no-figures`)\n", name);
        return;
    }
    snprintf(path, sizeof path, "%s/%s", figdir, name);
    if (dir_make(figdir) != 0) {
        fprintf(f, "\n- figure %s not drawn: cannot create %s: %s\n", name, figdir,
                strerror(errno));
        return;
    }
    if (plot_lines(path, ax, s, ns, err, sizeof err) == 0)
        fprintf(f, "\n![%s](figures/%s)\n", alt, name);
    else fprintf(f, "\n- figure %s not drawn: %s\n", name, err);
}

/* Group n runs by name (names[i], stride bytes apart) in order of first
 * appearance: grp[i] = group of run i; returns the number of groups. */
int group_names(const char *names, size_t stride, int n, int *grp) {
    int ng = 0;
    for (int i = 0; i < n; i++) {
        grp[i] = -1;
        for (int j = 0; j < i && grp[i] < 0; j++)
            if (!strcmp(names + (size_t)i * stride, names + (size_t)j * stride)) grp[i] = grp[j];
        if (grp[i] < 0) grp[i] = ng++;
    }
    return ng;
}

/* " m ± s" of v[k] (just " m" for one value) with fmt for both. */
void put_mean(FILE *f, const char *fmt, const char *sfmt, const double *v, int k) {
    double m, s;
    mean_std(v, k, &m, &s);
    fprintf(f, fmt, m);
    if (k > 1) fputs(" ± ", f), fprintf(f, sfmt, s);
}

/* ---- what both sections read first ---- */

/* See report_priv.h. */
void run_data_label(RunReader *r, char *data, size_t n) {
    char kind[32], input[4096];
    int has_data = runread_config_string(r, RS_CFG_DATA, data, n, NULL, 0) == 0;
    int has_input =
        !has_data &&
        runread_pretrained_string(r, RS_PT_INPUT_KIND, kind, sizeof kind, NULL, 0) == 0 &&
        runread_pretrained_string(r, RS_PT_INPUT, input, sizeof input, NULL, 0) == 0;
    if (has_input) {
        const char *base = strrchr(input, '/');
        snprintf(data, n, "%s:%s", kind, base ? base + 1 : input);
    } else if (!has_data) snprintf(data, n, "?");
    table_name(data, n, data); /* shown as text (runname.h) */
}

/* Open a run and copy out its run name, variant, status and data source
 * (each buffer 256, 256, 32 and 64 bytes, as the record structs hold). */
RunReader *open_run_head(const char *path, char *name, char *variant, char *status, char *data) {
    char err[512];
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) return NULL;
    run_name(name, 256, path);
    table_name(variant, 256, runread_meta(r)->variant); /* shown as text (runname.h) */
    snprintf(status, 32, "%s", runread_meta(r)->status);
    run_data_label(r, data, 64);
    return r;
}

int members(const int *grp, int n, int g, int *idx) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (grp[i] == g) idx[k++] = i;
    return k;
}

/* Whether each group is drawn (plot.h's rule: key runs past
 * PLOT_MAX_SERIES run names); returns 1 when only some are. */
int key_groups(const char *variant, const char *status, size_t stride, const int *grp, int n,
               int ng, unsigned char *shown) {
    memset(shown, 0, (size_t)ng);
    for (int i = 0; i < n; i++)
        if (plot_key_run(variant + (size_t)i * stride, status + (size_t)i * stride))
            shown[grp[i]] = 1;
    if (plot_key_series(ng, shown)) return 1;
    memset(shown, 1, (size_t)ng);
    return 0;
}

void adjust_family(double *adj, const double *p, int n, int bh) {
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    double *h = malloc((size_t)(n > 0 ? n : 1) * sizeof *h);
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx), k = 0;
    char err[256];
    for (int i = 0; i < n; i++) {
        adj[i] = NAN;
        if (v && idx && isfinite(p[i])) idx[k] = i, v[k++] = p[i];
    }
    int rc = k && h
                 ? (bh ? stats_bh(h, v, k, err, sizeof err) : stats_holm(h, v, k, err, sizeof err))
                 : -1;
    for (int j = 0; rc == 0 && j < k; j++) adj[idx[j]] = h[j];
    free(v), free(h), free(idx);
}
