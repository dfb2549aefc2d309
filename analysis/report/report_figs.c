/* report_figs.c: the Figures section of REPORT.md: attention heatmaps
 * (heatmap.h) and the line and bar figures (plot.h), each as PNG, SVG and
 * PDF side by side. Every heatmap of a report colours the same range,
 * attention 0 to 1 on the log10(a + 1e-4) scale, so colours compare
 * across its figures (and across reports). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"        /* variant_key */
#include "config_derive.h" /* config_layer_window */
#include "figlabel.h"
#include "heatmap.h"
#include "metrics.h"
#include "plot.h"
#include "report_priv.h"
#include "runfile_read.h"
#include "runname.h"
#include "runstats.h"
#include "util.h"

/* ---- figures ---- */

/* The report's one colour range (attention units, log10 scale). */
#define REPORT_VMIN 0.0f
#define REPORT_VMAX 1.0f

/* Panels of probe p of run r: every layer x head (layer < 0) or one
 * layer's heads, each under its layer's window (rs_layer_window; cfg the
 * run's rs_arch_config) */
static int fill_panels(RunReader *r, const ProbeRecord *p, const Config *cfg, int layer,
                       const char *label, HeatPanel *pan, char (*title)[64]) {
    int n = 0;
    for (int l = 0; l < p->L; l++) {
        if (layer >= 0 && l != layer) continue;
        for (int h = 0; h < p->H; h++, n++) {
            const int absent = h >= runread_layer_heads(p, l); /* blank, titled so */
            snprintf(title[n], 64, "%s%sL%d H%d%s", label, *label ? " " : "", l, h,
                     absent ? " absent" : "");
            pan[n].A = absent ? NULL : p->attention + ((size_t)l * p->H + h) * p->M * p->M;
            pan[n].T = p->M;
            pan[n].title = title[n];
            pan[n].window = rs_layer_window(r, cfg, l);
        }
    }
    return n;
}

/* Heatmap grid of one run into figs/heatmap_<run>_s<seed>.png; the
 * Markdown link goes to f. Failures are reported in the Markdown. */
static void fig_grid(FILE *f, const char *figdir, const Row *w) {
    char err[512], name[300], path[1700];
    RunReader *r = runread_open(w->path, err, sizeof err);
    ProbeRecord p;
    if (!r || runread_probe(r, -1, &p, err, sizeof err) < 0) {
        fprintf(f, "- heatmap of %s skipped: %s\n", w->file, err);
        runread_close(r);
        return;
    }
    name_for_file(name, 256, w->run);
    snprintf(path, sizeof path, "%s/heatmap_%s_s%lld.png", figdir, name, w->seed);
    size_t np = (size_t)p.L * p.H;
    HeatPanel *pan = calloc(np, sizeof *pan);
    char(*title)[64] = calloc(np, sizeof *title);
    char fig_title[400], who[256], cap[600];
    int ck = fig_is_pretrained(r); /* a checkpoint: its model, snapshot and gate */
    if (ck) fig_run_label(r, who, sizeof who);
    else
        snprintf(who, sizeof who, "%.60s (%.30s, %.16s) s%lld", w->run, w->variant, w->data,
                 w->seed);
    snprintf(fig_title, sizeof fig_title, "%s: %s, layer x head, %s %lld, T = %d, log10", who,
             fig_map_kind(&p), ck ? "inspected at step" : "step", p.step, p.T);
    if (ck) {
        table_name(who, sizeof who, who);
        snprintf(cap, sizeof cap, "%s (checkpoint %s)", w->run, who);
    } else
        snprintf(cap, sizeof cap, "%s (%s, data %s), seed %lld", w->run, w->variant, w->data,
                 w->seed);
    HeatmapStyle st = {1, 0, REPORT_VMIN, REPORT_VMAX, 1, fig_title, 1, NULL};
    if (pan && title) {
        Config cfg;
        rs_arch_config(r, &cfg);
        fill_panels(r, &p, &cfg, -1, "", pan, title);
        if (heatmap_write_figure(path, pan, p.L, p.H, &st, err, sizeof err) == 0)
            fprintf(
                f,
                "\n**%s**: %s of every layer (rows) and head (columns), log10 scale, %s "
                "%lld, T = %d ([SVG](figures/heatmap_%s_s%lld.svg), "
                "[PDF](figures/heatmap_%s_s%lld.pdf))\n\n![heatmap %s s%lld](figures/heatmap_%s_s"
                "%lld.png)\n",
                cap, fig_map_kind(&p), ck ? "inspected at step" : "probe step", p.step, p.T, name,
                w->seed, name, w->seed, w->run, w->seed, name, w->seed);
        else fprintf(f, "- heatmap of %s failed: %s\n", w->file, err);
    }
    free(pan);
    free(title);
    runread_probe_free(&p);
    runread_close(r);
}

