/* ops.h: every layer op as a forward/backward pair, in the style of llm.c.
 *
 * Conventions:
 * - Outputs come first, then inputs, then shapes.
 * - All tensors are float32, row-major, contiguous.
 * - Linear weights are stored as PyTorch stores nn.Linear.weight: [out, in].
 * - Backward functions ACCUMULATE (+=) into every gradient they are given,
 *   so callers zero gradient buffers once per step. A NULL gradient pointer
 *   means "not needed" and is skipped.
 * - Sizes are int in signatures; every product is computed in size_t.
 */
#ifndef GATELAB_OPS_H
#define GATELAB_OPS_H

#include <stddef.h>
#include "config.h"

/* ---- embedding (op_embed.c) ---- */
/* out[N,C] = tok[tokens[n], :] (+ pos[positions[n], :] when pos != NULL).
 * positions may be NULL, meaning n % T for a [B,T] layout. */
void embed_forward(float *out, const int *tokens, const float *tok, const float *pos, int N, int T,
                   int C);
void embed_backward(float *dtok, float *dpos, const float *dout, const int *tokens, int N, int T,
                    int C);

/* ---- products (op_gemm.c) ---- */
/* C[M,N] = alpha op(A) op(B) + beta C, row-major, op(X) = X^T when tX:
 * cblas_sgemm's contract. Each element is one FMA chain over k in order
 * from zero, so every SIMD path gives the same bits. */
void gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
          int ldb, float beta, float *C, int ldc);
/* gemm for a causal block: C's entries (i, j) with j > i + diag are not
 * needed and may be left as they were (the tiles wholly right of that
 * diagonal are skipped, the others cut to the columns they need). The
 * entries computed have gemm's bits. */
void gemm_lower(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc, int diag);
/* gemm (op(B) = B) where op(A) has structural zeros, as a causal
 * attention block's weights do: GEMM_ZEROS_TRAILING, op(A)[i, k] = +-0 for
 * k > i + diag (y = a v, dq = ds k); GEMM_ZEROS_LEADING, op(A)[i, k] = +-0
 * for k < i - diag (dv = a^T dy, dk = ds^T q). The result has gemm's bits:
 * a leading zero term leaves a chain's +0 as it was, and a trailing one
 * leaves every sum but -0 as it was, so the tiles skip them when the rows
 * of B that only zero terms meet are finite, and run a tile again whole
 * when one of its sums is -0; otherwise every chain is run whole. */
enum { GEMM_ZEROS_LEADING = 1, GEMM_ZEROS_TRAILING = 2 };
void gemm_zeros(int ta, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                int ldb, float beta, float *C, int ldc, int zeros, int diag);
/* Transposed operands packed ahead. gemm(ta, 1, ...) copies B^T into
 * panels of the SIMD path's width on every call; a GemmPacks holds those
 * panels for operands that many calls read unchanged (a step's forward
 * projections, read by every shard; a head's keys, read by each of its
 * query blocks). Use: gemm_packs_begin (or gemm_packs_over), gemm_packs_add
 * for each operand, gemm_packs_commit, gemm_packs_fill over the threads
 * (t = 0 .. nt - 1), then gemm_tb_packed or gemm_lower_packed while no
 * operand changes. The panels are copies, so those calls have gemm's bits. */
typedef struct {
    const float *B; /* B[N, K], row step ldb */
    int N, K, ldb;
    size_t off; /* its panels, at mem + off */
} GemmPack;
typedef struct GemmPacks {
    GemmPack *pack;
    int n, cap;
    int W; /* the panel width packed for (simd.h's path); 0: nothing is packed */
    float *mem;
    size_t used, size; /* floats */
    int fixed;         /* pack and mem are the caller's (gemm_packs_over) */
} GemmPacks;
/* Empties the set (its memory is kept) for the SIMD path now running. */
void gemm_packs_begin(GemmPacks *ps);
/* gemm_packs_begin on a set over the caller's memory (cap entries, size
 * floats of panels, best 64-byte aligned), which it never grows: what does not
 * fit leaves the set empty. gemm_packs_free leaves that memory alone. */
