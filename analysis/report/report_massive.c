/* report_massive.c: "Massive activations by Sun et al.'s criterion", the
 * words beside M-Act: per run group, in how many seeds the peak layer's
 * top-1 |h| is massive by the criterion of massive.h (above 100 and at
 * least 1000 times the median |h|), with the peak top-1 |h| and its ratio
 * to the median (mean ± std over seeds). */
#include <math.h>
#include <stdio.h>

#include "massive.h"
#include "metrics.h"
#include "report_priv.h"

#define MAX_SEEDS 256

/* One group's sentence: rows a..b-1. */
static void group_line(FILE *f, const Row *rows, int a, int b) {
    double top[MAX_SEEDS], ratio[MAX_SEEDS];
    int nt = 0, nr = 0, known = 0, massive = 0;
    for (int i = a; i < b && i - a < MAX_SEEDS; i++) {
        if (rows[i].massive_sun < 0) continue;
        known++, massive += rows[i].massive_sun;
        if (isfinite(rows[i].top1_peak)) top[nt++] = rows[i].top1_peak;
        if (isfinite(rows[i].top1_peak_ratio)) ratio[nr++] = rows[i].top1_peak_ratio;
    }
    if (!known) return;
    fprintf(f, "- `%s` (%s): massive by Sun et al.'s criterion in %d of %d seed%s (peak top-1 |h| ",
            rows[a].run, rows[a].data, massive, known, known == 1 ? "" : "s");
    if (nt) put_mean(f, "%.4g", "%.3g", top, nt);
    else fputs("–", f);
    fputs(", top-1/median ", f);
    if (nr) put_mean(f, "%.4g", "%.3g", ratio, nr);
    else fputs("–", f);
    fputs(").\n", f);
}

void md_massive(FILE *f, const Row *rows, int n) {
    int any = 0;
    for (int i = 0; i < n && !any; i++) any = rows[i].ok && rows[i].massive_sun >= 0;
    if (!any) return;
    fprintf(
        f,
        "\n## Massive activations by Sun et al.'s criterion\n\nM-Act is a magnitude, not a "
        "verdict. Sun et al. (2024) call an activation massive when its magnitude is above "
        "%g and about %g times the median magnitude of its hidden state; here the criterion "
        "is applied to the last probe's peak layer (the block output with the largest top-1 "
        "|h|): massive when its top-1 |h| is above both %g and %g times the median |h|, the cut "
        "the massive-activation interventions use (docs/metrics.md).\n\n",
        MACT_ABS_MIN, MACT_MEDIAN_RATIO, MACT_ABS_MIN, MACT_MEDIAN_RATIO);
    for (int a = 0; a < n && rows[a].ok; a = group_end(rows, n, a))
        group_line(f, rows, a, group_end(rows, n, a));
}
