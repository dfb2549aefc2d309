/* report_mechanism.c: the "Mechanism" section of REPORT.md (definitions:
 * docs/metrics.md "Mechanism" and "Interventions").
 *
 * Part 1 puts every run's F-Attn beside its BOS activation (both from the
 * run's last probe) in a scatter plot and a rank correlation, each test
 * followed by the sentence it decides (which way F-Attn moves as BOS
 * activation rises, or "no relation shown"), and the declared secondary
 * test of final val loss against F-Attn within each run group. Part 2 is the
 * intervention table from /intervene (gatelab intervene): each kind's
 * change against the same run's /intervene/none, so the probe code, tokens
 * and weights are the same on both sides of every delta. */
#include "report_mechanism.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* variant_key_id */
#include "intervention.h"
#include "report_priv.h"
#include "runfile_read.h"
#include "runstats.h"
#include "stats.h"

#define MECH_MORE 64 /* results of the newer kinds read per run */

typedef struct {
    char name[256], variant[256], status[32], data[64];
    int gated;       /* the probe has gate arrays */
    int paper_arch;  /* RoPE, full causal, pre-norm as it attends (rs_arch_values, rs_arch_paper_at)
                      */
    double fattn;    /* last probe: F-Attn */
    double val_loss; /* final val loss (NaN: none) */
    double bos_act;  /* last probe: BOS activation (NaN: no mechanism fields) */
    int has_iv[IV_COUNT];
    double d_fattn[IV_COUNT], d_mact[IV_COUNT], d_loss[IV_COUNT];
    /* the results of the kinds after no-bos (per head list, layer or c),
     * by group name: the same deltas */
    int n_more;
    char more[MECH_MORE][128];
    double m_fattn[MECH_MORE], m_mact[MECH_MORE], m_loss[MECH_MORE];
} MechRun;

HEAD_SIZES_OK(MechRun);

/* kind k's deltas against none (none already read into *none) */
static void read_kind(RunReader *r, MechRun *w, int k, const RunIntervention *none) {
    char err[512];
    RunIntervention iv;
    if (runread_intervention(r, intervention_name(k), &iv, err, sizeof err) != 0) return;
    w->has_iv[k] = 1;
    w->d_fattn[k] = rs_share(&iv.probe, -1) - rs_share(&none->probe, -1);
    w->d_mact[k] = rs_m_act(&iv.probe) - rs_m_act(&none->probe);
    w->d_loss[k] = iv.loss - none->loss;
    runread_intervention_free(&iv);
}

/* group nm's deltas against none when it holds a kind after no-bos, named
 * for the table: a mact-* group with its thresholds, so results made with
 * other thresholds are rows of their own */
static void read_more(RunReader *r, MechRun *w, const char *nm, const RunIntervention *none) {
    char err[512];
    RunIntervention iv;
    if (w->n_more == MECH_MORE || runread_intervention(r, nm, &iv, err, sizeof err) != 0) return;
    if (intervention_kind(iv.kind) > IV_NONE &&
        !intervention_has(intervention_kind(iv.kind), IVP_IN_ALL)) {
        int i = w->n_more++;
        char t[96];
        if (intervention_mact(intervention_kind(iv.kind)))
            snprintf(w->more[i], sizeof w->more[i], "%s (%s)", nm,
                     intervention_mact_text(t, sizeof t, iv.mact_abs, iv.mact_ratio));
        else snprintf(w->more[i], sizeof w->more[i], "%s", nm);
        w->m_fattn[i] = rs_share(&iv.probe, -1) - rs_share(&none->probe, -1);
        w->m_mact[i] = rs_m_act(&iv.probe) - rs_m_act(&none->probe);
        w->m_loss[i] = iv.loss - none->loss;
    }
    runread_intervention_free(&iv);
}

static void read_interventions(RunReader *r, MechRun *w) {
    char err[512], **names;
    RunIntervention none;
    if (runread_intervention(r, RS_IV_NONE, &none, err, sizeof err) != 0) return;
    for (int k = IV_NONE + 1; k < IV_COUNT; k++)
        if (intervention_has(k, IVP_IN_ALL)) read_kind(r, w, k, &none);
    int nn = runread_intervention_names(r, &names, err, sizeof err);
    for (int i = 0; i < nn; i++) read_more(r, w, names[i], &none);
    if (nn > 0) runread_names_free(names, nn);
    runread_intervention_free(&none);
}

