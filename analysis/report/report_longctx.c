/* report_longctx.c: the long-context section of REPORT.md (gatelab eval
 * results), skipped silently when no row has a long-context result. It
 * reads only the rows' lc_* and rope_* columns (report_priv.h), so the
 * report over results.csv alone prints the same section as over the run
 * files. Rows and curves are per run name (runname.h), mean ± sample std
 * over its seeds, as in the main tables. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* variant_key */
#include "metrics.h"
#include "plot.h"
#include "report_priv.h"
#include "runname.h"
#include "runstats.h" /* RsRope */
#include "paper_tables.h"

#define MAXL 16
#define LC_PAIRS 64 /* r_i shown per run; wider heads: the first 64 */

/* ---- long context ---- */

typedef struct {
    char name[256], variant[256], data[64], status[32];
    /* row_paper_arch_at 8 T: attends as the paper's architecture at every
     * length of the Table 5 headline (a window of at least T keys but fewer
     * than 8 T is full causal only up to its own length); the only runs the
     * headline picks */
    int paper_arch;
    double lr;
    int T;     /* training length (lc_train_len) */
    int nl[2]; /* lengths per mode (0 plain, 1 yarn) */
    int len[2][MAXL];
    double loss[2][MAXL], deg[2][MAXL]; /* deg: rs_lc_deg_at */
    int has_rope;                       /* rope, turns: yarn_split of rope_* */
    RsRope rope;
    double turns[LC_PAIRS];
    int nd; /* the needle task's depths (eval --needle), 0: none */
    double depth[LC_NDEPTH], needle[2][MAXL][LC_NDEPTH];
} LcRun;

/* The depths of LC_DEPTH any row has a needle share at, into used[];
 * returns how many. */
static int lc_depths_used(const Row *rows, int n, int *used) {
    int nd = 0;
    for (int d = 0; d < LC_NDEPTH; d++) {
        int any = 0;
        for (int i = 0; i < n && !any; i++)
            for (int m = 0; m < 2 && rows[i].ok; m++)
                for (int k = 0; k < LC_NMULT; k++) any |= isfinite(rows[i].lc_needle[m][k][d]);
        if (any) used[nd++] = d;
    }
    return nd;
}

/* Row r as the section's run w: its lengths LC_MULT[k] * lc_T with a val
 * loss, their degradation and needle shares at the depths used[nd], and
 * YaRN's split from its RoPE columns. -1 when it has no long-context
 * result. */