/* baseline vs g1-elem (same data source) at the baseline's layer of
 * largest F-Attn, into heatmap_baseline_vs_g1-elem_<data>.png */
static void fig_compare(FILE *f, const char *figdir, const Row *a, const Row *b, const char *why) {
    char err[512] = "", path[1400], dname[64];
    name_for_file(dname, sizeof dname, a->data);
    RunReader *ra = runread_open(a->path, err, sizeof err);
    RunReader *rb = ra ? runread_open(b->path, err, sizeof err) : NULL;
    ProbeRecord pa, pb;
    int ok = rb && runread_probe(ra, -1, &pa, err, sizeof err) == 0;
    if (ok && runread_probe(rb, -1, &pb, err, sizeof err) < 0) {
        runread_probe_free(&pa);
        ok = 0;
    }
    if (ok && (pa.H != pb.H || pa.L != pb.L)) {
        snprintf(err, sizeof err, "the runs differ in layers or heads");
        runread_probe_free(&pa);
        runread_probe_free(&pb);
        ok = 0;
    }
    if (!ok) {
        fprintf(f, "- side-by-side heatmap (data %s) skipped: %s\n", a->data, err);
        runread_close(ra);
        runread_close(rb);
        return;
    }
    int layer = 0;
    for (int l = 1; l < pa.L; l++)
        if (rs_share(&pa, l) > rs_share(&pa, layer)) layer = l;
    HeatPanel *pan = calloc((size_t)2 * pa.H, sizeof *pan);
    char(*title)[64] = calloc((size_t)2 * pa.H, sizeof *title);
    char fig_title[200];
    snprintf(fig_title, sizeof fig_title,
             "%.40s s%lld (top) vs %.40s s%lld (bottom), "
             "layer %d, median-F-Attn seeds, log10",
             a->run, a->seed, b->run, b->seed, layer);
    HeatmapStyle st = {1, 0, REPORT_VMIN, REPORT_VMAX, 1, fig_title, 1, NULL};
    snprintf(path, sizeof path, "%s/heatmap_baseline_vs_g1-elem_%s.png", figdir, dname);
    if (pan && title) {
        char la[40], lb[40];
        snprintf(la, sizeof la, "%.28s s%lld", a->run, a->seed);
        snprintf(lb, sizeof lb, "%.28s s%lld", b->run, b->seed);
        Config ca, cb;
        rs_arch_config(ra, &ca);
        rs_arch_config(rb, &cb);
        int n = fill_panels(ra, &pa, &ca, layer, la, pan, title);
        fill_panels(rb, &pb, &cb, layer, lb, pan + n, title + n);
        if (heatmap_write_figure(path, pan, 2, pa.H, &st, err, sizeof err) == 0)
            fprintf(f,
                    "\n**%s seed %lld (top) vs %s seed %lld (bottom), data %s**, "
                    "layer %d (the baseline's layer of largest F-Attn), every head, "
                    "log10 scale. %s\n\n![baseline vs g1-elem, %s]"
                    "(figures/heatmap_baseline_vs_g1-elem_%s.png)\n",
                    a->run, a->seed, b->run, b->seed, a->data, layer, why, a->data, dname);
        else fprintf(f, "- side-by-side heatmap (data %s) failed: %s\n", a->data, err);
    }
    free(pan);
    free(title);
    runread_probe_free(&pa);
    runread_probe_free(&pb);
    runread_close(ra);
    runread_close(rb);
}

/* First probed run of the group starting at row g; NULL if none. */
static const Row *probed_of(const Row *rows, int n, int g) {
    for (int i = g; i < n && same_group(&rows[g], &rows[i]); i++)
        if (rows[i].has_probe) return &rows[i];
    return NULL;
}

static int cmp_fattn(const void *x, const void *y) {
    double a = (*(const Row *const *)x)->f_attn, b = (*(const Row *const *)y)->f_attn;
    return (a > b) - (a < b);
}

/* The seed of median F-Attn among the probed seeds of the group holding
 * row g (the lower of the two middle ones for an even count): neither the
 * strongest nor the weakest sink stands for the group. *k = how many. */
static const Row *median_seed(const Row *rows, int n, int g, int *k) {
    int a = g, m = 0;
    while (a > 0 && same_group(&rows[a - 1], &rows[a])) a--;
    const Row *pick[256];
    for (int i = a; i < n && m < 256 && same_group(&rows[a], &rows[i]); i++)
        if (rows[i].has_probe && isfinite(rows[i].f_attn)) pick[m++] = &rows[i];
    *k = m;
    if (!m) return NULL;
    qsort(pick, (size_t)m, sizeof *pick, cmp_fattn);
    return pick[(m - 1) / 2];
}

/* One baseline-vs-headline-gate figure (the catalog's key runs, g1-elem)
 * per data source: its first probed g1-elem run whose matching baseline
 * group (Row.base: the same configuration less the gate) has a probed run,
 * each group shown by its median-F-Attn seed. */
