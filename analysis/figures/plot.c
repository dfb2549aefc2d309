/* plot.c: the figure builders over run files (plot.h). They take their
 * runs from the run set of plot_runs.h, compute the metrics of
 * docs/metrics.md with metrics.h, and draw with the generic figures of
 * gnuplot.c. */
#include "plot.h"
#include "plot_layers.h"
#include "plot_profiles.h"
#include "plot_runs.h"
#include "runstats.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "config.h"   /* variant_key_id */
#include "figlabel.h" /* fig_is_pretrained */
#include "metrics.h"
#include "runfile_read.h"
#include "util.h"

/* Line-figure sizes. */
#define LOSS_SMOOTH                                                                                \
    20                      /* moving-average window of report loss lines                          \
                               (the loss figure's title says 20) */
#define LOSS_MAX_POINTS 500 /* per series in loss.dat */

/* Builders return 0 ok, -1 error, 1 no data (err says what is missing). */
#define NO_DATA 1

/* Centred moving average over w points, skipping NaN, into y (tmp[n]). */
static void smooth(double *y, size_t n, int w, double *tmp) {
    size_t h = (size_t)w / 2;
    for (size_t k = 0; k < n; k++) {
        size_t a = k > h ? k - h : 0, b = k + h < n ? k + h : n - 1;
        double sum = 0;
        int c = 0;
        for (size_t j = a; j <= b; j++)
            if (isfinite(y[j])) sum += y[j], c++;
        tmp[k] = c && isfinite(y[k]) ? sum / c : NAN;
    }
    memcpy(y, tmp, n * sizeof *y);
}

/* Keep at most max evenly spaced points (first and last included). */
static size_t subsample(double *x, double *y, size_t n, size_t max) {
    if (n <= max || max < 2) return n;
    for (size_t j = 0; j < max; j++) {
        size_t i = j * (n - 1) / (max - 1); /* i >= j: in place is safe */
        x[j] = x[i], y[j] = y[i];
    }
    return max;
}

/* Group g's mean train loss (and val loss) into the given buffers, each
 * sized for the longest member; returns 0, or -1 out of memory. */
static int group_loss(const RunSet *rs, const RunTrain *tr, const RunEval *ev, int g, double **xy,
                      size_t *nt, size_t *nv) {
    int *idx = malloc((size_t)rs->n * sizeof *idx);
    const long long **st = malloc((size_t)rs->n * sizeof *st);
    const double **v = malloc((size_t)rs->n * sizeof *v);
    size_t *len = malloc((size_t)rs->n * sizeof *len);
    int rc = -1;
    if (!idx || !st || !v || !len) goto done;
    int m = plot_group_members(rs, g, idx);
    size_t maxt = 0, maxv = 0;
    for (int j = 0; j < m; j++) {
        if (tr[idx[j]].n > maxt) maxt = tr[idx[j]].n;
        if (ev[idx[j]].n > maxv) maxv = ev[idx[j]].n;
    }
    for (int k = 0; k < 4; k++) xy[k] = malloc(((k < 2 ? maxt : maxv) + 1) * sizeof(double));
    double *tmp = malloc((maxt + 1) * sizeof(double));
    if (!xy[0] || !xy[1] || !xy[2] || !xy[3] || !tmp) {
        free(tmp);
        goto done;
    }
    for (int j = 0; j < m; j++)
        st[j] = tr[idx[j]].step, v[j] = tr[idx[j]].loss, len[j] = tr[idx[j]].n;
    *nt = plot_mean_aligned(st, v, len, m, xy[0], xy[1]);
    for (int j = 0; j < m; j++)
        st[j] = ev[idx[j]].step, v[j] = ev[idx[j]].val_loss, len[j] = ev[idx[j]].n;
    *nv = plot_mean_aligned(st, v, len, m, xy[2], xy[3]);
    if (rs->agg) { /* report: readable lines, small .dat */
        smooth(xy[1], *nt, LOSS_SMOOTH, tmp);
        *nt = subsample(xy[0], xy[1], *nt, LOSS_MAX_POINTS);
        *nv = subsample(xy[2], xy[3], *nv, LOSS_MAX_POINTS);
    }
    free(tmp);
    rc = 0;
done:
    free(idx), free(st), free(v), free(len);
    return rc;
}

