/* model.c: forward and backward of the decoder, straight-line over the
 * layers, for every variant. The exact maths is in docs/MODEL.md.
 *
 * N = B * Ti rows, Ti = T + extra_pos (the sink token, when there is one).
 * A variant never gets its own code path: each optional stage (a gate at
 * G1..G5, QK-norm, a Y modification, a slot in the attention) either runs
 * or its output pointer aliases its input.
 *
 * The stages around the blocks live beside this file: norm placement,
 * GatedNorm and the residual add in model_norm.c, the gate's scores in
 * model_gate.c (both declared in model_stages.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn_remedies.h"
#include "config_derive.h"
#include "intervention.h"
#include "model_stages.h"
#include "fakequant.h"
#include "ops.h"
#include "util.h"

/* ---- small helpers ---- */

static void zero(float *p, size_t n) { memset(p, 0, n * sizeof *p); }

static void scale_inplace(float *p, size_t n, float a) {
    for (size_t i = 0; i < n; i++) p[i] *= a;
}

/* Layer l's attention spec at internal length Ti. A sliding window of W
 * keys keeps the e prepended sink/register tokens visible besides the
 * latest W keys: the op's window of W + e keys with the first e kept. */
static void attn_spec(AttnSpec *sp, const Model *m, int Ti, int l) {
    const Config *c = &m->cfg;
    const int W = config_layer_window(c, l), e = m->dims.extra_pos;
    memset(sp, 0, sizeof *sp);
    sp->window = W > 0 ? W + e : 0;
    sp->keep = W > 0 ? e : 0;
    sp->alibi = c->pos == POS_ALIBI;
    sp->normaliser = c->normaliser;
    sp->has_sink_logit = c->normaliser == NORMZ_SINK_LOGIT;
    sp->has_kv_bias = c->kv_bias;
    sp->clip_gamma = -c->clip_alpha / (float)Ti;
    sp->softpick_eps = c->softpick_eps;
    sp->scale = 1.0f / sqrtf((float)m->dims.dh);
}

/* ---- RoPE tables ---- */

/* Rotated heads per q (or kv) head (config_rope_split). */
static int rope_split(const Model *m) { return config_rope_split(m->cfg.diff_attn); }

static void rope_prepare(const Model *m, RunState *s, int Ti) {
    const Config *c = &m->cfg;
    if (c->pos != POS_ROPE) return;
    if (s->rope_T == Ti && s->rope_scale == c->yarn_scale && s->rope_base == c->rope_base) return;
    const int rd = m->dims.dh / rope_split(m);
    s->rope_m = rope_inv_freq(s->sc->inv_freq, rd, c->rope_base, c->yarn_scale, c->seq_len);
    rope_tables(s->rope_cos, s->rope_sin, s->sc->inv_freq, Ti, rd, 0);
    s->rope_T = Ti;
    s->rope_scale = c->yarn_scale;
    s->rope_base = c->rope_base;
}

/* ---- the linear layers' fake-quantization hook ---- */

/* out[M,N] = in[M,K] w[N,K]^T, through the intervention's fake
 * quantization when it has one (fakequant.h); else the plain product, on
 * w's panels when m->packs holds them (a quantized copy of w it does not). */
static void linear_forward(const Model *m, const Intervention *iv, float *out, const float *in,
                           const float *w, int M, int K, int N) {
    if (iv && iv->quant) fq_linear(iv->quant, &in, (size_t)M, (size_t)K, &w, (size_t)N * K);
    matmul_forward_packed(m->packs, out, in, w, NULL, M, K, N);
}

/* Sub-layer output y of kind k, B sequences of n values, to the
 * intervention's statistics. */
static void linear_observe(const Intervention *iv, FqOut k, const float *y, int B, size_t n) {
    if (iv && iv->quant) fq_output(iv->quant, k, y, B, n);
}

/* ---- the fused input projection ---- */

/* params.c stores W_q, W_k, W_v and a FULL gate's W_gate adjacent, so from
 * lw->w_q on they are one [P, d] matrix (and their gradients one [P, d]
 * block of the gradient arena). The forward runs a product per part; the
 * backward gathers the parts' gradients into sc->cat [N, P] for one
 * product. */
typedef struct {
    int n;
    int rows[4];
    float *part[4]; /* [N, rows] activations or their gradients */
} Fused;

static Fused fused_parts(const Model *m, float *q, float *k, float *v, float *gz) {
    const Dims *D = &m->dims;
    Fused f = {3, {D->qdim, D->kvdim, D->kvdim, 0}, {q, k, v, NULL}};
    if (model_gate_in_projection(&m->cfg)) {
        f.rows[3] = D->gate_channels, f.part[3] = gz;
        f.n = 4;
    }
    return f;
}

/* cat[N, P] = the parts' [N, rows] buffers side by side. */
static void fused_gather(float *cat, const Fused *f, int N, int P) {
    size_t off = 0;
    for (int i = 0; i < f->n; i++) {
        cols_gather(cat, f->part[i], (size_t)N, (size_t)P, off, (size_t)f->rows[i]);
        off += (size_t)f->rows[i];
    }
}