static void fig_compare_all(FILE *f, const char *figdir, const Row *rows, int n) {
    const char *gate = variant_key_id(VARIANT_KEY_HEADLINE);
    const char *done[64];
    int nd = 0;
    for (int i = 0; i < n && rows[i].ok; i++) {
        if (strcmp(rows[i].variant, gate) || !rows[i].has_probe || rows[i].base < 0) continue;
        int seen = 0;
        for (int j = 0; j < nd; j++) seen |= !strcmp(done[j], rows[i].data);
        const Row *g1 = &rows[i], *base = seen ? NULL : probed_of(rows, n, g1->base);
        if (!base) continue;
        if (nd < 64) done[nd++] = g1->data;
        int kg, kb;
        const Row *mg = median_seed(rows, n, (int)(g1 - rows), &kg);
        const Row *mb = median_seed(rows, n, (int)(base - rows), &kb);
        char why[300];
        snprintf(why, sizeof why,
                 "Each side is its group's median-F-Attn seed "
                 "(F-Attn %.3f, the median of %d seed%s; %.3f, of %d), not the "
                 "strongest or weakest.",
                 mb ? mb->f_attn : NAN, kb, kb == 1 ? "" : "s", mg ? mg->f_attn : NAN, kg);
        fig_compare(f, figdir, mb ? mb : base, mg ? mg : g1, why);
    }
}

static void fig_plots(FILE *f, const char *figdir, const Row *rows, int n) {
    char **paths = calloc((size_t)n + 1, sizeof *paths);
    int k = 0;
    for (int i = 0; i < n && paths; i++)
        if (rows[i].ok) paths[k++] = (char *)rows[i].path;
    char err[512];
    if (!paths || plot_report_figures(figdir, paths, k, err, sizeof err) < 0) {
        fprintf(f, "\n- plots skipped: %s\n", paths ? err : "out of memory");
        free(paths);
        return;
    }
    free(paths);
    /* plot.c draws one series per run name, the mean over its seeds; line
     * figures keep to the key runs past 8 names */
    for (int k = 0; k < PLOT_N_KINDS; k++) {
        const PlotKind *pk = &PLOT_KINDS[k];
        char path[1400];
        if (!pk->report_png) continue;
        snprintf(path, sizeof path, "%s/%s.png", figdir, pk->report_png);
        if (access(path, R_OK) == 0)
            fprintf(f, "\n**%s**\n\n![%s](figures/%s.png)\n", pk->report_caption,
                    pk->report_caption, pk->report_png);
    }
    /* plot.c names a gate histogram by the run name when two groups share
     * the variant, else by the variant: link whichever exists, once. */
    for (int i = 0; i < n && rows[i].ok; i = group_end(rows, n, i)) {
        char name[256], path[1400];
        const char *label = rows[i].run;
        name_for_file(name, sizeof name, label);
        snprintf(path, sizeof path, "%s/gate_hist_%s.png", figdir, name);
        if (access(path, R_OK) != 0) {
            int first = 1;
            for (int j = 0; j < i; j++) first &= !!strcmp(rows[j].variant, rows[i].variant);
            if (!first) continue;
            label = rows[i].variant;
            name_for_file(name, sizeof name, label);
            snprintf(path, sizeof path, "%s/gate_hist_%s.png", figdir, name);
        }
        if (access(path, R_OK) == 0)
            fprintf(f,
                    "\n**gate score histogram, %s**\n\n![gate histogram "
                    "%s](figures/gate_hist_%s.png)\n",
                    label, label, name);
    }
}

void md_figures(FILE *f, const char *outdir, const Row *rows, int n) {
    char figdir[1100];
    snprintf(figdir, sizeof figdir, "%s/figures", outdir);
    fprintf(f, "\n## Figures\n\n");
    if (!report_figures_on()) {
        fprintf(f, "- not drawn (`--no-figures`): `gatelab report DIR` draws them\n");
        return;
    }
    if (dir_make(figdir) != 0) {
        fprintf(f, "- no figures: cannot create %s: %s\n", figdir, strerror(errno));
        return;
    }
    int groups = 0, g = 0;
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a)) groups++;
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a)) {
        report_progress("figures: heatmaps, run group %d/%d", ++g, groups);
        int i = a; /* the group's first seed with a probe */
        while (i < n && same_group(&rows[a], &rows[i]) && !rows[i].has_probe) i++;
        if (i < n && same_group(&rows[a], &rows[i])) fig_grid(f, figdir, &rows[i]);
    }
    report_progress("figures: baseline against the gate");
    fig_compare_all(f, figdir, rows, n);
    report_progress("figures: loss, layers, sinks and gate histograms (gnuplot)");
    fig_plots(f, figdir, rows, n);
}