/* 0 when the run has something for this section */
static int mech_read(const char *path, MechRun *w) {
    char err[512];
    memset(w, 0, sizeof *w);
    w->fattn = w->bos_act = w->val_loss = NAN;
    RunReader *r = open_run_head(path, w->name, w->variant, w->status, w->data);
    if (!r) return -1;
    if (runread_summary(r, RS_SUM_FINAL_VAL_LOSS, &w->val_loss, NULL, 0) != 0) w->val_loss = NAN;
    char arch[RS_N_ARCH][RS_ARCH_LEN];
    rs_arch_values(r, arch);
    int T = rs_train_len(r);
    w->paper_arch = rs_arch_paper_at((const char(*)[RS_ARCH_LEN])arch, T);
    ProbeRecord p;
    if (runread_probe(r, -1, &p, err, sizeof err) == 0) {
        if (T < 1) /* an inspected run */
            w->paper_arch = rs_arch_paper_at((const char(*)[RS_ARCH_LEN])arch, p.T);
        w->fattn = rs_share(&p, -1);
        w->bos_act = rs_bos_act(&p);
        w->gated = p.has_gate;
        runread_probe_free(&p);
    }
    read_interventions(r, w);
    runread_close(r);
    int any = isfinite(w->bos_act);
    for (int k = 0; k < IV_COUNT; k++) any |= w->has_iv[k];
    return any || w->n_more ? 0 : -1;
}

/* The points of the scatter (finite F-Attn, positive BOS activation) and
 * their run groups: x, y, grp[k] and whether each run is of the paper's
 * architecture, paper[k]; returns k and the group count in *ng. */
static int points(const MechRun *w, int n, double *x, double *y, int *grp, int *paper, int *ng) {
    int *all = calloc((size_t)(n ? n : 1), sizeof *all), k = 0;
    if (!all) return 0;
    group_names(w->name, sizeof *w, n, all);
    *ng = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(w[i].bos_act) || !isfinite(w[i].fattn) || w[i].bos_act <= 0) continue;
        paper[k] = w[i].paper_arch;
        x[k] = w[i].bos_act, y[k] = w[i].fattn, grp[k++] = all[i];
        *ng = all[i] + 1 > *ng ? all[i] + 1 : *ng;
    }
    free(all);
    return k;
}

#define ALPHA 0.05

/* The sentence a rank-correlation test decides: "Y falls as X rises" (rises,
 * for r > 0) at p < ALPHA, else "No relation shown between Y and X"; then
 * the statistic NAME = r, its p and the test's scope. */
static void relation(FILE *f, const char *scope, const char *y, const char *x, const char *name,
                     double r, double p) {
    if (p < ALPHA && r != 0) fprintf(f, "- %s %s as %s rises", y, r < 0 ? "falls" : "rises", x);
    else fprintf(f, "- No relation shown between %s and %s", y, x);
    fprintf(f, ": %s = %.3f, p ", name, r);
    put_p_rel(f, p);
    fprintf(f, " (%s).\n", scope);
}

/* The means of the k points' groups of the paper's architecture into gx,
 * gy (zeroed, ng long; one per group, compacted); returns how many, and
 * in *other the groups with points of another architecture only. */
static int group_means(const double *x, const double *y, const int *grp, const int *paper, int k,
                       int ng, double *gx, double *gy, int *other) {
    int *cnt = calloc((size_t)(ng ? ng : 1), sizeof *cnt), m = 0, groups = 0;
    if (cnt) {
        for (int i = 0; i < k; i++)
            if (paper[i]) gx[grp[i]] += x[i], gy[grp[i]] += y[i], cnt[grp[i]]++;
            else if (!cnt[grp[i]]) cnt[grp[i]] = -1; /* seen, of another architecture */
        for (int g = 0; g < ng; g++) {
            groups += cnt[g] != 0;
            if (cnt[g] > 0) gx[m] = gx[g] / cnt[g], gy[m++] = gy[g] / cnt[g];
        }
    }
    *other = groups - m;
    free(cnt);
    return m;
}

/* F-Attn against BOS activation without pseudo-replication: Spearman over
 * the run groups' means (one point per group), and the within-group rank
 * correlation with a permutation test inside groups (stats.h). Seeds of
 * one group are not independent evidence about the relation between
 * groups, so no test pools the runs. The test across groups takes the
 * groups of the paper's architecture only, so F-Attn is compared within
 * one architecture (a window changes even its uniform share). */
