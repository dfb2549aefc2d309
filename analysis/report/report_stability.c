/* report_stability.c: the learning-rate stability section of REPORT.md,
 * skipped silently when no data source holds two or more learning rates.
 * Rows and curves are per run name, mean ± sample std over its seeds; each
 * row counts its unstable seeds by instability.h's rule against the best
 * final val loss of the arm (the same variant and data under the same
 * architecture as it attends, runstats.h rs_arch_note; at any lr). */
#include "report_sections.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* variant_key */
#include "instability.h"
#include "metrics.h"
#include "plot.h"
#include "report_priv.h"
#include "runname.h"
#include "runfile_read.h"
#include "runschema.h"
#include "runstats.h"

/* ---- stability ---- */

typedef struct {
    char name[256], variant[256], status[32], data[64];
    char arch[RS_N_ARCH * 2 * RS_ARCH_LEN]; /* rs_arch_note at rs_train_len */
    double lr, spikes, dstep, ppl, vl;      /* vl: final val loss (NaN: none) */
    long long seed;
    size_t n;
    long long *step;
    double *loss; /* training curve (non-finite -> NaN gap) */
} StRun;

HEAD_SIZES_OK(StRun);

static int st_read(const char *path, StRun *w) {
    char err[512];
    memset(w, 0, sizeof *w);
    RunReader *r = open_run_head(path, w->name, w->variant, w->status, w->data);
    if (!r) return -1;
    w->seed = runread_meta(r)->seed;
    char arch[RS_N_ARCH][RS_ARCH_LEN];
    rs_arch_values(r, arch);
    rs_arch_note((const char(*)[RS_ARCH_LEN])arch, rs_train_len(r), w->arch, sizeof w->arch);
    double vl = NAN;
    int rc = runread_config_double(r, RS_CFG_LR, &w->lr, err, sizeof err);
    w->dstep = -1;
    runread_summary(r, RS_SUM_DIVERGED_STEP, &w->dstep, NULL, 0);
    if (runread_summary(r, RS_SUM_FINAL_VAL_LOSS, &vl, NULL, 0) != 0) vl = NAN;
    w->ppl = exp(vl);
    w->vl = strcmp(w->status, RS_STATUS_DIVERGED) ? vl : NAN;
    RunTrain t;
    w->spikes = NAN;
    if (rc == 0 && runread_train(r, &t, err, sizeof err) == 0) {
        w->spikes = rs_run_spikes(r, &t, NULL, 0);
        w->n = t.n;
        w->step = malloc((t.n ? t.n : 1) * sizeof *w->step);
        w->loss = malloc((t.n ? t.n : 1) * sizeof(double));
        for (size_t i = 0; w->step && w->loss && i < t.n; i++) {
            w->step[i] = t.step[i];
            w->loss[i] = isfinite(t.loss[i]) ? t.loss[i] : NAN;
        }
        if (!w->step || !w->loss) w->n = 0;
        runread_train_free(&t);
    }
    runread_close(r);
    return rc;
}

/* By data source, then lr, variant and run name (seeds of one run name
 * tie and share a row): a variant's 1x run (`baseline`, lr from the preset) and its
 * `baseline-lr2x` runs land under their own lr, and two data sources never
 * interleave. */
static int cmp_st(const void *a, const void *b) {
    const StRun *x = a, *y = b;
    int c = strcmp(x->data, y->data);
    if (c) return c;
    if (x->lr != y->lr) return x->lr < y->lr ? -1 : 1;
    c = strcmp(x->variant, y->variant);
    return c ? c : strcmp(x->name, y->name);
}

/* The best final val loss of run a's arm: every run of w[n] with its
 * variant and data under its architecture as it attends (NaN: none
 * finished). */
static double st_arm_best(const StRun *w, int n, const StRun *a) {
    double best = NAN;
    for (int i = 0; i < n; i++)
        if (!strcmp(w[i].variant, a->variant) && !strcmp(w[i].data, a->data) &&
            !strcmp(w[i].arch, a->arch) && isfinite(w[i].vl) && !(w[i].vl >= best))
            best = w[i].vl;
    return best;
}

/* One row: the seeds of one run name, idx[nm], of the n runs w. */
static void st_row(FILE *f, const StRun *w, int n, const int *idx, int nm) {
    const StRun *a = &w[idx[0]];
    double pp[256], tot = 0, best = st_arm_best(w, n, a);
    int ks = 0, kp = 0, ndiv = 0, nother = 0, unstable = 0;
    char steps[128] = "";
    size_t sl = 0;
    for (int i = 0; i < nm && i < 256; i++) {
        const StRun *r = &w[idx[i]];
        if (isfinite(r->spikes)) ks++, tot += r->spikes;
        if (isfinite(r->ppl)) pp[kp++] = r->ppl;
        unstable += run_unstable(r->vl, best, UNSTABLE_MARGIN);
        if (!strcmp(r->status, RS_STATUS_DIVERGED)) {
            ndiv++;
            if (sl < sizeof steps - 24)
                sl += (size_t)snprintf(steps + sl, sizeof steps - sl, "%s%.0f", sl ? ", " : "",
                                       r->dstep);
        } else if (strcmp(r->status, RS_STATUS_DONE)) nother++;
    }
    fprintf(f, "| %s | %g | %s | %s | %d |", a->data, a->lr, a->variant, a->name, nm);
    if (!ks) fprintf(f, " — |");
    else if (nm > 1) fprintf(f, " %.2g (total %.0f) |", tot / ks, tot);
    else fprintf(f, " %.0f |", tot);
    if (ndiv) fprintf(f, " **%d/%d** (step%s %s)", ndiv, nm, ndiv > 1 ? "s" : "", steps);
    else fprintf(f, " %d/%d", ndiv, nm);
    if (nother) fprintf(f, "; %d not finished", nother);
    fprintf(f, " |");
    if (kp) {
        put_mean(f, " %.3f", "%.3f", pp, kp);
        if (kp < nm) fprintf(f, " (%d/%d)", kp, nm);
    } else fprintf(f, " —");
    fprintf(f, " | %d/%d |\n", unstable, nm);
}