void gemm_packs_over(GemmPacks *ps, GemmPack *pack, int cap, float *mem, size_t size);
/* Adds B[N, K] (row step ldb), read as B^T; -1 when out of memory (the
 * set is then emptied: every product packs for itself). */
int gemm_packs_add(GemmPacks *ps, const float *B, int N, int K, int ldb);
/* Sizes the panels' memory after the last add; -1 as above. */
int gemm_packs_commit(GemmPacks *ps);
/* ps holding B[N, K] (row step ldb) alone, packed: a set already holding
 * just that operand is kept as it is (its values must not have changed). */
void gemm_packs_only(GemmPacks *ps, const float *B, int N, int K, int ldb);
/* Packs the operands t, t + nt, t + 2 nt, ... */
void gemm_packs_fill(const GemmPacks *ps, int t, int nt);
void gemm_packs_free(GemmPacks *ps);
/* gemm(ta, 1, ...), reading B^T's panels from ps (NULL: none) when ps
 * holds B with this K and ldb, and with N rows, or more when N is a
 * multiple of the panel width (B's first N rows are then its first
 * panels); else packing them as gemm does. */
void gemm_tb_packed(const GemmPacks *ps, int ta, int M, int N, int K, float alpha, const float *A,
                    int lda, const float *B, int ldb, float beta, float *C, int ldc);
/* gemm_lower(ta, 1, ...) on ps's panels, as gemm_tb_packed. */
void gemm_lower_packed(const GemmPacks *ps, int ta, int M, int N, int K, float alpha,
                       const float *A, int lda, const float *B, int ldb, float beta, float *C,
                       int ldc, int diag);
/* Route every gemm of this process to OpenBLAS's sgemm (on = 1) or to the
 * kernels above (on = 0, the default). Only `gatelab bench --blas` sets it:
 * training and every pass over a run's weights use the kernels above. */
void gemm_use_blas(int on);
int gemm_uses_blas(void);
/* The register blocking gemm runs on this CPU's SIMD path (simd.h), in
 * words: "avx512: tiles 8 x 32, ...". */
const char *gemm_kernel_name(void);

/* ---- linear layers (op_matmul.c) ---- */
/* out[M,N] = inp[M,K] @ w[N,K]^T (+ bias[N]); w in [out, in] layout. */
void matmul_forward(float *out, const float *inp, const float *w, const float *bias, int M, int K,
                    int N);
/* matmul_forward with w's panels from ps when it holds them (gemm_tb_packed). */
void matmul_forward_packed(const GemmPacks *ps, float *out, const float *inp, const float *w,
                           const float *bias, int M, int K, int N);
/* dinp[M,K] += dout @ w; dw[N,K] += dout^T @ inp; dbias[N] += sum_m dout */
void matmul_backward(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
                     const float *w, int M, int K, int N);
/* matmul_backward with dinp[M,K] = dout @ w written, not added to: no
 * zeroing first (the same bits but for a -0 that 0 + -0 made +0). */
void matmul_backward_set(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
                         const float *w, int M, int K, int N);
/* matmul_backward with each of dinp and dw written rather than added to
 * where `set` holds its bit (the same bits but for -0, as above). */
enum { MM_SET_DINP = 1u, MM_SET_DW = 2u, MM_SET_BOTH = 3u };
void matmul_backward_into(unsigned set, float *dinp, float *dw, float *dbias, const float *dout,
                          const float *inp, const float *w, int M, int K, int N);
/* A fused product's [N, P] operand from its column blocks: columns [off,
 * off + r) of cat = part [N, r]. A copy on the widest SIMD path (simd.h). */
void cols_gather(float *cat, const float *part, size_t N, size_t P, size_t off, size_t r);

/* ---- norms over the last dim C, for M rows (op_norm.c) ---- */
/* out = x / sqrt(mean(x^2) + eps) * w; rstd[M] saved for backward.
 * w may be NULL (no affine). */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *w, int M, int C,
                     float eps);
void rmsnorm_backward(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                      const float *rstd, int M, int C);
/* rmsnorm_backward with dinp written, not added to (the same bits but for
 * a -0 that 0 + -0 made +0); layernorm_backward_set likewise. */