static void correlations(FILE *f, const MechRun *w, int n) {
    double *x = calloc((size_t)n, sizeof *x), *y = calloc((size_t)n, sizeof *y);
    double *gx = calloc((size_t)n, sizeof *gx), *gy = calloc((size_t)n, sizeof *gy);
    int *grp = calloc((size_t)n, sizeof *grp), *paper = calloc((size_t)n, sizeof *paper);
    int ng = 0, other = 0;
    char err[512];
    int k = x && y && gx && gy && grp && paper ? points(w, n, x, y, grp, paper, &ng) : 0;
    int m = group_means(x, y, grp, paper, k, ng, gx, gy, &other);
    StatsSpearman sp;
    int sp_ok = m >= 3 && stats_spearman(&sp, gx, gy, m, err, sizeof err) == 0;
    if (sp_ok)
        fprintf(f,
                "Across the %d run groups (group means): Spearman's rho = %.3f, p = %.3g (%s).\n",
                m, sp.rho, sp.p, sp.exact ? "exact permutation test" : "t approximation");
    else fprintf(f, "Across run groups: not computed (%d groups).\n", m);
    put_other_arch(f, other, "run group",
                   " of the test across groups, which compares F-Attn within one architecture "
                   "(a window changes even its uniform share).",
                   " of the test across groups, which compares F-Attn within one architecture "
                   "(a window changes even its uniform share).");
    StatsWithin wg;
    int wg_ok = k >= 2 && stats_within_group_corr(&wg, x, y, grp, k, STATS_WITHIN_RESAMPLES,
                                                  STATS_WITHIN_SEED, err, sizeof err) == 0;
    if (wg_ok)
        fprintf(f,
                "Within run groups (seeds of one group against each other, %d groups): rank "
                "correlation r = %.3f, permutation p = %.3g (%s).\n",
                wg.groups, wg.r, wg.p, wg.exact ? "every permutation" : "Monte Carlo");
    else fprintf(f, "Within run groups: not computed (%s).\n", k >= 2 ? err : "too few runs");
    if (sp_ok || wg_ok) fputc('\n', f);
    double floor_p = sp_ok ? stats_spearman_min_p(m) : 0.0;
    if (sp_ok && floor_p >= ALPHA)
        fprintf(f,
                "- Untestable here across run groups: with %d groups the exact test's smallest p "
                "is %.3g, so it cannot show a relation between F-Attn and BOS activation at "
                "p < %.2f (Spearman ρ = %.3f, p = %.3g).\n",
                m, floor_p, ALPHA, sp.rho, sp.p);
    else if (sp_ok)
        relation(f, "across run groups", "F-Attn", "BOS activation", "Spearman ρ", sp.rho, sp.p);
    if (wg_ok)
        relation(f, "within run groups", "F-Attn", "BOS activation", "within-group r", wg.r, wg.p);
    free(x), free(y), free(gx), free(gy), free(grp), free(paper);
}

/* The declared secondary test (docs/statistics.md): final val loss against
 * F-Attn within each run group, the within-group rank correlation with its
 * permutation test (stats.h), over the runs that have both. */
static void loss_vs_fattn(FILE *f, const MechRun *w, int n) {
    double *x = calloc((size_t)(n ? n : 1), sizeof *x), *y = calloc((size_t)(n ? n : 1), sizeof *y);
    int *all = calloc((size_t)(n ? n : 1), sizeof *all),
        *grp = calloc((size_t)(n ? n : 1), sizeof *grp);
    char err[512] = "too few runs";
    int k = 0;
    if (x && y && all && grp) {
        group_names(w->name, sizeof *w, n, all);
        for (int i = 0; i < n; i++)
            if (isfinite(w[i].fattn) && isfinite(w[i].val_loss))
                x[k] = w[i].fattn, y[k] = w[i].val_loss, grp[k++] = all[i];
    }
    StatsWithin wg;
    fputs("\nSecondary test (declared in docs/statistics.md): final val loss against F-Attn "
          "within each run group, so a seed's sink is set against its own loss and groups are "
          "never pooled.\n\n",
          f);
    if (k >= 2 && stats_within_group_corr(&wg, x, y, grp, k, STATS_WITHIN_RESAMPLES,
                                          STATS_WITHIN_SEED, err, sizeof err) == 0)
        relation(f, "within run groups", "val loss", "F-Attn", "within-group r", wg.r, wg.p);
    else fprintf(f, "- Within run groups: not computed (%s).\n", err);
    free(x), free(y), free(all), free(grp);
}

