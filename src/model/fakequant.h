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
 * of every window left in float. A pass without a FakeQuant runs no code
 * of this file. */
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
/* Record sub-layer output y of kind k, B sequences of n values each, when
 * q observes. In every mode a layer output (FQ_OUT_LAYER) closes the
 * layer: the next input tensors are the next layer's. */
void fq_output(FakeQuant *q, FqOut k, const float *y, int B, size_t n);
/* The statistics' means over every observed sequence (the open pass
 * closed first) into inf[FQ_OUT_COUNT] and *kurt; NaN when none. */
void fq_stats(FakeQuant *q, double *inf, double *kurt);

#endif
