/* row.h: the Row each run file is reduced to (report_rows.c reads it,
 * results.csv holds it), and the column lists its fields are made from.
 * The metric table (metric_table.c) names each column by its offset in
 * Row, so it sits here, below the report. */
#ifndef GATELAB_ROW_H
#define GATELAB_ROW_H

#include "fakequant.h" /* FQ_MODE_COUNT */
#include "runstats.h"  /* RS_ARCH_KEYS */

/* The quantized modes a Row holds, FqMode order from FQ_W8A8. */
#define Q_NMODES (FQ_MODE_COUNT - 1)
/* The same modes, X(name, mode) for each: name as results.csv spells it
 * in a column's name (no '-'). The per-mode columns of metric_table.c
 * and report_csv.c are made from it; the compiler holds its count
 * (metric_table.c), test_report_quant every name against fq_mode_name. */
#define Q_MODES(X)                                                                                 \
    X("w8a8", FQ_W8A8)                                                                             \
    X("w8a8pct", FQ_W8A8_PCT)                                                                      \
    X("w4a4", FQ_W4A4) X("w8a8tok", FQ_W8A8_TOK) X("kv8", FQ_KV8) X("kv4", FQ_KV4)
#define Q_SOURCE_LEN 48 /* a source tensor's name, as RunQuantMode.source */

#define MAX_SPIKE_STEPS 8

/* The multiples of the training length the long-context and needle
 * columns hold, X(index, multiple, ...) for each: LC_MULT and the columns
 * of metric_table.c are made from it. */
#define LC_MULTS(X, ...)                                                                           \
    X(0, 1, __VA_ARGS__) X(1, 2, __VA_ARGS__) X(2, 4, __VA_ARGS__) X(3, 8, __VA_ARGS__)
#define LC_NMULT 4
/* X(index, multiple, mode, m) for each multiple under plain RoPE (m = 0),
 * then under YaRN (m = 1): the order of the per-mode columns. */
#define LC_MODE_MULTS(X) LC_MULTS(X, plain, 0) LC_MULTS(X, yarn, 1)
/* The needle depths the per-depth columns hold, X(index, depth, ...) for
 * each: LC_DEPTH and the columns of metric_table.c are made from it (a
 * test holds it equal to gatelab eval's LCEVAL_NEEDLE_DEPTH). */
#define LC_DEPTHS(X, ...)                                                                          \
    X(0, 0, __VA_ARGS__)                                                                           \
    X(1, 0.25, __VA_ARGS__) X(2, 0.5, __VA_ARGS__) X(3, 0.75, __VA_ARGS__) X(4, 1, __VA_ARGS__)
#define LC_NDEPTH 5

/* Numeric /config keys the Settings section shows (the architecture keys,
 * runstats.h RS_ARCH_KEY, are Row.arch); ΔPPL matches on seq_len, lr and
 * steps of these, with the data and every architecture key. */
#define N_CFG 9
enum { CFG_SEQ_LEN = 3, CFG_BATCH = 4, CFG_STEPS = 5, CFG_LR = 6 };