/* q, k, v (and a FULL gate's z) = n1 [W_q; W_k; W_v; W_gate]^T, a product
 * per part on its rows (packed apart), straight into the parts. Fake
 * quantization sees the layer as one product (its site: the whole [P, d]
 * weight, one scale), so its copies are taken once and the parts read
 * their rows of them. */
static void fused_forward(const Model *m, LayerActs *a, const LayerWeights *lw, int N,
                          const Intervention *iv) {
    const int P = model_fused_cols(m), d = m->dims.d;
    Fused f = fused_parts(m, a->q, a->k, a->v, a->gz);
    const float *in = a->n1, *w = lw->w_q;
    if (iv && iv->quant) fq_linear(iv->quant, &in, (size_t)N, (size_t)d, &w, (size_t)P * d);
    for (int i = 0, off = 0; i < f.n; off += f.rows[i++])
        matmul_forward_packed(m->packs, f.part[i], in, w + (size_t)off * d, NULL, N, d, f.rows[i]);
}

/* dn += d(q, k, v, z) [W_q; W_k; W_v; W_gate] (dn_set: dn = instead);
 * d[W_q; ...; W_gate] = d(cat)^T n1. dgz is used only with a FULL gate. */
static void fused_backward(const Model *m, RunState *s, const LayerActs *a, const LayerWeights *lw,
                           LayerWeights *gw, float *dq, float *dk, float *dv, float *dgz, int N,
                           int dn_set) {
    Scratch *sc = s->sc;
    const int P = model_fused_cols(m), d = m->dims.d;
    Fused f = fused_parts(m, dq, dk, dv, dgz);
    fused_gather(sc->cat, &f, N, P);
    matmul_backward_into((dn_set ? MM_SET_DINP : 0u) | MM_SET_DW, sc->dn, gw->w_q, NULL, sc->cat,
                         a->n1, lw->w_q, N, d, P);
}

/* ---- one block forward ---- */

/* x -> rotated q, k and (gated) v: attn_norm, the projections, a gate at
 * G2..G4, QK-norm and RoPE. */
static void attn_inputs_forward(const Model *m, RunState *s, int l, int B, int Ti,
                                const Intervention *iv) {
    const Config *c = &m->cfg;
    const Dims *D = &m->dims;
    const LayerWeights *lw = &m->w.layer[l];
    LayerActs *a = &s->la[l];
    const int N = B * Ti;
    const size_t Nq = (size_t)N * D->qdim, Nk = (size_t)N * D->kvdim;
    GateBroadcast gk = gate_kind(c);
    sublayer_input(m, gated_norm_target(m, a->n1, &a->gn1), a->mean1, a->rstd1, a->x_in,
                   lw->attn_norm_w, lw->attn_norm_b, N);
    gated_norm_site_forward(m, a->n1, &a->gn1, lw->attn_gn_down, lw->attn_gn_up, N);
    fused_forward(m, a, lw, N, iv);
    if (c->gate_pos != GATE_NONE) gate_scores_forward(m, a, lw, N);
    if (iv && c->gate_pos != GATE_NONE)
        iv_gate_scores(iv, l, (float *)gate_applied(a, c), c->gate_input != GIN_CONST, B, Ti,
                       D->extra_pos, model_gate_probe_channels(m, NULL), c->gate_form);
    const float *ga = gate_applied(a, c);
    if (c->gate_pos == GATE_G4)
        gate_apply_forward(a->qg, a->q, ga, gk, c->gate_form, N, D->H, D->dh);
    if (c->gate_pos == GATE_G3)
        gate_apply_forward(a->kg, a->k, ga, gk, c->gate_form, N, D->Hkv, D->dh);
    if (c->gate_pos == GATE_G2)
        gate_apply_forward(a->vg, a->v, ga, gk, c->gate_form, N, D->Hkv, D->dh);
    if (c->qk_norm) {
        rmsnorm_forward(a->qn, a->qrstd, a->qg, lw->q_norm, N * D->H, D->dh, c->norm_eps);
        rmsnorm_forward(a->kn, a->krstd, a->kg, lw->k_norm, N * D->Hkv, D->dh, c->norm_eps);
    }
    if (c->pos == POS_ROPE) { /* rotated into qr, kr (in place where projected there) */
        const int sp = rope_split(m);
        rope_forward_to(a->qr, a->qn, s->rope_cos, s->rope_sin, B, Ti, D->H * sp, D->dh / sp);
        rope_forward_to(a->kr, a->kn, s->rope_cos, s->rope_sin, B, Ti, D->Hkv * sp, D->dh / sp);
        if (s->rope_m != 1.0f) {
            scale_inplace(a->qr, Nq, s->rope_m);
            scale_inplace(a->kr, Nk, s->rope_m);
        }
    } else { /* qr, kr are qn, kn where the projection wrote them there */
        if (a->qr != a->qn) memcpy(a->qr, a->qn, Nq * sizeof(float));
        if (a->kr != a->kn) memcpy(a->kr, a->kn, Nk * sizeof(float));
    }
    /* a KV cache's keys and values, as attention reads them */
    if (iv && iv->quant) fq_kv_cache(iv->quant, a->kr, a->vg, B, Ti, D->Hkv, D->dh, 0);
}