void rmsnorm_backward_set(float *dinp, float *dw, const float *dout, const float *inp,
                          const float *w, const float *rstd, int M, int C);
/* out = (x - mean) * rstd * w + b; mean[M], rstd[M] saved. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int M, int C, float eps);
void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int M, int C);
void layernorm_backward_set(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                            const float *w, const float *mean, const float *rstd, int M, int C);

/* ---- rotary embedding (op_rope.c) ---- */
/* inv_freq[dh/2]: base^(-2i/dh), then YaRN NTK-by-parts when scale > 1
 * (alpha = 1, beta = 32, original length orig_len). Returns the attention
 * temperature factor m = 0.1 ln(scale) + 1 (1 when scale <= 1); callers
 * multiply q and k by m, so logits scale by m^2. */
float rope_inv_freq(float *inv_freq, int dh, float base, float scale, int orig_len);
/* YaRN's frequencies (Peng et al. 2023): pair i's keep share g_i in [0, 1]
 * blends inv_freq[i] = (1 - g_i) f_i / factor + g_i f_i, f_i =
 * base^(-2i/rd). The share ramps from 0 (interpolated; at or below
 * beta_slow turns within orig_len) to 1 (kept; at or above beta_fast
 * turns): linearly in the turns r_i (YARN_RAMP_TURNS, the paper's and the
 * trainer's), or linearly in the pair index i between the pairs that turn
 * beta_fast and beta_slow times (YARN_RAMP_PAIRS, the reference code's and
 * Hugging Face's, those bounds floored and ceiled when truncate is set). */
typedef enum { YARN_RAMP_TURNS, YARN_RAMP_PAIRS } YarnRamp;
typedef struct {
    double factor, orig_len, beta_fast, beta_slow;
    YarnRamp ramp;
    int truncate;
} YarnParams;
void yarn_inv_freq(float *inv_freq, int rd, double base, const YarnParams *y);
/* YaRN's attention temperature for a scale factor: 0.1 mscale ln(factor)
 * + 1, 1 at factor <= 1 (q and k are each multiplied by it). */
float yarn_attention_factor(float factor, float mscale);
/* YaRN's by-parts split at training length orig_len: rotary pair i turns
 * r_i = orig_len / wavelength_i times within it; a pair with r_i >=
 * YARN_BETA is kept, one with r_i <= YARN_ALPHA interpolated (its
 * frequency divided by the scale), one between ramped linearly. */
#define YARN_ALPHA 1.0
#define YARN_BETA 32.0
#define YARN_BETA_TEXT "32"
typedef struct {
    int pairs, kept, ramped, interpolated;
    double fastest; /* r_0, the fastest pair's turns */
} YarnSplit;
/* The split for dh-wide rotated heads at base; each pair's r_i into
 * turns[dh/2] when not NULL. */
YarnSplit yarn_split(int dh, double base, int orig_len, double *turns);
/* The shortest orig_len at which YaRN keeps a pair: the fastest pair (one
 * turn per 2*pi positions, whatever dh and base) reaches YARN_BETA turns. */
int yarn_keep_len(void);
/* cos/sin tables [T, dh/2]: angle = (pos0 + t) * inv_freq[i]. */
void rope_tables(float *cos_t, float *sin_t, const float *inv_freq, int T, int dh, int pos0);
/* Llama 3 rescaling of inv_freq[n] in place (rope_scaling rope_type
 * "llama3"): wavelengths above orig_len / low are divided by factor, those
 * below orig_len / high kept, the band between interpolated. */
void rope_llama3_scale(float *inv_freq, int n, double factor, double low, double high,
                       double orig_len);
/* In place on x[B,T,nh,dh], rotate-half convention (HF Llama/NeoX):
 * x1 = x[..., :dh/2], x2 = x[..., dh/2:];
 * out1 = x1 cos - x2 sin; out2 = x2 cos + x1 sin. */
void rope_forward(float *x, const float *cos_t, const float *sin_t, int B, int T, int nh, int dh);
/* The same from x into y: y = R x (y is x, or does not overlap it). */
void rope_forward_to(float *y, const float *x, const float *cos_t, const float *sin_t, int B, int T,
                     int nh, int dh);
