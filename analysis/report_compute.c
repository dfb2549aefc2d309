/* report_compute.c: the "Compute" section of REPORT.md: the training FLOPs
 * of the runs (flops.h, the trainer's own count per token times the tokens
 * trained) beside the scales at which public work first sees each effect
 * (paper_tables.h effect_scale), with a generated sentence per effect. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "paper_tables.h"
#include "report_priv.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The finite FLOPs of the readable rows, sorted, into v; returns how many. */
static int run_flops(const Row *rows, int n, double *v) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].ok && isfinite(rows[i].flops)) v[k++] = rows[i].flops;
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    return k;
}

/* One reference scale against the largest run: the table row. */
static void scale_row(FILE *f, const EffectScale *s, double largest) {
    fprintf(f, "| %s | %s | %.2g | ", s->effect, s->setting, s->flops);
    if (largest >= s->flops) fputs("at or above it |\n", f);
    else fprintf(f, "%.2g× below |\n", s->flops / largest);
}

void md_compute(FILE *f, const Row *rows, int n) {
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    int k = v ? run_flops(rows, n, v) : 0;
    fputs("\n## Compute\n\n", f);
    if (k == 0) {
        fputs("No run's training FLOPs are known (no readable config or step count).\n", f);
        free(v);
        return;
    }
    double total = 0;
    for (int i = 0; i < k; i++) total += v[i];
    fprintf(f,
            "Training FLOPs per run ([definition](#def-train-flops)): %.3g to %.3g (median "
            "%.3g) over %d run%s, %.3g in all. Beside them, the compute at which public work "
            "first sees each effect (docs/paper-tables.md cites each source); an effect whose "
            "scale is above every run here is not expected to show, and its absence here says "
            "nothing about larger models.\n\n| effect | first seen at | FLOPs | our largest run "
            "|\n|---|---|---|---|\n",
            v[0], v[k - 1], k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2, k, k == 1 ? "" : "s",
            total);
    for (int i = 0; effect_scale(i); i++) scale_row(f, effect_scale(i), v[k - 1]);
    free(v);
}