/* q, k, v -> x + o: attention, the Y modification, G1, W_o, G5 and the
 * residual add. */
static void attn_outputs_forward(const Model *m, RunState *s, int l, int B, int Ti,
                                 const Intervention *iv) {
    const Config *c = &m->cfg;
    const Dims *D = &m->dims;
    const LayerWeights *lw = &m->w.layer[l];
    LayerActs *a = &s->la[l];
    const int N = B * Ti;
    const float *ga = gate_applied(a, c);
    GateBroadcast gk = gate_kind(c);
    AttnSpec sp;
    attn_spec(&sp, m, Ti, l);
    if (iv && iv->window > 0 && (!sp.window || iv->window < sp.window))
        sp.window = iv->window, sp.keep = iv->keep; /* streaming evaluation */
    sp.right_zeros = layer_right_zeros(a, B, Ti);
    s->scores_kept = s->keep_scores || attention_backward_reads_scores(&sp, a->slot != NULL);
    float *pre = s->scores_kept ? a->preatt : a->att;
    if (s->rm)
        remedy_attention_forward(s->rm, m, l, a->y, a->att, a->slot, pre, a->qr, a->kr, a->vg,
                                 a->n1, &sp, B, Ti);
    else
        attention_forward(
            &(AttnOut){a->y, a->att, a->slot, pre},
            &(AttnIn){a->qr, a->kr, a->vg, 0, 0, lw->sink_logit, lw->kv_bias_k, lw->kv_bias_v}, &sp,
            &(AttnShape){B, Ti, D->H, D->Hkv, D->dh});
    if (c->xsa) xsa_forward(a->yx, a->y, a->vg, N, D->H, D->Hkv, D->dh);
    if (c->y_mod == YMOD_RMSNORM) {
        rmsnorm_forward(a->yrn, a->yrstd, a->yx, NULL, N * D->H, D->dh, c->norm_eps);
        gate_apply_forward(a->ym, a->yrn, lw->y_norm, GB_CONST, FORM_MULT, N, D->H, D->dh);
    } else if (c->y_mod == YMOD_SILU) {
        silu_forward(a->ym, a->yx, (size_t)N * D->qdim);
    }
    if (c->gate_pos == GATE_G1)
        gate_apply_forward(a->yg, a->ym, ga, gk, c->gate_form, N, D->H, D->dh);
    if (iv) iv_head_output(iv, l, a->yg, B, Ti, D->H, D->dh);
    linear_forward(m, iv, a->o, a->yg, lw->w_o, N, D->qdim, D->d);
    if (c->gate_pos == GATE_G5) gate_apply_forward(a->og, a->o, ga, gk, c->gate_form, N, 1, D->d);
    linear_observe(iv, FQ_OUT_ATTN, a->og, B, (size_t)Ti * D->d);
    NormSite ns = post_site(m, lw, a, 0);
    residual_place(m, a->x_mid, a->x_in, a->og, a->u1, s->sc->tmp, &ns, N);
}

static void attention_block_forward(const Model *m, RunState *s, int l, int B, int Ti,
                                    const Intervention *iv) {
    attn_inputs_forward(m, s, l, B, Ti, iv);
    attn_outputs_forward(m, s, l, B, Ti, iv);
}

static void mlp_block_forward(const Model *m, RunState *s, int l, int N, float *x_out,
                              const Intervention *iv) {
    const Dims *D = &m->dims;
    const LayerWeights *lw = &m->w.layer[l];
    LayerActs *a = &s->la[l];
    const size_t Nf = (size_t)N * D->ff;
    sublayer_input(m, gated_norm_target(m, a->n2, &a->gn2), a->mean2, a->rstd2, a->x_mid,
                   lw->mlp_norm_w, lw->mlp_norm_b, N);
    gated_norm_site_forward(m, a->n2, &a->gn2, lw->mlp_gn_down, lw->mlp_gn_up, N);
    if (m->cfg.mlp == MLP_SWIGLU) {
        linear_forward(m, iv, a->h1, a->n2, lw->w_gate, N, D->d, D->ff);
        linear_forward(m, iv, a->h3, a->n2, lw->w_up, N, D->d, D->ff);
        swiglu_forward(a->hact, a->h1, a->h3, Nf);
    } else {
        linear_forward(m, iv, a->h1, a->n2, lw->w_up, N, D->d, D->ff);
        gelu_forward(a->hact, a->h1, Nf);
    }
    /* sandwich keeps the MLP's output for its post-norm's backward */
    float *f = m->cfg.norm_place == NORMPLACE_SANDWICH ? a->u2 : s->sc->tmp;
    linear_forward(m, iv, f, a->hact, lw->w_down, N, D->ff, D->d);
    linear_observe(iv, FQ_OUT_FFN, f, s->Bc, (size_t)s->Ti * D->d);
    NormSite ns = post_site(m, lw, a, 1);
    residual_place(m, x_out, a->x_mid, f, a->u2, s->sc->tmp, &ns, N);
}

