/* hf_model.c: a Hugging Face checkpoint's forward pass on B windows:
 * open (config.json, safetensors, the weights bound one layer at a time by
 * hf_weights.c), embed, the architecture's recipe per layer
 * (hf_recipes.c) with the probe's callback after each, the final norm and
 * the LM head. */
#include "hf_model.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_steps.h"
#include "util.h"

#define HEAD_ROWS 4096 /* lm-head rows converted at a time */

const HfArch *hf_model_arch(const HfModel *m) { return &m->a; }
const char *hf_model_config_text(const HfModel *m) { return m->cfg_text; }
const char *hf_model_dtype(const HfModel *m) { return m->w.dtype ? m->w.dtype : "?"; }
int hf_model_gate_channels(const HfModel *m) { return m->a.H * hf_gate_per_head(&m->a); }
int hf_model_threads(const HfModel *m) { return m->threads; }

/* The LM head's rows lm_head converts at a time: none when the file holds
 * it in F32 (one GEMM on the mapped weights). */
static int head_rows(const HfModel *m) {
    const StTensor *head = m->w.g[G_HEAD] ? m->w.g[G_HEAD] : m->w.g[G_EMB];
    return !head || st_f32_view(head) ? 0 : HEAD_ROWS;
}

ProbeShape hf_model_probe_shape(const HfModel *m, int N, int T, int M) {
    return (ProbeShape){.L = m->a.L,
                        .H = m->a.H,
                        .N = N,
                        .T = T,
                        .M = M,
                        .C = hf_model_gate_channels(m),
                        .d = m->a.d,
                        .has_slot = m->a.sinks,
                        .layer_heads = hf_heads_vary(&m->a) ? m->a.layer_heads : NULL,
                        .layer_slots = hf_sinks_vary(&m->a) ? m->layer_slots : NULL,
                        .rows_normalised = 1,
                        .threads = m->threads};
}

void hf_model_pass_bytes(const HfModel *m, int N, int B, int T, int M, size_t *weights,
                         size_t *buffers, size_t *probe) {
    ProbeShape ps = hf_model_probe_shape(m, N, T, M);
    *weights = m->w.scratch_n * sizeof(float);
    *buffers = hf_bufs_bytes(&m->a, B, T, M, m->threads, head_rows(m));
    *probe = probe_acc_bytes(&ps);
}

size_t hf_model_buffer_bytes(const HfModel *m) { return m->b.bytes; }

void hf_model_probe_attrs(const HfModel *m, ProbeRecord *p) {
    int C = hf_model_gate_channels(m);
    snprintf(p->normaliser, sizeof p->normaliser, "softmax");
    p->gate_heads = C ? m->a.H : 0, p->gate_bounded = C > 0 && !m->a.gate_softplus;
    p->slots = m->a.sinks ? 1 : 0; /* a sink logit per head, on the layers that have them */
}

/* The B windows' token embeddings into b.x (learned positions: each
 * window's from 0; Gemma's times embed_scale). */
static int embed(HfModel *m, const int32_t *ids, int B, int T, char *err, size_t errlen) {
    const HfArch *a = &m->a;
    float *pos = m->b.h;
    for (size_t r = 0; r < (size_t)B * T; r++) {
        const int t = (int)(r % (size_t)T);
        if (ids[r] < 0 || ids[r] >= a->V)
            return seterr(err, errlen,
                          "token id %d at position %d is outside the vocabulary [0, %d)", ids[r], t,
                          a->V);
        float *x = m->b.x + r * a->d;
        if (st_to_f32(m->w.g[G_EMB], (size_t)ids[r] * a->d, (size_t)a->d, x, err, errlen) < 0)
            return -1;
        for (int i = 0; a->embed_scale > 0 && i < a->d; i++) x[i] *= a->embed_scale;
        if (!m->w.g[G_POS]) continue;
        if (st_to_f32(m->w.g[G_POS], (size_t)t * a->d, (size_t)a->d, pos, err, errlen) < 0)
            return -1;
        residual_forward(x, x, pos, (size_t)a->d);
    }
    return 0;
}

/* The final norm of the B windows' rows, then each window's logits
 * [T, V] = h @ head^T into run->logits (converting the head in chunks),
 * soft-capped where the architecture caps them (final_softcap), handed
 * to run->logits_fn. */
