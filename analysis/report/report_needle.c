/* report_needle.c: the needle retrieval section of REPORT.md, from the
 * rows' needle_acc_* and needle_rows columns (so results.csv alone gives
 * it): per run name and RoPE mode the exact-match share at each multiple
 * of the training length, mean ± std over seeds, and whether the run name
 * retrieves above chance there. When none does, the comparison of arms is
 * "untestable here": their accuracies would set chance against chance. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "confirm_tests.h" /* CONFIRM_ALPHA */
#include "metrics.h"       /* needle_chance, NEEDLE_VAL_LEN */
#include "report_priv.h"
#include "stats.h"

static const char *const MODE_NAME[2] = {"plain", "YaRN"};

int needle_above_chance(const Row *rows, int a, int b, int m, int k, long long *hits,
                        long long *total) {
    *hits = *total = 0;
    for (int i = a; i < b; i++) {
        double acc = rows[i].needle[m][k];
        if (!isfinite(acc) || rows[i].needle_rows <= 0) continue;
        *hits += llround(acc * rows[i].needle_rows);
        *total += rows[i].needle_rows;
    }
    if (*total == 0) return -1;
    return stats_binom_upper(*hits, *total, needle_chance()) < CONFIRM_ALPHA;
}

/* Whether a row of rows[a..b) has a needle share under mode m. */
static int group_has(const Row *rows, int a, int b, int m) {
    for (int i = a; i < b; i++)
        for (int k = 0; k < LC_NMULT; k++)
            if (isfinite(rows[i].needle[m][k])) return 1;
    return 0;
}

/* The best pooled share seen so far (for the untestable line). */
typedef struct {
    long long hits, total;
    int row, m, k;
} Best;

/* One cell: the share at LC_MULT[k], mean ± std over the seeds that
 * have it, "[j/n]" when only j of the n seeds do. */
static void needle_cell(FILE *f, const Row *rows, int a, int b, int m, int k) {
    double v[256];
    int j = 0;
    for (int i = a; i < b && j < 256; i++)
        if (isfinite(rows[i].needle[m][k])) v[j++] = rows[i].needle[m][k];
    if (!j) {
        fprintf(f, " — |");
        return;
    }
    put_mean(f, " %.3f", "%.3f", v, j);
    if (j < b - a) fprintf(f, " [%d/%d]", j, b - a);
    fprintf(f, " |");
}

/* The table row of run name rows[a..b) under mode m; returns how many
 * multiples it retrieves above chance at, and keeps the best share. */
static int needle_row(FILE *f, const Row *rows, int a, int b, int m, Best *best) {
    fprintf(f, "| %s | %s | %s | %s | %d |", rows[a].run, rows[a].variant, rows[a].data,
            MODE_NAME[m], b - a);
    for (int k = 0; k < LC_NMULT; k++) needle_cell(f, rows, a, b, m, k);
    int above = 0, known = 0;
    for (int k = 0; k < LC_NMULT; k++) {
        long long hits, total;
        int r = needle_above_chance(rows, a, b, m, k, &hits, &total);
        known |= r >= 0;
        if (r > 0) fprintf(f, "%s%d×", above++ ? ", " : " ", LC_MULT[k]);
        if (total > 0 && (best->total == 0 || hits * best->total > best->hits * total))
            *best = (Best){hits, total, a, m, k};
    }
    fprintf(f, "%s |\n", above ? "" : known ? " none" : " — (rows not recorded)");
    return above;
}

static void needle_verdict(FILE *f, const Row *rows, int n_above, const Best *best) {
    if (n_above) {
        fprintf(f, "\nA comparison of arms' retrieval is testable only at a length and mode where "
                   "some arm retrieves above chance (the last column); elsewhere it is untestable "
                   "here.\n");
        return;
    }
    fprintf(f,
            "\n**Retrieval: untestable here.** No arm retrieves above chance at any length or "
            "mode: guessing the %d-digit value matches with probability %g, and no run name's "
            "retrieved rows, pooled over its seeds and depths, reject that rate (one-sided exact "
            "binomial test, p < %g",
            NEEDLE_VAL_LEN, needle_chance(), CONFIRM_ALPHA);
    if (best->hits > 0)
        fprintf(f, "; the most: %s, %s at %d×, %lld of %lld rows", rows[best->row].run,
                MODE_NAME[best->m], LC_MULT[best->k], best->hits, best->total);
    else if (best->total > 0) fprintf(f, "; not one row retrieved");
    fprintf(f, "). Comparing the arms' needle accuracies would set chance against chance, so no "
               "retrieval comparison is made: the models have not learned the task (a run "
               "trained with needle_share = 0 never sees a needle).\n");
}

void md_needle(FILE *f, const Row *rows, int n) {
    int any = 0;
    for (int i = 0; i < n && !any; i++)
        any = rows[i].ok && (group_has(rows, i, i + 1, 0) || group_has(rows, i, i + 1, 1));
    if (!any) return;
    fprintf(f,
            "\n## Needle retrieval\n\nRULER's small analogue (gatelab eval --needle; "
            "docs/metrics.md): the share of needle rows whose %d-digit value the model "
            "reproduces exactly, over every depth, at each multiple of the training length T; "
            "mean ± std over seeds ([j/n]: only j of n seeds evaluated there). Above chance: the "
            "multiples where the run name's retrieved rows, pooled over seeds and depths, reject "
            "the chance rate %g (one-sided exact binomial test, p < %g).\n\n"
            "| run | variant | data | RoPE | seeds |",
            NEEDLE_VAL_LEN, needle_chance(), CONFIRM_ALPHA);
    for (int k = 0; k < LC_NMULT; k++) fprintf(f, " %d× T |", LC_MULT[k]);
    fprintf(f, " above chance at |\n|---|---|---|---|---|");
    for (int k = 0; k <= LC_NMULT; k++) fprintf(f, "---|");
    fprintf(f, "\n");
    Best best = {0, 0, 0, 0, 0};
    int n_above = 0;
    for (int a = 0; a < n && rows[a].ok;) {
        int b = group_end(rows, n, a);
        for (int m = 0; m < 2; m++)
            if (group_has(rows, a, b, m)) n_above += needle_row(f, rows, a, b, m, &best) > 0;
        a = b;
    }
    needle_verdict(f, rows, n_above, &best);
}
