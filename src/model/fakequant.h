/* fakequant.h: the fake quantization of a forward pass's linear layers,
 * and the sub-layer output statistics read beside it (docs/metrics.md
 * "Quantized evaluation").
 *
 * A FakeQuant is data the forward is handed (Intervention.quant): every
 * linear layer of the trained model (model.c) and of a checkpoint
 * (hf_steps.c) calls fq_linear with its input and weight just before its
 * product, in the same order in every pass, so the n-th call of a pass is
 * the n-th site. Weights are quantized once per site (symmetric, per
 * tensor, min-max) and kept; inputs each call (asymmetric), per tensor
 * on the site's static range: a running estimate (momentum FQ_MOMENTUM)
 * over the calibration passes, of the input's min-max or FQ_PERCENTILE
 * percentiles; or per token (FQ_W8A8_TOK), each row on its own min-max
 * with no calibration. The first keep_first rows of every window (the
 * sink positions) may be held out: left in float and left out of the
 * ranges. The LM head stays in float. The KV-cache modes (FQ_KV8, FQ_KV4)
 * leave every linear layer in float and quantize instead what a KV cache
 * stores: each attention layer hands its keys (after RoPE) and values to
 * fq_kv_cache, which fake-quantizes every token's every KV head on its own
 * min-max (asymmetric, no calibration), the first keep_first positions
 * of every window left in float. A mixture-of-experts MLP, whose experts
 * see rows that vary with the routing, quantizes as a W8A8 MoE kernel
 * would, through a fixed number of sites a layer whichever experts run
 * (fq_moe_input, fq_moe_hidden_sweep, fq_expert_weight, fq_moe_hidden). A
 * pass without a FakeQuant runs no code of this file. */
#ifndef GATELAB_FAKEQUANT_H
#define GATELAB_FAKEQUANT_H

#include <stddef.h>

typedef enum {
    FQ_FLOAT = 0,
    FQ_W8A8,
    FQ_W8A8_PCT,
    FQ_W4A4,
    FQ_W8A8_TOK,
    FQ_KV8,
    FQ_KV4,
    FQ_MODE_COUNT
} FqMode;

/* The modes' names, in FqMode order: `gatelab eval --quant`, a sweep
 * file's eval_quant and the run file's /quant/<mode> (runschema.h). */
#define FQ_NAME_FLOAT "float"
#define FQ_NAME_W8A8 "w8a8"
#define FQ_NAME_W8A8_PCT "w8a8-pct"
#define FQ_NAME_W4A4 "w4a4"
#define FQ_NAME_W8A8_TOK "w8a8-tok"
#define FQ_NAME_KV8 "kv8"
#define FQ_NAME_KV4 "kv4"
/* The quantized modes' names as a list, for help and refusal lines. */
#define FQ_NAMES_TEXT                                                                              \
    FQ_NAME_W8A8 ", " FQ_NAME_W8A8_PCT ", " FQ_NAME_W4A4 ", " FQ_NAME_W8A8_TOK ", " FQ_NAME_KV8    \
                 ", " FQ_NAME_KV4

#define FQ_PERCENTILE 99.99 /* w8a8-pct: the input range's upper percentile */
#define FQ_PERCENTILE_TEXT "99.99"
#define FQ_MOMENTUM 0.9 /* running range: r = m r + (1 - m) r_batch */
/* A quantized mode "destroys" the model when its perplexity exceeds this
 * many times the float perplexity on the same windows (dloss > ln 10):
 * Rahulrayy/attention-sinks-quant's DESTROYED flag (README "Method"; its
 * analysis/figures.py is_destroyed), under which a sink_dloss is a
 * difference between two broken models and ranks nothing. */
#define FQ_DESTROYED_PPL_RATIO 10.0
#define FQ_DESTROYED_TEXT "10"

/* An input tensor's role in its layer (fq_tensor_name): the calls of
 * fq_linear that read one tensor one after another (q, k, v; a GLU's gate
 * and up) are one input tensor, named by its place: before the layer's
 * attention, the first after it, the second, the third. */
typedef enum {
    FQ_T_ATTN_IN = 0,
    FQ_T_ATTN_OUT,
    FQ_T_MLP_IN,
    FQ_T_MLP_HIDDEN,
    FQ_T_OTHER,
    FQ_T_COUNT
} FqRole;

