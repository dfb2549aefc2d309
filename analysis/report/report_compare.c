/* report_compare.c: the "Exploratory comparisons with the baseline"
 * section of REPORT.md. Every group that has a matching baseline group
 * (report_rows.c fill_dppl) is compared with it on val_loss, F-Attn and
 * M-Act over seeds: Welch's t-test, the exact Mann-Whitney test, a 95%
 * percentile bootstrap interval for the difference of means
 * (analysis/stats/stats.h) and a Benjamini-Hochberg q-value across the section
 * (q of the larger of the two p). The prose is generated from these
 * numbers and labels every difference it names exploratory (q < 0.05);
 * confirmatory tests live in report_confirm.c. A (group, baseline, metric)
 * the protocol's primary family already tests is not tested again here:
 * its row names the primary id instead, and it is outside the BH family. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric_table.h"
#include "report_priv.h"
#include "stats.h"

#define ALPHA 0.05
#define MAX_SEEDS 256

/* The metrics compared: the metric table's rows with `lower` (at most
 * MAX_COMPARED). */
#define MAX_COMPARED 8

/* One comparison's numbers. */
typedef struct {
    int na, nb, tested; /* tested: both tests ran (>= 2 seeds each side) */
    char why[160];      /* untested with 2 seeds a side: the test's refusal */
    StatsWelch w;
    StatsMannWhitney mw;
    StatsCI ci;
} Cmp;

static int values(const Row *rows, int n, int a, size_t off, double *v) {
    int k = 0;
    for (int i = a; i < n && k < MAX_SEEDS && same_group(&rows[a], &rows[i]); i++) {
        double x = *(const double *)((const char *)&rows[i] + off);
        if (isfinite(x)) v[k++] = x;
    }
    return k;
}

/* Both tests and the interval of mean(a) - mean(b); untested below 2
 * values a side, or with why set to the refusal of a test. */
static Cmp test_pair(const double *a, int na, const double *b, int nb) {
    Cmp c = {0};
    c.na = na, c.nb = nb;
    if (na < 2 || nb < 2) return c;
    c.tested = stats_welch(&c.w, a, na, b, nb, c.why, sizeof c.why) == 0 &&
               stats_mann_whitney(&c.mw, a, na, b, nb, c.why, sizeof c.why) == 0 &&
               stats_bootstrap_diff_ci(&c.ci, a, na, b, nb, STATS_BOOT_RESAMPLES, STATS_BOOT_SEED,
                                       0.95, c.why, sizeof c.why) == 0;
    return c;
}

static Cmp compare(const Row *rows, int n, int a, int b, const MetricCol *m) {
    double va[MAX_SEEDS], vb[MAX_SEEDS];
    int na = values(rows, n, a, m->off, va), nb = values(rows, n, b, m->off, vb);
    return test_pair(va, na, vb, nb);
}

/* A difference that is float noise of equal means prints as 0. */
static double clean(double d, const StatsWelch *w) {
    return fabs(d) <= 1e-12 * (fabs(w->mean_a) + fabs(w->mean_b)) ? 0.0 : d;
}

static int significant(const Cmp *c) { return c->tested && c->w.p < ALPHA && c->mw.p < ALPHA; }

void put_p(FILE *f, double p) {
    if (p < 1e-4) fputs("< 1e-4", f);
    else fprintf(f, "%.3g", p);
}

void put_p_rel(FILE *f, double p) {
    fputs(p < 1e-4 ? "" : "= ", f);
    put_p(f, p);
}

/* Groups compared: every group with a matching baseline other than itself. */
static int compared(const Row *rows, int a) { return rows[a].base >= 0 && rows[a].base != a; }

/* The cells of one comparison: seeds, difference, CI, both p, (with_q)
 * the BH q, and the verdict: q < ALPHA with q, else both p < ALPHA. */
