/* report_extra.c: long-context (gatelab eval results) and learning-rate
 * stability sections of REPORT.md. Each section is skipped silently when
 * the directory holds no data for it. */
#include "report_extra.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "plot.h"
#include "runread.h"

#define MAXL 16
#define SPIKE_WINDOW 50 /* metrics.md: median of the previous 50 losses */

/* Qiu et al. 2025, Table 5 (shared/reference/paper-tables.md): RULER
 * accuracy after YaRN extension, at 4k..128k. Reference data, not ours. */
static const char *PAPER_LEN[6] = {"4k", "8k", "16k", "32k", "64k", "128k"};
static const double PAPER_BASE[6] = {82.90, 71.52, 61.23, 37.94, 37.51, 31.65};
static const double PAPER_G1[6] = {88.13, 80.01, 76.74, 72.88, 66.60, 58.82};

/* "dir/baseline_s1.h5" -> "baseline_s1": the file stem, so every run
 * (each seed of each run name, runname.h) has its own row and curve. */
static void run_label(char *out, size_t n, const char *path) {
    const char *b = strrchr(path, '/');
    snprintf(out, n, "%s", b ? b + 1 : path);
    size_t k = strlen(out);
    if (k > 3 && !strcmp(out + k - 3, ".h5")) out[k - 3] = '\0';
}

/* Draw figdir/name and link it from the report; a figure that cannot be
 * drawn is a line in the report, not a failure. */
static void draw_figure(FILE *f, const char *figdir, const char *name, const char *alt,
                        const PlotAxes *ax, const PlotSeries *s, int ns) {
    char path[1200], err[512];
    snprintf(path, sizeof path, "%s/%s", figdir, name);
    if (plot_lines(path, ax, s, ns, err, sizeof err) == 0)
        fprintf(f, "\n![%s](figures/%s)\n", alt, name);
    else
        fprintf(f, "\n- figure %s not drawn: %s\n", name, err);
}

/* ---- long context ---- */

typedef struct {
    char label[256], variant[256], data[64];
    int nl[2];             /* lengths per mode (0 plain, 1 yarn) */
    int len[2][MAXL];
    double loss[2][MAXL];
} LcRun;

static const char *MODE[2] = {"plain", "yarn"};

static int lc_read(const char *path, LcRun *w) {
    char err[512];
    memset(w, 0, sizeof *w);
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) return -1;
    run_label(w->label, sizeof w->label, path);
    snprintf(w->variant, sizeof w->variant, "%s", runread_meta(r)->variant);
    if (runread_config_string(r, "data", w->data, sizeof w->data, NULL, 0))
        snprintf(w->data, sizeof w->data, "?");
    for (int m = 0; m < 2; m++) {
        int *lens = NULL, k = 0;
        if (runread_lceval_lengths(r, MODE[m], &lens, &k, err, sizeof err) != 0) k = 0;
        for (int i = 0; i < k && w->nl[m] < MAXL; i++) {
            RunLcEval e;
            if (runread_lceval(r, MODE[m], lens[i], &e, err, sizeof err) != 0) continue;
            w->len[m][w->nl[m]] = lens[i];
            w->loss[m][w->nl[m]++] = e.val_loss;
            runread_lceval_free(&e);
        }
        free(lens);
    }
    runread_close(r);
    return w->nl[0] + w->nl[1] > 0 ? 0 : -1;
}

/* Sorted union of every run's lengths. */
static int union_lengths(const LcRun *w, int n, int *out) {
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int m = 0; m < 2; m++)
            for (int j = 0; j < w[i].nl[m]; j++) {
                int L = w[i].len[m][j], seen = 0;
                for (int t = 0; t < k; t++) seen |= out[t] == L;
                if (!seen && k < MAXL) out[k++] = L;
            }
    for (int a = 1; a < k; a++)
        for (int b = a; b > 0 && out[b] < out[b - 1]; b--) {
            int t = out[b];
            out[b] = out[b - 1];
            out[b - 1] = t;
        }
    return k;
}

static double lc_at(const LcRun *w, int m, int L) {
    for (int j = 0; j < w->nl[m]; j++)
        if (w->len[m][j] == L) return w->loss[m][j];
    return NAN;
}