typedef struct {
    char path[1024];
    const char *file; /* basename inside path */
    int ok;           /* 0: unreadable, err says why */
    int from_csv;     /* 1: a row of results.csv, its run file not here */
    int pretrained;   /* 1: written by `gatelab inspect` (no training; /config: window) */
    char err[512];
    char variant[256], status[32];
    char run[256];     /* run name: the group key with variant and data */
    char data[64];     /* /config data: bigram, brown, ... ("?" if absent) */
    double cfg[N_CFG]; /* /config values of CFG_KEYS (NaN if absent) */
    /* /config values of RS_ARCH_KEY as rs_arch_value writes them; the
     * paper's (config_defaults') where the run file or results.csv
     * predates a key */
    char arch[RS_N_ARCH][RS_ARCH_LEN];
    int base; /* first row of the matching baseline group, -1 */
    long long seed, n_params, n_params_added, diverged_step;
    double steps, val_loss, ppl, bpb, dppl, f_attn, f_attn_uniform, sink03, gate_mean, gate_below01,
        m_act, spikes, tokens_per_sec;
    double dppl_rel;                  /* 100 (PPL / matching baseline's mean PPL - 1) */
    double sink01, sink02;            /* sink rate at eps 0.1 and 0.2 */
    double slot;                      /* the sink slot's own share (NaN: no slot) */
    double empty, f_attn_ne;          /* dropped-mass share, F-Attn over the mass */
    double kurt, top1_med, bos_ratio; /* means over layers */
    /* gatelab eval's /lceval at LC_MULT[k] times the training length
     * lc_T, [plain, yarn] (NaN, -1: not evaluated there): the val loss,
     * rs_lc_degradation (NaN at 1x), and the needle task's exact-match
     * share at each depth LC_DEPTH[d] as the run file stores it */
    int lc_T;
    double lc_loss[2][LC_NMULT], lc_deg[2][LC_NMULT];
    double lc_needle[2][LC_NMULT][LC_NDEPTH];
    /* rs_rope: the rotated width and training length YaRN's split is
     * taken at, and the model's base (-1, NaN: no RoPE) */
    int rope_dim, rope_len;
    double rope_base;
    int gate_unbounded; /* has a gate whose scores are not in [0,1] */
    int gate_bounded;   /* 1/0 when gate_mean is known, else -1 */
    int sink_formed;    /* metrics.h sink_formed of f_attn: 1, 0, -1 (no probe) */
    double loss0;       /* training loss at the first step (NaN: none) */
    double max_logit;   /* largest attention logit, last probe (NaN: none) */
    /* /quant (gatelab eval --quant; NaN: absent): each mode's val-loss
     * increase over float, its sink_dloss with q_keep positions held out
     * (eval --quant-keep-first; q_keep -1: absent, 0: none held out), and
     * the float pass's outlier statistics */
    double q_dloss[Q_NMODES];  /* mode m's at m - 1 (FqMode order: w8a8 first) */
    double q_sink[Q_NMODES];   /* the same modes' sink_dloss */
    int q_destroyed[Q_NMODES]; /* their /quant/<mode> destroyed flag: 1, 0, -1 absent */
    /* eval --quant-source: each mode's source of the largest damage ("":
     * none) and its recovered loss (NaN: none) */
    char q_source[Q_NMODES][Q_SOURCE_LEN];
    double q_source_rec[Q_NMODES];
    int q_keep;
    double q_inf_attn, q_inf_ffn, q_inf_layer, q_kurt;
    double task_floor;      /* the task's Bayes val loss (NaN: not recorded) */
    char protocol_hash[32]; /* /protocol's hash; "" when the run recorded none */
    char probe_err[512];    /* the last probe exists but cannot be read */
    long long spike_steps[MAX_SPIKE_STEPS];
    int probe_T, probe_N, proxy, has_probe;
    char normaliser[64];
    double top1_peak, top1_peak_ratio; /* massive.h massive_peak of the last probe */
    int massive_sun;                   /* its verdict: 1, 0, -1 (not known) */
    double flops;                      /* flops.h training FLOPs of the run (NaN: unknown) */
    double tokens;                     /* flops.h training tokens of the run (NaN: unknown) */
    /* sinkstats.h's one number per run of the last probe (NaN, -1: not
     * stored in the run file) */
    double knorm_first, knorm_rest, vnorm_first, vnorm_rest, secondary, gate_first, gate_rest;
    int dormant, dormant_norm, resid_sinks;
    /* the same's ratios and summaries: key and value norm and input
     * gradient at position 0 over the median of the rest, gate_first /
     * gate_rest, the attention mass within SS_NEAR_DIST keys, the mean
     * W_V W_O effective rank (NaN: not stored) */
    double knorm_ratio, vnorm_ratio, grad_ratio, gate_ratio, dist_near, ov_rank;
    /* rs_needle_acc (gatelab eval --needle): the exact-match share over
     * every depth at LC_MULT[k] times the training length, [plain,
     * yarn] (NaN: not evaluated), and the rows each is over (-1: none
     * evaluated, or they differ between lengths) */
    double needle[2][4];
    int needle_rows;
} Row;

#endif
