/* quant_print.c: `gatelab eval --quant`'s text table (quant_print.h). */
#include "quant_print.h"

#include "fakequant.h"

/* See quant_print.h. */
void quant_print(FILE *f, const char *run, const ForwardInfo *info, const QuantEvalResult *r) {
    const int K = r->keep_first;
    fprintf(f,
            "%s  variant %s  length %d  %lld sequences  calibration %d batches  "
            "percentile " FQ_PERCENTILE_TEXT,
            run, info->variant, r->len, r->n_seqs, r->calib);
    if (K > 0) fprintf(f, "  held out: the first %d position%s", K, K == 1 ? "" : "s");
    fprintf(f, "\n%10s %9s %9s %9s", "mode", "val_loss", "ppl", "dloss");
    if (K > 0) fprintf(f, " %11s %11s", "dloss_keep", "sink_dloss");
    fprintf(f, " %9s\n%10s %9.4f %9.3f %9s\n", "destroyed", FQ_NAME_FLOAT, r->val_loss, r->ppl, "");
    for (int i = 0; i < r->n_modes; i++) {
        const QuantModeResult *m = &r->modes[i];
        fprintf(f, "%10s %9.4f %9.3f %+9.4f", fq_mode_name(m->mode), m->val_loss, m->ppl, m->dloss);
        if (K > 0) fprintf(f, " %+11.4f %+11.4f", m->dloss_keep, m->sink_dloss);
        fprintf(f, " %9s\n", m->destroyed ? "yes" : "no");
    }
    int destroyed = 0;
    for (int i = 0; i < r->n_modes; i++) destroyed |= r->modes[i].destroyed;
    if (destroyed)
        fprintf(f, "destroyed: perplexity above " FQ_DESTROYED_TEXT
                   "x the float one (its sink_dloss ranks nothing)\n");
    for (int i = 0; i < r->n_modes; i++)
        if (r->modes[i].source[0])
            fprintf(f,
                    "%s: largest damage from %s: in float alone it recovers %+.4f of dloss %+.4f "
                    "(%d input tensors tried)\n",
                    fq_mode_name(r->modes[i].mode), r->modes[i].source,
                    r->modes[i].source_recovered, r->modes[i].dloss, r->modes[i].n_tensors);
    fprintf(f,
            "float: max |attn out| %.4g  max |ffn out| %.4g  max |layer out| %.4g  "
            "max kurtosis %.4g\n",
            r->inf[FQ_OUT_ATTN], r->inf[FQ_OUT_FFN], r->inf[FQ_OUT_LAYER], r->kurt_max);
}
