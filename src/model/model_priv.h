/* model_priv.h: what model.c (the passes) and model_state.c (the memory
 * plan of a RunState) share: the layout of one layer's activations and of
 * the backward's scratch. Not a public interface. */
#ifndef GATELAB_MODEL_PRIV_H
#define GATELAB_MODEL_PRIV_H

#include "model.h"

/* One GatedNorm site: the norm's output y [N,d] and the gate's h, s [N,r]
 * and u [N,d] (op_gatednorm.c). */
typedef struct GatedNormActs {
    float *y, *h, *s, *u;
} GatedNormActs;

struct LayerActs {
    float *x_in;                    /* [N,d] residual entering the layer */
    float *n1, *mean1, *rstd1;      /* attn_norm */
    float *q, *k, *v;               /* projections (q, k: qr, kr where unchanged before RoPE) */
    float *gz, *gs, *gbar;          /* gate: raw, activated, head-shared mean */
    float *qg, *kg, *vg;            /* after G4 / G3 / G2 (or aliases) */
    float *qn, *kn, *qrstd, *krstd; /* after QK-norm (or aliases) */
    float *qr, *kr;                 /* rotated (+ YaRN m) */
    float *att, *preatt, *slot;     /* [B,H,Ti,Ti], [B,H,Ti] */
    float *y;                       /* SDPA output [N,qdim] */
    float *yx;                      /* after XSA (or alias) */
    float *yrn, *yrstd;             /* sdpa-rmsnorm before its weight */
    float *ym;                      /* after the Y modification (or alias) */
    float *yg;                      /* after G1 (or alias): input to W_o */
    float *o, *og;                  /* W_o output, after G5 (or alias) */
    float *x_mid;                   /* [N,d] after the attention residual */
    float *n2, *mean2, *rstd2;      /* mlp_norm */
    float *h1, *h3, *hact;          /* MLP hidden; SwiGLU's hact: the scratch's */
    /* norm_place post: u1 = x_in + og, u2 = x_mid + MLP (the sums the
     * norms read); sandwich: u2 = the MLP's output, pmean/prstd the
     * post-norms' statistics. NULL under pre. */
    float *u1, *u2, *pmean1, *prstd1, *pmean2, *prstd2;
    GatedNormActs gn1, gn2; /* attn_norm's and mlp_norm's GatedNorm (gated_norm) */
    /* att (and the remedies' maps written beside it) hold zeros right of
     * each query block (AttnSpec.right_zeros) in the maps of batch rows
     * [0, zero_B) laid out at length zero_Ti; 0, 0 before any forward */
    int zero_Ti, zero_B;
};

struct Scratch {
    float *dn, *dq, *dq2, *dk, *dk2, *dv, *dv2;
    float *dy, *dy2, *dres, *dga, *dgate, *dgz;
    float *dh1, *dh3, *dhact, *dxfn, *dlogits, *tmp;
    float *hact; /* [N, ff] SwiGLU's output, every layer's: its backward writes it again */
    float *inv_freq;
    float *cat;   /* [N, P] the fused input projection's output or gradient */
    float *attn;  /* attention_backward's scratch */
    float *dpost; /* [N, d] a post-norm's input gradient (norm_place post, sandwich) */
    float *dgn_y, *dgn_u, *dgn_s, *dgn_h; /* GatedNorm's backward: [N,d], [N,d], [N,r], [N,r] */
    GatedNormActs gnf;                    /* the final norm's GatedNorm */
};

/* AttnSpec.right_zeros for a forward of layer a at B, Ti: 1 when an
 * earlier forward left zeros right of every query block of the maps it
 * will write, else 0, and a records that this forward writes them. */
int layer_right_zeros(LayerActs *a, int B, int Ti);

/* Rows of the fused input projection [W_q; W_k; W_v; W_gate]: P. */
int model_fused_cols(const Model *m);

/* Zero s->grads but for the weight gradients the backward writes by their
 * first product (model_state.c lists them); the backward's first step. */
void grads_zero_added(const Model *m, RunState *s);

#endif
