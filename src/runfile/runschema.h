/* runschema.h: the run file's schema, in one place. Every HDF5 group,
 * dataset and attribute name the writers (runfile_*.c, checkpoint.c) and the
 * reader (runfile_read.c) use is a literal here and nowhere else (but the
 * intervention kinds' names, which the model's intervention.h owns), with
 * the probe's bin counts and thresholds and the one probe record both share.
 * The prose description is docs/runfile.md.
 *
 *  /                 attrs: schema="gatelab-run", schema_version, variant,
 *                    seed, data_seed, created, gatelab_version, n_params,
 *                    n_params_added, blas_library, blas_version, blas_core,
 *                    blas_core_how, simd_path, test_hooks (only under test
 *                    hooks), status (running|done|diverged; last)
 *  /config           one typed attr per key, attr "text" (resolved INI)
 *  /metrics/train/{step,loss,lr,grad_norm,tokens,seconds}  extendible 1-D
 *  /metrics/eval/{step,val_loss,val_bpb}                   extendible 1-D
 *  /probe/step_NNNNNNN/  attrs + RS_PROBE_ARRAYS; hidden/ sub-group
 *  /params/<name>    final weights, PyTorch [out,in] shapes
 *  /summary          attrs RS_SUM_*
 *  /lceval/<mode>/L_<len>  attrs RS_LC_*, dataset loss_by_bucket
 *  /intervene/<kind>/  one probe group (attrs + RS_PROBE_ARRAYS) rerun from
 *                    /params with one change, plus attrs RS_IV_* (below)
 *  /prompt/<name>/   one probe group (attrs + RS_PROBE_ARRAYS, N = 1, full
 *                    maps, tokens the prompt's ids) of a prompt of the user's
 *                    through /params or the checkpoint, plus attrs RS_PM_*
 *                    (gatelab probe)
 *  /pretrained       attrs RS_PT_*, datasets first_token, layer_window
 *                    (gatelab inspect)
 *  /stream/W_<w>     attrs RS_ST_*, datasets keep, loss_seq (gatelab stream)
 */
#ifndef GATELAB_RUNSCHEMA_H
#define GATELAB_RUNSCHEMA_H

#include "metrics.h" /* SINK_EPS_TEXT */

#define RUNFILE_SCHEMA "gatelab-run"
/* The version this build writes, and the oldest it reads. Version 2: every
 * probe group (and every /intervene group) carries RS_P_GATE_SHARED.
 * Version 1 (the files written before) may lack it; the reader upgrades
 * such a group in one place (runfile_read_probe.c upgrade_probe_v1). A
 * writer that edits or resumes an older file keeps its version. */
#define RUNFILE_SCHEMA_VERSION 2
#define RUNFILE_SCHEMA_OLDEST 1
#define CKPT_SCHEMA "gatelab-checkpoint"

/* ---- root attributes ---- */
#define RS_SCHEMA "schema"
#define RS_SCHEMA_VERSION "schema_version"
#define RS_VARIANT "variant"
/* the variant fields that differ from the baseline's, "key=value ..." */
#define RS_VARIANT_FIELDS "variant_fields"
#define RS_SEED "seed"
#define RS_DATA_SEED "data_seed"
#define RS_CREATED "created"
#define RS_GATELAB_VERSION "gatelab_version"
#define RS_N_PARAMS "n_params"
#define RS_N_PARAMS_ADDED "n_params_added"
#define RS_STATUS "status"
#define RS_SOURCE "source" /* "pretrained" for `gatelab inspect` runs */
#define RS_SOURCE_PRETRAINED "pretrained"
#define RS_VARIANT_PRETRAINED_FMT "pretrained:%s:gate-%s" /* architecture, RS_PT_ATTN_GATE */
/* the BLAS that trained the run (blas_core.h BlasInfo), at creation */
#define RS_BLAS_LIBRARY "blas_library"
#define RS_BLAS_VERSION "blas_version"
#define RS_BLAS_CORE "blas_core"
#define RS_BLAS_CORE_HOW "blas_core_how"
#define RS_TEST_HOOKS "test_hooks" /* only in a run made under test hooks (env.h) */
/* gatelab's own kernels' instruction path (simd.h), at creation */
#define RS_SIMD_PATH "simd_path"
/* who computed the model's products (ops.h gemm): "gatelab" (op_gemm.c,
 * the same bits on every SIMD path and BLAS core), "openblas" (sgemm on
 * blas_core: runs trained with the retired reproducible key), or for an inspected checkpoint
 * "openblas projections, gatelab attention"; at creation */