static int lc_from_row(const Row *r, LcRun *w, const int *used, int nd) {
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", r->run);
    snprintf(w->variant, sizeof w->variant, "%s", r->variant);
    snprintf(w->data, sizeof w->data, "%s", r->data);
    snprintf(w->status, sizeof w->status, "%s", r->status);
    w->T = r->lc_T > 0 ? r->lc_T : 0;
    w->paper_arch = w->T && row_paper_arch_at(r, 8 * w->T);
    w->lr = r->cfg[CFG_LR];
    for (int m = 0; m < 2 && r->ok && w->T; m++)
        for (int k = 0; k < LC_NMULT; k++) {
            if (!isfinite(r->lc_loss[m][k])) continue;
            int j = w->nl[m]++;
            w->len[m][j] = LC_MULT[k] * w->T;
            w->loss[m][j] = r->lc_loss[m][k];
            w->deg[m][j] = r->lc_deg[m][k];
            for (int d = 0; d < LC_NDEPTH; d++) w->needle[m][j][d] = NAN;
            int has = 0;
            for (int d = 0; d < nd; d++) has |= isfinite(r->lc_needle[m][k][used[d]]);
            for (int d = 0; has && d < nd; d++) w->needle[m][j][d] = r->lc_needle[m][k][used[d]];
            if (has) w->nd = nd;
        }
    for (int d = 0; d < nd; d++) w->depth[d] = LC_DEPTH[used[d]];
    double turns[RS_ROPE_MAX_PAIRS];
    w->has_rope = r->rope_dim >= 2 && r->rope_dim / 2 <= RS_ROPE_MAX_PAIRS && r->rope_len > 0 &&
                  isfinite(r->rope_base);
    if (w->has_rope) {
        w->rope = (RsRope){r->rope_dim, r->rope_len, r->rope_base,
                           yarn_split(r->rope_dim, r->rope_base, r->rope_len, turns)};
        for (int i = 0; i < w->rope.split.pairs && i < LC_PAIRS; i++) w->turns[i] = turns[i];
    }
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

/* Degradation of run w at length L as rs_lc_deg_at (runstats.h) defines
 * it: the loss past T minus the loss at T; NaN where it has none. */
static double lc_deg(const LcRun *w, int m, int L) {
    for (int j = 0; j < w->nl[m]; j++)
        if (w->len[m][j] == L) return w->deg[m][j];
    return NAN;
}

/* One cell over the runs idx[nm] at length L: "loss (degradation)", each
 * mean ± std over the seeds that have it, "[k/n]" when some lack it; no
 * degradation at T and below, nor under an untestable YaRN. */
static void lc_cell(FILE *f, const LcRun *w, const int *idx, int nm, int m, int L) {
    double v[256], d[256];
    int k = 0, kd = 0;
    for (int i = 0; i < nm && k < 256; i++) {
        double x = lc_at(&w[idx[i]], m, L), y = lc_deg(&w[idx[i]], m, L);
        if (isfinite(x)) v[k++] = x;
        if (isfinite(x) && isfinite(y)) d[kd++] = y;
    }
    if (!k) {
        fprintf(f, " — |");
        return;
    }
    put_mean(f, " %.4f", "%.4f", v, k);
    if (kd) {
        put_mean(f, " (%+.4f", "%.4f", d, kd);
        fprintf(f, ")");
    }
    if (k < nm) fprintf(f, " [%d/%d]", k, nm);
    fprintf(f, " |");
}

/* Members of group g (grp[n]) into idx; returns how many. */

static void lc_table(FILE *f, const LcRun *w, int n, const int *grp, int ng, int m, const int *lens,
                     int nl, int *idx) {
    fprintf(f,
            "\n**%s** — val loss (degradation: loss past T − loss at T), mean ± "
            "std over seeds\n\n| run | variant | data | seeds |",
            m ? "YaRN (scale = L / T_train)" : "plain RoPE");
    for (int j = 0; j < nl; j++) fprintf(f, " L=%d |", lens[j]);
    fprintf(f, "\n|---|---|---|---|");
    for (int j = 0; j < nl; j++) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int g = 0; g < ng; g++) {
        int nm = members(grp, n, g, idx), any = 0;
        for (int i = 0; i < nm; i++) any |= w[idx[i]].nl[m] > 0;
        if (!any) continue;
        const LcRun *a = &w[idx[0]];
        fprintf(f, "| %s | %s | %s | %d |", a->name, a->variant, a->data, nm);
        for (int j = 0; j < nl; j++) lc_cell(f, w, idx, nm, m, lens[j]);
        fprintf(f, "\n");
    }
}

/* Whether any seed of a run name has the needle task at (m, L). */
static int lc_needle_any(const LcRun *w, const int *idx, int nm, int m, int L) {
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < w[idx[i]].nl[m]; j++)
            if (w[idx[i]].len[m][j] == L && isfinite(w[idx[i]].needle[m][j][0])) return 1;
    return 0;
}

/* One needle row's cells: seeds, each depth's mean share, their mean. */
static void lc_needle_row(FILE *f, const LcRun *w, const int *idx, int nm, int m, int L, int nd) {
    double sum[LC_NDEPTH] = {0}, all = 0.0;
    int k = 0;
    for (int i = 0; i < nm; i++) {
        const LcRun *r = &w[idx[i]];
        for (int j = 0; j < r->nl[m] && r->nd == nd; j++)
            if (r->len[m][j] == L && isfinite(r->needle[m][j][0])) {
                for (int d = 0; d < nd; d++) sum[d] += r->needle[m][j][d];
                k++;
            }
    }
    fprintf(f, " %d |", k);
    for (int d = 0; d < nd; d++) {
        if (k) fprintf(f, " %.3f |", sum[d] / k), all += sum[d] / k;
        else fprintf(f, " — |");
    }
    if (k) fprintf(f, " %.3f |\n", all / nd);
    else fprintf(f, " — |\n");
}

/* YaRN's by-parts split per run name (its first seed's config): each
 * rotary pair's turns within T, r_i, and how many pairs YaRN keeps
 * (r_i >= beta), ramps and interpolates (r_i <= alpha). With none kept
 * YaRN changes even the fastest pair: its results are untestable here. */
