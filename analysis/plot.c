/* plot.c: the figure builders over run files (plot.h). They take their
 * runs from the run set of plot_runs.h, compute the metrics of
 * docs/metrics.md with metrics.h, and draw with the generic figures of
 * gnuplot.c. */
#include "plot.h"
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

/* Per-layer value of one probe into out[L]. */
typedef void (*LayerFn)(const ProbeRecord *p, double *out);

static void layer_first_share(const ProbeRecord *p, double *out) {
    for (int l = 0; l < p->L; l++) {
        double sum = 0;
        for (int h = 0; h < p->H; h++) sum += rs_head_share(p, l, h);
        out[l] = p->attention && p->H > 0 ? sum / p->H : NAN;
    }
}

static void layer_mact(const ProbeRecord *p, double *out) {
    for (int l = 0; l < p->L; l++) out[l] = p->h_max ? p->h_max[l] : NAN;
}

/* Per-group mean, min and max over member runs of per-run per-layer
 * values vals[i][L[i]] into [ng, maxL]; *spread = 1 when some group has
 * two or more runs with data (error bars worth drawing). */
static void group_layers(const RunSet *rs, double *const *vals, const int *L, int maxL, double *v,
                         double *lo, double *hi, int *spread) {
    *spread = 0;
    for (int g = 0; g < rs->ng; g++)
        for (int l = 0; l < maxL; l++) {
            double sum = 0, mn = INFINITY, mx = -INFINITY;
            int c = 0;
            for (int i = 0; i < rs->n; i++) {
                if (rs->grp[i] != g || !vals[i] || l >= L[i] || !isfinite(vals[i][l])) continue;
                double x = vals[i][l];
                sum += x, c++;
                if (x < mn) mn = x;
                if (x > mx) mx = x;
            }
            size_t k = (size_t)g * (size_t)maxL + (size_t)l;
            v[k] = c ? sum / c : NAN;
            lo[k] = c ? mn : NAN;
            hi[k] = c ? mx : NAN;
            if (c >= 2) *spread = 1;
        }
}

/* Draw the [ng, maxL] layer values: layers on x with a bar per group, or,
 * with many groups, groups on x (rotated names) with a bar per layer and
 * the groups without data left out. */
static int layers_draw(const RunSet *rs, const char *png, const char *title, const char *ylabel,
                       int maxL, const double *v, const double *lo, const double *hi, int nref,
                       const double *ref, const char *const *refp, char *err, size_t errlen) {
    int ng = rs->ng, rc = -1;
    const char **glab = calloc((size_t)ng, sizeof *glab);
    char(*lname)[32] = calloc((size_t)maxL, sizeof *lname);
    const char **llab = calloc((size_t)maxL, sizeof *llab);
    size_t cells = (size_t)ng * (size_t)maxL;
    double *t = malloc(3 * cells * sizeof(double) + 1);
    if (!glab || !lname || !llab || !t) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int g = 0; g < ng; g++) glab[g] = rs->glabel[g];
    if (ng <= MAX_SERIES) {
        BarSpec bs = {
            {title, "layer", ylabel, maxL, ng, glab, v, nref, ref, refp}, lo, hi, NULL, 0};
        rc = plot_bars_spec(png, &bs, err, errlen);
        goto done;
    }
    int nc = 0; /* transpose: t[l, c] for the groups with any data */
    for (int g = 0; g < ng; g++) {
        int have = 0;
        for (int l = 0; l < maxL; l++) have |= isfinite(v[(size_t)g * (size_t)maxL + (size_t)l]);
        if (!have) continue;
        glab[nc] = rs->glabel[g];
        for (int l = 0; l < maxL; l++) {
            size_t from = (size_t)g * (size_t)maxL + (size_t)l;
            size_t to = (size_t)l * (size_t)ng + (size_t)nc;
            t[to] = v[from];
            if (lo) t[cells + to] = lo[from], t[2 * cells + to] = hi[from];
        }
        nc++;
    }
    /* rows of t are ng apart; squeeze them to nc */
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < maxL; l++)
            memmove(t + (size_t)k * cells + (size_t)l * (size_t)nc,
                    t + (size_t)k * cells + (size_t)l * (size_t)ng, (size_t)nc * sizeof(double));
    for (int l = 0; l < maxL; l++) {
        snprintf(lname[l], sizeof lname[l], "layer %d", l);
        llab[l] = lname[l];
    }
    BarSpec bs = {{title, "run", ylabel, nc, maxL, llab, t, nref, ref, refp},
                  lo ? t + cells : NULL,
                  lo ? t + 2 * cells : NULL,
                  glab,
                  1};
    rc = plot_bars_spec(png, &bs, err, errlen);
done:
    free(glab), free(lname), free(llab), free(t);
    return rc;
}

/* (b) and (d): per-layer values from each run's last probe, one bar per
 * (layer, group); a group's bar is the mean over its runs, with min..max
 * error bars when a group has several. With with_uniform, a dashed
 * uniform-attention reference per distinct share (rs_uniform_share: T and
 * the run's window). */