static void lc_table(FILE *f, const LcRun *w, int n, int m, const int *lens, int nl) {
    fprintf(f, "\n**%s** — val loss (degradation vs the shortest length)\n\n| run | variant | data |",
            m ? "YaRN (scale = L / T_train)" : "plain RoPE");
    for (int j = 0; j < nl; j++) fprintf(f, " L=%d |", lens[j]);
    fprintf(f, "\n|---|---|---|");
    for (int j = 0; j < nl; j++) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        if (!w[i].nl[m]) continue;
        double ref = w[i].loss[m][0]; /* lengths are ascending */
        fprintf(f, "| %s | %s | %s |", w[i].label, w[i].variant, w[i].data);
        for (int j = 0; j < nl; j++) {
            double v = lc_at(&w[i], m, lens[j]);
            if (isnan(v)) fprintf(f, " — |");
            else fprintf(f, " %.4f (%+.4f) |", v, v - ref);
        }
        fprintf(f, "\n");
    }
}

static void lc_paper(FILE *f) {
    fprintf(f, "\nPaper, Table 5 (Qiu et al. 2025; shared/reference/paper-tables.md): "
               "RULER accuracy %% after YaRN extension of a model trained at 4k "
               "(degradation vs 4k in brackets).\n\n| | ");
    for (int j = 0; j < 6; j++) fprintf(f, "%s | ", PAPER_LEN[j]);
    fprintf(f, "\n|---|---|---|---|---|---|---|\n");
    const double *rows[2] = {PAPER_BASE, PAPER_G1};
    const char *names[2] = {"baseline + YaRN", "g1-elem + YaRN"};
    for (int r = 0; r < 2; r++) {
        fprintf(f, "| %s |", names[r]);
        for (int j = 0; j < 6; j++) fprintf(f, " %.2f (%+.2f) |", rows[r][j], rows[r][j] - rows[r][0]);
        fprintf(f, "\n");
    }
    fprintf(f, "\n> RULER accuracy (higher is better) and our val loss (lower is better) are "
               "different measures at very different scales: compare only the direction — "
               "does the gated model degrade less than the baseline as the length grows "
               "past the training length?\n");
}

static void lc_figure(FILE *f, const char *figdir, const LcRun *w, int n) {
    PlotSeries *s = calloc((size_t)n * 2, sizeof *s);
    double *x = calloc((size_t)n * 2 * MAXL, sizeof *x);
    if (!s || !x) {
        free(s), free(x);
        return;
    }
    int ns = 0;
    for (int i = 0; i < n; i++)
        for (int m = 0; m < 2; m++) {
            if (!w[i].nl[m]) continue;
            double *xs = x + (size_t)ns * MAXL;
            for (int j = 0; j < w[i].nl[m]; j++) xs[j] = w[i].len[m][j];
            s[ns] = (PlotSeries){w[i].label, xs, w[i].loss[m], (size_t)w[i].nl[m], PLOT_LINES,
                                 i + 1, m};
            ns++;
        }
    PlotAxes ax = {"val loss against eval length", "eval length (tokens)",
                   {"val loss, plain RoPE", "val loss, YaRN"}, 2};
    draw_figure(f, figdir, "lceval_loss.png", "val loss vs length", &ax, s, ns);
    free(s);
    free(x);
}

void report_longctx(FILE *f, const char *figdir, const char *const *paths, int n) {
    LcRun *w = calloc((size_t)(n ? n : 1), sizeof *w);
    if (!w) return;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (lc_read(paths[i], &w[k]) == 0) k++;
    if (k > 0) {
        int lens[MAXL];
        int nl = union_lengths(w, k, lens);
        fprintf(f, "\n## Long context (gatelab eval)\n\nVal loss on the same held-out "
                   "text at each length; degradation = val_loss@L − val_loss at the "
                   "run's shortest evaluated length (its training length when evaluated "
                   "at 1×). Per-position-bucket losses are in each run file under /lceval.\n");
        for (int m = 0; m < 2; m++) {
            int any = 0;
            for (int i = 0; i < k; i++) any |= w[i].nl[m] > 0;
            if (any) lc_table(f, w, k, m, lens, nl);
        }
        lc_paper(f);
        lc_figure(f, figdir, w, k);
    }
    free(w);
}

/* ---- stability ---- */

typedef struct {
    char label[256], variant[256], status[32], data[64];
    double lr, spikes, dstep, ppl;
    size_t n;
    double *x, *loss; /* training curve (non-finite -> NaN gap) */
} StRun;