/* The scatter's marks: the kind of run (the baseline; a variant without
 * an output gate, such as softmax1 or a sink token; a gated variant; any
 * run of another architecture than the paper's) crossed with its data
 * source, each its own colour and point type. */
enum { MK_BASE, MK_UNGATED, MK_GATED, MK_OTHER_ARCH, MK_KINDS, MK_DATA = 3 };
static const char *const MK_NAME[MK_KINDS] = {"baseline", "other, no gate", "gated",
                                              "another architecture"};

static void scatter(FILE *f, const char *figdir, const MechRun *w, int n) {
    enum { NS = MK_KINDS * (MK_DATA + 1) };
    double *xs[NS], *ys[NS];
    size_t ks[NS] = {0}, k = 0, n_other = 0;
    char data[MK_DATA][64], label[NS][160];
    int nd = 0, ok = 1;
    for (int i = 0; i < NS; i++) {
        xs[i] = calloc((size_t)(n ? n : 1), sizeof(double));
        ys[i] = calloc((size_t)(n ? n : 1), sizeof(double));
        ok &= xs[i] && ys[i];
    }
    const char *base = variant_key_id(VARIANT_KEY_BASELINE);
    for (int i = 0; ok && i < n; i++) {
        if (!isfinite(w[i].bos_act) || !isfinite(w[i].fattn) || w[i].bos_act <= 0) continue;
        int d = 0;
        while (d < nd && strcmp(data[d], w[i].data)) d++;
        if (d == nd && nd < MK_DATA) snprintf(data[nd++], sizeof data[0], "%s", w[i].data);
        int kind = !w[i].paper_arch              ? MK_OTHER_ARCH
                   : w[i].gated                  ? MK_GATED
                   : !strcmp(w[i].variant, base) ? MK_BASE
                                                 : MK_UNGATED;
        int g = kind * (MK_DATA + 1) + d; /* d == MK_DATA: any further source */
        xs[g][ks[g]] = log10(w[i].bos_act), ys[g][ks[g]++] = w[i].fattn;
        k++, n_other += kind == MK_OTHER_ARCH;
    }
    if (k > 0) {
        fprintf(f,
                "\nF-Attn against BOS activation (mean over layers of position 0's max |h|, "
                "last probe), one point per run file (n = %zu); the marks tell the baseline, "
                "variants without an output gate and gated variants apart, per data source%s.\n",
                k,
                n_other ? "; runs of another architecture than the paper's have marks of their own"
                        : "");
        correlations(f, w, n);
        PlotSeries s[NS];
        int ns = 0;
        for (int g = 0; g < NS; g++) {
            if (!ks[g]) continue;
            int kind = g / (MK_DATA + 1), d = g % (MK_DATA + 1);
            snprintf(label[g], sizeof label[g], "%s (%s)", MK_NAME[kind],
                     d < nd ? data[d] : "other data");
            s[ns++] = (PlotSeries){label[g], xs[g], ys[g], ks[g], PLOT_POINTS, 0, 0};
        }
        PlotAxes ax = {"F-Attn against BOS activation (one point per run)",
                       "log10 BOS activation (mean over layers of max |h_0|)",
                       {"F-Attn", NULL},
                       1,
                       NULL,
                       1,
                       0};
        draw_figure(f, figdir, "mech_bos_fattn.png", "F-Attn against BOS activation", &ax, s, ns);
    }
    for (int i = 0; i < NS; i++) free(xs[i]), free(ys[i]);
}

/* " paired t p | Wilcoxon p |" of the per-seed changes d[c] against 0: the
 * intervened and the unchanged rerun of each seed are a pair. */
static void paired_cells(FILE *f, const double *d, int c) {
    static const double zero[64];
    char err[256];
    StatsPaired t;
    StatsWilcoxon w;
    if (c >= 2 && stats_paired_t(&t, d, zero, c, err, sizeof err) == 0) fprintf(f, " %.3g |", t.p);
    else fputs(" – |", f);
    if (c >= 1 && stats_wilcoxon(&w, d, zero, c, err, sizeof err) == 0) fprintf(f, " %.3g |", w.p);
    else fputs(" – |", f);
}

/* the cells of one row, label its intervention, over c seeds */
static void row_cells(FILE *f, const char *run, const char *label, const double *df,
                      const double *dm, const double *dl, int c) {
    fprintf(f, "| %s | %s | %d |", run, label, c);
    put_mean(f, " %+.4f", "%.4f", df, c);
    fputs(" |", f);
    put_mean(f, " %+.2f", "%.2f", dm, c);
    fputs(" |", f);
    put_mean(f, " %+.4f", "%.4f", dl, c);
    fputs(" |", f);
    paired_cells(f, df, c);
    paired_cells(f, dl, c);
    fputc('\n', f);
}