/* One panel per run name, one line per seed: a spike in one seed stays
 * visible (a mean over seeds would smooth it away). */
static void st_figure(FILE *f, const char *figdir, const StRun *w, int n, const int *grp, int ng,
                      int *idx) {
    if (ng < 1 || n < 1) return;
    PlotSeries *s = calloc((size_t)n, sizeof *s);
    char(*lab)[64] = calloc((size_t)n, sizeof *lab);
    char(*ptl)[300] = calloc((size_t)ng, sizeof *ptl);
    const char **pt = calloc((size_t)ng, sizeof *pt);
    double **xs = calloc((size_t)n, sizeof *xs);
    unsigned char *shown = calloc((size_t)ng, 1);
    int ns = 0, np = 0;
    if (!s || !lab || !ptl || !pt || !xs || !shown) goto done;
    int subset = key_groups(w[0].variant, w[0].status, sizeof *w, grp, n, ng, shown);
    for (int g = 0; g < ng && np < PLOT_MAX_PANELS; g++) {
        int nm = shown[g] ? members(grp, n, g, idx) : 0, drawn = 0;
        for (int i = 0; i < nm; i++) {
            const StRun *r = &w[idx[i]];
            if (!r->n || !(xs[idx[i]] = malloc(r->n * sizeof **xs))) continue;
            for (size_t k = 0; k < r->n; k++) xs[idx[i]][k] = (double)r->step[k];
            snprintf(lab[idx[i]], sizeof lab[idx[i]], "s%lld%s", r->seed,
                     !strcmp(r->status, RS_STATUS_DIVERGED) ? " (diverged)" : "");
            s[ns++] = (PlotSeries){lab[idx[i]], xs[idx[i]], r->loss, r->n, PLOT_LINES, 0, np};
            drawn = 1;
        }
        if (!drawn) continue;
        snprintf(ptl[np], sizeof ptl[np], "%.200s, lr=%g", w[idx[0]].name, w[idx[0]].lr);
        pt[np] = ptl[np];
        np++;
    }
    if (!np) goto done;
    char title[200];
    snprintf(title, sizeof title, "training loss per seed, one panel per run%s",
             subset ? "; key runs; all runs in the table" : "");
    PlotAxes ax = {title, "step", {"training loss", NULL}, np, pt, 0, 0};
    draw_figure(f, figdir, "stability_loss.png", "loss curves per seed and lr", &ax, s, ns);
done:
    for (int i = 0; xs && i < n; i++) free(xs[i]);
    free(s), free(lab), free(ptl), free(pt), free(xs), free(shown);
}

void report_stability(FILE *f, const char *figdir, const char *const *paths, int n) {
    StRun *w = calloc((size_t)(n ? n : 1), sizeof *w);
    int *grp = calloc((size_t)(n ? n : 1), sizeof *grp);
    int *idx = calloc((size_t)(n ? n : 1), sizeof *idx);
    int k = 0, multi = 0;
    if (!w || !grp || !idx) goto done;
    for (int i = 0; i < n; i++)
        if (st_read(paths[i], &w[k]) == 0) k++;
        else free(w[k].step), free(w[k].loss);
    /* sorted, each run name's seeds are adjacent and groups come in order */
    qsort(w, (size_t)k, sizeof *w, cmp_st);
    /* two or more lrs within one data source (sorted by data, then lr) */
    for (int i = 1; i < k; i++)
        multi |= !strcmp(w[i].data, w[i - 1].data) && w[i].lr != w[i - 1].lr;
    int archs = 0; /* runs of more than one architecture */
    for (int i = 1; i < k; i++) archs |= strcmp(w[i].arch, w[0].arch) != 0;
    if (multi) {
        int ng = group_names(w[0].name, sizeof *w, k, grp);
        fprintf(f,
                "\n## Stability across learning rates\n\nOne row per run name over "
                "its seeds. Spikes as metrics.md defines (loss > spike_factor × "
                "median of the previous %d, after warmup): mean per seed (total). A "
                "diverged run is kept and counted (k of n seeds) with the steps it "
                "diverged at. Final PPL: mean ± sample std over seeds. Unstable: seeds whose "
                "final val loss exceeds the best of their arm (same variant and data%s, any lr) "
                "by more than %.2g nats, or that have none (docs/statistics.md).\n\n"
                "| data | lr | variant | run | seeds | spikes | diverged | final PPL | unstable |\n"
                "|---|---|---|---|---|---|---|---|---|\n",
                SPIKE_WINDOW, archs ? " under the same architecture as it attends" : "",
                UNSTABLE_MARGIN);
        for (int g = 0; g < ng; g++) {
            int nm = members(grp, k, g, idx);
            if (nm) st_row(f, w, k, idx, nm);
        }
        st_figure(f, figdir, w, k, grp, ng, idx);
    }
done:
    for (int i = 0; w && i < k; i++) free(w[i].step), free(w[i].loss);
    free(w), free(grp), free(idx);
}