#define RS_PRODUCTS "products"
/* values of RS_STATUS (and of a sweep's status table) */
#define RS_STATUS_RUNNING "running"
#define RS_STATUS_DONE "done"
#define RS_STATUS_DIVERGED "diverged"

/* ---- groups ---- */
#define RS_G_CONFIG "config"
#define RS_G_METRICS "metrics"
#define RS_G_TRAIN "train"
#define RS_G_EVAL "eval"
#define RS_G_METRICS_TRAIN "metrics/train"
#define RS_G_METRICS_EVAL "metrics/eval"
#define RS_G_PROBE "probe"
#define RS_G_PARAMS "params"
#define RS_G_SUMMARY "summary"
#define RS_G_LCEVAL "lceval"
#define RS_G_HIDDEN "hidden"
#define RS_PROBE_STEP_FMT "step_%07lld" /* a probe group's name */
#define RS_PROBE_STEP_SCAN "step_%lld%c"
#define RS_PROBE_PATH_FMT "probe/step_%07lld"

/* ---- /config ---- */
#define RS_CONFIG_TEXT "text" /* the resolved INI text */
/* the typed attrs are named by config.c's key table (#key); the readers
 * of the analysis layer name the few they need here */
#define RS_CFG_SEQ_LEN "seq_len"
#define RS_CFG_LR "lr"
#define RS_CFG_WARMUP "warmup"
#define RS_CFG_SPIKE_FACTOR "spike_factor"
#define RS_CFG_DATA "data"
#define RS_CFG_GATE_SHARED "gate_shared"
#define RS_CFG_WINDOW "window" /* an inspected run's /config holds only this */

/* ---- dataset attributes ---- */
#define RS_DESCRIPTION "description"
#define RS_UNITS "units"

/* ---- /metrics series ---- */
#define RS_STEP "step"
#define RS_LOSS "loss"
#define RS_LR "lr"
#define RS_GRAD_NORM "grad_norm"
#define RS_TOKENS "tokens"
#define RS_SECONDS "seconds"
#define RS_VAL_LOSS "val_loss"
#define RS_VAL_BPB "val_bpb"

/* ---- /summary attributes ---- */
#define RS_SUM_STEPS_DONE "steps_done"
#define RS_SUM_TOKENS_PER_SEC "tokens_per_sec"
#define RS_SUM_WALL_SECONDS "wall_seconds"
#define RS_SUM_FINAL_VAL_LOSS "final_val_loss"
#define RS_SUM_DIVERGED_STEP "diverged_step"
#define RS_SUM_SPIKES "spikes"
#define RS_SUM_GFLOPS_PER_SEC "gflops_per_sec"
/* bigram-backcopy's Bayes floor on the val batches (data_task_floor),
 * written as the run starts; absent for corpus data */
#define RS_SUM_TASK_FLOOR "task_floor"

/* /protocol: the sweep's declared protocol, written as the run starts
 * (runfile_write_protocol); absent for a run no protocol declared */
#define RS_G_PROTOCOL "protocol"
#define RS_PR_TEXT "text"                 /* protocol.ini's exact bytes */
#define RS_PR_HASH "hash"                 /* "fnv1a64:<16 hex>" of them */
#define RS_PR_SWEEP_FILE "sweep_file"     /* the sweep file's path */
#define RS_PR_SWEEP_COMMIT "sweep_commit" /* its last commit; "" unknown */
#define RS_PR_SWEEP_DIRTY "sweep_dirty"   /* 1 edited since, 0 clean, -1 unknown */
#define RS_PR_UNCOMMITTED "uncommitted"   /* 1: the sweep ran with --uncommitted */