/* ---- embedding and head ---- */

/* Internal tokens/targets: with e sink/register tokens, rows 0..e-1 of each
 * sequence are those (token 0 as a placeholder, target -1 so the loss skips
 * them). */
static void prepare_tokens(const Model *m, RunState *s, const int *tokens, const int *targets,
                           int B, int T) {
    const int e = m->dims.extra_pos, Ti = T + e;
    for (int b = 0; b < B; b++) {
        for (int r = 0; r < e; r++) {
            s->tok_int[(size_t)b * Ti + r] = 0;
            s->tgt_int[(size_t)b * Ti + r] = -1;
        }
        for (int t = 0; t < T; t++) {
            size_t i = (size_t)b * Ti + e + t, r = (size_t)b * T + t;
            s->tok_int[i] = tokens[r];
            s->tgt_int[i] = targets ? targets[r] : -1;
            s->tgt_real[r] = targets ? targets[r] : -1;
        }
    }
}

static void embed_all(const Model *m, RunState *s, float *x, int B, int Ti) {
    const Dims *D = &m->dims;
    embed_forward(x, s->tok_int, m->w.tok_embed, m->w.pos_embed, B * Ti, Ti, D->d);
    if (!D->extra_pos) return;
    /* the sink/register rows r < e: sink_embed[r] (+ pos r) */
    const size_t ed = (size_t)D->extra_pos * D->d;
    for (int b = 0; b < B; b++) {
        float *row = x + (size_t)b * Ti * D->d;
        for (size_t i = 0; i < ed; i++)
            row[i] = m->w.sink_embed[i] + (m->w.pos_embed ? m->w.pos_embed[i] : 0.0f);
    }
}

static void embed_all_backward(const Model *m, RunState *s, float *dx, int B, int Ti) {
    const Dims *D = &m->dims;
    const Weights *g = &s->g;
    if (!D->extra_pos) {
        embed_backward(g->tok_embed, g->pos_embed, dx, s->tok_int, B * Ti, Ti, D->d);
        return;
    }
    /* positions see every row; token rows exclude the sink, whose gradient
     * goes to sink_embed instead */
    if (g->pos_embed) embed_backward(NULL, g->pos_embed, dx, s->tok_int, B * Ti, Ti, D->d);
    const size_t ed = (size_t)D->extra_pos * D->d;
    for (int b = 0; b < B; b++) {
        float *row = dx + (size_t)b * Ti * D->d;
        for (size_t i = 0; i < ed; i++) {
            g->sink_embed[i] += row[i];
            row[i] = 0.0f;
        }
    }
    embed_backward(g->tok_embed, NULL, dx, s->tok_int, B * Ti, Ti, D->d);
}

/* Copy the real (non-sink) rows of x [B,Ti,C] into out [B,T,C], or back. */
static void gather_real(float *out, const float *x, int B, int T, int e, int C, int scatter) {
    for (int b = 0; b < B; b++) {
        float *r = out + (size_t)b * T * C;
        const float *xi = x + ((size_t)b * (T + e) + e) * C;
        if (scatter) memcpy((float *)xi, r, (size_t)T * C * sizeof(float));
        else memcpy(r, xi, (size_t)T * C * sizeof(float));
    }
}

/* ---- the whole model ---- */

float model_forward(const Model *m, RunState *s, const int *tokens, const int *targets, int B,
                    int T) {
    return model_forward_iv(m, s, tokens, targets, B, T, NULL);
}

float model_forward_iv(const Model *m, RunState *s, const int *tokens, const int *targets, int B,
                       int T, const Intervention *iv) {
    const Dims *D = &m->dims;
    const int Ti = T + D->extra_pos, N = B * Ti, Nr = B * T;
    s->Bc = B;
    s->Tc = T;
    s->Ti = Ti;
    if (iv && iv->quant) fq_begin(iv->quant, B);
    prepare_tokens(m, s, tokens, targets, B, T);
    rope_prepare(m, s, Ti);
    embed_all(m, s, s->la[0].x_in, B, Ti);
    for (int l = 0; l < D->L; l++) {
        float *x_out = l + 1 < D->L ? s->la[l + 1].x_in : s->x_out;
        attention_block_forward(m, s, l, B, Ti, iv);
        mlp_block_forward(m, s, l, N, x_out, iv);
        if (iv) iv_residual(iv, l, x_out, B, Ti, D->extra_pos, D->d);
        linear_observe(iv, FQ_OUT_LAYER, x_out, B, (size_t)Ti * D->d);
    }
    norm_forward(m, gated_norm_target(m, s->xfn, &s->sc->gnf), s->fmean, s->frstd, s->x_out,
                 m->w.final_norm_w, m->w.final_norm_b, N);
    gated_norm_site_forward(m, s->xfn, &s->sc->gnf, m->w.final_gn_down, m->w.final_gn_up, N);
    if (D->extra_pos) gather_real(s->xreal, s->xfn, B, T, D->extra_pos, D->d, 0);
    matmul_forward_packed(m->packs, s->logits, s->xreal, m->w.lm_head, NULL, Nr, D->d, D->V);
    s->loss = 0.0f;
    s->loss_count = 0;
    if (targets)
        s->loss = crossentropy_forward(s->probs, s->losses, s->logits, s->tgt_real, Nr, D->V,
                                       &s->loss_count);
    return s->loss;
}