typedef struct {
    int layer;
    FqRole role;
} FqTensor;

/* The sub-layer outputs whose statistics a pass records. */
typedef enum { FQ_OUT_ATTN = 0, FQ_OUT_FFN, FQ_OUT_LAYER, FQ_OUT_COUNT } FqOut;

typedef struct {
    double lo, hi; /* the input's running range */
    int have;      /* calibration passes seen */
    const float *w_src;
    float *w; /* the quantized copy of w_src */
} FqSite;

/* An expert's weight slab (fq_expert_weight): the gate_up slab (gpt-oss's
 * fused one, or AFMoE's gate) and the up slab (AFMoE's, beside its gate)
 * multiply the MoE input, the down slab the MoE hidden activations. */
typedef enum { FQ_SLAB_GATE_UP = 0, FQ_SLAB_UP, FQ_SLAB_DOWN, FQ_SLAB_COUNT } FqSlab;

typedef struct FakeQuant {
    FqMode mode;
    int calibrating; /* 1: each input updates its site's range */
    int observe;     /* 1: fq_output records the statistics below */
    int failed;      /* out of memory in a hook: the pass is void */
    int site, n_sites;
    FqSite *sites;
    int keep_first; /* rows held out in float at the head of every window */
    int hold;       /* the input tensor (its index in a pass) left in float, whose
                       sites quantize neither weight nor input; -1: none */
    /* the input tensors of a pass, found as it runs (fq_tensor_name) */
    FqTensor *tensors;
    int n_tensors, tensor, layer, attn_seen, post_attn;
    const float *last_in;
    int windows;                 /* the open pass's windows: a site's rows are windows x length */
    float *buf, *scratch, *kept; /* the quantized input; the percentile's copy; the
                                    rows a range is taken over */
    size_t buf_n, scratch_n, kept_n;
    /* the open MoE layer: its input and hidden tensors (their indices in
       the pass), the hidden's site, 1 during a sweep that collects the
       hidden rows for its range; the quantized input, one expert's
       quantized slabs, the collected rows (moe_n values) */
    int moe_tensor[FQ_SLAB_COUNT], moe_site, moe_collect;
    float *moe_in, *moe_w[FQ_SLAB_COUNT], *moe_rows;
    size_t moe_in_n, moe_w_n[FQ_SLAB_COUNT], moe_rows_n, moe_n;
    /* the statistics, per sequence of the open pass (B of them) ... */
    double *seq_inf[FQ_OUT_COUNT]; /* max |y| of each output kind */
    double *seq_kurt;              /* max over layers of a layer output's kurtosis */
    int B, seq_cap, in_pass;
    /* ... and their sums over the sequences of the closed passes */
    double inf_sum[FQ_OUT_COUNT], kurt_sum;
    long long n_seqs;
} FakeQuant;

/* "layer 0 MLP input": the name of input tensor t, the j-th of a pass,
 * into buf[n]. */
void fq_tensor_name(const FqTensor *t, int j, char *buf, size_t n);

/* Name <-> mode; fq_mode_parse returns -1 for an unknown name. */
const char *fq_mode_name(FqMode m);
int fq_mode_parse(const char *name);
/* The weight and input bits of mode m, or its keys' and values' (float: 0). */
int fq_bits(FqMode m);
/* 1 when mode m quantizes the KV cache (and no linear layer). */
int fq_kv(FqMode m);
/* 1 when a mode whose loss exceeds the float loss by dloss destroys the
 * model (exp(dloss) > FQ_DESTROYED_PPL_RATIO; a NaN or infinite dloss
 * does), else 0. */
int fq_destroyed(double dloss);
/* 1 when mode m's input ranges come from calibration passes (per tensor),
 * 0 when each input is its own range (float, per token). */
int fq_calibrated(FqMode m);

/* A FakeQuant of mode m with no sites yet; fq_free releases it. */
void fq_init(FakeQuant *q, FqMode m);
void fq_free(FakeQuant *q);
/* Start a pass of B sequences: the first site next; the open pass's
 * statistics, if any, are added to the sums. */