/* /data_files: the data files a run trained on (data = tokens or text),
 * written as the run starts (runfile_write_data_files): each file's real
 * absolute path and its hash ("fnv1a64:<16 hex>", input_hash in util.h);
 * absent in older files and for data without files */
#define RS_G_DATA_FILES "data_files"
#define RS_DF_TRAIN_FILE "train_file"
#define RS_DF_TRAIN_HASH "train_file_hash"
#define RS_DF_VAL_FILE "val_file"
#define RS_DF_VAL_HASH "val_file_hash"

/* ---- /lceval/<mode>/L_<len> ---- */
#define RS_LC_PLAIN "plain"
#define RS_LC_YARN "yarn"
#define RS_LC_LEN_FMT "L_%d"
#define RS_LC_LEN_SCAN "L_%lld%c"
#define RS_LC_VAL_LOSS RS_VAL_LOSS
#define RS_LC_PPL "ppl"
#define RS_LC_FIRST_SHARE "first_share"
#define RS_LC_UNIFORM_SHARE "uniform_share"
#define RS_LC_SINK_RATE "sink_rate_" SINK_EPS_TEXT /* "sink_rate_0.3" */
#define RS_LC_YARN_SCALE "yarn_scale"
#define RS_LC_N_SEQS "n_seqs"
#define RS_LC_TRAIN_LEN "train_len"
#define RS_LC_LOSS_BY_BUCKET "loss_by_bucket"
#define RS_LC_NEEDLE_DEPTH "needle_depth" /* optional: eval --needle */
#define RS_LC_NEEDLE_ACC "needle_acc"
#define RS_LC_NEEDLE_N "needle_n"

/* ---- /pretrained (runs of `gatelab inspect`) ---- */
#define RS_G_PRETRAINED "pretrained"
#define RS_PT_ARCHITECTURE "architecture"
#define RS_PT_MODEL_TYPE "model_type"
#define RS_PT_DTYPE "dtype"
#define RS_PT_ATTN_GATE "attn_output_gate" /* none | headwise | elementwise (hf_gate_name) */
#define RS_PT_MODEL_DIR "model_dir"
#define RS_PT_CONFIG_JSON "config_json"
#define RS_PT_IDENTITY "checkpoint_identity" /* hf_identity.h: files, bytes, hashes */
#define RS_PT_TOKENIZER "tokenizer"
#define RS_PT_INPUT "input"
#define RS_PT_INPUT_KIND "input_kind" /* RS_PT_INPUT_TEXT or RS_PT_INPUT_TOKENS */
#define RS_PT_INPUT_TEXT "text"
#define RS_PT_INPUT_TOKENS "tokens"
#define RS_PT_BOS_ID "bos_id"
#define RS_PT_THREADS "threads"
#define RS_PT_SECONDS RS_SECONDS
#define RS_PT_FIRST_TOKEN "first_token"
/* int32 [L]: the keys a query of layer l sees (its sliding window), 0 for
 * full causal attention; every inspected checkpoint's run has it */
#define RS_PT_LAYER_WINDOW "layer_window"

/* ---- /intervene/<kind> (gatelab intervene) ----
 * Each group is a probe group (the attrs and arrays of /probe/step_N, its
 * step attr the probe step whose tokens were used) plus the attrs below.
 * The kinds' names (the group names) are the model's: intervention.h's
 * RS_IV_NONE ... RS_IV_MACT_ZERO, a kind with one result per layer or per
 * constant followed by "-L<layer>" or "-c<c>" (gates-open-layer-L1,
 * gate-const-c0.5); "none" is the unchanged rerun every delta is taken
 * against. The attrs after clip_k are newer: a group without them reads
 * as layer -1, gate_const NaN, heads "", loss_none, mact_abs and
 * mact_ratio NaN (absent). */