/* Up to layer 0's gate scores only (model.h); the rest of the RunState
 * is left as it was. */
void model_forward_gate0(const Model *m, RunState *s, const int *tokens, int B, int T) {
    const int Ti = T + m->dims.extra_pos;
    s->Bc = B, s->Tc = T, s->Ti = Ti;
    prepare_tokens(m, s, tokens, NULL, B, T);
    rope_prepare(m, s, Ti);
    embed_all(m, s, s->la[0].x_in, B, Ti);
    attn_inputs_forward(m, s, 0, B, Ti, NULL);
}

static void mlp_block_backward(const Model *m, RunState *s, int l, int N, float *dres) {
    const Dims *D = &m->dims;
    const LayerWeights *lw = &m->w.layer[l];
    LayerWeights *gw = &s->g.layer[l];
    LayerActs *a = &s->la[l];
    Scratch *sc = s->sc;
    const size_t Nf = (size_t)N * D->ff;
    NormSite ns = post_site(m, lw, a, 1), gs = post_site(m, gw, a, 1);
    const float *df = residual_place_backward(m, dres, sc->dpost, a->u2, a->u2, &ns, &gs, N);
    const int swiglu = m->cfg.mlp == MLP_SWIGLU;
    /* SwiGLU's hact is the scratch's (the last forward's): its backward
     * writes this layer's again before the product reads it */
    matmul_backward_into(swiglu ? MM_SET_DINP : MM_SET_BOTH, sc->dhact, swiglu ? NULL : gw->w_down,
                         NULL, df, a->hact, lw->w_down, N, D->ff, D->d);
    if (swiglu) { /* these write dh1, dh3: no zeroing */
        swiglu_backward(sc->dh1, sc->dh3, a->hact, sc->dhact, a->h1, a->h3, Nf);
        matmul_backward_into(MM_SET_DW, NULL, gw->w_down, NULL, df, a->hact, lw->w_down, N, D->ff,
                             D->d);
        matmul_backward_into(MM_SET_BOTH, sc->dn, gw->w_gate, NULL, sc->dh1, a->n2, lw->w_gate, N,
                             D->d, D->ff);
        matmul_backward_into(MM_SET_DW, sc->dn, gw->w_up, NULL, sc->dh3, a->n2, lw->w_up, N, D->d,
                             D->ff);
    } else {
        gelu_backward(sc->dh1, sc->dhact, a->h1, Nf);
        matmul_backward_into(MM_SET_BOTH, sc->dn, gw->w_up, NULL, sc->dh1, a->n2, lw->w_up, N, D->d,
                             D->ff);
    }
    const float *dn = gated_norm_site_backward(m, sc, sc->dn, &a->gn2, lw->mlp_gn_down,
                                               lw->mlp_gn_up, gw->mlp_gn_down, gw->mlp_gn_up, N);
    sublayer_input_backward(m, dres, gw->mlp_norm_w, gw->mlp_norm_b, dn, a->x_mid, lw->mlp_norm_w,
                            a->mean2, a->rstd2, N);
}

#define SWAP(a, b)                                                                                 \
    do {                                                                                           \
        float *t_ = (a);                                                                           \
        (a) = (b);                                                                                 \
        (b) = t_;                                                                                  \
    } while (0)

/* What the three stages of the attention backward share. */
typedef struct {
    const Model *m;
    RunState *s;
    const LayerWeights *lw;
    LayerWeights *gw;
    LayerActs *a;
    const float *ga; /* the gate's applied scores, or NULL */
    int B, Ti, N;
} AttnBack;

/* From d(o after G5) to d(y): G5, W_o, G1, the Y modification and XSA in
 * reverse. Returns the buffer holding d(y), the SDPA output; under XSA,
 * sc->dv holds XSA's part of d(v). */