/* Group g's colour key: PLOT_REF for the group named for the baseline
 * variant (drawn in every part of a split figure), else the count of
 * groups shown so far. */
static int group_color(const RunSet *rs, int g, int shown) {
    return strcmp(rs->glabel[g], variant_key_id(VARIANT_KEY_BASELINE)) ? shown : PLOT_REF;
}

/* Figure title plus what was averaged and what was left out. */
static void agg_title(const RunSet *rs, const char *base, char *out, size_t n) {
    snprintf(out, n, "%s%s%s", base, rs->agg ? "; mean over seeds" : "",
             rs->subset ? "; key runs; all runs in results.csv" : "");
}

/* (a) training loss and val-loss points vs step. */
static int fig_loss(RunSet *rs, const char *png, char *err, size_t errlen) {
    int n = rs->n, ng = rs->ng, rc = -1, shown = 0;
    RunTrain *tr = calloc((size_t)n, sizeof *tr);
    RunEval *ev = calloc((size_t)n, sizeof *ev);
    PlotSeries *s = calloc((size_t)2 * (size_t)ng, sizeof *s);
    double **xy = calloc((size_t)4 * (size_t)ng, sizeof *xy);
    char(*vl)[320] = calloc((size_t)ng, sizeof *vl);
    if (!tr || !ev || !s || !xy || !vl) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) { /* only what is drawn is read */
        if (!plot_group_shown(rs, rs->grp[i])) continue;
        if (runread_train(rs->r[i], &tr[i], err, errlen)) goto done;
        if (runread_eval(rs->r[i], &ev[i], err, errlen)) goto done;
    }
    size_t total = 0;
    for (int g = 0; g < ng; g++) {
        if (!plot_group_shown(rs, g)) continue;
        size_t nt = 0, nv = 0;
        if (group_loss(rs, tr, ev, g, xy + 4 * g, &nt, &nv)) {
            seterr(err, errlen, "plot: out of memory");
            goto done;
        }
        shown++;
        snprintf(vl[g], sizeof vl[g], "%s (val)", rs->glabel[g]);
        int c = group_color(rs, g, shown);
        s[2 * g] = (PlotSeries){rs->glabel[g], xy[4 * g], xy[4 * g + 1], nt, PLOT_LINES, c, 0};
        s[2 * g + 1] = (PlotSeries){vl[g], xy[4 * g + 2], xy[4 * g + 3], nv, PLOT_POINTS, c, 0};
        total += nt + nv;
    }
    if (total == 0) {
        rc = NO_DATA;
        seterr(err, errlen, "%s: no training metrics in any run", png);
        goto done;
    }
    char title[300];
    agg_title(rs,
              rs->agg ? "Loss: train (lines, 20-step average), val "
                        "(points)"
                      : "Training loss (lines) and validation loss "
                        "(points)",
              title, sizeof title);
    PlotAxes ax = {title, "step", {"loss (nats/token)", NULL}, 1, NULL, 0, 0};
    rc = plot_lines(png, &ax, s, 2 * ng, err, errlen);
done:
    for (int i = 0; tr && ev && i < n; i++) {
        runread_train_free(&tr[i]);
        runread_eval_free(&ev[i]);
    }
    for (int i = 0; xy && i < 4 * ng; i++) free(xy[i]);
    free(tr), free(ev), free(s), free(xy), free(vl);
    return rc;
}

/* Per-layer normalised histogram [L, nb] of one probe's gate scores:
 * the stored [0,1] histogram for bounded gates, else a histogram of the
 * stored score sample over its own range [*lo, *hi]. */