#define RS_G_INTERVENE "intervene"
#define RS_IV_KIND "kind"          /* str attr: the kind (without the suffix) */
#define RS_IV_LOSS "loss"          /* f64: mean CE predicting tokens 2..T-1 */
#define RS_IV_LOSS_N "loss_n"      /* i64: predictions in that mean */
#define RS_IV_CLIP_K "clip_k"      /* i64: bos-clip's k (0 for other kinds) */
#define RS_IV_LAYER "layer"        /* i64: the one layer changed (-1: every layer) */
#define RS_IV_CONST_C "gate_const" /* f64: gate-const's c (NaN for other kinds) */
#define RS_IV_HEADS "heads"        /* str: head-zero's heads "L.H,..." ("" else) */
#define RS_IV_LOSS_NONE                                                                            \
    "loss_none" /* f64: the unchanged rerun's loss, the pair's                                     \
                   other half (= /intervene/none's loss) */
/* f64: the mact-* kinds' massive-activation thresholds (an entry is
 * massive when |h| > mact_abs and > mact_ratio x the median |h|,
 * massive_threshold); NaN for other kinds, and absent in older files */
#define RS_IV_MACT_ABS "mact_abs"
#define RS_IV_MACT_RATIO "mact_ratio"

/* ---- /prompt/<name> (gatelab probe) ----
 * A prompt of the user's (a text through the run's own tokenizer, or token
 * ids) run once through the run's final weights or its checkpoint by the
 * probe code of /probe and /intervene: one probe group of one sequence
 * (probe_n 1, its maps T x T, its tokens the ids the model read, a BOS the
 * tokenizer put first included; step: the run's last probe step), plus
 * the attrs below. The name is --name or one made from the text. */
#define RS_G_PROMPT "prompt"
#define RS_PM_TEXT "text"           /* str: the text given ("" when ids were) */
#define RS_PM_INPUT "input"         /* str: RS_PM_INPUT_TEXT or RS_PM_INPUT_TOKENS */
#define RS_PM_INPUT_TEXT "text"     /* tokenized by the run's tokenizer */
#define RS_PM_INPUT_TOKENS "tokens" /* ids as given (--tokens) */
#define RS_PM_LOSS "loss"           /* f64: mean CE predicting tokens 1..T-1 */
#define RS_PM_LOSS_N "loss_n"       /* i64: predictions in that mean */

/* ---- /stream/W_<window> (gatelab stream) ----
 * Loss over long sequences with every attention limited to `window` keys:
 * the first `keep` and the latest window - keep (an evicting KV cache),
 * against dense attention, scored on the predictions at positions >=
 * window only (where a key has been evicted). */
#define RS_G_STREAM "stream"
#define RS_ST_WINDOW_FMT "W_%d"
#define RS_ST_WINDOW_SCAN "W_%lld%c"
#define RS_ST_WINDOW "window" /* i64 */
#define RS_ST_LEN "len"       /* i64: sequence length */
#define RS_ST_N_SEQS "n_seqs" /* i64 */
#define RS_ST_KEEP "keep"     /* i32 dataset [K]: the kept-token counts */
#define RS_ST_LOSS "loss_seq" /* f64 dataset [K + 1, N]: row 0 dense, row 1 + i keep[i] */
#define RS_ST_DELTA "delta"   /* f64: mean over sequences of loss(keep[0]) - loss(keep[K-1]) */
#define RS_ST_P "p_paired"    /* f64: its two-sided paired t-test p */

/* ---- /quant (gatelab eval --quant) ----
 * The run's held-out loss with its linear layers fake-quantized
 * (fakequant.h), against the same windows in float, and the float pass's
 * sub-layer output statistics. /quant holds the float pass; /quant/<mode>
 * (mode: fakequant.h's FQ_NAMES_TEXT) each quantized one. */
#define RS_G_QUANT "quant"
#define RS_Q_LEN "len"               /* i64: the windows' length */
#define RS_Q_N_SEQS "n_seqs"         /* i64: sequences scored */
#define RS_Q_CALIB "calib_batches"   /* i64: calibration batches of the ranges */
#define RS_Q_PERCENTILE "percentile" /* f64: w8a8-pct's upper percentile */
#define RS_Q_VAL_LOSS RS_VAL_LOSS    /* f64: float (on /quant) or quantized loss */
#define RS_Q_PPL "ppl"               /* f64 */
#define RS_Q_DLOSS "dloss"           /* f64 on /quant/<mode>: its loss - the float loss */
#define RS_Q_INF_ATTN "inf_attn"     /* f64: max |y| of an attention output, mean over batches */
#define RS_Q_INF_FFN "inf_ffn"       /* f64: the same of an FFN output */
#define RS_Q_INF_LAYER "inf_layer"   /* f64: the same of a layer's output (residual stream) */
#define RS_Q_KURT_MAX                                                                              \
    "kurtosis_max" /* f64: max over layers of a layer output's kurtosis, mean over batches */