static float *attn_output_backward(const AttnBack *ab, const float *dres) {
    const Config *c = &ab->m->cfg;
    const Dims *D = &ab->m->dims;
    const LayerActs *a = ab->a;
    Scratch *sc = ab->s->sc;
    const int N = ab->N;
    const size_t Nq = (size_t)N * D->qdim;
    const float *dog = dres;
    if (c->gate_pos == GATE_G5) {
        gate_apply_back(ab->m, sc->tmp, sc->dga, dres, a->o, ab->ga, N, 1, D->d);
        dog = sc->tmp;
    }
    /* dcur is always the gradient w.r.t. the latest stage's output */
    float *dcur = sc->dy, *dalt = sc->dy2;
    matmul_backward_into(MM_SET_BOTH, dcur, ab->gw->w_o, NULL, dog, a->yg, ab->lw->w_o, N, D->qdim,
                         D->d);
    if (c->gate_pos == GATE_G1) {
        gate_apply_back(ab->m, dalt, sc->dga, dcur, a->ym, ab->ga, N, D->H, D->dh);
        SWAP(dcur, dalt);
    }
    if (c->y_mod == YMOD_RMSNORM) {
        gate_apply_backward(dalt, ab->gw->y_norm, dcur, a->yrn, ab->lw->y_norm, GB_CONST, FORM_MULT,
                            N, D->H, D->dh);
        SWAP(dcur, dalt);
        rmsnorm_backward_set(dalt, NULL, dcur, a->yx, NULL, a->yrstd, N * D->H, D->dh);
        SWAP(dcur, dalt);
    } else if (c->y_mod == YMOD_SILU) {
        zero(dalt, Nq);
        silu_backward(dalt, dcur, a->yx, Nq);
        SWAP(dcur, dalt);
    }
    if (c->xsa) { /* XSA's part of d(v) starts sc->dv, the core adds to it */
        zero(sc->dv, (size_t)N * D->kvdim);
        xsa_backward(dalt, sc->dv, dcur, a->y, a->vg, N, D->H, D->Hkv, D->dh);
        SWAP(dcur, dalt);
    }
    return dcur;
}

/* From d(y) to d(q, k, v) as the projections produced them: the attention
 * core, RoPE and QK-norm in reverse. Leaves the results in *dq, *dk, *dv. */
static void attn_core_backward(const AttnBack *ab, const float *dy, float **dq_out, float **dk_out,
                               float **dv_out) {
    const Config *c = &ab->m->cfg;
    const Dims *D = &ab->m->dims;
    const LayerActs *a = ab->a;
    const LayerWeights *lw = ab->lw;
    LayerWeights *gw = ab->gw;
    RunState *s = ab->s;
    Scratch *sc = s->sc;
    const int N = ab->N, B = ab->B, Ti = ab->Ti;
    const size_t Nq = (size_t)N * D->qdim, Nk = (size_t)N * D->kvdim;
    float *dq = sc->dq, *dk = sc->dk, *dv = sc->dv;
    AttnSpec sp;
    attn_spec(&sp, ab->m, Ti, (int)(a - s->la));
    /* under XSA dv holds XSA's part already: the core adds to it */
    unsigned set = ATTN_SET_DQ | ATTN_SET_DK | (c->xsa ? 0u : ATTN_SET_DV);
    if (s->rm) {
        zero(dq, Nq);
        zero(dk, Nk);
        if (!c->xsa) zero(dv, Nk);
        remedy_attention_backward(s->rm, ab->m, (int)(a - s->la), gw, dq, dk, dv, dy, a->att,
                                  a->slot, a->preatt, a->qr, a->kr, a->vg, &sp, B, Ti, sc->attn);
    } else
        attention_backward(
            &(AttnGrad){dq, dk, dv, gw->sink_logit, gw->kv_bias_k, gw->kv_bias_v, set}, dy,
            &(AttnSaved){a->att, a->slot, a->preatt},
            &(AttnIn){a->qr, a->kr, a->vg, 0, 0, lw->sink_logit, lw->kv_bias_k, lw->kv_bias_v}, &sp,
            &(AttnShape){B, Ti, D->H, D->Hkv, D->dh}, sc->attn);
    if (c->pos == POS_ROPE) {
        if (s->rope_m != 1.0f) {
            scale_inplace(dq, Nq, s->rope_m);
            scale_inplace(dk, Nk, s->rope_m);
        }
        const int sp = rope_split(ab->m);
        rope_backward(dq, s->rope_cos, s->rope_sin, B, Ti, D->H * sp, D->dh / sp);
        rope_backward(dk, s->rope_cos, s->rope_sin, B, Ti, D->Hkv * sp, D->dh / sp);
    }
    if (c->qk_norm) {
        rmsnorm_backward_set(sc->dq2, gw->q_norm, dq, a->qg, lw->q_norm, a->qrstd, N * D->H, D->dh);
        rmsnorm_backward_set(sc->dk2, gw->k_norm, dk, a->kg, lw->k_norm, a->krstd, N * D->Hkv,
                             D->dh);
        dq = sc->dq2;
        dk = sc->dk2;
    }
    *dq_out = dq, *dk_out = dk, *dv_out = dv;
}