static int fig_layers(RunSet *rs, const char *png, LayerFn fn, int with_uniform, const char *title,
                      const char *ylabel, char *err, size_t errlen) {
    int n = rs->n, rc = -1, maxL = 0, nref = 0;
    double **vals = calloc((size_t)n, sizeof *vals);
    int *L = calloc((size_t)n, sizeof *L);
    double ref[8];
    char reflab[8][64];
    const char *refp[8];
    double *v = NULL;
    if (!vals || !L) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        ProbeRecord p;
        int have;
        if (plot_last_probe(rs->r[i], &p, &have, err, errlen)) goto done;
        if (!have) continue;
        vals[i] = malloc(((size_t)p.L + 1) * sizeof(double));
        if (!vals[i]) {
            runread_probe_free(&p);
            seterr(err, errlen, "plot: out of memory");
            goto done;
        }
        fn(&p, vals[i]);
        L[i] = p.L;
        if (p.L > maxL) maxL = p.L;
        Config cfg; /* the run's own attention pattern: its window, if any */
        rs_arch_config(rs->r[i], &cfg);
        double u = rs_uniform_share(&cfg, p.T, p.L, -1);
        int seen = 0;
        for (int r = 0; r < nref; r++)
            if (ref[r] == u) seen = 1;
        if (with_uniform && !seen && nref < 8) {
            ref[nref] = u;
            if (cfg.window > 0 && cfg.window < p.T)
                snprintf(reflab[nref], sizeof reflab[nref], "uniform (T=%d, window %d%s)", p.T,
                         cfg.window, cfg.window_layers == WINLAYERS_ALTERNATE ? " alternate" : "");
            else snprintf(reflab[nref], sizeof reflab[nref], "uniform (T=%d)", p.T);
            refp[nref] = reflab[nref];
            nref++;
        }
        runread_probe_free(&p);
    }
    if (maxL == 0) {
        rc = NO_DATA;
        seterr(err, errlen, "%s: no run has a probe yet", png);
        goto done;
    }
    size_t cells = (size_t)rs->ng * (size_t)maxL;
    v = malloc(3 * cells * sizeof(double));
    if (!v) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    int spread;
    group_layers(rs, vals, L, maxL, v, v + cells, v + 2 * cells, &spread);
    char full[300];
    snprintf(full, sizeof full, "%s%s", title,
             spread    ? "; mean over seeds, error bars min..max"
             : rs->agg ? "; mean over seeds"
                       : "");
    rc = layers_draw(rs, png, full, ylabel, maxL, v, spread ? v + cells : NULL,
                     spread ? v + 2 * cells : NULL, nref, ref, refp, err, errlen);
done:
    for (int i = 0; vals && i < n; i++) free(vals[i]);
    free(vals), free(L), free(v);
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

static double mean_first_share(const ProbeRecord *p) {
    if (!p->attention || p->L * p->H == 0) return NAN;
    size_t LH = (size_t)p->L * (size_t)p->H;
    double sum = 0;
    for (size_t i = 0; i < LH; i++) sum += rs_head_share(p, (int)(i / p->H), (int)(i % p->H));
    return sum / (double)LH;
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
        (*share)[j] = mean_first_share(&p);
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

static const char *const KINDS[] = {"loss",       "first-share", "gate-hist", "mact",
                                    "sink-steps", "key-share",   "distance"};

static int figure_on(RunSet *rs, const char *kind, const char *png, char *err, size_t errlen) {
    if (!strcmp(kind, "loss")) return fig_loss(rs, png, err, errlen);
    if (!strcmp(kind, "first-share"))
        return fig_layers(rs, png, layer_first_share, 1,
                          "First-token attention share per layer (last probe)", "first-token share",
                          err, errlen);
    if (!strcmp(kind, "mact"))
        return fig_layers(rs, png, layer_mact, 0, "Massive activations per layer (last probe)",
                          "max |h| of block output", err, errlen);
    if (!strcmp(kind, "sink-steps")) return fig_sink_steps(rs, png, err, errlen);
    if (!strcmp(kind, "key-share")) return plot_key_share(rs, png, err, errlen);
    if (!strcmp(kind, "distance")) return plot_distance(rs, png, err, errlen);
    if (!strcmp(kind, "gate-hist")) {
        if (rs->n != 1) {
            seterr(err, errlen, "plot gate-hist takes exactly one run (got %d)", rs->n);
            return NO_DATA;
        }
        return fig_gate_hist(rs->r[0], rs->label[0], png, err, errlen);
    }
    return seterr(err, errlen,
                  "plot: unknown figure kind '%s' (loss, "
                  "first-share, gate-hist, mact, sink-steps, key-share, distance)",
                  kind);
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
    if (!rc) rc = report_one(&rs, outdir, "loss", "loss", err, errlen);
    if (!rc) rc = report_one(&rs, outdir, "first-share", "first_share_layers", err, errlen);
    if (!rc) rc = report_gate_hists(&rs, outdir, err, errlen);
    if (!rc) rc = report_one(&rs, outdir, "mact", "mact_layers", err, errlen);
    if (!rc) rc = report_one(&rs, outdir, "sink-steps", "sink_vs_step", err, errlen);
    plot_runs_close(&rs);
    return rc;
}

int plot_kind_known(const char *kind) {
    for (size_t k = 0; k < sizeof KINDS / sizeof KINDS[0]; k++)
        if (!strcmp(kind, KINDS[k])) return 1;
    return 0;
}