static int lm_head(HfModel *m, const HfRun *run, char *err, size_t errlen) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const float *w = hf_weights_vec(&m->w, G_NORM, b->vec0, err, errlen);
    const float *bias =
        m->w.g[G_NORM_B] ? hf_weights_vec(&m->w, G_NORM_B, b->vec1, err, errlen) : NULL;
    if (!w || (m->w.g[G_NORM_B] && !bias)) return -1;
    hf_norm(m, b->h, b->x, w, bias, b->R, a->d, a->rms);
    const StTensor *head = m->w.g[G_HEAD] ? m->w.g[G_HEAD] : m->w.g[G_EMB];
    const float *view = st_f32_view(head);
    const int rows = view ? a->V : HEAD_ROWS; /* F32 in the file: one GEMM, no chunks */
    for (int k = 0; k < b->B; k++) {
        for (int r0 = 0; r0 < a->V; r0 += rows) {
            int n = a->V - r0 < rows ? a->V - r0 : rows;
            const float *W = view ? view + (size_t)r0 * a->d : b->head;
            if (!view &&
                st_to_f32(head, (size_t)r0 * a->d, (size_t)n * a->d, b->head, err, errlen) < 0)
                return -1;
            HfLinear j = {.out = run->logits + r0,
                          .in = b->h + (size_t)k * b->T * a->d,
                          .W = W,
                          .M = b->T,
                          .K = a->d,
                          .N = n,
                          .ldo = a->V};
            hf_linear_run(m->threads, &j);
        }
        const float cap = (float)a->final_softcap; /* Gemma 2: cap tanh(logit / cap) */
        for (size_t i = 0; cap > 0 && i < (size_t)b->T * a->V; i++)
            run->logits[i] = cap * tanhf(run->logits[i] / cap);
        if (run->logits_fn && run->logits_fn(run->ctx, k, run->logits, err, errlen) < 0) return -1;
    }
    return 0;
}

/* Where o finds layer l's keys and values as attention read them (GPT-2:
 * in place in the fused rows; values zero-padded to dh where the value
 * head dim is smaller) and each head's output (gated, as o_proj reads
 * it, padded likewise). */
static void head_inputs(const HfModel *m, int l, ProbeLayer *o) {
    const HfArch *a = &m->a;
    const HfBufs *b = &m->b;
    const int hd = o->H * a->dh;
    o->Hkv = hf_layer_kv(a, l), o->dh = a->dh, o->heads_out = b->o, o->out_stride = hd;
    if (a->family == HF_GPT2) {
        o->keys = b->qraw + a->d, o->values = b->qraw + 2 * (size_t)a->d, o->kv_stride = 3 * a->d;
        return;
    }
    o->keys = b->k, o->values = b->v;
    o->kv_stride = a->family == HF_NEOX ? hd : o->Hkv * a->dh;
}

int hf_model_forward(HfModel *m, const int32_t *ids, int T, const HfRun *run, char *err,
                     size_t errlen) {
    const HfArch *a = &m->a;
    const int B = run->B > 0 ? run->B : 1, M = run->M;
    if (T < 1 || M < 0 || M > T) return seterr(err, errlen, "bad window: T=%d M=%d", T, M);
    if (B > 1 && run->logits && !run->logits_fn)
        return seterr(err, errlen, "the logits of %d windows need a callback", B);
    if (a->family == HF_GPT2 && T > a->max_pos)
        return seterr(err, errlen, "window of %d tokens exceeds the model's %d positions", T,
                      a->max_pos);
    if (hf_bufs_alloc(&m->b, a, B, T, M, m->threads, head_rows(m)) < 0)
        return seterr(err, errlen, "out of memory for activations (%d x T=%d)", B, T);
    openblas_set_num_threads(1); /* our threads split the work (parallel.c) */
    m->quant = run->iv ? run->iv->quant : NULL;
    if (m->quant) fq_begin(m->quant, B); /* the B windows are one pass: each site's range once */
    if (embed(m, ids, B, T, err, errlen) < 0) return -1;
    if (a->rotary_dim) hf_rope_setup(m);
    const int L = run->layers > 0 && run->layers < a->L ? run->layers : a->L;
    for (int l = 0; l < L; l++) {
        if (hf_layer(m, l, run->iv, err, errlen) < 0) return -1;
        if (m->quant) fq_output(m->quant, FQ_OUT_LAYER, m->b.x, B, (size_t)T * a->d);
        const int Hl = hf_layer_heads(a, l), C = Hl * hf_gate_per_head(a);
        ProbeLayer o = {.layer = l,
                        .T = T,
                        .H = Hl,
                        .M = M,
                        .C = C,
                        .d = a->d,
                        .first_col = m->b.first_col,
                        .maps = m->b.maps,
                        .slot = m->b.slot,
                        .gates = C ? m->b.g : NULL,
                        .gate_stride = C,
                        .hidden = m->b.x};
        head_inputs(m, l, &o);
        if (run->fn) run->fn(run->ctx, &o);
    }
    return run->logits && L == a->L ? lm_head(m, run, err, errlen) : 0;
}

int hf_model_open(HfModel **out, const char *dir, int threads, char *err, size_t errlen) {
    HfModel *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m) return seterr(err, errlen, "out of memory");
    m->threads = threads < 1 ? 1 : threads;
    if (hf_config_load(&m->a, dir, &m->cfg_text, err, errlen) < 0 ||
        st_open_dir(&m->st, dir, err, errlen) < 0 ||
        hf_weights_bind(&m->w, m->st, &m->a, err, errlen) < 0) {
        hf_model_close(m);
        return -1;
    }
    for (int l = 0; l < m->a.L; l++) m->layer_slots[l] = hf_layer_sinks(&m->a, l);
    *out = m;
    return 0;
}

void hf_model_close(HfModel *m) {
    if (!m) return;
    hf_bufs_free(&m->b);
    hf_weights_free(&m->w);
    st_close(m->st);
    free(m->cfg_text);
    free(m);
}