/* The same on the first rd <= dh dims of each head only (partial rotary,
 * GPT-NeoX rotary_pct); tables [T, rd/2]. */
void rope_forward_part(float *x, const float *cos_t, const float *sin_t, int B, int T, int nh,
                       int dh, int rd);
/* In place: dx = R^T dout. */
void rope_backward(float *dx, const float *cos_t, const float *sin_t, int B, int T, int nh, int dh);

/* ---- causal attention with a choice of normaliser (op_attention.c) ---- */
/* Query rows per block: block [r0, r1) needs only keys [0, r1). */
#define ATT_BLOCK 64
/* The floats of the stack buffer in which attention_forward and
 * attention_backward pack one kv head's keys or values for the products
 * of all its query blocks (a head longer than that packs per block). */
#define ATT_PACK (32 * 512)

typedef struct {
    AttnNormaliser normaliser;
    int has_sink_logit; /* slot logit = sink_logit[h] (not scaled) */
    int has_kv_bias;    /* slot logit = q.k'_h * scale, slot value v'_h */
    float clip_gamma;   /* clipped softmax: gamma = -alpha / T_current */
    float softpick_eps;
    float scale; /* logit scale, normally 1/sqrt(dh) (times YaRN m^2) */
    /* FoX: key_bias[B,H,T] is added to every score of key j (per query
     * head); NULL for none. attention_backward accumulates d(key_bias)
     * into dkey_bias when both are given (a gradient output carried
     * beside the bias it belongs to). */
    const float *key_bias;
    float *dkey_bias;
    /* The window: with window > 0, query t sees key j only when j < keep
     * or t - j < window - keep (the first keep tokens and the latest ones,
     * window keys in all), as a KV cache that evicts all but its first
     * keep entries would; 0: every key j <= t. keep 0 is a sliding window
     * (training's, forward and backward); keep > 0 is streaming evaluation
     * (forward only). The extra keys are visible to every query. */
    int window, keep;
    /* ALiBi (Press et al. 2022): score t, j of query head h gains
     * -attention_alibi_slope(h, H) (t - j); the extra keys gain nothing.
     * A constant of the scores: no gradient. */
    int alibi;
    /* Logit soft-capping (Gemma 2): every score s of a key a query sees
     * becomes softcap tanh(s / softcap) after the scale, before the rest;
     * 0: off. Forward only (inference: attention_keep, attention_forward);
     * the backward does not read it. */
    float softcap;
    /* attention_forward's maps right of each block of ATT_BLOCK queries
     * (keys [r1, T) of rows [r0, r1)) already hold zeros, written by an
     * earlier call at this T that nothing has written over since: the call
     * leaves them as they are; 0: it writes them. Nothing but a reader of
     * whole maps (a probe) reads them. */
    int right_zeros;
} AttnSpec;
/* ALiBi's slope of query head h (0-based) of H: 2^(-8 (h + 1) / H). */
float attention_alibi_slope(int h, int H);
typedef struct {
    int B, T, H, Hkv, dh; /* head h reads kv head h / (H/Hkv) */
} AttnShape;
/* What attention reads: q[B,T,H,dh], k and v [B,T,Hkv,dh], with row strides
 * ldq and ldkv (0: the packed H*dh and Hkv*dh; wider when they are slices
 * of a fused projection; the backward reads packed tensors only), and the
 * learned extra keys sink_logit[H], kvb_k[H,dh], kvb_v[H,dh] (NULL when
 * unused). */
typedef struct {
    const float *q, *k, *v;
    int ldq, ldkv;
    const float *sink_logit, *kvb_k, *kvb_v;
} AttnIn;
/* What the forward writes and the backward reads again: y[B,T,H,dh] (packed);
 * att[B,H,T,T] the normalised weights a[t,j] (0 above the diagonal);
 * slot[B,H,T] the weight of the extra slot (sink logit or kv-bias) when the
 * spec has one, else it may be NULL; preatt[B,H,T,T] the scores before
 * normalising (but for stick-breaking it may be att itself: the weights are
 * then written over them, keys [0, r1) of each block's rows). */