static void stat_cells_q(FILE *f, const Cmp *c, int with_q, double q) {
    fprintf(f, " %d / %d | ", c->na, c->nb);
    if (!c->tested) {
        fputs(with_q ? "– | – | – | – | – |" : "– | – | – | – |", f);
        if (c->why[0]) fprintf(f, " untested: %s |", c->why);
        else fputs(" too few seeds (needs 2 per side) |", f);
        return;
    }
    fprintf(f, "%+.4g | [%+.4g, %+.4g] | ", clean(c->ci.diff, &c->w), clean(c->ci.lo, &c->w),
            clean(c->ci.hi, &c->w));
    put_p(f, c->w.p);
    fputs(" | ", f);
    put_p(f, c->mw.p);
    if (with_q) {
        fputs(" | ", f);
        if (isfinite(q)) put_p(f, q);
        else fputs("–", f);
    }
    int sig = with_q ? isfinite(q) && q < ALPHA : significant(c);
    fprintf(f, " | %s |",
            sig ? (c->ci.diff < 0 ? "lower (exploratory)" : "higher (exploratory)")
                : "no difference shown");
}

int md_stat_cells(FILE *f, const double *a, int na, const double *b, int nb) {
    Cmp c = test_pair(a, na, b, nb);
    stat_cells_q(f, &c, 0, NAN);
    return c.tested ? significant(&c) : -1;
}

/* See report_priv.h. */
int md_paired_cells(FILE *f, const double *x, const double *y, int n) {
    StatsPaired t;
    StatsWilcoxon w;
    char err[160];
    fprintf(f, " %d / %d | ", n, n);
    if (n < 2 || stats_paired_t(&t, x, y, n, err, sizeof err) != 0 ||
        stats_wilcoxon(&w, x, y, n, err, sizeof err) != 0) {
        fputs("– | – | – | – | too few pairs (needs 2) |", f);
        return -1;
    }
    fprintf(f, "%+.4g | [%+.4g, %+.4g] | ", t.mean_diff, t.lo, t.hi);
    put_p(f, t.p);
    fputs(" | ", f);
    put_p(f, w.p);
    const int sig = t.p < ALPHA && w.p < ALPHA;
    fprintf(f, " | %s |",
            sig ? (t.mean_diff < 0 ? "lower (exploratory)" : "higher (exploratory)")
                : "no difference shown");
    return sig;
}

/* Every comparison of the section, in table order, with BH q-values over
 * the tested ones (q of the larger of Welch's and Mann-Whitney's p). */
typedef struct {
    int a;
    const MetricCol *m;
    Cmp c;
    double q;
    int primary; /* the primary test's id P<primary>; 0: not primary */
} Entry;

int primary_test_id(const Protocol *pr, const char *arm, const char *ref, ProtoMetric m) {
    if (!pr) return 0;
    int id = 0;
    for (int j = 0; j < pr->n_claims; j++) {
        const ProtoClaim *cl = &pr->claims[j];
        if (cl->rel == PR_EQUIV) continue; /* equivalence tests are E ids */
        id++;
        if (cl->compare < 0 || cl->metric != m) continue;
        const ProtoCompare *pc = &pr->compares[cl->compare];
        if ((!strcmp(pc->arm, arm) && !strcmp(pc->ref, ref)) ||
            (!strcmp(pc->arm, ref) && !strcmp(pc->ref, arm)))
            return id;
    }
    return 0;
}

static int collect(const Row *rows, int n, const Protocol *pr, Entry **out) {
    int k = 0, cap = 16;
    Entry *e = malloc((size_t)cap * sizeof *e);
    const MetricCol *mc[MAX_COMPARED];
    const int nm = metric_compared(mc, MAX_COMPARED);
    for (int a = 0; e && a < n && rows[a].ok; a = group_end(rows, n, a)) {
        if (!compared(rows, a)) continue;
        for (int j = 0; j < nm; j++) {
            if (k == cap) {
                Entry *ne = realloc(e, (size_t)(cap *= 2) * sizeof *e);
                if (!ne) break;
                e = ne;
            }
            int id = primary_test_id(pr, rows[a].run, rows[rows[a].base].run,
                                     mc[j]->proto ? proto_metric_of(mc[j]->csv) : -1);
            e[k] = (Entry){a, mc[j], {0}, NAN, id};
            if (!id) e[k].c = compare(rows, n, a, rows[a].base, mc[j]);
            k++;
        }
    }
    if (!e) return -1;
    double *p = malloc((size_t)(k ? k : 1) * sizeof *p),
           *q = malloc((size_t)(k ? k : 1) * sizeof *q);
    for (int i = 0; p && q && i < k; i++)
        p[i] = e[i].c.tested ? fmax(e[i].c.w.p, e[i].c.mw.p) : NAN;
    if (p && q) adjust_family(q, p, k, 1);
    for (int i = 0; p && q && i < k; i++) e[i].q = q[i];
    free(p), free(q);
    *out = e;
    return k;
}

