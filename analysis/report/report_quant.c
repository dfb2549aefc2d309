/* report_quant.c: the quantized-evaluation section of REPORT.md
 * (exploratory; only when some run has /quant, from `gatelab eval
 * --quant`): per run group, mean ± sample std over the seeds that have
 * them, each mode's val-loss increase over float (⚠ where a seed's mode
 * destroys the model), each mode's sink-attributable damage where
 * positions were held out, each mode's most frequent source of the
 * largest damage where --quant-source searched for one, and the float
 * pass's outlier statistics. The modes are fakequant.h's list.
 * Definitions: docs/metrics.md "Quantized evaluation". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakequant.h" /* fq_mode_name, FQ_PERCENTILE_TEXT */
#include "report_priv.h"

/* The section's value kinds: a mode's dloss or sink_dloss, or one of the
 * float pass's statistics (QS_*). */
enum { QV_DLOSS, QV_SINK, QV_STAT };
enum { QS_ATTN, QS_FFN, QS_LAYER, QS_KURT, QS_COUNT };

/* Row w's value of kind v at column c (a mode index, or QS_*); NaN: absent. */
static double qval(const Row *w, int v, int c) {
    if (v == QV_DLOSS) return w->q_dloss[c];
    if (v == QV_SINK) return w->q_sink[c];
    const double s[QS_COUNT] = {w->q_inf_attn, w->q_inf_ffn, w->q_inf_layer, w->q_kurt};
    return s[c];
}

/* One cell: the mean ± std of kind v, column c over rows [a, b) that have
 * it; a mode's cell is marked ⚠ when any of those rows' mode destroys the
 * model (Row.q_destroyed, results.csv's quant_<mode>_destroyed). */
static void qcell(FILE *f, const Row *rows, int a, int b, int v, int c, double *buf) {
    int k = 0, destroyed = 0;
    for (int i = a; i < b; i++) {
        if (!isfinite(qval(&rows[i], v, c))) continue;
        buf[k++] = qval(&rows[i], v, c);
        if (v != QV_STAT) destroyed |= rows[i].q_destroyed[c] == 1;
    }
    fputs(" | ", f);
    if (k == 0) fputs("—", f);
    else if (v == QV_STAT) put_mean(f, "%.3g", "%.2g", buf, k);
    else put_mean(f, "%+.4f", "%.4f", buf, k);
    if (destroyed) fputs(" ⚠", f);
}

/* A table's rows: one per run group with kind v (v = QV_SINK: rows with
 * positions held out), n_cols columns. */
static void qrows(FILE *f, const Row *rows, int n, int v, int n_cols, double *buf) {
    for (int a = 0; a < n;) {
        int b = group_end(rows, n, a), k = 0, keep = -1;
        for (int i = a; i < b; i++) {
            const Row *w = &rows[i];
            if (!w->ok || !isfinite(w->q_inf_layer) || (v == QV_SINK && w->q_keep <= 0)) continue;
            k++;
            keep = keep == -1 || keep == w->q_keep ? w->q_keep : -2;
        }
        if (k > 0) {
            fprintf(f, "| %s | %d", rows[a].run, k);
            if (v == QV_SINK && keep >= 0) fprintf(f, " | %d", keep);
            else if (v == QV_SINK) fputs(" | mixed", f);
            for (int c = 0; c < n_cols; c++) qcell(f, rows, a, b, v, c, buf);
            fputs(" |\n", f);
        }
        a = b;
    }
}

/* The source most often named for mode c over rows [a, b) (the first
 * seen of equals): its row in *best (-1: none), the rows naming any
 * source in *n_src, those naming it in *k, and their mean recovered loss
 * in *rec. */
static void top_source(const Row *rows, int a, int b, int c, int *best, int *n_src, int *k,
                       double *rec) {
    *best = -1, *n_src = *k = 0, *rec = NAN;
    for (int i = a; i < b; i++) {
        if (!rows[i].ok || !rows[i].q_source[c][0]) continue;
        int same = 0;
        double sum = 0;
        (*n_src)++;
        for (int j = i; j < b; j++)
            if (rows[j].ok && !strcmp(rows[j].q_source[c], rows[i].q_source[c]))
                same++, sum += rows[j].q_source_rec[c];
        if (same > *k) *best = i, *k = same, *rec = sum / same;
    }
}