/* From d(q, k, v) to d(x): G2..G4, the projections, the gate's scores and
 * attn_norm in reverse; adds into dres. */
static void attn_input_backward(const AttnBack *ab, float *dq, float *dk, float *dv, float *dres) {
    const Config *c = &ab->m->cfg;
    const Dims *D = &ab->m->dims;
    const LayerActs *a = ab->a;
    const LayerWeights *lw = ab->lw;
    LayerWeights *gw = ab->gw;
    Scratch *sc = ab->s->sc;
    const int N = ab->N;
    /* the buffer not holding dq (or dk, dv) is free for the gate's output */
    float *q_free = dq == sc->dq ? sc->dq2 : sc->dq, *k_free = dk == sc->dk ? sc->dk2 : sc->dk;
    if (c->gate_pos == GATE_G4) {
        gate_apply_back(ab->m, q_free, sc->dga, dq, a->q, ab->ga, N, D->H, D->dh);
        dq = q_free;
    } else if (c->gate_pos == GATE_G3) {
        gate_apply_back(ab->m, k_free, sc->dga, dk, a->k, ab->ga, N, D->Hkv, D->dh);
        dk = k_free;
    } else if (c->gate_pos == GATE_G2) {
        gate_apply_back(ab->m, sc->dv2, sc->dga, dv, a->v, ab->ga, N, D->Hkv, D->dh);
        dv = sc->dv2;
    }
    if (ab->ga) { /* the scores' part first, then the projections' */
        zero(sc->dn, (size_t)N * D->d);
        gate_scores_backward(ab->m, ab->s, ab->a, lw, gw, sc->dga, sc->dn, N);
    }
    fused_backward(ab->m, ab->s, a, lw, gw, dq, dk, dv, sc->dgz, N, !ab->ga);
    if (ab->s->rm)
        remedy_input_backward(ab->s->rm, ab->m, (int)(a - ab->s->la), gw, sc->dn, a->n1, ab->B,
                              ab->Ti);
    const float *dn = gated_norm_site_backward(ab->m, sc, sc->dn, &a->gn1, lw->attn_gn_down,
                                               lw->attn_gn_up, gw->attn_gn_down, gw->attn_gn_up, N);
    sublayer_input_backward(ab->m, dres, gw->attn_norm_w, gw->attn_norm_b, dn, a->x_in,
                            lw->attn_norm_w, a->mean1, a->rstd1, N);
}

static void attention_block_backward(const Model *m, RunState *s, int l, int B, int Ti,
                                     float *dres) {
    const Config *c = &m->cfg;
    LayerActs *a = &s->la[l];
    AttnBack ab = {m, s, &m->w.layer[l], &s->g.layer[l], a, NULL, B, Ti, B * Ti};
    if (c->gate_pos != GATE_NONE) {
        ab.ga = gate_applied(a, c);
        zero(s->sc->dga, gate_applied_len(m, ab.N));
    }
    float *dq, *dk, *dv;
    NormSite ns = post_site(m, ab.lw, a, 0), gs = post_site(m, ab.gw, a, 0);
    float *dy = attn_output_backward(
        &ab, residual_place_backward(m, dres, s->sc->dpost, a->og, a->u1, &ns, &gs, ab.Ti * B));
    attn_core_backward(&ab, dy, &dq, &dk, &dv);
    attn_input_backward(&ab, dq, dk, dv, dres);
}

/* The L2 norm of each of the N rows of dres [N, d] into out[N]. */
static void row_norms(float *out, const float *dres, int N, int d) {
    for (int r = 0; r < N; r++) {
        double ss = 0.0;
        for (int j = 0; j < d; j++) ss += (double)dres[(size_t)r * d + j] * dres[(size_t)r * d + j];
        out[r] = (float)sqrt(ss);
    }
}

/* model_backward; with in_norms, also block l's input-gradient row norms
 * into in_norms + l * N (model_backward_input_norms). */
static void backward(const Model *m, RunState *s, float *in_norms) {
    const Dims *D = &m->dims;
    const int B = s->Bc, T = s->Tc, Ti = s->Ti, N = B * Ti, Nr = B * T;
    Scratch *sc = s->sc;
    if (s->loss_count == 0) {
        zero(s->grads, m->table.total);
        return;
    }
    grads_zero_added(m, s);
    /* head: logits = xreal lm_head^T */
    crossentropy_backward(sc->dlogits, s->probs, s->tgt_real, Nr, D->V, s->loss_count);
    float *dxr = D->extra_pos ? sc->tmp : sc->dxfn;
    matmul_backward_into(MM_SET_BOTH, dxr, s->g.lm_head, NULL, sc->dlogits, s->xreal, m->w.lm_head,
                         Nr, D->d, D->V);
    if (D->extra_pos) {
        zero(sc->dxfn, (size_t)N * D->d);
        gather_real(dxr, sc->dxfn, B, T, D->extra_pos, D->d, 1);
    }
    /* dres carries the gradient of the residual stream down the layers */
    float *dres = sc->dres;
    const float *dxn =
        gated_norm_site_backward(m, sc, sc->dxfn, &sc->gnf, m->w.final_gn_down, m->w.final_gn_up,
                                 s->g.final_gn_down, s->g.final_gn_up, N);
    norm_backward(m, 1, dres, s->g.final_norm_w, s->g.final_norm_b, dxn, s->x_out,
                  m->w.final_norm_w, s->fmean, s->frstd, N);
    for (int l = D->L - 1; l >= 0; l--) {
        mlp_block_backward(m, s, l, N, dres);
        attention_block_backward(m, s, l, B, Ti, dres);
        if (in_norms) row_norms(in_norms + (size_t)l * N, dres, N, D->d);
    }
    embed_all_backward(m, s, dres, B, Ti);
}