/* eval --quant-keep-first K: K on /quant (i64; absent: 0), and when K > 0
 * on /quant/<mode> (f64) the loss and dloss with the first K positions of
 * every window held out, and sink_dloss = dloss - dloss_keep */
#define RS_Q_KEEP_FIRST "keep_first"
#define RS_Q_VAL_LOSS_KEEP "val_loss_keep"
#define RS_Q_DLOSS_KEEP "dloss_keep"
#define RS_Q_SINK_DLOSS "sink_dloss"
/* i64 on /quant/<mode>: 1 when its every-row pass destroys the model
 * (fakequant.h fq_destroyed), else 0; absent in older files */
#define RS_Q_DESTROYED "destroyed"
/* eval --quant-source, on a per-tensor mode's /quant/<mode>: the input
 * tensor whose sites alone in float recover the most loss ("layer 0 MLP
 * input"; string), its layer (i64), that recovery (f64: dloss minus the
 * dloss with it in float) and the input tensors tried (i64); absent when
 * not evaluated */
#define RS_Q_SOURCE "source"
#define RS_Q_SOURCE_LAYER "source_layer"
#define RS_Q_SOURCE_RECOVERED "source_recovered"
#define RS_Q_SOURCE_TENSORS "source_tensors"

/* ---- checkpoint (RUN.h5.ckpt) ---- */
#define RS_CKPT_PARAMS RS_G_PARAMS
#define RS_CKPT_ADAM_M "adam_m"
#define RS_CKPT_ADAM_V "adam_v"

/* ---- /params/<name> attributes ---- */
#define RS_PARAM_DECAY "decay"
#define RS_PARAM_ADDED "added"
/* ---- /lceval/<mode>/L_<len> attribute ---- */
#define RS_LC_LEN "len"
/* ---- checkpoint attributes ---- */
#define RS_CKPT_N "n"
#define RS_CKPT_CONFIG_TEXT "config_text"

/* ---- probe group attributes ---- */
#define RS_P_STEP RS_STEP
#define RS_P_PROXY "proxy"
#define RS_P_NORMALISER "normaliser"
#define RS_P_GATE_CHANNELS "gate_channels"
#define RS_P_GATE_HEADS "gate_heads"
#define RS_P_GATE_BOUNDED "gate_bounded"
#define RS_P_GATE_SHARED "gate_shared" /* 1: one score vector gates every head */
#define RS_P_PROBE_N "probe_n"
#define RS_P_PROBE_LEN "probe_len"
#define RS_P_MAPS_LEN "maps_len" /* only when the maps cover fewer than T */
#define RS_P_SLOTS                                                                                 \
    "slots" /* extra keys a row attends beyond the tokens (attention_slot sums them) */
#define RS_P_THRESHOLDS "thresholds" /* attr of gate_below */
#define RS_P_RESID_FACTOR "factor"   /* attr of resid_share: RESID_SINK_FACTOR */

/* ---- probe sizes and thresholds (probe.c computes, analysis reads) ---- */
#define RS_GATE_BINS 50  /* gate_hist: equal bins over [0,1] */
#define RS_GATE_NBELOW 4 /* gate_below: one column per threshold */
#define RS_GATE_NSTATS 4 /* gate_stats: mean, min, max, count */
#define RS_HIDDEN_TOP 3  /* hidden/top3 */
/* gate_below's thresholds, in column order. Column RS_GATE_SPARSE_K is the
 * gate sparsity the report shows: the fraction of scores below
 * RS_GATE_SPARSE. */