static int gate_layer_hist(const ProbeRecord *p, double *hist, int nb, double *lo, double *hi) {
    size_t L = (size_t)p->L;
    *lo = 0, *hi = 1;
    memset(hist, 0, L * (size_t)nb * sizeof(double));
    if (p->gate_bounded && p->gate_hist) {
        for (size_t i = 0; i < L * (size_t)nb; i++) hist[i] = p->gate_hist[i];
    } else if (p->gate_sample && p->gate_sample_n > 0) {
        size_t per = (size_t)p->gate_sample_n * (size_t)p->T * (size_t)p->gate_channels;
        double mn = INFINITY, mx = -INFINITY;
        for (size_t i = 0; i < L * per; i++)
            if (isfinite(p->gate_sample[i])) {
                if (p->gate_sample[i] < mn) mn = p->gate_sample[i];
                if (p->gate_sample[i] > mx) mx = p->gate_sample[i];
            }
        if (!isfinite(mn)) return -1;
        if (!(mx > mn)) mx = mn + 1;
        *lo = mn, *hi = mx;
        for (size_t l = 0; l < L; l++)
            histogram_add(hist + l * (size_t)nb, nb, mn, mx, p->gate_sample + l * per, per);
    } else {
        return -1;
    }
    for (size_t l = 0; l < L; l++) {
        double sum = 0;
        for (int b = 0; b < nb; b++) sum += hist[l * (size_t)nb + (size_t)b];
        for (int b = 0; b < nb; b++)
            hist[l * (size_t)nb + (size_t)b] =
                sum > 0 ? hist[l * (size_t)nb + (size_t)b] / sum : NAN;
    }
    return 0;
}

/* (c) gate score histogram per layer, one run, last probe. */
static int fig_gate_hist(RunReader *r, const char *label, const char *png, char *err,
                         size_t errlen) {
    const int nb = RS_GATE_BINS;
    ProbeRecord p;
    int have, rc = -1;
    if (plot_last_probe(r, &p, &have, err, errlen)) return -1;
    if (!have) {
        seterr(err, errlen, "%s: run has no probe yet", runread_meta(r)->path);
        return NO_DATA;
    }
    if (!p.has_gate) {
        runread_probe_free(&p);
        seterr(err, errlen, "%s: variant %s has no gate scores", runread_meta(r)->path,
               runread_meta(r)->variant);
        return NO_DATA;
    }
    size_t L = (size_t)p.L;
    double *hist = malloc(L * (size_t)nb * sizeof(double));
    double *x = malloc((size_t)nb * sizeof(double));
    PlotSeries *s = calloc(L, sizeof *s);
    char(*names)[32] = calloc(L, sizeof *names);
    double lo, hi;
    if (!hist || !x || !s || !names) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    if (gate_layer_hist(&p, hist, nb, &lo, &hi)) {
        seterr(err, errlen,
               "%s: probe step %lld has neither a gate "
               "histogram nor a gate sample",
               runread_meta(r)->path, p.step);
        goto done;
    }
    for (int b = 0; b < nb; b++) x[b] = lo + (hi - lo) * (b + 0.5) / nb;
    for (size_t l = 0; l < L; l++) {
        snprintf(names[l], sizeof names[l], "layer %zu", l);
        s[l] = (PlotSeries){names[l], x, hist + l * (size_t)nb, (size_t)nb, PLOT_STEPS, 0, 0};
    }
    char title[400];
    snprintf(title, sizeof title, "Gate scores per layer: %s (step %lld%s)", label, p.step,
             p.gate_bounded ? "" : ", raw act(XW)");
    /* log y: the tails are where the sparse gate's scores are */
    for (size_t i = 0; i < L * (size_t)nb; i++)
        if (!(hist[i] > 0)) hist[i] = NAN;
    PlotAxes ax = {title,
                   p.gate_bounded ? "gate score" : "act(XW) value",
                   {"fraction of scores (log scale)", NULL},
                   1,
                   NULL,
                   0,
                   1};
    rc = plot_lines(png, &ax, s, (int)L, err, errlen);
done:
    runread_probe_free(&p);
    free(hist), free(x), free(s), free(names);
    return rc;
}