typedef struct {
    float *y, *att, *slot, *preatt;
} AttnOut;
/* The forward's att, slot and preatt, as the backward reads them. */
typedef struct {
    const float *att, *slot, *preatt;
} AttnSaved;
/* The backward's gradients, each accumulated into (NULL: not wanted), but
 * for those set names: those are written whole, with no need to zero
 * them first (the same bits but for a -0 that 0 + -0 would make +0). */
enum { ATTN_SET_DQ = 1, ATTN_SET_DK = 2, ATTN_SET_DV = 4 };
typedef struct {
    float *dq, *dk, *dv, *dsink_logit, *dkvb_k, *dkvb_v;
    unsigned set; /* ATTN_SET_* bits */
} AttnGrad;
void attention_forward(const AttnOut *out, const AttnIn *in, const AttnSpec *spec,
                       const AttnShape *sh);
/* Whether attention_backward under spec reads the forward's scores
 * (AttnSaved.preatt) given the slot weights when has_slot: plain softmax
 * with them (or without a sink or kv key) and sigmoid read only att, so
 * their forward may write the scores into att's rows (AttnOut.preatt =
 * att) where nothing else reads them. */
int attention_backward_reads_scores(const AttnSpec *spec, int has_slot);
/* Floats of scratch attention_backward needs at length T. */
size_t attention_backward_scratch(int T);
void attention_backward(const AttnGrad *g, const float *dy, const AttnSaved *saved,
                        const AttnIn *in, const AttnSpec *spec, const AttnShape *sh,
                        float *scratch);
/* The forward of inference: the same arithmetic (but the softmax sums,
 * taken in vectorised partial sums, so a weight may differ in the last
 * bit), over `threads` workers (each calling sgemm itself: the caller runs OpenBLAS on one
 * thread) and keeping of the maps only first_col[B,H,T] = a[t,0] and, when
 * maps is given, maps[B,H,M,M] = a[t,s] for t, s < M (0 above the
 * diagonal). scratch: attention_keep_scratch(T, threads) floats. */
typedef struct {
    float *y, *first_col, *maps, *slot; /* slot as in AttnOut, or NULL */
    int M, threads;
    float *scratch;
} AttnKeep;
size_t attention_keep_scratch(int T, int threads);
void attention_keep(const AttnKeep *out, const AttnIn *in, const AttnSpec *spec,
                    const AttnShape *sh);

/* ---- literature remedies around the attention core ---- */
/* Stick-breaking rows (op_stickbreak.c), for NORMZ_STICKBREAK: over the n
 * visible scores s[0..n), a[j] = sigma(s[j]) prod_{j<k<n} (1 - sigma(s[k])),
 * computed in log space. Backward: d holds da on entry, ds on exit. */
void stickbreak_row_forward(float *a, const float *s, int n);
void stickbreak_row_backward(float *d, const float *a, const float *s, int n);

/* Scalable softmax (op_ssmax.c): out[B,T,H,dh] = q * s[h] * ln(n_t), so
 * every logit of query t is scaled by s_h ln(n_t), n_t = ssmax_keys(t,
 * window) the keys the query sees. window is the attention's
 * (AttnSpec.window: the keys a query sees in all, kept first ones
 * included; 0: none). */
int ssmax_keys(int t, int window); /* min(t + 1, window), or t + 1 when window is 0 */
void ssmax_forward(float *out, const float *q, const float *s, int B, int T, int H, int dh,
                   int window);
void ssmax_backward(float *dq, float *ds, const float *dout, const float *q, const float *s, int B,
                    int T, int H, int dh, int window);

/* Forgetting attention (op_fox.c): z[B,T,H] are the forget-gate logits,
 * f = sigmoid(z). kb[B,H,T] = -sum_{l<=j} log f[b,l,h], so that score
 * s_tj + kb[j] equals s_tj + sum_{l in (j,t]} log f_l up to the per-row
 * constant sum_{l<=t} log f_l, which softmax ignores. */
void fox_bias_forward(float *kb, const float *z, int B, int T, int H);
void fox_bias_backward(float *dz, const float *dkb, const float *z, int B, int T, int H);

