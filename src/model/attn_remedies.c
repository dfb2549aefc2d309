/* attn_remedies.c: ssmax, fox and diff_attn around the attention core
 * (attn_remedies.h). Formulas: docs/MODEL.md "Literature remedies". */
#include <stdlib.h>
#include <string.h>

#include "attn_remedies.h"
#include "util.h"

typedef struct {
    float *qs;                /* ssmax: scaled q [N, qdim] */
    float *fz, *kb;           /* fox: gate logits [N, H], key bias [B,H,Ti] */
    float *q1, *q2, *k1, *k2; /* diff: half-masked q [N,qdim], k [N,kvdim] */
    float *y2, *att2, *pre2;  /* diff: second map's output and maps */
    float *attc;              /* diff: A1 - lambda A2 for the probe */
    float lambda;
} RemedyLayer;

struct RemedyState {
    RemedyLayer *layer;
    float *dqs, *dq1, *dq2, *dk1, *dk2, *dy2, *dkb, *dz; /* backward scratch */
};

int remedy_active(const Config *c) { return c->ssmax || c->fox || c->diff_attn; }

RemedyState *remedy_state_new(const Model *m) {
    RemedyState *r = calloc(1, sizeof *r);
    if (r && !(r->layer = calloc((size_t)m->dims.L, sizeof *r->layer))) {
        free(r);
        return NULL;
    }
    return r;
}

/* n floats from the plan; NULL for none. */
static float *grab(Plan *p, size_t n) { return n ? plan_floats(p, n) : NULL; }

void remedy_state_plan(RemedyState *r, const Model *m, int B, int T, Plan *p) {
    const Config *c = &m->cfg;
    const Dims *D = &m->dims;
    if (!remedy_active(c)) return;
    RemedyLayer count;
    RemedyState none = {0};
    if (!r) r = &none; /* counting only: the pointers go nowhere */
    int Ti = T + D->extra_pos;
    size_t N = (size_t)B * Ti, Nq = N * D->qdim, Nk = N * D->kvdim;
    size_t maps = (size_t)B * D->H * Ti * Ti, kbn = (size_t)B * D->H * Ti;
    for (int l = 0; l < D->L; l++) {
        RemedyLayer *a = r->layer ? &r->layer[l] : &count;
        a->qs = c->ssmax ? grab(p, Nq) : NULL;
        a->fz = c->fox ? grab(p, N * D->H) : NULL;
        a->kb = c->fox ? grab(p, kbn) : NULL;
        if (!c->diff_attn) continue;
        a->q1 = grab(p, Nq), a->q2 = grab(p, Nq);
        a->k1 = grab(p, Nk), a->k2 = grab(p, Nk);
        a->y2 = grab(p, Nq);
        a->att2 = grab(p, maps), a->pre2 = grab(p, maps);
        a->attc = grab(p, maps);
    }
    r->dqs = c->ssmax ? grab(p, Nq) : NULL;
    if (c->diff_attn) {
        r->dq1 = grab(p, Nq), r->dq2 = grab(p, Nq);
        r->dk1 = grab(p, Nk), r->dk2 = grab(p, Nk);
        r->dy2 = grab(p, Nq);
    }
    if (c->fox) r->dkb = grab(p, kbn), r->dz = grab(p, N * D->H);
}

void remedy_state_free(RemedyState *r) {
    if (!r) return;
    free(r->layer);
    free(r);
}

static void zero(float *p, size_t n) { memset(p, 0, n * sizeof *p); }

/* Each half of a diff_attn head is dh/2 wide: its own 1/sqrt(dh/2). */
static float half_scale(const AttnSpec *sp) { return sp->scale * 1.41421356f; }

void remedy_attention_forward(RemedyState *r, const Model *m, int l, float *y, float *att,
                              float *slot, float *preatt, const float *q, const float *k,
                              const float *v, const float *xn, const AttnSpec *spec, int B,
                              int Ti) {
    const Config *c = &m->cfg;
    const Dims *D = &m->dims;
    const LayerWeights *lw = &m->w.layer[l];
    RemedyLayer *a = &r->layer[l];
    const int N = B * Ti, H = D->H, Hkv = D->Hkv, dh = D->dh;
    AttnSpec sp = *spec;
    if (c->ssmax) {
        ssmax_forward(a->qs, q, lw->ssmax_s, B, Ti, H, dh, spec->window);
        q = a->qs;
    }
    if (c->fox) {
        matmul_forward_packed(m->packs, a->fz, xn, lw->fox_w, lw->fox_b, N, D->d, H);
        fox_bias_forward(a->kb, a->fz, B, Ti, H);
        sp.key_bias = a->kb;
    }
    if (!c->diff_attn) {
        attention_forward(&(AttnOut){y, att, slot, preatt},
                          &(AttnIn){q, k, v, 0, 0, lw->sink_logit, lw->kv_bias_k, lw->kv_bias_v},
                          &sp, &(AttnShape){B, Ti, H, Hkv, dh});
        return;
    }
    size_t Nq = (size_t)N * D->qdim, maps = (size_t)B * H * Ti * Ti;
    diff_split_forward(a->q1, a->q2, q, (size_t)N * H, dh);
    diff_split_forward(a->k1, a->k2, k, (size_t)N * Hkv, dh);
    sp.scale = half_scale(spec);
    AttnShape sh = {B, Ti, H, Hkv, dh};
    attention_forward(&(AttnOut){y, att, slot, preatt},
                      &(AttnIn){a->q1, a->k1, v, 0, 0, lw->sink_logit, NULL, NULL}, &sp, &sh);
    attention_forward(&(AttnOut){a->y2, a->att2, NULL, a->pre2},
                      &(AttnIn){a->q2, a->k2, v, 0, 0, lw->sink_logit, NULL, NULL}, &sp, &sh);
    a->lambda = diff_lambda_forward(lw->diff_lambda, dh / 2, diff_lambda_init(l));
    diff_combine_forward(y, y, a->y2, a->lambda, Nq);
    diff_combine_forward(a->attc, att, a->att2, a->lambda, maps);
}

