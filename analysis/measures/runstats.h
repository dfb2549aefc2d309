/* runstats.h: the headline numbers of one probe (F-Attn, sink rate, gate
 * mean and sparsity, M-Act), computed from a ProbeRecord with metrics.h. The
 * text tools and the report both call these, so a number printed by
 * `gatelab sinks` is the same number that lands in results.csv. */
#ifndef GATELAB_RUNSTATS_H
#define GATELAB_RUNSTATS_H

#include "ops.h" /* YarnSplit */
#include "runfile_read.h"

/* First-token share of head (l,h): mean over t = 1..T-1 of A[t,0]. */
double rs_head_share(const ProbeRecord *p, int l, int h);
/* Mean of rs_head_share over heads of layer l; over all (l,h) for l < 0. */
double rs_share(const ProbeRecord *p, int l);

/* metrics.h sink_rate over the probe's per-sequence first columns: the
 * fraction of (sequence, l, h) with alpha_0 over the first `len` queries
 * > eps. NaN when the probe has no first columns. */
double rs_sink_rate(const ProbeRecord *p, double eps, int len);
/* alpha_0 of (l,h) over the first len queries, mean over sequences. */
double rs_head_alpha0(const ProbeRecord *p, int l, int h, int len);

/* Gate mean over layer l (all layers when l < 0), weighting layers by their
 * score count. Needs has_gate. */
double rs_gate_mean(const ProbeRecord *p, int l);
/* Gate mean of gate-head g in layer l, from gate_channel_mean: the mean
 * of head g's channels, or for a head-shared gate (gate_shared) the mean of
 * every channel, the same for each head. */
double rs_gate_head_mean(const ProbeRecord *p, int l, int g);
/* Fraction of scores below threshold index k (0: 0.5, 1: 0.1, 2: 1e-2,
 * 3: 1e-3) in layer l (all layers when l < 0). */
double rs_gate_below(const ProbeRecord *p, int l, int k);

/* The largest attention logit over layers (max_logit), NaN when the
 * probe predates it. */
double rs_max_logit(const ProbeRecord *p);
/* M-Act: mean over layers of max |h|. */
double rs_m_act(const ProbeRecord *p);
/* BOS activation: mean over layers of bos_max (position 0's max |h|);
 * NaN when the probe predates the mechanism fields. */
double rs_bos_act(const ProbeRecord *p);

/* Empty rows. When the probe stored row_empty and first_share_nonempty
 * (exact, per probe sequence and row): *empty = the share of rows t >= 1
 * with no mass on the real tokens, *share_nonempty = F-Attn over the other
 * rows. Older files with a sink slot: 0 and F-Attn (the slot takes mass
 * but empties no row). Older files otherwise, from the mass of the stored
 * map: over every (l, h)
 * and query t = 1..T-1 of the stored
 * (sequence-mean) map: *empty = 1 - mean row mass, *share_nonempty = sum
 * of A[t,0] / sum of row mass (F-Attn over the mass that exists; NaN when
 * there is none). When each row of each sequence is full (mass 1) or empty
 * (mass 0), as with the proxy normalisers (softpick), *empty is exactly the
 * share of empty rows and *share_nonempty F-Attn over the non-empty rows;
 * softmax gives 0 and F-Attn. */
void rs_mass(const ProbeRecord *p, double *empty, double *share_nonempty);
/* The sink slot's own share (sink-token, sink-logit, kv-bias): mean over
 * heads and queries t = 0..T-1 of attention_slot, layer l or all (l < 0);
 * NaN when the probe has no slot. */
double rs_slot_share(const ProbeRecord *p, int l);
/* Means over layers: kurtosis, top1/median (h_top3[l][0] / h_median[l],
 * layers with median 0 left out), first-token (BOS) norm ratio. */
double rs_kurtosis(const ProbeRecord *p);
double rs_top1_median(const ProbeRecord *p);
double rs_bos_ratio(const ProbeRecord *p);