/* Differential attention (op_diffattn.c). Each head's dh channels split in
 * two halves; x1 keeps the first half and zeroes the second, x2 the other
 * way round, so x1 . y1 is the dot product of the first halves. rows =
 * B*T*heads. */
void diff_split_forward(float *x1, float *x2, const float *x, size_t rows, int dh);
void diff_split_backward(float *dx, const float *dx1, const float *dx2, size_t rows, int dh);
/* lambda = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init, lam[4, half]
 * rows lq1, lk1, lq2, lk2. */
float diff_lambda_forward(const float *lam, int half, float lambda_init);
void diff_lambda_backward(float *dlam, float dlambda, const float *lam, int half);
/* lambda_init of 0-based layer l: 0.8 - 0.6 exp(-0.3 l). */
float diff_lambda_init(int layer);
/* out[n] = x1 - lambda x2 (out may alias x1). */
void diff_combine_forward(float *out, const float *x1, const float *x2, float lambda, size_t n);
/* dx2 = -lambda dout (overwritten); returns dlambda = -sum dout x2. */
float diff_combine_backward(float *dx2, const float *dout, const float *x2, float lambda, size_t n);

/* ---- elementwise activations (op_act.c) ---- */
/* out[n] = act(inp[n]) for the gate activations in config.h. */
void gate_act_forward(float *out, const float *inp, size_t n, GateAct act);
void gate_act_backward(float *dinp, const float *dout, const float *inp, size_t n, GateAct act);
/* SwiGLU: out[M,F] = silu(a) * b, for a, b [M,F]. Its backward and GELU's
 * write da, db (dinp) rather than add to them: see op_act.c. The backward
 * also writes the forward's out again into out (unless NULL), the same
 * bits from the sigmoid it computes anyway; out, da and db are then
 * buffers of their own, apart from each other and the inputs. */
void swiglu_forward(float *out, const float *a, const float *b, size_t n);
void swiglu_backward(float *da, float *db, float *out, const float *dout, const float *a,
                     const float *b, size_t n);
/* GELU, tanh approximation (torch approximate='tanh'). */
void gelu_forward(float *out, const float *inp, size_t n);
void gelu_backward(float *dinp, const float *dout, const float *inp, size_t n);
/* Inference only (no backward): the tanh GELU again, written x sigmoid(2u)
 * with fast_expf so the loop vectorises (equal to gelu_forward to float
 * rounding); the exact erf GELU; ReLU. */
void gelu_fast_forward(float *out, const float *inp, size_t n);
void gelu_erf_forward(float *out, const float *inp, size_t n);
void relu_forward(float *out, const float *inp, size_t n);
/* SiLU on its own (sdpa-silu). */
void silu_forward(float *out, const float *inp, size_t n);
void silu_backward(float *dinp, const float *dout, const float *inp, size_t n);

/* ---- gate application (op_gate.c) ---- */
/* x[M, G, Cg] is the gated tensor viewed as M rows of G groups of Cg;
 * s holds the activated scores.
 *   elementwise: s[M, G*Cg]   (per channel)
 *   headwise:    s[M, G]      (one per group, broadcast over Cg)
 *   shared:      s[M, Cg]     (one per channel, broadcast over G)
 *   const:       s[G*Cg]      (broadcast over rows)
 * mult: out = x * s; add: out = x + s (elementwise only).
 * kind selects the broadcast. The backward writes dx and adds into ds. */
typedef enum { GB_ELEM = 0, GB_HEAD, GB_SHARED, GB_CONST } GateBroadcast;
void gate_apply_forward(float *out, const float *x, const float *s, GateBroadcast kind,
                        GateForm form, int M, int G, int Cg);
void gate_apply_backward(float *dx, float *ds, const float *dout, const float *x, const float *s,
                         GateBroadcast kind, GateForm form, int M, int G, int Cg);
/* Head-shared scores: mean over G groups. out[M,Cg] = mean_g in[M,G,Cg]. */
void group_mean_forward(float *out, const float *inp, int M, int G, int Cg);
void group_mean_backward(float *dinp, const float *dout, int M, int G, int Cg);
/* head-gate-linear: z[M,H] = sum_c x[M, h*S + c] * w[h, c] + b[h], S = C/H. */
void headslice_linear_forward(float *z, const float *x, const float *w, const float *b, int M,
                              int H, int S);
