/* report_compare.c: the "Comparisons with the baseline" section of
 * REPORT.md. Every group that has a matching baseline group (report_rows.c
 * fill_dppl) is compared with it on val_loss, F-Attn and M-Act over seeds:
 * Welch's t-test, the exact Mann-Whitney test and a 95% percentile
 * bootstrap interval for the difference of means (analysis/stats.h). The
 * prose is generated from these numbers: a group "beats" or "differs from"
 * its baseline only when both p-values are below 0.05, and the number of
 * comparisons is stated beside it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_priv.h"
#include "stats.h"

#define ALPHA 0.05
#define MAX_SEEDS 256

typedef struct {
    const char *name;   /* as in the tables */
    const char *anchor; /* its definition */
    size_t off;         /* the double in Row */
    const char *fmt;
    const char *lower; /* what a significantly lower value means */
    const char *higher;
} Metric;

static const Metric METRICS[] = {
    {"val_loss", "def-val-loss", offsetof(Row, val_loss), "%.4f", "beats", "is worse than"},
    {"F-Attn", "def-fattn", offsetof(Row, f_attn), "%.4f", "has a weaker first-token sink than",
     "has a stronger first-token sink than"},
    {"M-Act", "def-mact", offsetof(Row, m_act), "%.4g", "has smaller massive activations than",
     "has larger massive activations than"},
};
#define N_METRICS (sizeof METRICS / sizeof METRICS[0])

/* One comparison's numbers. */
typedef struct {
    int na, nb, tested; /* tested: both tests ran (>= 2 seeds each side) */
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
 * values a side. */
static Cmp test_pair(const double *a, int na, const double *b, int nb) {
    char err[256];
    Cmp c = {0};
    c.na = na, c.nb = nb;
    if (na < 2 || nb < 2) return c;
    c.tested = stats_welch(&c.w, a, na, b, nb, err, sizeof err) == 0 &&
               stats_mann_whitney(&c.mw, a, na, b, nb, err, sizeof err) == 0 &&
               stats_bootstrap_diff_ci(&c.ci, a, na, b, nb, STATS_BOOT_RESAMPLES, STATS_BOOT_SEED,
                                       0.95, err, sizeof err) == 0;
    return c;
}

static Cmp compare(const Row *rows, int n, int a, int b, const Metric *m) {
    double va[MAX_SEEDS], vb[MAX_SEEDS];
    int na = values(rows, n, a, m->off, va), nb = values(rows, n, b, m->off, vb);
    return test_pair(va, na, vb, nb);
}

/* A difference that is float noise of equal means prints as 0. */
static double clean(double d, const StatsWelch *w) {
    return fabs(d) <= 1e-12 * (fabs(w->mean_a) + fabs(w->mean_b)) ? 0.0 : d;
}

static int significant(const Cmp *c) { return c->tested && c->w.p < ALPHA && c->mw.p < ALPHA; }

/* The smallest two-sided exact Mann-Whitney p with na and nb seeds:
 * 2 / C(na + nb, na) (one side entirely below the other). */
static double mw_floor(int na, int nb) {
    double c = 1.0;
    for (int i = 1; i <= na; i++) c = c * (nb + i) / i;
    return 2.0 / c < 1.0 ? 2.0 / c : 1.0;
}

void put_p(FILE *f, double p) {
    if (p < 1e-4) fputs("< 1e-4", f);
    else fprintf(f, "%.3g", p);
}

void put_p_rel(FILE *f, double p) {
    fputs(p < 1e-4 ? "" : "= ", f);
    put_p(f, p);
}

/* "NAME p = 0.0123" or "NAME p < 1e-4". */
static void put_p_eq(FILE *f, const char *name, double p) {
    fprintf(f, "%s p ", name);
    put_p_rel(f, p);
}

/* Groups compared: every group with a matching baseline other than itself. */
static int compared(const Row *rows, int a) { return rows[a].base >= 0 && rows[a].base != a; }

/* The cells of one comparison: seeds, difference, CI, both p, verdict. */
static void stat_cells(FILE *f, const Cmp *c) {
    fprintf(f, " %d / %d | ", c->na, c->nb);
    if (!c->tested) {
        fputs("– | – | – | – | too few seeds (needs 2 per side) |", f);
        return;
    }
    fprintf(f, "%+.4g | [%+.4g, %+.4g] | ", clean(c->ci.diff, &c->w), clean(c->ci.lo, &c->w),
            clean(c->ci.hi, &c->w));
    put_p(f, c->w.p);
    fputs(" | ", f);
    put_p(f, c->mw.p);
    fprintf(f, " | %s |",
            significant(c) ? (c->ci.diff < 0 ? "**lower**" : "**higher**")
                           : "no significant difference");
}

int md_stat_cells(FILE *f, const double *a, int na, const double *b, int nb) {
    Cmp c = test_pair(a, na, b, nb);
    stat_cells(f, &c);
    return c.tested ? significant(&c) : -1;
}

static void table_row(FILE *f, const Row *rows, int a, const Metric *m, const Cmp *c) {
    const Row *g = &rows[a], *b = &rows[g->base];
    fprintf(f, "| %s | %s | %s | [%s](#%s) |", g->run, b->run, g->data, m->name, m->anchor);
    stat_cells(f, c);
    fputc('\n', f);
}

/* The prose: the count of comparisons, then each significant one. */
static void prose(FILE *f, const Row *rows, int n, int ntested, int nsig) {
    fprintf(f,
            "%d comparison%s of a run group with its baseline were tested (two-sided, "
            "α = %.2f, no correction for multiple comparisons: by chance alone about "
            "%.1f of them would reach p < %.2f; the Bonferroni threshold for %d "
            "comparisons is %.2g). A group **beats** or **differs from** its baseline "
            "only when both Welch's and the exact Mann–Whitney p are below %.2f; "
            "%d comparison%s do%s.\n\n",
            ntested, ntested == 1 ? "" : "s", ALPHA, ALPHA * ntested, ALPHA, ntested,
            ntested ? ALPHA / ntested : ALPHA, ALPHA, nsig, nsig == 1 ? "" : "s",
            nsig == 1 ? "es" : "");
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a)) {
        if (!compared(rows, a)) continue;
        for (size_t k = 0; k < N_METRICS; k++) {
            Cmp c = compare(rows, n, a, rows[a].base, &METRICS[k]);
            if (!significant(&c)) continue;
            fprintf(f,
                    "- `%s` %s `%s` on %s (data %s): difference %+.4g, 95%% CI "
                    "[%+.4g, %+.4g], ",
                    rows[a].run, c.ci.diff < 0 ? METRICS[k].lower : METRICS[k].higher,
                    rows[rows[a].base].run, METRICS[k].name, rows[a].data, c.ci.diff, c.ci.lo,
                    c.ci.hi);
            put_p_eq(f, "Welch", c.w.p);
            fputs(", ", f);
            put_p_eq(f, "Mann–Whitney", c.mw.p);
            fprintf(f, " (%d vs %d seeds)%s.\n", c.na, c.nb,
                    c.w.p < ALPHA / ntested && c.mw.p < ALPHA / ntested
                        ? "; also below the Bonferroni threshold"
                        : "");
        }
    }
    if (nsig < ntested)
        fprintf(f,
                "%s%s%d %scomparison%s show%s no significant difference at p < %.2f "
                "(table below): the data do not say these groups differ from their "
                "baseline.",
                nsig ? "\n" : "", nsig ? "" : "All ", ntested - nsig, nsig ? "other " : "",
                ntested - nsig == 1 ? "" : "s", ntested - nsig == 1 ? "s" : "", ALPHA);
    int few = 0, fa = 0, fb = 0;
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a))
        for (size_t k = 0; compared(rows, a) && k < N_METRICS; k++) {
            Cmp c = compare(rows, n, a, rows[a].base, &METRICS[k]);
            if (!c.tested || mw_floor(c.na, c.nb) < ALPHA) continue;
            if (!few++) fa = c.na, fb = c.nb;
        }
    if (few)
        fprintf(f,
                " %d of the tested comparisons have too few seeds for the exact "
                "Mann–Whitney test ever to reach p < %.2f: its smallest p is 2 / C(n_a "
                "+ n_b, n_a), %.3g for %d + %d seeds (0.0079 for 5 + 5).",
                few, ALPHA, mw_floor(fa, fb), fa, fb);
    if (nsig < ntested || few) fputc('\n', f);
}