static void lc_turns(FILE *f, const LcRun *w, int n, const int *grp, int ng, int *idx) {
    int head = 0;
    for (int g = 0; g < ng; g++) {
        if (!members(grp, n, g, idx)) continue;
        const LcRun *a = &w[idx[0]];
        if (!a->has_rope) continue;
        if (!head++)
            fprintf(f,
                    "\n**YaRN's split** (alpha = %g, beta = %g): r_i = T / wavelength_i, "
                    "the turns rotary pair i makes within the training length T; kept: "
                    "r_i ≥ beta, ramped: between, interpolated: r_i ≤ alpha. YaRN with no "
                    "pair kept alters even the fastest pair's local position code: its "
                    "degradation is untestable here (blank in results.csv).\n\n"
                    "| run | T | rotated dims | rope_base | kept | ramped | interpolated | "
                    "r_i (fastest first) | YaRN |\n|---|---|---|---|---|---|---|---|---|\n",
                    YARN_ALPHA, YARN_BETA);
        const YarnSplit *s = &a->rope.split;
        fprintf(f, "| %s | %d | %d | %g | %d | %d | %d |", a->name, a->rope.T, a->rope.rope_dim,
                a->rope.base, s->kept, s->ramped, s->interpolated);
        for (int i = 0; i < s->pairs && i < LC_PAIRS; i++)
            fprintf(f, "%s%.3g", i ? ", " : " ", a->turns[i]);
        if (s->kept) fprintf(f, " | testable |\n");
        else
            fprintf(f, " | untestable here: no pair kept (r_0 = %.1f < %g; needs T ≥ %d) |\n",
                    s->fastest, YARN_BETA, yarn_keep_len());
    }
}

/* The needle task per run name, mode and length: the exact-match share at
 * each depth, mean over the seeds that have it. */
static void lc_needle(FILE *f, const LcRun *w, int n, const int *grp, int ng, int *idx) {
    int head = 0;
    for (int g = 0; g < ng; g++) {
        int nm = members(grp, n, g, idx);
        const LcRun *a = nm ? &w[idx[0]] : NULL;
        for (int m = 0; a && a->nd && m < 2; m++)
            for (int j = 0; j < a->nl[m]; j++) {
                if (!lc_needle_any(w, idx, nm, m, a->len[m][j])) continue;
                if (!head++) {
                    fprintf(f, "\n**Needle retrieval** (RULER's small analogue: a key–value "
                               "needle at a depth of the text, queried at its end; exact-match "
                               "share of the value, mean over seeds; depth 0: right after BOS, "
                               "1: just before the query)\n\n| run | RoPE | length | seeds |");
                    for (int d = 0; d < a->nd; d++) fprintf(f, " depth %g |", a->depth[d]);
                    fprintf(f, " mean |\n|---|---|---|---|");
                    for (int d = 0; d <= a->nd; d++) fprintf(f, "---|");
                    fprintf(f, "\n");
                }
                fprintf(f, "| %s | %s | %d |", a->name, m ? "YaRN" : "plain", a->len[m][j]);
                lc_needle_row(f, w, idx, nm, m, a->len[m][j], a->nd);
            }
    }
}

/* Whether run w has a degradation at 8x its training length. */
static int lc_has8(const LcRun *w) {
    return w->T > 0 && (isfinite(lc_deg(w, 0, 8 * w->T)) || isfinite(lc_deg(w, 1, 8 * w->T)));
}

/* The run name a key variant's headline row uses on one data source: of
 * its run names of the paper's architecture (the comparison with Table 5)
 * evaluated at 8x T, the one at the lowest lr (the preset's 1x, not a
 * stability sweep's lr2x..8x), first in order on a tie. */
static int lc_pick(const LcRun *w, int n, const char *variant, const char *data) {
    int best = -1;
    for (int j = 0; j < n; j++)
        if (w[j].paper_arch && !strcmp(w[j].data, data) && !strcmp(w[j].variant, variant) &&
            lc_has8(&w[j]) && (best < 0 || w[j].lr < w[best].lr))
            best = j;
    return best;
}

/* Degradations at 8x T of the seeds of run name `name`, per mode into
 * d[m][k[m]]; returns the number of runs. */
static int lc_deg8(const LcRun *w, int n, const char *name, double d[2][256], int k[2]) {
    int nr = 0;
    k[0] = k[1] = 0;
    for (int j = 0; j < n; j++) {
        if (strcmp(w[j].name, name) || !lc_has8(&w[j])) continue;
        for (int m = 0; m < 2; m++) {
            double x = lc_deg(&w[j], m, 8 * w[j].T);
            if (isfinite(x) && k[m] < 256) d[m][k[m]++] = x;
        }
        nr++;
    }
    return nr;
}

/* Each key variant's 8x degradation against the baseline's on the same
 * data: Welch, exact Mann-Whitney, bootstrap CI (report_compare.c). */