static int st_read(const char *path, StRun *w) {
    char err[512];
    memset(w, 0, sizeof *w);
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) return -1;
    run_label(w->label, sizeof w->label, path);
    snprintf(w->variant, sizeof w->variant, "%s", runread_meta(r)->variant);
    snprintf(w->status, sizeof w->status, "%s", runread_meta(r)->status);
    if (runread_config_string(r, "data", w->data, sizeof w->data, NULL, 0))
        snprintf(w->data, sizeof w->data, "?");
    double warm = 0, factor = 1.25, vl = NAN;
    int rc = runread_config_double(r, "lr", &w->lr, err, sizeof err);
    runread_config_double(r, "warmup", &warm, NULL, 0);
    runread_config_double(r, "spike_factor", &factor, NULL, 0);
    w->dstep = -1;
    runread_summary(r, "diverged_step", &w->dstep, NULL, 0);
    if (runread_summary(r, "final_val_loss", &vl, NULL, 0) != 0) vl = NAN;
    w->ppl = exp(vl);
    RunTrain t;
    w->spikes = NAN;
    if (rc == 0 && runread_train(r, &t, err, sizeof err) == 0) {
        w->spikes = count_spikes(t.loss, t.step, t.n, (long long)warm, SPIKE_WINDOW, factor,
                                 NULL, 0);
        w->n = t.n;
        w->x = malloc((t.n ? t.n : 1) * sizeof(double));
        w->loss = malloc((t.n ? t.n : 1) * sizeof(double));
        for (size_t i = 0; w->x && w->loss && i < t.n; i++) {
            w->x[i] = (double)t.step[i];
            w->loss[i] = isfinite(t.loss[i]) ? t.loss[i] : NAN;
        }
        if (!w->x || !w->loss) w->n = 0;
        runread_train_free(&t);
    }
    runread_close(r);
    return rc;
}

/* By data source, then lr, variant and file (run name, seed): a variant's
 * 1x run (`baseline`, lr from the preset) and its `baseline-lr2x` runs
 * land under their own lr, and two data sources never interleave. */
static int cmp_st(const void *a, const void *b) {
    const StRun *x = a, *y = b;
    int c = strcmp(x->data, y->data);
    if (c) return c;
    if (x->lr != y->lr) return x->lr < y->lr ? -1 : 1;
    c = strcmp(x->variant, y->variant);
    return c ? c : strcmp(x->label, y->label);
}

static void st_figure(FILE *f, const char *figdir, const StRun *w, int n) {
    PlotSeries *s = calloc((size_t)n, sizeof *s);
    char (*lab)[300] = calloc((size_t)n, sizeof *lab);
    if (!s || !lab) {
        free(s), free(lab);
        return;
    }
    for (int i = 0; i < n; i++) {
        snprintf(lab[i], sizeof lab[i], "%s lr=%g%s", w[i].label, w[i].lr,
                 strcmp(w[i].status, "diverged") ? "" : " (diverged)");
        s[i] = (PlotSeries){lab[i], w[i].x, w[i].loss, w[i].n, PLOT_LINES, 0, 0};
    }
    PlotAxes ax = {"training loss per learning rate", "step", {"training loss", NULL}, 1};
    draw_figure(f, figdir, "stability_loss.png", "loss curves per lr", &ax, s, n);
    free(s);
    free(lab);
}

void report_stability(FILE *f, const char *figdir, const char *const *paths, int n) {
    StRun *w = calloc((size_t)(n ? n : 1), sizeof *w);
    if (!w) return;
    int k = 0, multi = 0;
    for (int i = 0; i < n; i++)
        if (st_read(paths[i], &w[k]) == 0) k++;
        else free(w[k].x), free(w[k].loss);
    qsort(w, (size_t)k, sizeof *w, cmp_st);
    /* two or more lrs within one data source (sorted by data, then lr) */
    for (int i = 1; i < k; i++)
        multi |= !strcmp(w[i].data, w[i - 1].data) && w[i].lr != w[i - 1].lr;
    if (multi) {
        fprintf(f, "\n## Stability across learning rates\n\nSpikes as metrics.md defines "
                   "(loss > spike_factor × median of the previous %d, after warmup). A "
                   "diverged run is kept and marked with the step it diverged at.\n\n"
                   "| data | lr | variant | run | spikes | diverged | final PPL |\n"
                   "|---|---|---|---|---|---|---|\n", SPIKE_WINDOW);
        for (int i = 0; i < k; i++) {
            char dv[64] = "no";
            if (!strcmp(w[i].status, "diverged"))
                snprintf(dv, sizeof dv, "**diverged** (step %.0f)", w[i].dstep);
            else if (strcmp(w[i].status, "done"))
                snprintf(dv, sizeof dv, "%s", w[i].status);
            fprintf(f, "| %s | %g | %s | %s | %.0f | %s | ", w[i].data, w[i].lr,
                    w[i].variant, w[i].label, w[i].spikes, dv);
            if (isfinite(w[i].ppl)) fprintf(f, "%.3f |\n", w[i].ppl);
            else fprintf(f, "— |\n");
        }
        st_figure(f, figdir, w, k);
    }
    for (int i = 0; i < k; i++) free(w[i].x), free(w[i].loss);
    free(w);
}