void headslice_linear_backward(float *dx, float *dw, float *db, const float *dz, const float *x,
                               const float *w, int M, int H, int S);

/* The narrow-input gate: z[M,C] = sum_{j<K} x[M, j] * w[C, j], the first K
 * of each x row's D columns (K <= D). Backward adds into dx (may be NULL)
 * and dw. */
void prefix_linear_forward(float *z, const float *x, const float *w, int M, int D, int K, int C);
void prefix_linear_backward(float *dx, float *dw, const float *dz, const float *x, const float *w,
                            int M, int D, int K, int C);

/* ---- exclusive self-attention (op_xsa.c) ---- */
/* z[M,H,dh] = y - (y . v) v / (v . v + XSA_EPS) per row and head, v the
 * head's kv head (h / (H / Hkv)) of v[M,Hkv,dh]. */
#define XSA_EPS 1e-12f
void xsa_forward(float *z, const float *y, const float *v, int M, int H, int Hkv, int dh);
/* dy = d(z)'s gradient through y (written); dv += the part through v. */
void xsa_backward(float *dy, float *dv, const float *dz, const float *y, const float *v, int M,
                  int H, int Hkv, int dh);

/* ---- GatedNorm (op_gatednorm.c) ---- */
/* A norm's output y[N,d] gated by a rank-r MLP of itself (Qiu et al. 2026):
 * h = y W_down^T [N,r], s = silu(h), u = s W_up^T [N,d], out = y * sigmoid(u).
 * w_down [r,d], w_up [d,r]; h, s and u are kept for the backward. */
void gated_norm_forward(float *out, float *h, float *s, float *u, const float *y,
                        const float *w_down, const float *w_up, int N, int d, int r);
/* gated_norm_forward on the weights' panels from ps when it holds them
 * (matmul_forward_packed). */
void gated_norm_forward_packed(const GemmPacks *ps, float *out, float *h, float *s, float *u,
                               const float *y, const float *w_down, const float *w_up, int N, int d,
                               int r);
/* dy += d(out)'s gradient through y (both paths); dw_down, dw_up +=; du
 * [N,d], ds and dh [N,r] are scratch. */
void gated_norm_backward(float *dy, float *dw_down, float *dw_up, const float *dout, const float *y,
                         const float *h, const float *s, const float *u, const float *w_down,
                         const float *w_up, float *du, float *ds, float *dh, int N, int d, int r);

/* ---- residual (op_act.c) ---- */
void residual_forward(float *out, const float *a, const float *b, size_t n);

/* ---- loss (op_loss.c) ---- */
/* probs[N,V] = softmax(logits); losses[N] = -log probs[target]. Rows whose
 * target is < 0 are skipped (loss 0, no gradient). Returns the mean loss
 * over counted rows, and the count through *count. */
float crossentropy_forward(float *probs, float *losses, const float *logits, const int *targets,
                           int N, int V, int *count);
/* dlogits[N,V] = (probs - onehot) * dloss, dloss = 1/count per counted
 * row; zeros on the rows not counted. Written, not added to. */
void crossentropy_backward(float *dlogits, const float *probs, const int *targets, int N, int V,
                           int count);

/* ---- fake quantization (op_quant.c; docs/metrics.md "Quantized
 * evaluation") ---- */
/* x[n] in place on the symmetric per-tensor b-bit grid of max|x|. */
void fq_symmetric(float *x, size_t n, int bits);
/* dst[n] = src[n] on the asymmetric b-bit grid of [lo, hi] (dst may be src). */
void fq_asymmetric(float *dst, const float *src, size_t n, int bits, double lo, double hi);
/* The range of x[n] (n >= 1): min and max, or the (100 - pct)-th and
 * pct-th percentiles (scratch: n floats). */
void fq_minmax(const float *x, size_t n, double *lo, double *hi);
void fq_percentile(const float *x, size_t n, double pct, float *scratch, double *lo, double *hi);

#endif