void md_compare(FILE *f, const Row *rows, int n) {
    int ntested = 0, nsig = 0, npairs = 0;
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a)) {
        if (!compared(rows, a)) continue;
        for (size_t k = 0; k < N_METRICS; k++) {
            Cmp c = compare(rows, n, a, rows[a].base, &METRICS[k]);
            npairs++;
            ntested += c.tested;
            nsig += significant(&c);
        }
    }
    fprintf(f,
            "\n## Comparisons with the baseline\n\nEach run group against its matching "
            "baseline group (as for [ΔPPL](#def-dppl)) on %d metric%s, over seeds: the "
            "difference of means (group − baseline) with its 95%% bootstrap interval "
            "(%d resamples), Welch's t-test p and the exact Mann–Whitney p "
            "(docs/statistics.md).\n\n",
            (int)N_METRICS, N_METRICS == 1 ? "" : "s", STATS_BOOT_RESAMPLES);
    if (!npairs) {
        fputs("No group has a matching baseline group: nothing to compare.\n", f);
        return;
    }
    prose(f, rows, n, ntested, nsig);
    fputs("\n| run | baseline | data | metric | seeds (run / base) | difference | 95% CI | "
          "Welch p | Mann–Whitney p | verdict (both p < 0.05) |\n"
          "|---|---|---|---|---|---|---|---|---|---|\n",
          f);
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a)) {
        if (!compared(rows, a)) continue;
        for (size_t k = 0; k < N_METRICS; k++) {
            Cmp c = compare(rows, n, a, rows[a].base, &METRICS[k]);
            table_row(f, rows, a, &METRICS[k], &c);
        }
    }
}
