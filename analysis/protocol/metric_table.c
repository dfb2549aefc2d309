/* metric_table.c: the per-run metrics of the report (metric_table.h),
 * in results.csv's column order; their lookups are metric_lookup.c's. */
#include "metric_table.h"

#include <math.h>

#include "metrics.h"      /* SINK_EPS, SINK_EPS_LOW, SINK_EPS_MID */
#include "paper_scales.h" /* SE_*: the effects a declarable metric speaks to */
#include "row.h"
#include "runschema.h" /* RS_GATE_SPARSE */
#include "sinkstats.h" /* SS_NEAR_DIST */

#define OFF(f) offsetof(Row, f)
/* clang-format off */
/* a metric results.csv has and REPORT.md's tables do not */
#define CSV_ONLY(name_, thr_, kind_, field_)                                                       \
    {.csv = name_, .threshold = thr_, .kind = kind_, .off = OFF(field_)}
/* the same, 0 before anything is read (MB_ZERO) */
#define CSV_ZERO(name_, kind_, field_)                                                             \
    {.csv = name_, .threshold = NAN, .kind = kind_, .off = OFF(field_), .blank = MB_ZERO}
/* long-context degradation [mode][k] at LC_MULT[k] times the training length */
#define LC_DEF                                                                                     \
    "Long-context degradation (gatelab eval): val loss at the column's multiple of the training "  \
    "length minus val loss at the training length, both plain RoPE (`plain`) or both YaRN "        \
    "(`yarn`); blank when the run was not evaluated at both lengths."
#define LC_DEG(name_, mode_, k_, label_)                                                      \
    {.csv = name_,                                                                                 \
     .threshold = NAN,                                                                             \
     .kind = MK_REAL,                                                                              \
     .off = OFF(lc_deg[mode_][k_]),                                                                \
     .def = LC_DEF,                                                                                \
     .proto = 1,                                                                                   \
     .label = label_,                                                                              \
     .effects = 1u << SE_LONGCTX}
/* the same, with a definition (`gatelab metrics`) */
#define CSV_DEF(name_, field_, def_)                                                               \
    {.csv = name_, .threshold = NAN, .kind = MK_REAL, .off = OFF(field_), .def = def_}
/* the same, declarable in a protocol */
#define CSV_DEF_PROTO(name_, field_, label_, def_)                                            \
    {.csv = name_,                                                                                 \
     .threshold = NAN,                                                                             \
     .kind = MK_REAL,                                                                              \
     .off = OFF(field_),                                                                           \
     .def = def_,                                                                                  \
     .proto = 1,                                                                                   \
     .label = label_}

/* a probe measure results.csv has, shown in place order_ of the section
 * "Probe measures across seeds" (report_probes.c) */
#define PROBE_DEF(name_, field_, order_, def_)                                                     \
    {.csv = name_,                                                                                 \
     .threshold = NAN,                                                                             \
     .kind = MK_REAL,                                                                              \
     .off = OFF(field_),                                                                           \
     .def = def_,                                                                                  \
     .seeds_order = order_}

/* clang-format on */

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
    {.csv = "needle_acc_" #mult "x_" #mode "_depth%g",                                             \
     .threshold = depth,                                                                           \
     .kind = MK_REAL,                                                                              \
     .off = OFF(lc_needle[m][k][d]),                                                               \
     .def = LC_NEEDLE_DEF},
/* one needle column per depth of LC_DEPTHS at mult x T under mode (an X
 * of LC_MODE_MULTS) */
#define LC_NEEDLE(k, mult, mode, m) LC_DEPTHS(LC_NEEDLE_AT, k, mult, mode, m)

#define Q_ONE(name_, mode_) +1
_Static_assert(0 Q_MODES(Q_ONE) == Q_NMODES, "Q_MODES names every quantized mode of fakequant.h");
/* quant_<mode>_destroyed: the run file's flag per mode (row_quant) */
#define Q_DESTROYED_DEF                                                                            \
    "1 when the mode's perplexity is above " FQ_DESTROYED_TEXT "x the float one on the same "      \
    "windows (/quant/<mode> `destroyed`, fakequant.h fq_destroyed; docs/metrics.md \"Quantized "   \
    "evaluation\": the model is destroyed and its sink_dloss ranks nothing), 0 when not; blank "   \
    "when the run was not evaluated in that mode."
