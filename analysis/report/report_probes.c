/* report_probes.c: the section "Probe measures across seeds" of REPORT.md
 * (exploratory; only when some run has one of its measures). Its measures
 * are the metric table's rows with a seeds_order (metric_table.c: the key,
 * value and gradient ratios at position 0, the gate ratio, the near
 * attention mass, the W_V W_O rank, dormant heads, secondary and residual
 * sinks), read from the rows alone, so results.csv gives the section as the
 * run files do. Per run group: each measure's mean ± sample std over the
 * seeds that have it; per group with a matching baseline group (as for
 * ΔPPL): the difference of means with paired tests where the seeds pair,
 * else md_stat_cells' unpaired ones, labelled exploratory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report_priv.h"

/* At most this many measures (the table's rows with seeds_order). */
#define MAX_PROBE_COLS 16

/* The finite values of m over the readable rows [a, b) into v; how many. */
static int group_values(const Row *rows, int a, int b, const MetricCol *m, double *v) {
    int k = 0;
    for (int i = a; i < b; i++) {
        double x = rows[i].ok ? metric_value(&rows[i], m) : NAN;
        if (isfinite(x)) v[k++] = x;
    }
    return k;
}

/* Whether any readable row has a value of one of the measures mc[nm]. */
static int any_measure(const Row *rows, int n, const MetricCol *const *mc, int nm) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < nm && rows[i].ok; j++)
            if (isfinite(metric_value(&rows[i], mc[j]))) return 1;
    return 0;
}

/* m's name as a header cell: a link to its definition when it has one. */
static void put_head(FILE *f, const MetricCol *m) {
    char name[128];
    metric_name(m, name, sizeof name);
    if (m->anchor) fprintf(f, " [%s](#%s) |", name, m->anchor);
    else fprintf(f, " `%s` |", name);
}

/* One row per run group: seeds, then each measure's mean ± std over the
 * seeds that have it ("—": none; "(k)" after it when k < seeds). */
static void means_table(FILE *f, const Row *rows, int n, const MetricCol *const *mc, int nm,
                        double *buf) {
    fputs("| run | data | seeds |", f);
    for (int j = 0; j < nm; j++) put_head(f, mc[j]);
    fputs("\n|---|---|---|", f);
    for (int j = 0; j < nm; j++) fputs("---|", f);
    fputc('\n', f);
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a)) {
        int b = group_end(rows, n, a), seeds = 0;
        for (int i = a; i < b; i++) seeds += rows[i].ok;
        fprintf(f, "| %s | %s | %d |", rows[a].run, rows[a].data, seeds);
        for (int j = 0; j < nm; j++) {
            int k = group_values(rows, a, b, mc[j], buf);
            fputc(' ', f);
            if (k == 0) fputs("—", f);
            else put_mean(f, "%.4g", "%.2g", buf, k);
            if (k > 0 && k < seeds) fprintf(f, " (%d)", k);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
}

/* The seeds pair when every value of group [a, ae) has one of group
 * [b, be) at the same seed and the other way round: x[k], y[k] the k
 * pairs in seed order; 0 when they do not pair. */
static int paired_values(const Row *rows, int a, int ae, int b, int be, const MetricCol *m,
                         double *x, double *y) {
    int k = 0, nb = 0;
    for (int j = b; j < be; j++) nb += rows[j].ok && isfinite(metric_value(&rows[j], m));
    for (int i = a; i < ae; i++) {
        double v = rows[i].ok ? metric_value(&rows[i], m) : NAN;
        if (!isfinite(v)) continue;
        int hit = -1;
        for (int j = b; j < be && hit < 0; j++)
            if (rows[j].ok && rows[j].seed == rows[i].seed && isfinite(metric_value(&rows[j], m)))
                hit = j;
        if (hit < 0) return 0;
        x[k] = v, y[k++] = metric_value(&rows[hit], m);
    }
    return k == nb ? k : 0;
}

/* Every group with a matching baseline group other than itself against
 * it, one line per measure either side has: paired tests where the seeds
 * pair (md_paired_cells: the arms share each seed's data), else
 * md_stat_cells'. */
static void compare_table(FILE *f, const Row *rows, int n, const MetricCol *const *mc, int nm,
                          double *va, double *vb) {
    int any = 0;
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a)) {
        const int base = rows[a].base;
        if (base < 0 || base == a) continue;
        const int ae = group_end(rows, n, a), be = group_end(rows, n, base);
        for (int j = 0; j < nm; j++) {
            int na = group_values(rows, a, ae, mc[j], va);
            int nb = group_values(rows, base, be, mc[j], vb);
            if (na == 0 && nb == 0) continue;
            if (!any++)
                fputs("\n| run | baseline | data | measure | tests | seeds (run / base) | "
                      "difference | 95% CI | p (t) | p (rank) | verdict (both p < 0.05, "
                      "exploratory) |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
                      f);
            fprintf(f, "| %s | %s | %s |", rows[a].run, rows[base].run, rows[a].data);
            put_head(f, mc[j]);
            int k = paired_values(rows, a, ae, base, be, mc[j], va, vb);
            if (k >= 2) fputs(" paired t, Wilcoxon |", f), md_paired_cells(f, va, vb, k);
            else { /* paired_values wrote over the buffers */
                na = group_values(rows, a, ae, mc[j], va);
                nb = group_values(rows, base, be, mc[j], vb);
                fputs(" Welch, Mann–Whitney |", f), md_stat_cells(f, va, na, vb, nb);
            }
            fputc('\n', f);
        }
    }
    if (!any)
        fputs("\nNo group other than a baseline has a matching baseline group with these measures: "
              "nothing to compare.\n",
              f);
}

void md_probes(FILE *f, const Row *rows, int n) {
    const MetricCol *mc[MAX_PROBE_COLS];
    const int nm = metric_seeds_columns(mc, MAX_PROBE_COLS);
    if (n < 1 || !any_measure(rows, n, mc, nm)) return;
    double *buf = malloc(2 * (size_t)n * sizeof *buf);
    if (!buf) return;
    int trained = rows_trained(rows, n);
    fputs("\n## Probe measures across seeds (exploratory)\n\n"
          "The last probe's measures beyond position 0's share, per run group: the mean ± "
          "sample std over the seeds that store each (in parentheses how many, when fewer than the "
          "group's seeds; — when none). Definitions: `gatelab metrics` and docs/metrics.md "
          "(\"Head probes\", \"Beyond the first token\"); results.csv has each per run. ",
          f);
    if (trained)
        fputs("Each group against its matching baseline group (as for [ΔPPL](#def-dppl)): the "
              "difference (group − baseline): where the seeds pair (each seed of one group has "
              "the same seed in the other, so the arms share its data), the mean of the paired "
              "differences, its paired-t 95% interval, the paired t-test p and the exact "
              "Wilcoxon signed-rank p; else the difference of means, its 95% bootstrap interval, "
              "Welch's t-test p and the exact Mann–Whitney p (docs/statistics.md); no correction "
              "across the table. **Exploratory**: not among the declared tests, and no difference "
              "here "
              "is a claim.\n\n",
              f);
    else fputs("One row per checkpoint, none compared with another.\n\n", f);
    means_table(f, rows, n, mc, nm, buf);
    if (trained) compare_table(f, rows, n, mc, nm, buf, buf + n);
    free(buf);
}