#define RS_GATE_SPARSE 0.1
#define RS_GATE_SPARSE_K 1
static const double RS_GATE_BELOW_THR[RS_GATE_NBELOW] = {0.5, RS_GATE_SPARSE, 1e-2, 1e-3};

/* ---- probe arrays ----
 * X(member, ctype, h5 class, in hidden/, name, dims, kind, description)
 * dims, one letter per axis: L layers, H heads, T probe length, N probe
 * sequences, C gate channels, S sampled gate sequences, P side of the
 * stored attention maps (T, or the first maps_len < T positions of a
 * pretrained run; the attr RS_P_MAPS_LEN then says so), B = RS_GATE_BINS,
 * K = RS_GATE_NBELOW, M = RS_GATE_NSTATS, 3 = RS_HIDDEN_TOP, D the
 * residual stream's width, G the heads the gate serves (the attr gate_heads;
 * head-shared gates: the heads their weights are cut into before the mean). The reader
 * takes a letter's size from the first array that has it (in this order)
 * and checks every later one against it.
 * kind: RS_REQ always there, RS_OPT may be absent, RS_GATE only when the
 * variant has a gate (required then), RS_GATE_OPT optional among those. */
enum { RS_REQ, RS_OPT, RS_GATE, RS_GATE_OPT };
#define RS_GATE_BELOW_NAME "gate_below"    /* carries attr RS_P_THRESHOLDS */
#define RS_GATE_MARKER "gate_channel_mean" /* present iff the probe has gates */
#define RS_RESID_SHARE_NAME "resid_share"  /* carries attr RS_P_RESID_FACTOR */
#define RS_PROBE_ARRAYS(X)                                                                         \
    X(attention, float, RS_F32, 0, "attention", "LHPP", RS_REQ,                                    \
      "attention weights A[query, key] per layer and head, mean over probe "                       \
      "sequences")                                                                                 \
    X(first_col, float, RS_F32, 0, "first_col", "NLHT", RS_REQ,                                    \
      "A[t, 0] per probe sequence [seq, layer, head, t]")                                          \
    X(tokens, int, RS_I32, 0, RS_TOKENS, "NT", RS_REQ, "probe token ids [seq, t]")                 \
    X(alpha0, float, RS_F32, 0, "alpha0", "LH", RS_REQ,                                            \
      "Gu et al. alpha_0 per layer and head: mean over queries t >= 0 "                            \
      "(self term A[0,0] = 1 included) of A[t,0]; not the first-token share, "                     \
      "which averages t >= 1")                                                                     \
    X(attention_slot, float, RS_F32, 0, "attention_slot", "LHT", RS_OPT,                           \
      "weight each query gives the extra slot (sink logit or kv bias), mean "                      \
      "over sequences")                                                                            \
    X(row_empty, float, RS_F32, 0, "row_empty", "LH", RS_OPT,                                      \
      "fraction of rows (probe sequence x query t >= 1) whose attention on "                       \
      "the real tokens has no mass (softpick, clipped softmax), per layer "                        \
      "and head")                                                                                  \
    X(first_nonempty, float, RS_F32, 0, "first_share_nonempty", "LH", RS_OPT,                      \
      "first-token share over the rows with mass only: mean of A[t,0] over "                       \
      "(sequence, t >= 1) rows of row_empty's complement; NaN if none")                            \
    X(gate_channel_mean, double, RS_F64, 0, RS_GATE_MARKER, "LC", RS_GATE,                         \
      "mean gate score per layer and channel over the probe set")                                  \
    X(gate_hist, double, RS_F64, 0, "gate_hist", "LB", RS_GATE,                                    \
      "counts of gate scores in 50 equal bins over [0,1], per layer")                              \
    X(gate_below, double, RS_F64, 0, RS_GATE_BELOW_NAME, "LK", RS_GATE,                            \
      "fraction of gate scores below each threshold (attr thresholds), per "                       \
      "layer")                                                                                     \
    X(gate_stats, double, RS_F64, 0, "gate_stats", "LM", RS_GATE,                                  \
      "per layer: mean, min, max of gate scores and how many scores")                              \
    X(gate_sample, float, RS_F32, 0, "gate_sample", "LSTC", RS_GATE_OPT,                           \
      "activated gate scores [layer, seq, t, channel] of the first probe "                         \
      "sequences")                                                                                 \
    X(h_max, double, RS_F64, 1, "max", "L", RS_REQ,                                                \
      "max |h| of each block's output (residual stream), mean over probe "                         \
      "sequences")                                                                                 \
    X(h_median, double, RS_F64, 1, "median", "L", RS_REQ,                                          \
      "median |h| of each block's output, mean over probe sequences")                              \
    X(h_top3, double, RS_F64, 1, "top3", "L3", RS_REQ,                                             \
      "three largest |h| of each block's output, descending")                                      \
    X(h_kurtosis, double, RS_F64, 1, "kurtosis", "L", RS_REQ,                                      \
      "kurtosis mean((x-mu)^4)/(sigma^4+1e-6) of each block's output "                             \
      "(Gaussian = 3)")                                                                            \
    X(h_norm_ratio, double, RS_F64, 1, "norm_ratio", "L", RS_REQ,                                  \
      "per block: ||h_0|| / mean over t != 0 of ||h_t|| (first-token norm "                        \
      "ratio)")                                                                                    \
    X(bos_max, double, RS_F64, 1, "bos_max", "L", RS_OPT,                                          \
      "per block: max |h| over position 0's features, mean over sequences")                        \
    X(bos_argmax, int, RS_I32, 1, "bos_argmax", "L", RS_OPT,                                       \
      "per block: feature index of position 0's max |h|, the most frequent "                       \
      "over sequences (smallest on ties)")                                                         \
    X(bos_norm_ratio, double, RS_F64, 1, "bos_norm_ratio", "L", RS_OPT,                            \
      "per block: ||h_0|| / median over t >= 1 of ||h_t||, mean over "                             \
      "sequences")                                                                                 \
    X(tok_max, double, RS_F64, 1, "tok_max", "L", RS_OPT,                                          \
      "per block: max |h| of the largest non-first token (the t >= 1 with "                        \
      "the largest max |h|, earliest on ties), mean over sequences")                               \
    X(tok_argmax, int, RS_I32, 1, "tok_argmax", "L", RS_OPT,                                       \
      "per block: feature index of that token's max |h|, the most frequent "                       \
      "over sequences (smallest on ties)")                                                         \
    X(tok_norm_ratio, double, RS_F64, 1, "tok_norm_ratio", "L", RS_OPT,                            \
      "per block: that token's ||h_t|| / median over t >= 1 of ||h_t||, "                          \
      "mean over sequences")                                                                       \
    X(max_logit, double, RS_F64, 0, "max_logit", "L", RS_OPT,                                      \
      "per layer: the largest |attention logit| (q.k / sqrt(dh) before the normaliser) over "      \
      "probe sequences, heads and visible keys")                                                   \
    X(key_alpha, float, RS_F32, 0, "key_alpha", "NLHP", RS_OPT,                                    \
      "alpha_k per probe sequence [seq, layer, head, k]: mean over queries t = k..P-1 of A[t,k] "  \
      "on the sequence's map (docs/metrics.md, secondary sinks)")                                  \
    X(bos_cosine, float, RS_F32, 1, "bos_cosine", "NLT", RS_OPT,                                   \
      "cos(h_t, h_0) of each block's output per probe sequence [seq, layer, t]")                   \
    X(resid_share, double, RS_F64, 1, RS_RESID_SHARE_NAME, "LD", RS_OPT,                           \
      "per block and residual dimension i: fraction of tokens (sequence x position) with "         \
      "|h_t[i]| > RESID_SINK_FACTOR x the median |h| of the sequence's block output "              \
      "(attr factor)")                                                                             \
    X(key_norm, float, RS_F32, 0, "key_norm", "LHT", RS_OPT,                                       \
      "||k_t|| of the key head h reads (its KV group; as attention reads it: after QK-norm and "   \
      "RoPE), per layer, head and position, mean over probe sequences")                            \
    X(value_norm, float, RS_F32, 0, "value_norm", "LHT", RS_OPT,                                   \
      "||v_t|| of the value head h reads (after a G2 gate), per layer, head and position, mean "   \
      "over probe sequences")                                                                      \
    X(head_out_norm, float, RS_F32, 0, "head_out_norm", "LHT", RS_OPT,                             \
      "||o_t|| of head h's output as W_o reads it (after the Y modification and a G1 gate), per "  \
      "layer, head and position, mean over probe sequences")                                       \
    X(gate_first, double, RS_F64, 0, "gate_first", "L", RS_GATE_OPT,                               \
      "per layer: mean gate score at position 0 (over channels), mean over probe sequences")       \
    X(gate_rest, double, RS_F64, 0, "gate_rest", "L", RS_GATE_OPT,                                 \
      "per layer: mean gate score over positions t >= 1 and channels, mean over probe "            \
      "sequences")                                                                                 \
    X(ov_erank, double, RS_F64, 0, "ov_erank", "LH", RS_OPT,                                       \
      "effective rank (Roy & Vetterli 2007) of each head's W_V W_O (d x d, from the weights)")     \
    X(grad_in_norm, double, RS_F64, 0, "grad_in_norm", "LT", RS_OPT,                               \
      "per layer and position t: mean over probe sequences of the L2 norm of the gradient of "     \
      "the sequence's mean loss w.r.t. the residual stream entering the block (Chen & Yao "        \
      "2026's gradient sinks); trained runs' probes only")                                         \
    X(targets, int, RS_I32, 0, "targets", "NT", RS_OPT,                                            \
      "probe target ids [seq, t] grad_in_norm is scored against (-1: no target; the last "         \
      "position's is the token after the stored window); trained runs' probes only")               \
    X(gate_w_norm, double, RS_F64, 0, "gate_weight_norm", "LG", RS_GATE_OPT,                       \
      "per layer and gated head: Frobenius norm of the gate's weights that serve the head "        \
      "(biases excluded); trained runs' probes only")                                              \
    X(layer_heads, int, RS_I32, 0, "layer_heads", "L", RS_OPT,                                     \
      "query heads of each layer where some layer has fewer than H (a checkpoint's per-layer "     \
      "counts): heads h >= layer_heads[l] are absent, NaN in every per-head array (and their "     \
      "gate channels in the channel arrays); absent: every layer has H")                           \
    X(layer_slots, int, RS_I32, 0, "layer_slots", "L", RS_OPT,                                     \
      "extra slots of each layer where the layers' counts differ (a checkpoint with sink logits "  \
      "on some layers): the uniform reference of layer l counts layer_slots[l]; absent: every "    \
      "layer has the attr slots")