static void lc_tests(FILE *f, const LcRun *w, int n) {
    int head = 0, ntest = 0, nsig = 0;
    static double db[2][256], dv[2][256];
    for (int i = 0; i < n; i++) {
        int first = 1;
        for (int j = 0; j < i; j++) first &= strcmp(w[j].data, w[i].data) != 0;
        int b = first ? lc_pick(w, n, variant_key_id(VARIANT_KEY_BASELINE), w[i].data) : -1;
        if (b < 0) continue;
        int kb[2], kv[2];
        lc_deg8(w, n, w[b].name, db, kb);
        for (int v = VARIANT_KEY_BASELINE + 1; v < VARIANT_KEY_END; v++) {
            int g = lc_pick(w, n, variant_key_id(v), w[i].data);
            if (g < 0) continue;
            lc_deg8(w, n, w[g].name, dv, kv);
            for (int m = 0; m < 2; m++) {
                if (!head++)
                    fprintf(f, "\n**Degradation at 8× T against the baseline** "
                               "(difference of mean degradations, variant − baseline; "
                               "negative: degrades less. A variant **degrades less or "
                               "more** only when both p < 0.05, as in [Comparisons with "
                               "the baseline](#comparisons-with-the-baseline))\n\n"
                               "| variant | run | data | RoPE | seeds (run / base) | "
                               "difference | 95%% CI | Welch p | Mann–Whitney p | "
                               "verdict (both p < 0.05) |\n"
                               "|---|---|---|---|---|---|---|---|---|---|\n");
                fprintf(f, "| %s | %s | %s | %s |", variant_key_id(v), w[g].name, w[i].data,
                        m ? "YaRN" : "plain");
                int sig = md_stat_cells(f, dv[m], kv[m], db[m], kb[m]);
                fputc('\n', f);
                ntest += sig >= 0;
                nsig += sig > 0;
            }
        }
    }
    if (head)
        fprintf(f,
                "\n%d of these %d comparison%s differ%s at p < 0.05 (both tests; no "
                "correction for multiple comparisons).\n",
                nsig, ntest, ntest == 1 ? "" : "s", nsig == 1 ? "s" : "");
}

/* The headline beside Table 5: degradation at 8x the training length per
 * key variant and data source, mean ± std over the seeds of one run name. */
static void lc_summary(FILE *f, const LcRun *w, int n) {
    int head = 0;
    static double d[2][256];
    for (int i = 0; i < n; i++) { /* data sources in order of appearance */
        int first = 1;
        for (int j = 0; j < i; j++) first &= strcmp(w[j].data, w[i].data) != 0;
        for (int v = VARIANT_KEY_BASELINE; first && v < VARIANT_KEY_END; v++) {
            int b = lc_pick(w, n, variant_key_id(v), w[i].data);
            if (b < 0) continue;
            int k[2];
            int nr = lc_deg8(w, n, w[b].name, d, k);
            if (!head++)
                fprintf(f, "\n**Degradation at 8× T** (mean loss over positions T..8T−1 "
                           "− val_loss at T, mean ± std over seeds; per variant its run "
                           "at the lowest lr)\n\n| variant | run | data | seeds | plain | "
                           "YaRN |\n|---|---|---|---|---|---|\n");
            fprintf(f, "| %s | %s | %s | %d |", variant_key_id(v), w[b].name, w[i].data, nr);
            for (int m = 0; m < 2; m++) {
                if (k[m]) put_mean(f, " %+.4f", "%.4f", d[m], k[m]);
                else fprintf(f, " —");
                fprintf(f, " |");
            }
            fprintf(f, "\n");
        }
    }
    int other = 0;
    for (int i = 0; head && i < n; i++) {
        int first = 1; /* count run names, not seeds */
        for (int j = 0; j < i; j++) first &= strcmp(w[j].name, w[i].name) != 0;
        other += first && !w[i].paper_arch && lc_has8(&w[i]);
    }
    put_other_arch(f, other, "run name",
                   " of this comparison with Table 5; the long-context table above lists it.",
                   " of this comparison with Table 5; the long-context table above lists them.");
    lc_tests(f, w, n);
}

static void lc_paper(FILE *f) {
    fprintf(f, "\nPaper, Table 5 (Qiu et al. 2025; docs/paper-tables.md): "
               "RULER accuracy %% after YaRN extension of a model trained at 4k "
               "(degradation vs 4k in brackets).\n\n| | ");
    for (int j = 0; j < 6; j++) fprintf(f, "%s | ", PAPER_LEN[j]);
    fprintf(f, "\n|---|---|---|---|---|---|---|\n");
    const double *rows[2] = {PAPER_BASE, PAPER_G1};
    const char *names[2] = {"baseline + YaRN", "g1-elem + YaRN"};
    for (int r = 0; r < 2; r++) {
        fprintf(f, "| %s |", names[r]);
        for (int j = 0; j < 6; j++)
            fprintf(f, " %.2f (%+.2f) |", rows[r][j], rows[r][j] - rows[r][0]);
        fprintf(f, "\n");
    }
    fprintf(f, "\n> RULER accuracy (higher is better) and our val loss (lower is better) are "
               "different measures at very different scales: compare only the direction — "
               "does the gated model degrade less than the baseline as the length grows "
               "past the training length?\n");
}

