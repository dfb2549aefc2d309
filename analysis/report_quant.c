/* report_quant.c: the quantized-evaluation section of REPORT.md
 * (exploratory; only when some run has /quant, from `gatelab eval
 * --quant`): per run group, each mode's val-loss increase over float and
 * the float pass's outlier statistics, mean ± sample std over the seeds
 * that have them. Definitions: docs/metrics.md "Quantized evaluation". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fakequant.h" /* FQ_PERCENTILE_TEXT */
#include "report_priv.h"

#define QCOLS 7

/* Row w's column c of the section (NaN: absent). */
static double qcol(const Row *w, int c) {
    const double v[QCOLS] = {w->q_dloss[0], w->q_dloss[1],  w->q_dloss[2], w->q_inf_attn,
                             w->q_inf_ffn,  w->q_inf_layer, w->q_kurt};
    return v[c];
}

/* One cell: the mean ± std of column c over rows [a, b) that have it. */
static void qcell(FILE *f, const Row *rows, int a, int b, int c, double *buf) {
    int k = 0;
    for (int i = a; i < b; i++)
        if (isfinite(qcol(&rows[i], c))) buf[k++] = qcol(&rows[i], c);
    fputs(" | ", f);
    if (k == 0) fputs("—", f);
    else put_mean(f, c < 3 ? "%+.4f" : "%.3g", c < 3 ? "%.4f" : "%.2g", buf, k);
}

void md_quant(FILE *f, const Row *rows, int n) {
    int any = 0;
    for (int i = 0; i < n && !any; i++) any = rows[i].ok && isfinite(rows[i].q_inf_layer);
    double *buf = any ? malloc((size_t)n * sizeof *buf) : NULL;
    if (!buf) return;
    fprintf(f, "\n## Quantized evaluation (exploratory)\n\n"
               "Val-loss increase over float with the linear layers' weights and inputs "
               "fake-quantized (W8A8 min-max, W8A8 with inputs at the " FQ_PERCENTILE_TEXT
               "th percentile, W4A4; LM head in float), and the float pass's largest |y| of "
               "an attention, FFN and layer output and largest layer-output kurtosis, per "
               "sequence; mean ± std over seeds (docs/metrics.md \"Quantized evaluation\"; "
               "results.csv `quant_*`). Not among the declared tests.\n\n"
               "| run | seeds | ΔL W8A8 | ΔL W8A8-pct | ΔL W4A4 | max\\|attn\\| | max\\|FFN\\| | "
               "max\\|layer\\| | max kurtosis |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int a = 0; a < n;) {
        int b = group_end(rows, n, a), k = 0;
        for (int i = a; i < b; i++) k += rows[i].ok && isfinite(rows[i].q_inf_layer);
        if (k > 0) {
            fprintf(f, "| %s | %d", rows[a].run, k);
            for (int c = 0; c < QCOLS; c++) qcell(f, rows, a, b, c, buf);
            fputs(" |\n", f);
        }
        a = b;
    }
    free(buf);
}
