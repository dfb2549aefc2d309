/* metric_table.c: the per-run metrics of the report (metric_table.h),
 * in results.csv's column order. */
#include "metric_table.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h" /* SINK_EPS, SINK_EPS_LOW, SINK_EPS_MID */
#include "report_priv.h"
#include "runschema.h" /* RS_GATE_SPARSE */

#define OFF(f) offsetof(Row, f)
/* a metric results.csv has and REPORT.md's tables do not */
#define CSV_ONLY(name, thr, kind, src, field)                                                      \
    { name, thr, kind, src, OFF(field), 0, 0, NULL, NULL, NULL, NULL, 0, 0 }
/* the same, for a metric a protocol may declare as ProtoMetric pm */
#define CSV_ONLY_PROTO(name, kind, field, pm)                                                      \
    { name, NAN, kind, MS_OTHER, OFF(field), 0, 0, NULL, NULL, NULL, NULL, 0, (pm) + 1 }

/* long-context degradation [mode][k] at LC_MULT[k] times the training length */
#define LC_DEF                                                                                     \
    "Long-context degradation (gatelab eval): val loss at the column's multiple of the training "  \
    "length minus val loss at the training length, both plain RoPE (`plain`) or both YaRN "        \
    "(`yarn`); blank when the run was not evaluated at both lengths."
#define LC_DEG(name, mode, k, pm)                                                                  \
    {                                                                                              \
        name, NAN, MK_REAL, MS_OTHER, OFF(lc_deg[mode][k]), 0, 0, NULL, NULL, NULL, LC_DEF, 0,     \
            (pm) + 1                                                                               \
    }
/* the same, with a definition (`gatelab metrics`) */
#define CSV_DEF(name, field, def)                                                                  \
    { name, NAN, MK_REAL, MS_OTHER, OFF(field), 0, 0, NULL, NULL, NULL, def, 0, 0 }
/* the same, declarable in a protocol as ProtoMetric pm */
#define CSV_DEF_PROTO(name, field, pm, def)                                                        \
    { name, NAN, MK_REAL, MS_OTHER, OFF(field), 0, 0, NULL, NULL, NULL, def, 0, (pm) + 1 }

/* needle retrieval [m][k] at LC_MULT[k] times the training length (an X
 * of LC_MODE_MULTS) */
#define NEEDLE_DEF                                                                                 \
    "Needle retrieval (gatelab eval --needle; docs/metrics.md): the share of needle rows whose "   \
    "value the model reproduces exactly, over every depth, at the column's multiple of the "       \
    "training length, plain RoPE (`plain`) or YaRN (`yarn`; blank where YaRN keeps no rotary "     \
    "pair); blank when the run was not evaluated with the needle there."