/* One run's sink rate and first-token share at each probe into fresh
 * st, rate, share [*ns]. */
static int run_sink_series(RunReader *r, long long **st, double **rate, double **share, size_t *ns,
                           char *err, size_t errlen) {
    int k = 0;
    *rate = *share = NULL;
    *ns = 0;
    if (runread_probe_steps(r, st, &k, err, errlen)) return -1;
    *rate = malloc(((size_t)k + 1) * sizeof(double));
    *share = malloc(((size_t)k + 1) * sizeof(double));
    if (!*rate || !*share) return seterr(err, errlen, "plot: out of memory");
    for (int j = 0; j < k; j++) {
        ProbeRecord p;
        if (runread_probe(r, (*st)[j], &p, err, errlen)) return -1;
        (*rate)[j] = rs_sink_rate(&p, SINK_EPS, SINK_LEN);
        (*share)[j] =
            p.attention && p.L > 0 && p.H > 0 ? rs_share(&p, -1) : NAN; /* present heads */
        runread_probe_free(&p);
    }
    *ns = (size_t)k;
    return 0;
}

/* (e) sink rate and first-token share vs step, two stacked panels; one
 * line per group, the mean over its runs at each probe step. */
static int fig_sink_steps(RunSet *rs, const char *png, char *err, size_t errlen) {
    int n = rs->n, ng = rs->ng, rc = -1, shown = 0;
    size_t any = 0;
    PlotSeries *s = calloc((size_t)2 * (size_t)ng, sizeof *s);
    double **xy = calloc((size_t)3 * (size_t)ng, sizeof *xy);
    long long **st = calloc((size_t)n, sizeof *st);
    double **rate = calloc((size_t)n, sizeof *rate);
    double **share = calloc((size_t)n, sizeof *share);
    size_t *len = calloc((size_t)n, sizeof *len);
    const long long **mst = calloc((size_t)n, sizeof *mst);
    const double **mv = calloc((size_t)n, sizeof *mv);
    size_t *mlen = calloc((size_t)n, sizeof *mlen);
    int *idx = calloc((size_t)n, sizeof *idx);
    if (!s || !xy || !st || !rate || !share || !len || !mst || !mv || !mlen || !idx) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) /* a checkpoint `gatelab inspect` probed has no training */
        if (plot_group_shown(rs, rs->grp[i]) && !fig_is_pretrained(rs->r[i]) &&
            run_sink_series(rs->r[i], &st[i], &rate[i], &share[i], &len[i], err, errlen))
            goto done;
    for (int g = 0; g < ng; g++) {
        if (!plot_group_shown(rs, g)) continue;
        int m = plot_group_members(rs, g, idx);
        size_t maxn = 0;
        for (int j = 0; j < m; j++)
            if (len[idx[j]] > maxn) maxn = len[idx[j]];
        for (int k = 0; k < 3; k++) xy[3 * g + k] = malloc((maxn + 1) * sizeof(double));
        if (!xy[3 * g] || !xy[3 * g + 1] || !xy[3 * g + 2]) {
            seterr(err, errlen, "plot: out of memory");
            goto done;
        }
        for (int j = 0; j < m; j++)
            mst[j] = st[idx[j]], mv[j] = rate[idx[j]], mlen[j] = len[idx[j]];
        size_t k = plot_mean_aligned(mst, mv, mlen, m, xy[3 * g], xy[3 * g + 1]);
        for (int j = 0; j < m; j++) mv[j] = share[idx[j]];
        plot_mean_aligned(mst, mv, mlen, m, xy[3 * g], xy[3 * g + 2]);
        any += k;
        shown++;
        int c = group_color(rs, g, shown);
        s[2 * g] = (PlotSeries){rs->glabel[g], xy[3 * g], xy[3 * g + 1], k, PLOT_LINES, c, 0};
        s[2 * g + 1] = (PlotSeries){rs->glabel[g], xy[3 * g], xy[3 * g + 2], k, PLOT_LINES, c, 1};
    }
    if (!any) {
        rc = NO_DATA;
        seterr(err, errlen, "%s: no run has a probe yet", png);
        goto done;
    }
    char title[300];
    agg_title(rs, "Attention sinks during training", title, sizeof title);
    char ylabel[64];
    snprintf(ylabel, sizeof ylabel, "sink rate (alpha_0 > %g)", SINK_EPS);
    PlotAxes ax = {title, "step", {ylabel, "first-token share"}, 2, NULL, 1, 0};
    rc = plot_lines(png, &ax, s, 2 * ng, err, errlen);