void fq_begin(FakeQuant *q, int B);
/* One linear layer's product in[rows, cols] w[n_w]: *in and *w become
 * their fake-quantized copies (q's buffers, valid until the next call);
 * float mode leaves both. The rows are the open pass's windows one after
 * another, each rows / windows long; its first keep_first rows stay as
 * they are. A call whose input is not the last call's starts a new input
 * tensor; the sites of input tensor q->hold are left as they are. Out of memory, a per-tensor site
 * with no range yet or rows not a whole number of windows sets q->failed and leaves both. */
void fq_linear(FakeQuant *q, const float **in, size_t rows, size_t cols, const float **w,
               size_t n_w);
/* An attention layer's keys k and values v, B windows of T positions of
 * Hkv heads of dh values each, row stride ld floats between positions (0:
 * the packed Hkv * dh): in a KV mode each head's dh values at each
 * position t >= keep_first are fake-quantized in place, asymmetric on
 * their own min-max (fq_bits bits); other modes leave both. In every mode
 * it marks the layer's attention (the input tensors after it are its
 * output's and the MLP's). */
void fq_kv_cache(FakeQuant *q, float *k, float *v, int B, int T, int Hkv, int dh, size_t ld);
/* A mixture-of-experts MLP: its router's product goes through fq_linear
 * (a site on the MoE input tensor), then
 *   x = fq_moe_input(q, in, R, d);          one site: the MoE input
 *   while (fq_moe_hidden_sweep(q, tag))     one site: the MoE hidden
 *       every expert's gate_up product and activation, no down product;
 *   every expert's gate_up, activation and down product;
 * where each expert's slab, as it is handed out, is
 * fq_expert_weight(q, slab, w, n), its gate_up product reads rows of x,
 * and its activations go through fq_moe_hidden before its down product.
 * So a layer's MoE is three sites (router, input, hidden) and two input
 * tensors ("MLP input", "MLP hidden") in every pass, whatever the routing;
 * the expert slabs are quantized each time they are handed out and not
 * kept (one expert's slabs in memory). Holding the input tensor (q->hold)
 * leaves the router, x and the gate_up slabs in float; holding the hidden
 * leaves the activations and the down slabs.
 *
 * x: in[rows, cols] (the router's input, so the same input tensor; rows
 * are the pass's windows) fake-quantized as fq_linear quantizes an input
 * (per tensor on this site's range, which is the router site's since both
 * see the same rows, or per token; the first keep_first rows of every
 * window as they are) into q's buffer, valid until the next
 * fq_moe_input; in itself where nothing is quantized. */
const float *fq_moe_input(FakeQuant *q, const float *in, size_t rows, size_t cols);
/* Call before each sweep over the experts: the first call of a layer
 * starts its hidden tensor (tag: any pointer but the MoE input, e.g. the
 * activations' buffer) and returns 1 when the sweep is to collect the
 * hidden rows for the site's range (a calibration pass of a per-tensor
 * mode), else 0; the call after a collecting sweep takes its range over
 * all experts' rows collected (momentum as fq_linear's) and returns 0. */
int fq_moe_hidden_sweep(FakeQuant *q, const void *tag);
/* One expert's slab w[n] of kind s fake-quantized (symmetric, per tensor
 * of the slab, min-max) into q's buffer for s, valid until the next call
 * for s; w itself in float and KV modes and where its input tensor is
 * held. Out of memory sets q->failed and returns w. */
const float *fq_expert_weight(FakeQuant *q, FqSlab s, const float *w, size_t n);
/* One expert's hidden activations x[n, cols] (rows gathered from the
 * windows; pos[r] the row's place in its window): in a collecting sweep
 * the rows at pos >= keep_first are kept for the range and x is left;
 * else those rows are fake-quantized in place (asymmetric, on the hidden
 * site's range, or per token on each row's own min-max) and the rows at
 * pos < keep_first stay as they are. A row to quantize with no range yet,
 * or memory running out, sets q->failed. */
void fq_moe_hidden(FakeQuant *q, float *x, size_t n, size_t cols, const int *pos);
/* Record sub-layer output y of kind k, B sequences of n values each, when
 * q observes. In every mode a layer output (FQ_OUT_LAYER) closes the
 * layer: the next input tensors are the next layer's. */
void fq_output(FakeQuant *q, FqOut k, const float *y, int B, size_t n);
/* The statistics' means over every observed sequence (the open pass
 * closed first) into inf[FQ_OUT_COUNT] and *kurt; NaN when none. */
void fq_stats(FakeQuant *q, double *inf, double *kurt);

#endif