/* The prose: how many tests, then each with q < ALPHA, labelled exploratory. */
static void prose(FILE *f, const Row *rows, const Entry *e, int k) {
    int tested = 0, sig = 0, primary = 0;
    for (int i = 0; i < k; i++) {
        tested += e[i].c.tested, primary += e[i].primary > 0;
        sig += isfinite(e[i].q) && e[i].q < ALPHA;
    }
    fprintf(f,
            "These comparisons are **exploratory**: %d were tested, with Benjamini–Hochberg "
            "q-values across them (q of the larger of Welch's and the exact Mann–Whitney p); "
            "%d ha%s q < %.2f. They suggest where to look; the confirmatory tests, if this "
            "directory declared any, are the headline's.",
            tested, sig, sig == 1 ? "s" : "ve", ALPHA);
    if (primary)
        fprintf(f,
                " %d comparison%s of the table %s in the protocol's primary family: %s not "
                "tested again here (the row names the primary test).",
                primary, primary == 1 ? "" : "s", primary == 1 ? "is" : "are",
                primary == 1 ? "it is" : "they are");
    fputc('\n', f);
    for (int i = 0; i < k; i++) {
        if (!(isfinite(e[i].q) && e[i].q < ALPHA)) continue;
        const Row *g = &rows[e[i].a];
        fprintf(f, "- exploratory: `%s` %s `%s` on %s (data %s), difference %+.4g, BH q ", g->run,
                e[i].c.ci.diff < 0 ? e[i].m->lower : e[i].m->higher, rows[g->base].run,
                e[i].m->head, g->data, e[i].c.ci.diff);
        put_p_rel(f, e[i].q);
        fprintf(f, " (%d vs %d seeds).\n", e[i].c.na, e[i].c.nb);
    }
    int few = 0, fa = 0, fb = 0;
    for (int i = 0; i < k; i++) {
        if (!e[i].c.tested || stats_mw_min_p(e[i].c.na, e[i].c.nb) < ALPHA) continue;
        if (!few++) fa = e[i].c.na, fb = e[i].c.nb;
    }
    if (few)
        fprintf(f,
                "\n%d of the tested comparisons have too few seeds for the exact "
                "Mann–Whitney test ever to reach p < %.2f: its smallest p is 2 / C(n_a "
                "+ n_b, n_a), %.3g for %d + %d seeds (0.0079 for 5 + 5).\n",
                few, ALPHA, stats_mw_min_p(fa, fb), fa, fb);
}

void md_compare(FILE *f, const Row *rows, int n, const Protocol *pr) {
    Entry *e = NULL;
    const MetricCol *mc[MAX_COMPARED];
    const int nm = metric_compared(mc, MAX_COMPARED);
    int k = collect(rows, n, pr, &e);
    fprintf(f,
            "\n## Exploratory comparisons with the baseline\n\nEach run group against its "
            "matching baseline group (as for [ΔPPL](#def-dppl)) on %d metric%s, over seeds: the "
            "difference of means (group − baseline) with its 95%% bootstrap interval "
            "(%d resamples), Welch's t-test p, the exact Mann–Whitney p and the BH q-value "
            "(docs/statistics.md).\n\n",
            nm, nm == 1 ? "" : "s", STATS_BOOT_RESAMPLES);
    if (k <= 0) {
        fputs("No group has a matching baseline group: nothing to compare.\n", f);
        free(e);
        return;
    }
    prose(f, rows, e, k);
    fputs("\n| run | baseline | data | metric | seeds (run / base) | difference | 95% CI | "
          "Welch p | Mann–Whitney p | BH q | verdict (q < 0.05, exploratory) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|\n",
          f);
    for (int i = 0; i < k; i++) {
        const Row *g = &rows[e[i].a];
        fprintf(f, "| %s | %s | %s | [%s](#%s) |", g->run, rows[g->base].run, g->data, e[i].m->head,
                e[i].m->anchor);
        if (e[i].primary)
            fprintf(f, " – | – | – | – | – | – | primary: see P%d (not tested again) |",
                    e[i].primary);
        else stat_cells_q(f, &e[i].c, 1, e[i].q);
        fputc('\n', f);
    }
    free(e);
}