done:
    for (int i = 0; st && rate && share && i < n; i++) free(st[i]), free(rate[i]), free(share[i]);
    for (int i = 0; xy && i < 3 * ng; i++) free(xy[i]);
    free(s), free(xy), free(st), free(rate), free(share), free(len);
    free(mst), free(mv), free(mlen), free(idx);
    return rc;
}

/* ---- entry points ---- */

static int draw_gate_hist(RunSet *rs, const char *png, char *err, size_t errlen) {
    if (rs->n != 1) {
        seterr(err, errlen, "plot gate-hist takes exactly one run (got %d)", rs->n);
        return NO_DATA;
    }
    return fig_gate_hist(rs->r[0], rs->label[0], png, err, errlen);
}

/* The figure kinds, in the order `plot --help` lists them and the report
 * draws and links the ones it names (gate-hist: one per gated group). */
const PlotKind PLOT_KINDS[] = {
    {"loss", "training loss (lines) and val loss (points) vs step", fig_loss, "loss",
     "training and validation loss, mean over seeds"},
    {"first-share",
     "first-token attention share per layer, runs side by side, with the uniform-attention "
     "reference dashed",
     plot_first_share, "first_share_layers",
     "first-token share per layer, mean over seeds (bars min..max)"},
    {"gate-hist", "gate score histogram per layer (exactly one run)", draw_gate_hist, NULL, NULL},
    {"mact", "max |activation| per layer (M-Act), runs side by side", plot_mact, "mact_layers",
     "max |h| per layer, mean over seeds (bars min..max)"},
    {"key-norm", "position 0's key norm over the median key norm, per layer", plot_key_norm,
     "key_norm_layers",
     "key norm at position 0 over the median key norm per layer, mean over seeds (bars "
     "min..max)"},
    {"value-norm", "position 0's value norm over the median value norm, per layer", plot_value_norm,
     "value_norm_layers",
     "value norm at position 0 over the median value norm per layer, mean over seeds (bars "
     "min..max)"},
    {"sink-steps", "sink rate (eps " SINK_EPS_TEXT ") and first-token share vs step",
     fig_sink_steps, "sink_vs_step", "sink rate and F-Attn over training, mean over seeds"},
    {"key-share", "attention share alpha_k of every key position k (last probe)", plot_key_share,
     NULL, NULL},
    {"distance", "attention weight and mass by query-key distance (last probe)", plot_distance,
     NULL, NULL},
};
const int PLOT_N_KINDS = (int)(sizeof PLOT_KINDS / sizeof PLOT_KINDS[0]);

static const PlotKind *find_kind(const char *name) {
    for (int k = 0; k < PLOT_N_KINDS; k++)
        if (!strcmp(name, PLOT_KINDS[k].name)) return &PLOT_KINDS[k];
    return NULL;
}

/* See plot.h. */
void plot_kind_names(char *out, size_t n) {
    size_t used = 0;
    out[0] = 0;
    for (int k = 0; k < PLOT_N_KINDS && used < n; k++)
        used += (size_t)snprintf(out + used, n - used, "%s%s", k ? ", " : "", PLOT_KINDS[k].name);
}