enum { RS_F32, RS_F64, RS_I32 };

/* One probe, as probe.c hands it to the writer and the reader returns it
 * (arrays malloc'd by the reader; NULL when absent). */
typedef struct {
    long long step;
    int L, H, N, T; /* layers, heads, probe sequences, length */
    int M;          /* side of the attention maps: T, or maps_len < T
                       (writer: 0 means T) */
    int D;          /* residual width of the D-letter arrays (0: none) */
    int proxy;      /* 1: Gu et al. |a|/sum|a| proxy was used */
    int slots;      /* keys each row attends beyond the tokens, whose weight
                       attention_slot sums: sink tokens, a kv-bias key, a
                       sink logit (0: none; reader: -1 when the file does
                       not say); on the layers that have slots, each
                       layer's own in layer_slots where they differ */
    char normaliser[64];
    int has_gate;      /* reader: 1 when the gate arrays are there */
    int gate_channels; /* C (0: no gate) */
    int gate_heads;    /* heads the gate serves: channels split into this
                          many heads, or (gate_shared) every head gated by
                          all C channels */
    int gate_shared;   /* 1: head-shared gate (g1-shared, g2-shared); version
                          1 files without the attr: /config gate_shared */
    int gate_bounded;  /* 1: scores in [0,1] (sigmoid family) */
    int gate_sample_n; /* S */
#define RS_MEMBER(member, ctype, cls, hid, name, dims, kind, desc) ctype *member;
    RS_PROBE_ARRAYS(RS_MEMBER)
#undef RS_MEMBER
} ProbeRecord;

#endif