#define Q_DESTROYED(name_, mode_)                                                                  \
    {.csv = "quant_" name_ "_destroyed",                                                           \
     .threshold = NAN,                                                                             \
     .kind = MK_FLAG,                                                                              \
     .off = OFF(q_destroyed[(mode_)-1]),                                                           \
     .def = Q_DESTROYED_DEF},
/* quant_<mode>_source_recovered: the run file's per mode (row_quant) */
#define Q_SOURCE_REC(name_, mode_)                                                                 \
    {.csv = "quant_" name_ "_source_recovered",                                                    \
     .threshold = NAN,                                                                             \
     .kind = MK_REAL,                                                                              \
     .off = OFF(q_source_rec[(mode_)-1]),                                                          \
     .def = "The loss the mode's source of the largest damage (results.csv's "                     \
            "quant_<mode>_source) recovers: dloss minus dloss with that input tensor in float "    \
            "(`gatelab eval --quant-source`, docs/metrics.md \"Quantized evaluation\"); blank: "   \
            "not searched (only w8a8, w8a8-pct and w4a4 have one)."},

static const MetricCol METRICS[] = {
    CSV_ZERO("n_params", MK_LL, n_params),
    CSV_ZERO("n_params_added", MK_LL, n_params_added),
    CSV_ONLY("steps", NAN, MK_WHOLE, steps),
    {.csv = "val_loss",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(val_loss),
     .md_table = 1,
     .md_order = 1,
     .head = "val_loss",
     .anchor = "def-val-loss",
     .fmt = "%.4f",
     .def = "Validation loss (nats/token) at the last eval: `final_val_loss` in /summary, "
            "else the last /metrics/eval/val_loss.",
     .proto = 1,
     .label = "val loss",
     .effects = 1u << SE_LOSS,
     .lower = "beats",
     .higher = "is worse than"},
    {.csv = "ppl",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(ppl),
     .md_table = 1,
     .md_order = 2,
     .head = "PPL",
     .anchor = "def-ppl",
     .fmt = "%.3f",
     .def = "`ppl = exp(val_loss)`."},
    {.csv = "bpb",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(bpb),
     .md_table = 1,
     .md_order = 4,
     .head = "bpb",
     .anchor = "def-bpb",
     .fmt = "%.4f",
     .def = "Bits per byte at the last eval (`val_bpb`), for byte data."},
    {.csv = "dppl_vs_baseline",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(dppl),
     .md_table = 1,
     .md_order = 3,
     .head = "ΔPPL",
     .anchor = "def-dppl",
     .fmt = "%+.3f",
     .def = "PPL minus the mean PPL (over seeds) of the matching baseline group: variant "
            "`baseline`, same data, seq_len, lr, steps and architecture (pos, window, "
            "window_layers, norm_place) (preferring `baseline-<suffix>` for a run named "
            "`<variant>-<suffix>`, else `baseline`); the Runs table names it. Blank when no "
            "baseline matches; negative is better."},
    {.csv = "f_attn",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(f_attn),
     .md_table = 1,
     .md_order = 5,
     .head = "F-Attn",
     .anchor = "def-fattn",
     .fmt = "%.4f",
     .def = "First-token share: `mean over layers l, heads h, probe sequences, queries t = "
            "1..T-1 of A[t, 0]`, at the last probe, probe length T as in the header. Not Gu "
            "et al.'s alpha_0 (the run file's `alpha0` dataset), which averages queries t ≥ "
            "0 and so includes the self term A[0, 0] = 1; see [sink@{sink}](#def-sink).",
     .proto = 1,
     .label = "F-Attn",
     .effects = 1u << SE_SINK_FORMS | 1u << SE_SINK_REMOVAL,
     .lower = "has a weaker first-token sink than",
     .higher = "has a stronger first-token sink than"},
    {.csv = "f_attn_uniform",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(f_attn_uniform),
     .md_table = 1,
     .md_order = 6,
     .head = "uniform",
     .anchor = "def-uniform",
     .fmt = "%.4f",
     .def = "What uniform causal attention would give for F-Attn: `(H_T - 1)/(T - 1)`, H_T "
            "the T-th harmonic number (about 0.059, 0.020 and 0.0064 for T = 64, 256, 1024); "
            "under a sliding window W, the mean over layers of each layer's `(H_W - 1)/(T - "
            "1)` (docs/metrics.md)."},
    {.csv = "sink_rate_%g",
     .threshold = SINK_EPS,
     .kind = MK_REAL,
     .src = MS_SINK_RATE,
     .off = OFF(sink03),
     .md_table = 1,
     .md_order = 7,
     .head = "sink@%g",
     .anchor = "def-sink",
     .fmt = "%.3f",
     .def = "Sink rate (Gu et al.): `alpha_0[l,h] = mean over queries t ≥ 0 of A[t, 0]` over "
            "the first 64 queries of each probe sequence (all T when the probe is shorter: "
            "Settings); `sink_rate(ε) = fraction of (l, h) pairs with alpha_0 > ε`, ε the "
            "threshold in the column's name (Settings), the indicator taken per probe "
            "sequence then averaged over sequences."},
    {.csv = "gate_mean",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(gate_mean),
     .md_table = 1,
     .md_order = 8,
     .head = "gate mean",
     .anchor = "def-gate-mean",
     .fmt = "%.3f",
     .def = "`gate_mean`: mean of every gate score on the probe set, over all layers, "
            "positions and channels (blank: no gate)."},
    {.csv = "gate_frac_below_%g",
     .threshold = RS_GATE_SPARSE,
     .kind = MK_REAL,
     .src = MS_GATE_BELOW,
     .off = OFF(gate_below01),
     .md_table = 1,
     .md_order = 9,
     .head = "gate<%g",
     .anchor = "def-gate-below",
     .fmt = "%.3f",
     .def = "Fraction of gate scores strictly below %g on the probe set (sparsity). n/a for "
            "an unbounded gate (additive, SiLU): its act(XW) values are not scores in [0, "
            "1], so a value below %g is not a closed gate.",
     .na_unbounded = 1},
    {.csv = "m_act",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(m_act),
     .md_table = 1,
     .md_order = 10,
     .head = "M-Act",
     .anchor = "def-mact",
     .fmt = "%.4g",
     .def = "`max_act[l] = max |h| over tokens × features` of block l's output (the residual "
            "stream), averaged over probe sequences; M-Act is the mean over layers.",
     .proto = 1,
     .label = "M-Act",
     .effects = 1u << SE_MASSIVE,
     .lower = "has smaller massive activations than",
     .higher = "has larger massive activations than"},
    {.csv = "spikes",
     .threshold = NAN,
     .kind = MK_WHOLE,
     .off = OFF(spikes),
     .md_table = 1,
     .md_order = 11,
     .head = "spikes",
     .anchor = "def-spikes",
     .fmt = "%.1f",
     .def = "Loss spikes: steps after warmup whose training loss exceeds spike_factor (1.25) "
            "× the median of the previous 50 steps' losses, from /metrics/train."},
    {.csv = "tokens_per_sec",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(tokens_per_sec),
     .md_table = 1,
     .md_order = 12,
     .head = "tokens/s",
     .anchor = "def-tps",
     .fmt = "%.0f",
     .def = "Training throughput, `tokens_per_sec` in /summary."},
    CSV_ONLY("diverged_step", NAN, MK_LL, diverged_step),
    {.csv = "dppl_pct_vs_baseline",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(dppl_rel),
     .md_table = 2,
     .md_order = 1,
     .head = "ΔPPL %",
     .anchor = "def-dppl-rel",
     .fmt = "%+.2f",
     .def = "Relative change of PPL against the matching baseline group (as for "
            "[ΔPPL](#def-dppl)): `100 × (PPL / mean baseline PPL - 1)`. Unlike PPL itself "
            "this can be set beside the paper's BPE numbers."},
    {.csv = "sink_rate_%g",
     .threshold = SINK_EPS_LOW,
     .kind = MK_REAL,
     .src = MS_SINK_RATE,
     .off = OFF(sink01),
     .md_table = 2,
     .md_order = 2,
     .head = "sink@%g",
     .anchor = "def-sink01",
     .fmt = "%.3f",
     .def = "Sink rate at ε = %g (as [sink@{sink}](#def-sink))."},
    {.csv = "sink_rate_%g",
     .threshold = SINK_EPS_MID,
     .kind = MK_REAL,
     .src = MS_SINK_RATE,
     .off = OFF(sink02),
     .md_table = 2,
     .md_order = 3,
     .head = "sink@%g",
     .anchor = "def-sink02",
     .fmt = "%.3f",
     .def = "Sink rate at ε = %g."},
    {.csv = "slot_share",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(slot),
     .md_table = 2,
     .md_order = 6,
     .head = "slot",
     .anchor = "def-slot",
     .fmt = "%.4f",
     .def = "The sink slot's own share (sink-token, sink-logit, kv-bias): `mean over layers, "
            "heads and queries t = 0..T-1` of the weight a query gives the slot "
            "(`attention_slot`). Blank: no slot."},
    {.csv = "empty_share",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(empty),
     .md_table = 2,
     .md_order = 4,
     .head = "empty rows",
     .anchor = "def-empty",
     .fmt = "%.3f",
     .def = "Share of attention rows (probe sequence × query t = 1..T-1, over layers and "
            "heads) with no mass on the real tokens: softpick and clipped softmax can zero a "
            "whole row. From the probe's `row_empty`; run files written before it: 0 with a "
            "sink slot, else `1 - mean row mass` of the sequence-mean map, exact for "
            "softpick's proxy map, the dropped mass otherwise. Softmax and sink slots: 0."},
    {.csv = "f_attn_nonempty",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(f_attn_ne),
     .md_table = 2,
     .md_order = 5,
     .head = "F-Attn (non-empty)",
     .anchor = "def-fattn-ne",
     .fmt = "%.4f",
     .def = "F-Attn over the rows with mass only (`first_share_nonempty`; older files: `sum "
            "A[t, 0] / sum of row mass`). For softpick and clipped softmax this, not F-Attn, "
            "is the number to set beside [uniform](#def-uniform): an empty row pulls F-Attn "
            "towards 0 without being a sink-free row. Equals F-Attn when no row is empty."},
    {.csv = "kurtosis",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(kurt),
     .md_table = 2,
     .md_order = 7,
     .head = "kurtosis",
     .anchor = "def-kurt",
     .fmt = "%.4g",
     .def = "Mean over layers of `mean((x - μ)^4) / (σ^4 + 1e-6)` of the block output "
            "(Gaussian = 3)."},
    {.csv = "top1_over_median",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(top1_med),
     .md_table = 2,
     .md_order = 8,
     .head = "top1/median",
     .anchor = "def-top1",
     .fmt = "%.4g",
     .def = "Mean over layers of the largest |h| over the median |h| of the block output "
            "(Sun et al.: massive when about 1000)."},
    {.csv = "bos_norm_ratio",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(bos_ratio),
     .md_table = 2,
     .md_order = 9,
     .head = "BOS norm ratio",
     .anchor = "def-bos",
     .fmt = "%.3g",
     .def = "Mean over layers of `‖h_0‖ / mean over t ≠ 0 of ‖h_t‖` (Gu et al.; position 0 "
            "is BOS when BOS is on)."},
    CSV_ONLY("gate_bounded", NAN, MK_FLAG, gate_bounded),
    {.csv = "sink_formed",
     .threshold = NAN,
     .kind = MK_FLAG,
     .off = OFF(sink_formed),
     .proto = 1,
     .label = "share of seeds with a sink",
     .effects = 1u << SE_SINK_FORMS | 1u << SE_SINK_REMOVAL,
     .not_primary = "it repeats f_attn coarsely and moves with its threshold"},
    CSV_ZERO("lr", MK_REAL, cfg[CFG_LR]),
    CSV_ONLY("loss0", NAN, MK_REAL, loss0),
    CSV_ONLY("max_logit", NAN, MK_REAL, max_logit),
    /* rs_lc_degradation (runstats.h), from gatelab eval's /lceval */
    LC_DEG("lc_deg_2x_plain", 0, 1, "val-loss degradation at 2× T (plain RoPE)"),
    LC_DEG("lc_deg_4x_plain", 0, 2, "val-loss degradation at 4× T (plain RoPE)"),
    LC_DEG("lc_deg_8x_plain", 0, 3, "val-loss degradation at 8× T (plain RoPE)"),
    LC_DEG("lc_deg_2x_yarn", 1, 1, "val-loss degradation at 2× T (YaRN)"),
    LC_DEG("lc_deg_4x_yarn", 1, 2, "val-loss degradation at 4× T (YaRN)"),
    LC_DEG("lc_deg_8x_yarn", 1, 3, "val-loss degradation at 8× T (YaRN)"),
    {.csv = "top1_peak",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(top1_peak),
     .anchor = "def-top1-peak",
     .def = "The largest top-1 |h| over layers of the block output at the last probe (the "
            "peak layer's `hidden/top3[l][0]`)."},
    {.csv = "top1_peak_over_median",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(top1_peak_ratio),
     .anchor = "def-top1-peak-ratio",
     .def = "The peak layer's top-1 |h| over its median |h| (`hidden/median[l]`): the ratio "
            "Sun et al.'s criterion reads."},
    {.csv = "train_tokens",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(tokens),
     .anchor = "def-train-tokens",
     .def = "Training tokens of the run: steps done × batch_size × seq_len, the steps of a "
            "context extension at extend_seq_len. Blank when the config cannot be read."},
    {.csv = "train_flops",
     .threshold = NAN,
     .kind = MK_REAL,
     .off = OFF(flops),
     .anchor = "def-train-flops",
     .def = "Training FLOPs of the run: the trainer's own count per token (6 per matmul "
            "weight, gate matmuls included, plus attention's two T x T products; "
            "model_flops_per_token) times its training tokens, a context extension's at "
            "extend_seq_len. Blank when the config cannot be read."},
    {.csv = "massive_sun",
     .threshold = NAN,
     .kind = MK_FLAG,
     .off = OFF(massive_sun),
     .anchor = "def-massive-sun",
     .def = "1 when the peak layer's top-1 |h| is massive by Sun et al.'s criterion (above "
            "100 and at above 1000 times the median |h|; docs/metrics.md), 0 when not, blank "
            "when unknown."},
    CSV_DEF_PROTO(
        "quant_w8a8_dloss", q_dloss[0], "val-loss increase under W8A8 (min-max)",
        "Val loss with the linear layers' weights and inputs fake-quantized to 8 bits "
        "(min-max input ranges) minus the float val loss on the same windows (`gatelab "
        "eval --quant`, docs/metrics.md \"Quantized evaluation\"; blank: not evaluated)."),
    CSV_DEF_PROTO("quant_w8a8pct_dloss", q_dloss[1], "val-loss increase under W8A8 (percentile)",
                  "The same with the input ranges at the 0.01th and 99.99th percentiles."),
    CSV_DEF_PROTO("quant_w4a4_dloss", q_dloss[2], "val-loss increase under W4A4",
                  "The same at 4 bits (min-max input ranges)."),
    CSV_DEF("quant_w8a8tok_dloss", q_dloss[3],
            "The same at 8 bits with each token's input on its own min-max range (w8a8-tok)."),
    CSV_DEF("quant_kv8_dloss", q_dloss[FQ_KV8 - 1],
            "The same with the linear layers in float and the KV cache fake-quantized to 8 "
            "bits: the keys after RoPE and the values, each token's each KV head on its own "
            "min-max range (kv8)."),
    CSV_DEF("quant_kv4_dloss", q_dloss[FQ_KV4 - 1], "The same at 4 bits (kv4)."),
    {.csv = "quant_keep_first",
     .threshold = NAN,
     .kind = MK_INT,
     .off = OFF(q_keep),
     .def = "The positions of every window held out in float in the sink_dloss columns "
            "(`gatelab eval --quant-keep-first`; 0: none, so those columns are blank)."},
    CSV_DEF("quant_w8a8_sink_dloss", q_sink[0],
            "Sink-attributable damage under W8A8: quant_w8a8_dloss minus the val-loss increase "
            "with the first quant_keep_first positions of every window held out in float "
            "(docs/metrics.md \"Quantized evaluation\"; blank: none held out)."),
    CSV_DEF("quant_w8a8pct_sink_dloss", q_sink[1], "The same under W8A8 (percentile)."),
    CSV_DEF("quant_w4a4_sink_dloss", q_sink[2], "The same under W4A4."),
    CSV_DEF("quant_w8a8tok_sink_dloss", q_sink[3], "The same under W8A8 per token."),
    CSV_DEF("quant_kv8_sink_dloss", q_sink[FQ_KV8 - 1],
            "The same under kv8 (the held-out positions' keys and values in float)."),
    CSV_DEF("quant_kv4_sink_dloss", q_sink[FQ_KV4 - 1], "The same under kv4."),
    Q_MODES(Q_DESTROYED) Q_MODES(Q_SOURCE_REC)
        CSV_DEF("quant_inf_attn", q_inf_attn,
                "Mean over sequences of the largest |y| of any attention output (the float pass "
                "of `gatelab eval --quant`)."),
    CSV_DEF("quant_inf_ffn", q_inf_ffn, "The same of any FFN output."),
    CSV_DEF("quant_inf_layer", q_inf_layer, "The same of any layer output (residual stream)."),
    CSV_DEF("quant_kurtosis_max", q_kurt,
            "Mean over sequences of the largest kurtosis over layers of a layer output."),
    CSV_ONLY("task_floor", NAN, MK_REAL, task_floor),
    /* what the report reads of the last probe besides its metrics, so that
     * results.csv alone gives the same tables (report_csv.c) */
    CSV_ZERO("has_probe", MK_FLAG, has_probe),
    CSV_ZERO("probe_len", MK_INT, probe_T),
    CSV_ZERO("probe_seqs", MK_INT, probe_N),
    CSV_ZERO("probe_proxy", MK_FLAG, proxy),
    CSV_ZERO("gate_unbounded", MK_FLAG, gate_unbounded),
    /* the probe measures beyond position 0's share (sinkstats.h), one number
     * a run, at the last probe; blank when the run file does not store them */
    CSV_DEF("key_norm_first", knorm_first,
            "||k_0||, the key norm at position 0, the mean over layers and heads (`gatelab "
            "sinks`: key and value norms; docs/metrics.md \"Head probes\")."),
    CSV_DEF("key_norm_rest", knorm_rest, "The same of the mean over positions t >= 1."),
    CSV_DEF("value_norm_first", vnorm_first,
            "||v_0||, the value norm at position 0, the mean over layers and heads."),
    CSV_DEF("value_norm_rest", vnorm_rest, "The same of the mean over positions t >= 1."),
    {.csv = "dormant_heads",
     .threshold = NAN,
     .kind = MK_INT,
     .off = OFF(dormant),
     .anchor = "def-dormant",
     .seeds_order = 7,
     .def = "How many heads the sink rule classes as dormant: output-norm score below 0.5 "
            "and a first-token sink (docs/metrics.md \"Head probes\", dormant heads)."},
    {.csv = "dormant_heads_norm",
     .threshold = NAN,
     .kind = MK_INT,
     .off = OFF(dormant_norm),
     .anchor = "def-dormant-norm",
     .seeds_order = 8,
     .def = "How many heads the output-norm rule classes as dormant: output-norm score below "
            "0.5, sink or not (Sandoval-Segura et al.'s criterion; docs/metrics.md \"Head "
            "probes\", dormant heads)."},
    PROBE_DEF("secondary_sinks", secondary, 9,
              "Secondary sinks (docs/metrics.md: tokens other than position 0 that draw "
              "attention over a run of layers; `gatelab sinks`), the mean number per probe "
              "sequence."),
    {.csv = "residual_sinks",
     .threshold = NAN,
     .kind = MK_INT,
     .off = OFF(resid_sinks),
     .anchor = "def-resid-sinks",
     .seeds_order = 10,
     .def = "Residual sinks (docs/metrics.md: a dimension i of block l's output with "
            "|h_t[i]| above 10 x the median |h| on at least 80% of tokens; `gatelab acts`), "
            "counted over layers."},
    CSV_DEF("gate_first", gate_first,
            "The gate score at position 0, the mean over channels, probe sequences and "
            "layers (`gatelab gates`)."),
    CSV_DEF("gate_rest", gate_rest, "The same over positions t >= 1."),
    /* ratios and summaries of the probe measures above (sinkstats.h), the
     * numbers a comparison across seeds reads */
    PROBE_DEF("bos_key_norm_ratio", knorm_ratio, 1,
              "Per head, ||k_0|| over the median over positions t >= 1 of ||k_t|| (the probe's "
              "`key_norm` [L, H, T], each position's norm the mean over probe sequences), the "
              "mean over layers and heads. The key norms of Gu et al. (ICLR 2025, \"When "
              "attention sink emerges in language models\", `eval_activations_open_source.py`); "
              "the ratio to the median is ours (docs/metrics.md \"Head probes\"). Blank when "
              "the run file stores no `key_norm` or a head's median is 0."),
    PROBE_DEF("bos_value_norm_ratio", vnorm_ratio, 2,
              "The same of the value norms ||v_t|| (`value_norm`): Gu et al.'s and Wong et al.'s "
              "(arXiv 2512.22213) small sink value, a ratio below 1."),
    PROBE_DEF("gate_first_over_rest", gate_ratio, 3,
              "gate_first / gate_rest: the mean gate score at position 0 over that at t >= 1 "
              "(docs/metrics.md \"Head probes\", gate at position 0); blank without a gate, "
              "or when gate_rest is 0."),
    {.csv = "distance_mass_%g",
     .threshold = SS_NEAR_DIST,
     .kind = MK_REAL,
     .off = OFF(dist_near),
     .def = "The attention mass within %g keys of the query: the sum over distances d = t - j "
            "< %g (d = 0 the query itself) of the distance profile's m(d), the share of a "
            "map's mass at distance d (docs/metrics.md \"Beyond the first token\", after Sun "
            "et al. 2026, arXiv 2603.05498, our definition), from the stored sequence-mean "
            "maps, the mean over layers and heads. Blank when the maps have no mass.",
     .seeds_order = 4},
    PROBE_DEF("bos_grad_norm_ratio", grad_ratio, 5,
              "Per layer, the input-gradient norm at position 0 over the median over t >= 1 "
              "(the probe's `grad_in_norm` [L, T]: the norm of the gradient of the mean loss "
              "w.r.t. the residual stream entering the block, the mean over probe sequences; "
              "Chen & Yao 2026's gradient sinks), the mean over layers. Blank when the run file "
              "stores no `grad_in_norm` (inspected checkpoints, older files) or a layer's "
              "median is 0."),
    PROBE_DEF("wvwo_rank_mean", ov_rank, 6,
              "The effective rank (Roy & Vetterli 2007, \"The effective rank: a measure of "
              "effective dimensionality\", EUSIPCO, Definition 2) of each head's W_V W_O (the "
              "probe's `ov_erank` [L, H]; docs/metrics.md \"Head probes\"), the mean over "
              "layers and heads. Blank when the run file stores no `ov_erank` or a head's rank "
              "is not known."),
    /* rs_needle_acc (runstats.h), from gatelab eval --needle's /lceval */
    LC_MODE_MULTS(NEEDLE_ACC){
        .csv = "needle_rows",
        .threshold = NAN,
        .kind = MK_INT,
        .off = OFF(needle_rows),
        .anchor = "def-needle-rows",
        .def = "The needle rows behind each needle_acc_* value (depths × rows per depth); blank "
               "when none, or when the run's lengths were scored over different numbers of "
               "rows. The report's chance test pools the retrieved rows over seeds with it."},
    {.csv = "lc_train_len",
     .threshold = NAN,
     .kind = MK_INT,
     .off = OFF(lc_T),
     .def = "The training length T the run's long-context results (gatelab eval) are "
            "multiples of (after a context extension, `extend_seq_len`); blank when the run "
            "has none."},
    LC_MODE_MULTS(LC_LOSS) LC_MODE_MULTS(LC_NEEDLE)
    /* rs_rope (runstats.h): what YaRN's split in the long-context section
     * is computed from */
    {.csv = "rope_dim",
     .threshold = NAN,
     .kind = MK_INT,
     .off = OFF(rope_dim),
     .def = "The rotated width of each head (head_dim, or half of it under differential "
            "attention); blank when the run has no RoPE."},
    {.csv = "rope_len",
     .threshold = NAN,
     .kind = MK_INT,
     .off = OFF(rope_len),
     .def = "The training length YaRN's split is taken at (seq_len, or `extend_seq_len` "
            "after a context extension); blank when the run has no RoPE."},
    CSV_DEF("rope_base", rope_base,
            "The model's RoPE base (after a context extension, `extend_rope_base`); blank "
            "when the run has no RoPE."),
};
#define N_METRICS ((int)(sizeof METRICS / sizeof METRICS[0]))
_Static_assert(N_METRICS < PROTO_GOOD_REGIME_M,
               "a ProtoMetric is a row's index: raise PROTO_METRIC_SLOTS (protocol.h)");

const MetricCol *metric_at(int i) { return i >= 0 && i < N_METRICS ? &METRICS[i] : NULL; }