/* one table row: run name g, kind k, over the group's runs that have k */
static void table_row(FILE *f, const MechRun *w, const int *idx, int m, int k) {
    double df[64], dm[64], dl[64];
    int c = 0;
    /* without gates, gates-open and gates-mean are the plain rerun: no row */
    if ((k == IV_GATES_OPEN || k == IV_GATES_MEAN) && !w[idx[0]].gated) return;
    for (int j = 0; j < m && c < 64; j++)
        if (w[idx[j]].has_iv[k])
            df[c] = w[idx[j]].d_fattn[k], dm[c] = w[idx[j]].d_mact[k],
            dl[c++] = w[idx[j]].d_loss[k];
    if (c) row_cells(f, w[idx[0]].name, intervention_name(k), df, dm, dl, c);
}

/* the index of result nm in w's newer results, or -1 */
static int more_index(const MechRun *w, const char *nm) {
    for (int i = 0; i < w->n_more; i++)
        if (!strcmp(w->more[i], nm)) return i;
    return -1;
}

/* the rows of the newer kinds' results, by group name, in the order the
 * group's runs first have them */
static void more_rows(FILE *f, const MechRun *w, const int *idx, int m) {
    for (int j0 = 0; j0 < m; j0++)
        for (int i0 = 0; i0 < w[idx[j0]].n_more; i0++) {
            const char *nm = w[idx[j0]].more[i0];
            double df[64], dm[64], dl[64];
            int c = 0, seen = 0;
            for (int j = 0; j < j0; j++) seen |= more_index(&w[idx[j]], nm) >= 0;
            for (int j = 0; !seen && j < m && c < 64; j++) {
                int i = more_index(&w[idx[j]], nm);
                if (i >= 0)
                    df[c] = w[idx[j]].m_fattn[i], dm[c] = w[idx[j]].m_mact[i],
                    dl[c++] = w[idx[j]].m_loss[i];
            }
            if (c) row_cells(f, w[idx[0]].name, nm, df, dm, dl, c);
        }
}

static void iv_table(FILE *f, const MechRun *w, int n) {
    int any = 0;
    for (int i = 0; i < n; i++) {
        any |= w[i].n_more > 0;
        for (int k = IV_NONE + 1; k < IV_COUNT; k++) any |= w[i].has_iv[k];
    }
    if (!any) return;
    int *grp = calloc((size_t)n, sizeof *grp), *idx = calloc((size_t)n, sizeof *idx);
    if (!grp || !idx) {
        free(grp), free(idx);
        return;
    }
    fprintf(f, "\nInterventions (`gatelab intervene`; definitions in docs/metrics.md): each "
               "change is against the same run's unchanged rerun (/intervene/none), mean ± "
               "std over the seeds that have it (n). dloss is the mean cross-entropy "
               "predicting probe tokens 2..T-1. gates-open and gates-mean appear only for "
               "runs with gates (elsewhere they are the unchanged rerun). Each change is "
               "tested over seeds as a pair (intervened, unchanged) by the paired t-test and "
               "the exact Wilcoxon signed-rank test (two-sided); these tests are exploratory "
               "(no correction across the table).\n\n");
    fprintf(f, "| run | intervention | n | dF-Attn | dM-Act | dloss | dF-Attn paired t p | "
               "dF-Attn Wilcoxon p | dloss paired t p | dloss Wilcoxon p |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n");
    int ng = group_names(w->name, sizeof *w, n, grp);
    for (int g = 0; g < ng; g++) {
        int m = members(grp, n, g, idx);
        for (int k = IV_NONE + 1; k < IV_COUNT; k++)
            if (intervention_has(k, IVP_IN_ALL)) table_row(f, w, idx, m, k);
        more_rows(f, w, idx, m);
    }
    free(grp), free(idx);
}

void report_mechanism(FILE *f, const char *figdir, const char *const *paths, int n) {
    MechRun *w = calloc((size_t)(n ? n : 1), sizeof *w);
    int k = 0;
    for (int i = 0; w && i < n; i++)
        if (mech_read(paths[i], &w[k]) == 0) k++;
    if (k > 0) {
        fprintf(f, "\n## Mechanism\n");
        scatter(f, figdir, w, k);
        loss_vs_fattn(f, w, k);
        iv_table(f, w, k);
    }
    free(w);
}