/* The damage sources (eval --quant-source), when some row has one: per
 * run group and mode, the tensor most often the source, in how many of
 * the seeds that searched, and its mean recovered loss over those seeds. */
static void qsources(FILE *f, const Row *rows, int n) {
    int any = 0;
    for (int i = 0; i < n && !any; i++)
        for (int c = 0; c < Q_NMODES; c++) any |= rows[i].ok && rows[i].q_source[c][0];
    if (!any) return;
    fprintf(f, "\nSource of the largest damage (`--quant-source`): the input tensor whose "
               "sites alone in float recover the most loss, the one most seeds of the group name "
               "(in how many of the seeds searched), and the loss it recovers (ΔL minus ΔL with "
               "it in float), the mean over those seeds.\n\n"
               "| run | mode | source | seeds | recovered |\n|---|---|---|---|---|\n");
    for (int a = 0; a < n;) {
        int b = group_end(rows, n, a);
        for (int c = 0; c < Q_NMODES; c++) {
            int best, n_src, k;
            double rec;
            top_source(rows, a, b, c, &best, &n_src, &k, &rec);
            if (best >= 0)
                fprintf(f, "| %s | %s | %s | %d of %d | %+.4f |\n", rows[a].run,
                        fq_mode_name((FqMode)(c + 1)), rows[best].q_source[c], k, n_src, rec);
        }
        a = b;
    }
}

/* A header row naming every quantized mode after `lead`, and its rule. */
static void mode_header(FILE *f, const char *lead, const char *pre, int lead_cols) {
    fprintf(f, "| %s", lead);
    for (int c = 0; c < Q_NMODES; c++) fprintf(f, " | %s %s", pre, fq_mode_name((FqMode)(c + 1)));
    fputs(" |\n|", f);
    for (int c = 0; c < lead_cols + Q_NMODES; c++) fputs("---|", f);
    fputs("\n", f);
}

void md_quant(FILE *f, const Row *rows, int n) {
    int any = 0, keep = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].ok && isfinite(rows[i].q_inf_layer)) any = 1, keep |= rows[i].q_keep > 0;
    double *buf = any ? malloc((size_t)n * sizeof *buf) : NULL;
    if (!buf) return;
    fprintf(f, "\n## Quantized evaluation (exploratory)\n\n"
               "Val-loss increase over float (ΔL) in each mode of `gatelab eval --quant`: "
               "w8a8, w8a8-pct and w4a4 fake-quantize the linear layers' weights and inputs "
               "per tensor (min-max; the inputs at the " FQ_PERCENTILE_TEXT
               "th percentile; 4 bits), w8a8-tok each token's input on its own range, kv8 and "
               "kv4 only the KV cache (keys after RoPE and values, per token per head); LM "
               "head in float. ⚠: a seed's perplexity above " FQ_DESTROYED_TEXT
               "× the float one (the model is destroyed; its sink_dloss ranks nothing). Mean ± "
               "std over seeds (docs/metrics.md \"Quantized evaluation\"; results.csv "
               "`quant_*`). Not among the declared tests.\n\n");
    mode_header(f, "run | seeds", "ΔL", 2);
    qrows(f, rows, n, QV_DLOSS, Q_NMODES, buf);
    if (keep) {
        fprintf(f, "\nSink-attributable damage (sink_dloss): ΔL with every position quantized "
                   "minus ΔL with the first K positions of every window held out in float "
                   "(`--quant-keep-first K`).\n\n");
        mode_header(f, "run | seeds | K", "sink_dloss", 3);
        qrows(f, rows, n, QV_SINK, Q_NMODES, buf);
    }
    qsources(f, rows, n);
    fprintf(f, "\nThe float pass's largest |y| of an attention, FFN and layer output and "
               "largest layer-output kurtosis, per sequence.\n\n"
               "| run | seeds | max\\|attn\\| | max\\|FFN\\| | max\\|layer\\| | max kurtosis "
               "|\n|---|---|---|---|---|---|\n");
    qrows(f, rows, n, QV_STAT, QS_COUNT, buf);
    free(buf);
}