/* One line per run name and mode, the mean over its seeds at each length. */
static void lc_figure(FILE *f, const char *figdir, const LcRun *w, int n, const int *grp, int ng,
                      int *idx) {
    PlotSeries *s = calloc((size_t)ng * 2, sizeof *s);
    double *xy = calloc((size_t)ng * 4 * MAXL, sizeof *xy);
    long long *st = calloc((size_t)n * MAXL, sizeof *st);
    const long long **sp = calloc((size_t)n, sizeof *sp);
    const double **vp = calloc((size_t)n, sizeof *vp);
    size_t *len = calloc((size_t)n, sizeof *len);
    unsigned char *shown = calloc((size_t)ng, 1);
    if (!s || !xy || !st || !sp || !vp || !len || !shown) goto done;
    int subset = key_groups(w[0].variant, w[0].status, sizeof *w, grp, n, ng, shown);
    int ns = 0;
    for (int g = 0; g < ng; g++) {
        int nm = shown[g] ? members(grp, n, g, idx) : 0;
        for (int m = 0; m < 2 && nm; m++) {
            for (int i = 0; i < nm; i++) {
                const LcRun *r = &w[idx[i]];
                long long *si = st + (size_t)idx[i] * MAXL;
                for (int j = 0; j < r->nl[m]; j++) si[j] = r->len[m][j];
                sp[i] = si, vp[i] = r->loss[m], len[i] = (size_t)r->nl[m];
            }
            double *x = xy + ((size_t)g * 2 + (size_t)m) * 2 * MAXL, *y = x + MAXL;
            size_t k = plot_mean_aligned(sp, vp, len, nm, x, y);
            if (k) s[ns++] = (PlotSeries){w[idx[0]].name, x, y, k, PLOT_LINES, g + 1, m};
        }
    }
    char title[160];
    snprintf(title, sizeof title, "val loss against eval length; mean over seeds%s",
             subset ? "; key runs; all runs in the tables" : "");
    PlotAxes ax = {
        title, "eval length (tokens)", {"val loss, plain RoPE", "val loss, YaRN"}, 2, NULL, 0, 0};
    draw_figure(f, figdir, "lceval_loss.png", "val loss vs length", &ax, s, ns);
done:
    free(s), free(xy), free(st), free(sp), free(vp), free(len), free(shown);
}

/* See report_priv.h. */
void report_longctx(FILE *f, const char *figdir, const Row *rows, int n) {
    LcRun *w = calloc((size_t)(n ? n : 1), sizeof *w);
    int *grp = calloc((size_t)(n ? n : 1), sizeof *grp);
    int *idx = calloc((size_t)(n ? n : 1), sizeof *idx);
    if (!w || !grp || !idx) goto done;
    int used[LC_NDEPTH], nd = lc_depths_used(rows, n, used), k = 0;
    for (int i = 0; i < n; i++)
        if (lc_from_row(&rows[i], &w[k], used, nd) == 0) k++;
    if (k > 0) {
        int lens[MAXL];
        int nl = union_lengths(w, k, lens);
        int ng = group_names(w[0].name, sizeof *w, k, grp);
        fprintf(f, "\n## Long context (gatelab eval)\n\nVal loss on the same held-out "
                   "text at each length; degradation at L = the mean loss over the "
                   "positions past the training length T only (T..L−1, from the "
                   "per-bucket losses) − the val loss at L = T (docs/metrics.md). "
                   "One row per run name, mean ± sample std over its seeds "
                   "([k/n]: only k of its n seeds were evaluated at that length). "
                   "Per-position-bucket losses are in each run file under /lceval.\n");
        for (int m = 0; m < 2; m++) {
            int any = 0;
            for (int i = 0; i < k; i++) any |= w[i].nl[m] > 0;
            if (any) lc_table(f, w, k, grp, ng, m, lens, nl, idx);
        }
        lc_turns(f, w, k, grp, ng, idx);
        lc_needle(f, w, k, grp, ng, idx);
        lc_summary(f, w, k);
        lc_paper(f);
        lc_figure(f, figdir, w, k, grp, ng, idx);
    }
done:
    free(w), free(grp), free(idx);
}