/* The dormant-head class of head (l, h) by rule r (metrics.h head_dormant,
 * the declared rules of docs/metrics.md "Head probes"): 1 dormant, 0
 * active, -1 when the probe has no head_out_norm or a score the rule reads
 * is not finite. *score gets the head's output-norm score
 * (head_norm_scores; NaN without the array). `gatelab sinks` prints both
 * rules' classes; `intervene head-zero --heads dormant` zeroes the heads
 * the sink rule finds. */
int rs_head_dormant(const ProbeRecord *p, int l, int h, DormantRule r, double *score);

/* Long-context degradation of an evaluated run (gatelab eval, /lceval)
 * at length len under mode (RS_LC_PLAIN or RS_LC_YARN): the mean loss over
 * the positions past the training length T only (T..len-1, from the
 * per-bucket losses, metrics.h loss_beyond) minus the in-length mean, the
 * val loss at len = T (where YaRN's scale is 1). NaN when either length
 * was not evaluated under that mode, when len <= T, or, under YaRN, when
 * rs_yarn_split finds no rotary pair kept (YaRN untestable here). The
 * report's long-context section and results.csv's lc_deg_* columns both
 * use it. */
double rs_lc_deg_at(RunReader *r, const char *mode, int len);
/* The same at mult times the training length. */
double rs_lc_degradation(RunReader *r, const char *mode, int mult);

/* Needle retrieval of an evaluated run (gatelab eval --needle) at mult
 * times the training length under mode: the exact-match share over every
 * depth (the mean of /lceval's per-depth needle_acc, each over the same
 * needle_n rows), with the rows it is over (n_depths x needle_n) into
 * *rows. NaN (and *rows = 0) when that length was not evaluated with the
 * needle, or, under YaRN, when rs_rope's split keeps no rotary pair (as
 * rs_lc_deg_at). results.csv's needle_acc_* columns use it. */
double rs_needle_acc(RunReader *r, const char *mode, int mult, long long *rows);

/* The run's RoPE as /config states it (after its context extension, if
 * any: the extended length and base) and YaRN's by-parts split at that
 * training length (ops.h yarn_split; each pair's turns into turns[] when
 * not NULL, room for RS_ROPE_MAX_PAIRS). -1 when the run has no RoPE. */
#define RS_ROPE_MAX_PAIRS 512
typedef struct {
    int rope_dim, T;
    double base;
    YarnSplit split;
} RsRope;
int rs_rope(RunReader *r, RsRope *out, double *turns);

/* The architecture keys of /config (docs/MODEL.md) besides the gate: how
 * positions are encoded, the sliding window and the layers it applies to,
 * where the norms sit. X(index, key) for each, in results.csv's order;
 * the paper's architecture is config_defaults' value of each (RoPE, full
 * causal, pre-norm). */
#define RS_ARCH_KEYS(X) X(0, pos) X(1, window) X(2, window_layers) X(3, norm_place)
#define RS_N_ARCH 4
enum { RS_ARCH_POS, RS_ARCH_WINDOW, RS_ARCH_WINDOW_LAYERS, RS_ARCH_NORM_PLACE };
extern const char *const RS_ARCH_KEY[RS_N_ARCH];
/* The longest text of an architecture key's value, its NUL included. */
#define RS_ARCH_LEN 24
/* cfg = config_defaults with r's /config values of RS_ARCH_KEY; a key the
 * run file lacks (one written before it) keeps its default, and so does
 * window_layers when there is no window. */
void rs_arch_config(RunReader *r, Config *cfg);
/* Architecture key k of cfg as text into out[RS_ARCH_LEN], as config_set
 * reads it back ("rope", "128", "alternate"); "" for a k out of range. */
void rs_arch_value(const Config *cfg, int k, char *out);
/* Run r's architecture values: rs_arch_value of rs_arch_config, the
 * window and window_layers replaced by the layers' own windows where r
 * records them (/pretrained/layer_window, an inspected checkpoint): one
 * window W on every layer is "W" on "all", W on the even layers alone
 * (config_layer_window's alternate) "W" on "alternate", none "0", any
 * other pattern "W on k/L" (k of the L layers windowed; "<=W" when their
 * windows differ, W the largest) on "per-layer". The report's window
 * columns and every architecture match read these. */