/* diff_attn: both maps' backward, then the halves back into dq, dk. */
static void diff_backward(RemedyState *r, const Model *m, int l, LayerWeights *gw, float *dq,
                          float *dk, float *dv, const float *dy, const float *att,
                          const float *slot, const float *preatt, const float *v,
                          const AttnSpec *sp, int B, int Ti, float *scratch) {
    const Dims *D = &m->dims;
    const LayerWeights *lw = &m->w.layer[l];
    RemedyLayer *a = &r->layer[l];
    const int N = B * Ti, H = D->H, Hkv = D->Hkv, dh = D->dh;
    size_t Nq = (size_t)N * D->qdim;
    float dlambda = diff_combine_backward(r->dy2, dy, a->y2, a->lambda, Nq);
    diff_lambda_backward(gw->diff_lambda, dlambda, lw->diff_lambda, dh / 2);
    AttnShape sh = {B, Ti, H, Hkv, dh};
    const unsigned set = ATTN_SET_DQ | ATTN_SET_DK; /* dv: both halves add to it */
    attention_backward(&(AttnGrad){r->dq1, r->dk1, dv, gw->sink_logit, NULL, NULL, set}, dy,
                       &(AttnSaved){att, slot, preatt},
                       &(AttnIn){a->q1, a->k1, v, 0, 0, lw->sink_logit, NULL, NULL}, sp, &sh,
                       scratch);
    attention_backward(&(AttnGrad){r->dq2, r->dk2, dv, gw->sink_logit, NULL, NULL, set}, r->dy2,
                       &(AttnSaved){a->att2, NULL, a->pre2},
                       &(AttnIn){a->q2, a->k2, v, 0, 0, lw->sink_logit, NULL, NULL}, sp, &sh,
                       scratch);
    diff_split_backward(dq, r->dq1, r->dq2, (size_t)N * H, dh);
    diff_split_backward(dk, r->dk1, r->dk2, (size_t)N * Hkv, dh);
}

void remedy_attention_backward(RemedyState *r, const Model *m, int l, LayerWeights *gw, float *dq,
                               float *dk, float *dv, const float *dy, const float *att,
                               const float *slot, const float *preatt, const float *q,
                               const float *k, const float *v, const AttnSpec *spec, int B, int Ti,
                               float *scratch) {
    const Config *c = &m->cfg;
    const Dims *D = &m->dims;
    const LayerWeights *lw = &m->w.layer[l];
    RemedyLayer *a = &r->layer[l];
    const int N = B * Ti, H = D->H;
    size_t Nq = (size_t)N * D->qdim;
    AttnSpec sp = *spec;
    float *dqa = dq; /* gradient w.r.t. the q the core saw */
    const float *qa = q;
    if (c->ssmax) {
        zero(r->dqs, Nq);
        dqa = r->dqs, qa = a->qs;
    }
    if (c->fox) {
        zero(r->dkb, (size_t)B * H * Ti);
        sp.key_bias = a->kb, sp.dkey_bias = r->dkb;
    }
    if (c->diff_attn) {
        sp.scale = half_scale(spec);
        diff_backward(r, m, l, gw, dqa, dk, dv, dy, att, slot, preatt, v, &sp, B, Ti, scratch);
    } else {
        attention_backward(
            &(AttnGrad){dqa, dk, dv, gw->sink_logit, gw->kv_bias_k, gw->kv_bias_v, 0}, dy,
            &(AttnSaved){att, slot, preatt},
            &(AttnIn){qa, k, v, 0, 0, lw->sink_logit, lw->kv_bias_k, lw->kv_bias_v}, &sp,
            &(AttnShape){B, Ti, H, D->Hkv, D->dh}, scratch);
    }
    if (c->ssmax)
        ssmax_backward(dq, gw->ssmax_s, r->dqs, q, lw->ssmax_s, B, Ti, H, D->dh, spec->window);
    if (c->fox) {
        zero(r->dz, (size_t)N * H);
        fox_bias_backward(r->dz, r->dkb, a->fz, B, Ti, H);
    }
}

void remedy_input_backward(RemedyState *r, const Model *m, int l, LayerWeights *gw, float *dxn,
                           const float *xn, int B, int Ti) {
    if (!m->cfg.fox) return;
    const Dims *D = &m->dims;
    matmul_backward(dxn, gw->fox_w, gw->fox_b, r->dz, xn, m->w.layer[l].fox_w, B * Ti, D->d, D->H);
}

const float *remedy_fox_key_bias(const RemedyState *r, int l) {
    return r && r->layer[l].kb ? r->layer[l].kb : NULL;
}

const float *remedy_attention_map(const RemedyState *r, int l) {
    return r && r->layer[l].attc ? r->layer[l].attc : NULL;
}