#define NEEDLE_ACC(k, mult, mode, m)                                                               \
    CSV_DEF("needle_acc_" #mult "x_" #mode, needle[m][k], NEEDLE_DEF),

/* the long-context section's per-run numbers [m][k] at LC_MULT[k] times
 * the training length (report_longctx.c draws from these; an X of
 * LC_MODE_MULTS) */
#define LC_LOSS_DEF                                                                                \
    "Val loss (gatelab eval, /lceval) at the column's multiple of the training length "            \
    "`lc_train_len`, plain RoPE (`plain`) or YaRN (`yarn`); blank when the run was not "           \
    "evaluated there."
#define LC_LOSS(k, mult, mode, m) CSV_DEF("lc_loss_" #mult "x_" #mode, lc_loss[m][k], LC_LOSS_DEF),
#define LC_NEEDLE_DEF                                                                              \
    "Needle retrieval at one depth (gatelab eval --needle): the exact-match share of the needle "  \
    "rows with the needle at the depth the column's name ends in, at the column's multiple of "    \
    "the training length, plain RoPE or YaRN, as the run file stores it (also under a YaRN that "  \
    "keeps no rotary pair); blank when not evaluated there."
#define LC_NEEDLE_AT(d, depth, k, mult, mode, m)                                                   \
    {"needle_acc_" #mult "x_" #mode "_depth%g",                                                    \
     depth,                                                                                        \
     MK_REAL,                                                                                      \
     MS_OTHER,                                                                                     \
     OFF(lc_needle[m][k][d]),                                                                      \
     0,                                                                                            \
     0,                                                                                            \
     NULL,                                                                                         \
     NULL,                                                                                         \
     NULL,                                                                                         \
     LC_NEEDLE_DEF,                                                                                \
     0,                                                                                            \
     0},
/* one needle column per depth of LC_DEPTHS at mult x T under mode (an X
 * of LC_MODE_MULTS) */
#define LC_NEEDLE(k, mult, mode, m) LC_DEPTHS(LC_NEEDLE_AT, k, mult, mode, m)

static const MetricCol METRICS[] = {
    CSV_ONLY("n_params", NAN, MK_LL, MS_OTHER, n_params),
    CSV_ONLY("n_params_added", NAN, MK_LL, MS_OTHER, n_params_added),
    CSV_ONLY("steps", NAN, MK_WHOLE, MS_OTHER, steps),
    {"val_loss", NAN, MK_REAL, MS_OTHER, OFF(val_loss), 1, 1, "val_loss", "def-val-loss", "%.4f",
     "Validation loss (nats/token) at the last eval: `final_val_loss` in /summary, else the last "
     "/metrics/eval/val_loss.",
     0, PM_VAL_LOSS + 1},
    {"ppl", NAN, MK_REAL, MS_OTHER, OFF(ppl), 1, 2, "PPL", "def-ppl", "%.3f",
     "`ppl = exp(val_loss)`.", 0, 0},
    {"bpb", NAN, MK_REAL, MS_OTHER, OFF(bpb), 1, 4, "bpb", "def-bpb", "%.4f",
     "Bits per byte at the last eval (`val_bpb`), for byte data.", 0, 0},
    {"dppl_vs_baseline", NAN, MK_REAL, MS_OTHER, OFF(dppl), 1, 3, "ΔPPL", "def-dppl", "%+.3f",
     "PPL minus the mean PPL (over seeds) of the matching baseline group: variant `baseline`, same "
     "data, seq_len, lr, steps and architecture (pos, window, window_layers, norm_place) "
     "(preferring `baseline-<suffix>` for a run named "
     "`<variant>-<suffix>`, else `baseline`); the Runs table names it. Blank when no baseline "
     "matches; negative is better.",
     0, 0},
    {"f_attn", NAN, MK_REAL, MS_OTHER, OFF(f_attn), 1, 5, "F-Attn", "def-fattn", "%.4f",
     "First-token share: `mean over layers l, heads h, probe sequences, queries t = 1..T-1 of A[t, "
     "0]`, at the last probe, probe length T as in the header. Not Gu et al.'s alpha_0 (the run "
     "file's `alpha0` dataset), which averages queries t ≥ 0 and so includes the self term A[0, 0] "
     "= 1; see [sink@{sink}](#def-sink).",
     0, PM_F_ATTN + 1},
    {"f_attn_uniform", NAN, MK_REAL, MS_OTHER, OFF(f_attn_uniform), 1, 6, "uniform", "def-uniform",
     "%.4f",
     "What uniform causal attention would give for F-Attn: `(H_T - 1)/(T - 1)`, H_T the T-th "
     "harmonic number (about 0.059, 0.020 and 0.0064 for T = 64, 256, 1024); under a sliding "
     "window W, the mean over layers of each layer's `(H_W - 1)/(T - 1)` (docs/metrics.md).",
     0, 0},
    {"sink_rate_%g", SINK_EPS, MK_REAL, MS_SINK_RATE, OFF(sink03), 1, 7, "sink@%g", "def-sink",
     "%.3f",
     "Sink rate (Gu et al.): `alpha_0[l,h] = mean over queries t ≥ 0 of A[t, 0]` over the first 64 "
     "queries of each probe sequence (all T when the probe is shorter: Settings); `sink_rate(ε) = "
     "fraction of (l, h) pairs "
     "with alpha_0 > ε`, ε the threshold in the column's name (Settings), the indicator taken per "
     "probe sequence then averaged over sequences.",
     0, 0},
    {"gate_mean", NAN, MK_REAL, MS_OTHER, OFF(gate_mean), 1, 8, "gate mean", "def-gate-mean",
     "%.3f",
     "`gate_mean`: mean of every gate score on the probe set, over all layers, positions and "
     "channels (blank: no gate).",
     0, 0},
    {"gate_frac_below_%g", RS_GATE_SPARSE, MK_REAL, MS_GATE_BELOW, OFF(gate_below01), 1, 9,
     "gate<%g", "def-gate-below", "%.3f",
     "Fraction of gate scores strictly below %g on the probe set (sparsity). n/a for an unbounded "
     "gate (additive, SiLU): its act(XW) values are not scores in [0, 1], so a value below %g is "
     "not a closed gate.",
     1, 0},
    {"m_act", NAN, MK_REAL, MS_OTHER, OFF(m_act), 1, 10, "M-Act", "def-mact", "%.4g",
     "`max_act[l] = max |h| over tokens × features` of block l's output (the residual stream), "
     "averaged over probe sequences; M-Act is the mean over layers.",
     0, PM_M_ACT + 1},
    {"spikes", NAN, MK_WHOLE, MS_OTHER, OFF(spikes), 1, 11, "spikes", "def-spikes", "%.1f",
     "Loss spikes: steps after warmup whose training loss exceeds spike_factor (1.25) × the median "
     "of the previous 50 steps' losses, from /metrics/train.",
     0, 0},
    {"tokens_per_sec", NAN, MK_REAL, MS_OTHER, OFF(tokens_per_sec), 1, 12, "tokens/s", "def-tps",
     "%.0f", "Training throughput, `tokens_per_sec` in /summary.", 0, 0},
    CSV_ONLY("diverged_step", NAN, MK_LL, MS_OTHER, diverged_step),
    {"dppl_pct_vs_baseline", NAN, MK_REAL, MS_OTHER, OFF(dppl_rel), 2, 1, "ΔPPL %", "def-dppl-rel",
     "%+.2f",
     "Relative change of PPL against the matching baseline group (as for [ΔPPL](#def-dppl)): `100 "
     "× (PPL / mean baseline PPL - 1)`. Unlike PPL itself this can be set beside the paper's BPE "
     "numbers.",
     0, 0},
    {"sink_rate_%g", SINK_EPS_LOW, MK_REAL, MS_SINK_RATE, OFF(sink01), 2, 2, "sink@%g",
     "def-sink01", "%.3f", "Sink rate at ε = %g (as [sink@{sink}](#def-sink)).", 0, 0},
    {"sink_rate_%g", SINK_EPS_MID, MK_REAL, MS_SINK_RATE, OFF(sink02), 2, 3, "sink@%g",
     "def-sink02", "%.3f", "Sink rate at ε = %g.", 0, 0},
    {"slot_share", NAN, MK_REAL, MS_OTHER, OFF(slot), 2, 6, "slot", "def-slot", "%.4f",
     "The sink slot's own share (sink-token, sink-logit, kv-bias): `mean over layers, heads and "
     "queries t = 0..T-1` of the weight a query gives the slot (`attention_slot`). Blank: no slot.",
     0, 0},
    {"empty_share", NAN, MK_REAL, MS_OTHER, OFF(empty), 2, 4, "empty rows", "def-empty", "%.3f",
     "Share of attention rows (probe sequence × query t = 1..T-1, over layers and heads) with no "
     "mass on the real tokens: softpick and clipped softmax can zero a whole row. From the probe's "
     "`row_empty`; run files written before it: 0 with a sink slot, else `1 - mean row mass` of "
     "the sequence-mean map, exact for softpick's proxy map, the dropped mass otherwise. Softmax "
     "and sink slots: 0.",
     0, 0},
    {"f_attn_nonempty", NAN, MK_REAL, MS_OTHER, OFF(f_attn_ne), 2, 5, "F-Attn (non-empty)",
     "def-fattn-ne", "%.4f",
     "F-Attn over the rows with mass only (`first_share_nonempty`; older files: `sum A[t, 0] / sum "
     "of row mass`). For softpick and clipped softmax this, not F-Attn, is the number to set "
     "beside [uniform](#def-uniform): an empty row pulls F-Attn towards 0 without being a "
     "sink-free row. Equals F-Attn when no row is empty.",
     0, 0},
    {"kurtosis", NAN, MK_REAL, MS_OTHER, OFF(kurt), 2, 7, "kurtosis", "def-kurt", "%.4g",
     "Mean over layers of `mean((x - μ)^4) / (σ^4 + 1e-6)` of the block output (Gaussian = 3).", 0,
     0},
    {"top1_over_median", NAN, MK_REAL, MS_OTHER, OFF(top1_med), 2, 8, "top1/median", "def-top1",
     "%.4g",
     "Mean over layers of the largest |h| over the median |h| of the block output (Sun et al.: "
     "massive when about 1000).",
     0, 0},
    {"bos_norm_ratio", NAN, MK_REAL, MS_OTHER, OFF(bos_ratio), 2, 9, "BOS norm ratio", "def-bos",
     "%.3g",
     "Mean over layers of `‖h_0‖ / mean over t ≠ 0 of ‖h_t‖` (Gu et al.; position 0 is BOS when "
     "BOS is on).",
     0, 0},
    CSV_ONLY("gate_bounded", NAN, MK_FLAG, MS_OTHER, gate_bounded),
    CSV_ONLY_PROTO("sink_formed", MK_FLAG, sink_formed, PM_SINK_FORMED),
    CSV_ONLY("lr", NAN, MK_REAL, MS_OTHER, cfg[CFG_LR]),
    CSV_ONLY("loss0", NAN, MK_REAL, MS_OTHER, loss0),
    CSV_ONLY("max_logit", NAN, MK_REAL, MS_OTHER, max_logit),
    /* rs_lc_degradation (runstats.h), from gatelab eval's /lceval */
    LC_DEG("lc_deg_2x_plain", 0, 1, PM_LC_2X_PLAIN),
    LC_DEG("lc_deg_4x_plain", 0, 2, PM_LC_4X_PLAIN),
    LC_DEG("lc_deg_8x_plain", 0, 3, PM_LC_8X_PLAIN),
    LC_DEG("lc_deg_2x_yarn", 1, 1, PM_LC_2X_YARN),
    LC_DEG("lc_deg_4x_yarn", 1, 2, PM_LC_4X_YARN),
    LC_DEG("lc_deg_8x_yarn", 1, 3, PM_LC_8X_YARN),
    {"top1_peak", NAN, MK_REAL, MS_OTHER, OFF(top1_peak), 0, 0, NULL, "def-top1-peak", NULL,
     "The largest top-1 |h| over layers of the block output at the last probe (the peak layer's "
     "`hidden/top3[l][0]`).",
     0, 0},
    {"top1_peak_over_median", NAN, MK_REAL, MS_OTHER, OFF(top1_peak_ratio), 0, 0, NULL,
     "def-top1-peak-ratio", NULL,
     "The peak layer's top-1 |h| over its median |h| (`hidden/median[l]`): the ratio Sun et al.'s "
     "criterion reads.",
     0, 0},
    {"train_tokens", NAN, MK_REAL, MS_OTHER, OFF(tokens), 0, 0, NULL, "def-train-tokens", NULL,
     "Training tokens of the run: steps done × batch_size × seq_len, the steps of a context "
     "extension at extend_seq_len. Blank when the config cannot be read.",
     0, 0},
    {"train_flops", NAN, MK_REAL, MS_OTHER, OFF(flops), 0, 0, NULL, "def-train-flops", NULL,
     "Training FLOPs of the run: the trainer's own count per token (6 per matmul weight, gate "
     "matmuls included, plus attention's two T x T products; model_flops_per_token) times "
     "its training tokens, a context extension's at extend_seq_len. Blank when the config "
     "cannot be read.",
     0, 0},
    {"massive_sun", NAN, MK_FLAG, MS_OTHER, OFF(massive_sun), 0, 0, NULL, "def-massive-sun", NULL,
     "1 when the peak layer's top-1 |h| is massive by Sun et al.'s criterion (above 100 and at "
     "above 1000 times the median |h|; docs/metrics.md), 0 when not, blank when unknown.",
     0, 0},
    CSV_DEF_PROTO(
        "quant_w8a8_dloss", q_dloss[0], PM_Q_W8A8,
        "Val loss with the linear layers' weights and inputs fake-quantized to 8 bits "
        "(min-max input ranges) minus the float val loss on the same windows (`gatelab eval "
        "--quant`, docs/metrics.md \"Quantized evaluation\"; blank: not evaluated)."),
    CSV_DEF_PROTO("quant_w8a8pct_dloss", q_dloss[1], PM_Q_W8A8_PCT,
                  "The same with the input ranges at the 0.01th and 99.99th percentiles."),
    CSV_DEF_PROTO("quant_w4a4_dloss", q_dloss[2], PM_Q_W4A4,
                  "The same at 4 bits (min-max input ranges)."),
    CSV_DEF("quant_inf_attn", q_inf_attn,
            "Mean over sequences of the largest |y| of any attention output (the float pass of "
            "`gatelab eval --quant`)."),
    CSV_DEF("quant_inf_ffn", q_inf_ffn, "The same of any FFN output."),
    CSV_DEF("quant_inf_layer", q_inf_layer, "The same of any layer output (residual stream)."),
    CSV_DEF("quant_kurtosis_max", q_kurt,
            "Mean over sequences of the largest kurtosis over layers of a layer output."),
    CSV_ONLY("task_floor", NAN, MK_REAL, MS_OTHER, task_floor),
    /* what the report reads of the last probe besides its metrics, so that
     * results.csv alone gives the same tables (report_csv.c) */
    CSV_ONLY("has_probe", NAN, MK_FLAG, MS_OTHER, has_probe),
    CSV_ONLY("probe_len", NAN, MK_INT, MS_OTHER, probe_T),
    CSV_ONLY("probe_seqs", NAN, MK_INT, MS_OTHER, probe_N),
    CSV_ONLY("probe_proxy", NAN, MK_FLAG, MS_OTHER, proxy),
    CSV_ONLY("gate_unbounded", NAN, MK_FLAG, MS_OTHER, gate_unbounded),
    /* the probe measures beyond position 0's share (sinkstats.h), one number
     * a run, at the last probe; blank when the run file does not store them */
    CSV_DEF("key_norm_first", knorm_first,
            "||k_0||, the key norm at position 0, the mean over layers and heads (`gatelab sinks`: "
            "key and value norms; docs/metrics.md \"Head probes\")."),
    CSV_DEF("key_norm_rest", knorm_rest, "The same of the mean over positions t >= 1."),
    CSV_DEF("value_norm_first", vnorm_first,
            "||v_0||, the value norm at position 0, the mean over layers and heads."),
    CSV_DEF("value_norm_rest", vnorm_rest, "The same of the mean over positions t >= 1."),
    {"dormant_heads", NAN, MK_INT, MS_OTHER, OFF(dormant), 0, 0, NULL, "def-dormant", NULL,
     "How many heads the sink rule classes as dormant: output-norm score below 0.5 and a "
     "first-token sink (docs/metrics.md \"Head probes\", dormant heads).",
     0, 0},
    {"dormant_heads_norm", NAN, MK_INT, MS_OTHER, OFF(dormant_norm), 0, 0, NULL, "def-dormant-norm",
     NULL,
     "How many heads the output-norm rule classes as dormant: output-norm score below 0.5, "
     "sink or not (Sandoval-Segura et al.'s criterion; docs/metrics.md \"Head probes\", "
     "dormant heads).",
     0, 0},
    CSV_DEF("secondary_sinks", secondary,
            "Secondary sinks (docs/metrics.md: tokens other than position 0 that draw attention "
            "over a run of layers; `gatelab sinks`), the mean number per probe sequence."),
    {"residual_sinks", NAN, MK_INT, MS_OTHER, OFF(resid_sinks), 0, 0, NULL, "def-resid-sinks", NULL,
     "Residual sinks (docs/metrics.md: a dimension i of block l's output with |h_t[i]| above 10 "
     "x the median |h| on at least 80% of tokens; `gatelab acts`), counted over layers.",
     0, 0},
    CSV_DEF("gate_first", gate_first,
            "The gate score at position 0, the mean over channels, probe sequences and layers "
            "(`gatelab gates`)."),
    CSV_DEF("gate_rest", gate_rest, "The same over positions t >= 1."),
    /* rs_needle_acc (runstats.h), from gatelab eval --needle's /lceval */
    LC_MODE_MULTS(NEEDLE_ACC){
        "needle_rows", NAN, MK_INT, MS_OTHER, OFF(needle_rows), 0, 0, NULL, "def-needle-rows", NULL,
        "The needle rows behind each needle_acc_* value (depths × rows per depth); blank when "
        "none, "
        "or when the run's lengths were scored over different numbers of rows. The report's chance "
        "test pools the retrieved rows over seeds with it.",
        0, 0},
    {"lc_train_len", NAN, MK_INT, MS_OTHER, OFF(lc_T), 0, 0, NULL, NULL, NULL,
     "The training length T the run's long-context results (gatelab eval) are multiples of "
     "(after a context extension, `extend_seq_len`); blank when the run has none.",
     0, 0},
    LC_MODE_MULTS(LC_LOSS) LC_MODE_MULTS(LC_NEEDLE)
    /* rs_rope (runstats.h): what YaRN's split in the long-context section
     * is computed from */
    {"rope_dim", NAN, MK_INT, MS_OTHER, OFF(rope_dim), 0, 0, NULL, NULL, NULL,
     "The rotated width of each head (head_dim, or half of it under differential attention); "
     "blank when the run has no RoPE.",
     0, 0},
    {"rope_len", NAN, MK_INT, MS_OTHER, OFF(rope_len), 0, 0, NULL, NULL, NULL,
     "The training length YaRN's split is taken at (seq_len, or `extend_seq_len` after a context "
     "extension); blank when the run has no RoPE.",
     0, 0},
    CSV_DEF("rope_base", rope_base,
            "The model's RoPE base (after a context extension, `extend_rope_base`); blank when the "
            "run has no RoPE."),
};
#define N_METRICS ((int)(sizeof METRICS / sizeof METRICS[0]))

const MetricCol *metric_at(int i) { return i >= 0 && i < N_METRICS ? &METRICS[i] : NULL; }

/* fmt into buf[len] with every "%g" replaced by thr (kept when thr is NaN)
 * and every "{sink}" by SINK_EPS; truncated to fit. */
static void with_threshold(const char *fmt, double thr, char *buf, size_t len) {
    size_t n = 0;
    if (len == 0) return;
    buf[0] = '\0';
    for (const char *p = fmt; *p && n + 1 < len;) {
        int w;
        if (!strncmp(p, "%g", 2) && !isnan(thr)) w = snprintf(buf + n, len - n, "%g", thr), p += 2;
        else if (!strncmp(p, "{sink}", 6)) w = snprintf(buf + n, len - n, "%g", SINK_EPS), p += 6;
        else w = snprintf(buf + n, len - n, "%c", *p++);
        n = w < 0 ? n : n + (size_t)w < len ? n + (size_t)w : len - 1;
    }
}

void metric_name(const MetricCol *m, char *buf, size_t len) {
    with_threshold(m->csv, m->threshold, buf, len);
}

void metric_head(const MetricCol *m, char *buf, size_t len) {
    with_threshold(m->head ? m->head : "", m->threshold, buf, len);
}

void metric_def(const MetricCol *m, char *buf, size_t len) {
    with_threshold(m->def ? m->def : "", m->threshold, buf, len);
}

const MetricCol *metric_find(const char *name) {
    char buf[128];
    for (int i = 0; i < N_METRICS; i++) {
        metric_name(&METRICS[i], buf, sizeof buf);
        if (!strcmp(buf, name)) return &METRICS[i];
    }
    return NULL;
}

int metric_md_columns(int t, const MetricCol **out, int cap) {
    int n = 0;
    for (int order = 1; n < cap; order++) {
        int found = 0;
        for (int i = 0; i < N_METRICS && n < cap; i++)
            if (METRICS[i].md_table == t && METRICS[i].md_order == order)
                out[n++] = &METRICS[i], found = 1;
        if (!found) break;
    }
    return n;
}

double metric_value(const Row *w, const MetricCol *m) {
    const char *at = (const char *)w + m->off;
    switch (m->kind) {
    case MK_LL: return (double)*(const long long *)at;
    case MK_FLAG:
    case MK_INT: return *(const int *)at >= 0 ? *(const int *)at : NAN;
    case MK_REAL:
    case MK_WHOLE: return *(const double *)at;
    }
    return NAN;
}