/* See plot.h. */
void plot_kinds_help(FILE *f) {
    fputs("\nKIND:\n", f);
    for (int k = 0; k < PLOT_N_KINDS; k++) {
        const char *h = PLOT_KINDS[k].help;
        fprintf(f, "  %-12s ", PLOT_KINDS[k].name);
        for (int col = 15; *h;) { /* wrap at 79 columns, continuation under the text */
            size_t w = strcspn(h, " ");
            if (col > 15 && col + 1 + (int)w > 79) fputs("\n               ", f), col = 15;
            else if (col > 15) fputc(' ', f), col++;
            fprintf(f, "%.*s", (int)w, h);
            col += (int)w;
            h += w + (h[w] == ' ');
        }
        fputc('\n', f);
    }
}

static int figure_on(RunSet *rs, const char *kind, const char *png, char *err, size_t errlen) {
    const PlotKind *k = find_kind(kind);
    if (k) return k->draw(rs, png, err, errlen);
    char names[256];
    plot_kind_names(names, sizeof names);
    return seterr(err, errlen, "plot: unknown figure kind '%s' (%s)", kind, names);
}

int plot_figure(const char *kind, char **run_paths, int n, const char *png_path, char *err,
                size_t errlen) {
    RunSet rs;
    if (plot_check_png(png_path, err, errlen)) return -1;
    if (!plot_have_gnuplot()) return seterr(err, errlen, GNUPLOT_MISSING);
    if (plot_runs_open(&rs, run_paths, n, 0, err, errlen)) return -1;
    int rc = figure_on(&rs, kind, png_path, err, errlen);
    plot_runs_close(&rs);
    return rc == 0 ? 0 : rc == NO_DATA ? PLOT_BAD_INPUT : -1;
}

static int report_one(RunSet *rs, const char *outdir, const char *kind, const char *name, char *err,
                      size_t errlen) {
    char png[PATH_MAX];
    int w = snprintf(png, sizeof png, "%s/%s.png", outdir, name);
    if (w < 0 || (size_t)w >= sizeof png) return seterr(err, errlen, "%s: path too long", outdir);
    int rc = figure_on(rs, kind, png, err, errlen);
    return rc == NO_DATA ? 0 : rc;
}

static int report_gate_hists(RunSet *rs, const char *outdir, char *err, size_t errlen) {
    /* one per gated group: named by variant, or by run name when two run
     * names share the variant (plot_runs_base) */
    char v[300], vj[300];
    for (int i = 0; i < rs->n; i++) {
        plot_runs_base(rs, i, v, sizeof v);
        int first = 1;
        for (int j = 0; j < i && first; j++) {
            plot_runs_base(rs, j, vj, sizeof vj);
            first = strcmp(vj, v) != 0;
        }
        if (!first) continue;
        char name[300], png[PATH_MAX], base[270];
        name_for_file(base, sizeof base, v);
        snprintf(name, sizeof name, "gate_hist_%s", base);
        int w = snprintf(png, sizeof png, "%s/%s.png", outdir, name);
        if (w < 0 || (size_t)w >= sizeof png)
            return seterr(err, errlen, "%s: path too long", outdir);
        int rc = fig_gate_hist(rs->r[i], rs->label[i], png, err, errlen);
        if (rc < 0) return -1; /* NO_DATA: ungated run or no probe */
    }
    return 0;
}

int plot_report_figures(const char *outdir, char **run_paths, int n, char *err, size_t errlen) {
    if (!plot_have_gnuplot()) return seterr(err, errlen, GNUPLOT_MISSING);
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST)
        return seterr(err, errlen, "%s: cannot create: %s", outdir, strerror(errno));
    RunSet rs;
    if (plot_runs_open(&rs, run_paths, n, 1, err, errlen)) return -1;
    int rc = 0;
    for (int k = 0; k < PLOT_N_KINDS && !rc; k++) {
        const PlotKind *pk = &PLOT_KINDS[k];
        if (pk->draw == draw_gate_hist) rc = report_gate_hists(&rs, outdir, err, errlen);
        else if (pk->report_png)
            rc = report_one(&rs, outdir, pk->name, pk->report_png, err, errlen);
    }
    plot_runs_close(&rs);
    return rc;
}

int plot_kind_known(const char *kind) { return find_kind(kind) != NULL; }