void rs_arch_values(RunReader *r, char v[][RS_ARCH_LEN]);
/* Whether architecture key k takes value v in the paper's architecture. */
int rs_arch_is_paper(int k, const char *v);
/* The architecture values v[RS_N_ARCH] (rs_arch_value's text) as they
 * attend at length T, into out: query t sees keys (t - W, t] under a window
 * W, so a window of at least T keys is full causal attention there ("0";
 * a per-layer "W on k/L" too; never "<=W on k/L", whose windows differ and
 * W is only the largest),
 * and without a window window_layers takes config_defaults' value (it
 * changes nothing). T < 1 (not known) leaves a window as it is. Every
 * match and filter of the report by architecture compares these. */
void rs_arch_effective(const char v[][RS_ARCH_LEN], int T, char out[][RS_ARCH_LEN]);
/* The keys of rs_arch_effective(v, T) off the paper's as "window 16,
 * norm_place post" into out[n]; "" when they attend as the paper's
 * architecture. Two runs attend alike at their lengths when these agree. */
void rs_arch_note(const char v[][RS_ARCH_LEN], int T, char *out, size_t n);
/* Whether values v attend at length T as the paper's architecture: every
 * key of rs_arch_effective at its config_defaults value. */
int rs_arch_paper_at(const char v[][RS_ARCH_LEN], int T);
/* The longest length the run trained at: /config seq_len, or
 * extend_seq_len after a context extension (config_max_len); 0 when the
 * run has no seq_len (a checkpoint `gatelab inspect` probed: its probe's
 * length is the one it was run at). */
int rs_train_len(RunReader *r);
/* The keys a query of layer l of run r sees (0: full causal): an
 * inspected checkpoint's own window for that layer (its
 * /pretrained/layer_window), else cfg's (config_layer_window; cfg the
 * run's rs_arch_config). r NULL: cfg's. Every tool's and the report's
 * window of a run's layer is this. */
int rs_layer_window(RunReader *r, const Config *cfg, int l);
/* rs_layer_window of each of the L layers, in a malloc'd [L] (NULL when
 * out of memory). */
int *rs_layer_windows(RunReader *r, const Config *cfg, int L);
/* The slots the uniform reference of layer l of probe p of run r counts
 * (metrics.h uniform_slots): none without p's attention_slot, else the
 * probe's own count for that layer (runread_layer_slots: its layer_slots
 * entry, else its slots attribute: registers 4, a sink logit 1; l < 0:
 * the slots attribute, the count on the layers that have slots) or, in a
 * file written before probes recorded it, the run's config_attention_slots
 * or 1 for a checkpoint's sink logits; none when its maps are the proxy. */
int rs_uniform_slots(RunReader *r, const ProbeRecord *p, int l);
/* rs_uniform_slots of each of p's L layers, in a malloc'd [L] (NULL when
 * out of memory). */
int *rs_uniform_layer_slots(RunReader *r, const ProbeRecord *p);
/* The uniform first-token share of run r's own attention pattern at
 * probe p's length (docs/metrics.md): layer l's under its window
 * (rs_layer_window) with its slots (rs_uniform_slots), or for l < 0 the
 * mean over p's layers, each under its own window and slots and weighted
 * by its present heads (metrics.h uniform_share_layers, as rs_share
 * averages F-Attn over every present head). Every
 * uniform reference of the tools and the report is this. */
double rs_uniform_share(RunReader *r, const Config *cfg, const ProbeRecord *p, int l);
/* The same for uniform attention's alpha_0 over the first len queries
 * (metrics.h uniform_alpha0_layers), the sink rate's reference. */
double rs_uniform_alpha0(RunReader *r, const Config *cfg, const ProbeRecord *p, int len, int l);

/* The loss spikes of run r's training curve t (count_spikes at
 * SPIKE_WINDOW, with the run's own warmup and spike_factor, the config's
 * defaults where it records none): the count, and up to max indices into
 * t in idx (may be NULL). */
int rs_run_spikes(RunReader *r, const RunTrain *t, long long *idx, int max);

#endif