void model_backward(const Model *m, RunState *s) { backward(m, s, NULL); }

void model_backward_input_norms(const Model *m, RunState *s, float *in_norms) {
    backward(m, s, in_norms);
}

/* ---- probe accessors ---- */

const float *model_attention(const RunState *s, int l) {
    const float *map = remedy_attention_map(s->rm, l); /* diff_attn: A1 - lambda A2 */
    return map ? map : s->la[l].att;
}
const float *model_attention_slot(const RunState *s, int l) { return s->la[l].slot; }

/* Over the keys each query sees in the last forward (its Ti rows, which
 * may be fewer than the RunState's capacity): under a sliding window the e
 * prepended tokens and the latest W keys (attn_spec). FoX's logit is the
 * core's score plus the row term c_t the core leaves out (kb[t] = -c_t). */
double model_max_logit(const RunState *s, const Model *m, int l, int B) {
    const int e = m->dims.extra_pos, Ti = s->Ti, W = config_layer_window(&m->cfg, l);
    const size_t maps = (size_t)B * m->dims.H;
    const float *kb = remedy_fox_key_bias(s->rm, l);
    double mx = 0.0;
    if (!s->scores_kept) return NAN;
    for (size_t bh = 0; bh < maps; bh++)
        for (int t = 0; t < Ti; t++) {
            const float *row = s->la[l].preatt + (bh * Ti + t) * Ti;
            const double c_t = kb ? -(double)kb[bh * Ti + t] : 0.0;
            for (int j = 0; j <= t; j++)
                if (!W || j < e || t - j < W) mx = fmax(mx, fabs((double)row[j] + c_t));
        }
    return mx;
}
const float *model_block_output(const RunState *s, int l) {
    return l + 1 < s->L ? s->la[l + 1].x_in : s->x_out;
}

const float *model_gate_scores(const RunState *s, int l) {
    const LayerActs *a = &s->la[l];
    return a->gbar ? a->gbar : a->gs;
}

int model_gate_probe_channels(const Model *m, int *per_token) {
    const Config *c = &m->cfg;
    if (per_token) *per_token = c->gate_input != GIN_CONST;
    if (c->gate_pos == GATE_NONE) return 0;
    return c->gate_shared ? m->dims.gate_cg : m->dims.gate_channels;
}

/* PaLM-style count: 6 FLOPs per matmul weight per token (forward 2,
 * backward 4), gate matmuls included, plus attention's two T x T products,
 * 6 * 2 * T * H * dh per layer per token (the full square, as computed). */
double model_flops_per_token(const Model *m, int T) {
    const Dims *D = &m->dims;
    const Config *c = &m->cfg;
    double per_layer = (double)D->d * (D->qdim + 2.0 * D->kvdim) + (double)D->qdim * D->d;
    per_layer += (double)D->d * D->ff * (c->mlp == MLP_SWIGLU ? 3.0 : 2.0);
    if (c->gate_pos != GATE_NONE && c->gate_input == GIN_FULL)
        per_layer += (double)(c->gate_in_dim ? c->gate_in_dim : D->d) * D->gate_channels;
    if (c->gate_input == GIN_HEADSLICE) per_layer += (double)D->d;
    if (c->fox) per_layer += (double)D->d * D->H;  /* the forget gate */
    per_layer += 2.0 * 2.0 * D->d * c->gated_norm; /* two GatedNorms' two matrices */
    double matmul = per_layer * D->L + (double)D->d * D->V + 2.0 * D->d * c->gated_norm;
    /* diff_attn runs the core twice (each half as a full-width head) */
    double attn = 12.0 * (double)(T + D->extra_pos) * D->qdim * D->L * (c->diff_attn ? 2 : 1);
    return 6.0 * matmul + attn;
}
const float *model_logits(const RunState *s) { return s->logits; }
const float *model_keys(const RunState *s, int l) { return s->la[l].kr; }
const float *model_values(const RunState *s, int l) { return s->la[l].vg; }
const float *model_head_outputs(const RunState *s, int l) { return s->la[l].yg; }
