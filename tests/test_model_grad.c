/* test_model_grad.c: finite-difference gradient checks of the whole model,
 * for every variant in the catalog and every model option.
 *
 * For each parameter tensor we compare the directional derivative along a
 * random direction v (restricted to that tensor), by central differences
 * in double-accumulated loss, against grad . v from model_backward. A
 * mismatch names the variant and the tensor.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fakequant.h"
#include "intervention.h"
#include "model.h"
#include "model_priv.h"
#include "ops.h"
#include "rng.h"

#define B 2
#define T 6

/* A tiny model on which every catalog variant applies (GQA base). */
static void tiny_config(Config *c) {
    config_defaults(c);
    char err[256];
    const char *sets[] = {"n_layers=2", "d_model=16",  "n_heads=4",       "n_kv_heads=2", "d_ff=24",
                          "seq_len=6",  "data=bigram", "bigram_vocab=12", "init_std=0.3"};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        assert_int_equal(config_set(c, sets[i], err, sizeof err), 0);
}

static double loss_at(const Model *m, RunState *s, const int *tok, const int *tgt) {
    return (double)model_forward(m, s, tok, tgt, B, T);
}

/* The backward writes every gradient, whatever the arena held: from NaNs
 * and from zeros it gives the same bits (those into g). Returns 1 if not. */
static int backward_writes_all(const Model *m, RunState *s, const int *tok, const int *tgt,
                               float *g, const char *label) {
    const size_t n = m->table.total;
    loss_at(m, s, tok, tgt);
    for (size_t i = 0; i < n; i++) s->grads[i] = NAN;
    model_backward(m, s);
    memcpy(g, s->grads, n * sizeof(float));
    memset(s->grads, 0, n * sizeof(float));
    model_backward(m, s);
    if (!memcmp(g, s->grads, n * sizeof(float))) return 0;
    for (int k = 0; k < m->table.count; k++) {
        const ParamInfo *pi = &m->table.info[k];
        if (memcmp(g + pi->offset, s->grads + pi->offset, pi->numel * sizeof(float)))
            printf("  %s: %s's gradient depends on the arena's old contents\n", label, pi->name);
    }
    return 1;
}

/* On another RunState's activations (runstate_lend), just after that one
 * ran other tokens forward and backward, the loss and every gradient keep
 * the bits of s's own arena (g); a state too small is not lent, and
 * runstate_unlend gives s its own back. Returns 1 if not. */
static int lent_same_bits(const Model *m, RunState *s, const int *tok, const int *tgt,
                          const float *g, const char *label) {
    RunState o;
    RunActs own;
    int other[B * T];
    for (int i = 0; i < B * T; i++) other[i] = tgt[B * T - 1 - i];
    assert_int_equal(runstate_init(&o, m, B, T), 0);
    const double l0 = loss_at(m, s, tok, tgt);
    loss_at(m, &o, other, tok);
    model_backward(m, &o);
    const LayerActs *mine = s->la;
    int bad = runstate_lend(s, &o, B + 1, &own) != -1 || s->la != mine;
    if (runstate_lend(s, &o, B, &own) != 0 || s->la == mine) bad = 1;
    else {
        const double l1 = loss_at(m, s, tok, tgt);
        model_backward(m, s);
        bad |= l1 != l0 || memcmp(g, s->grads, m->table.total * sizeof(float)) != 0;
        runstate_unlend(s, &own);
        bad |= s->la != mine;
    }
    if (bad) printf("  %s: a run on another state's activations differs from its own\n", label);
    runstate_free(&o);
    return bad;
}

/* Check every tensor of a model built from cfg; returns the failures. */
static int check_model(const Config *cfg, const char *label) {
    Model m;
    RunState s;
    char err[256];
    assert_int_equal(model_init(&m, cfg, err, sizeof err), 0);
    /* perturb norm weights, biases and zero-init tensors off their init,
     * so their gradients are generic */
    Rng r;
    rng_seed(&r, 99);
    for (size_t i = 0; i < m.table.total; i++) m.params[i] += 0.05f * (float)rng_normal(&r);
    assert_int_equal(runstate_init(&s, &m, B, T), 0);
    /* one memory plan: every buffer the state holds, the remedies', the
     * gradients and the token rows too, is in the arena runstate_bytes
     * counts */
    assert_int_equal(runstate_bytes(&m, B, T), s.mem_bytes);
    int tok[B * T], tgt[B * T];
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int)rng_below(&r, (uint32_t)cfg->vocab_size);
        tgt[i] = (int)rng_below(&r, (uint32_t)cfg->vocab_size);
    }
    float *g = malloc(m.table.total * sizeof(float));
    int failures = backward_writes_all(&m, &s, tok, tgt, g, label);
    failures += lent_same_bits(&m, &s, tok, tgt, g, label);
    for (int k = 0; k < m.table.count; k++) {
        const ParamInfo *pi = &m.table.info[k];
        float *p = m.params + pi->offset;
        float *v = malloc(pi->numel * sizeof(float)), *p0 = malloc(pi->numel * sizeof(float));
        double analytic = 0, vn = 0;
        for (size_t i = 0; i < pi->numel; i++)
            v[i] = (float)rng_normal(&r), vn += (double)v[i] * v[i];
        for (size_t i = 0; i < pi->numel; i++) {
            v[i] /= (float)sqrt(vn);
            analytic += (double)g[pi->offset + i] * v[i];
        }
        memcpy(p0, p, pi->numel * sizeof(float));
        const float eps = 1e-2f;
        for (size_t i = 0; i < pi->numel; i++) p[i] = p0[i] + eps * v[i];
        double lp = loss_at(&m, &s, tok, tgt);
        for (size_t i = 0; i < pi->numel; i++) p[i] = p0[i] - eps * v[i];
        double lm = loss_at(&m, &s, tok, tgt);
        memcpy(p, p0, pi->numel * sizeof(float));
        double numeric = (lp - lm) / (2.0 * eps);
        double tol = 2e-3 + 3e-2 * fabs(numeric);
        if (!(fabs(numeric - analytic) <= tol)) {
            printf("  %s: %s numeric %.6g analytic %.6g\n", label, pi->name, numeric, analytic);
            failures++;
        }
        free(v);
        free(p0);
    }
    free(g);
    runstate_free(&s);
    model_free(&m);
    return failures;
}

static int check_variant(const char *id, const char *const *extra, int nextra) {
    Config c;
    char err[256], label[128];
    tiny_config(&c);
    if (config_apply_variant(&c, id, err, sizeof err) != 0) {
        printf("  %s: %s\n", id, err);
        return 1;
    }
    for (int i = 0; i < nextra; i++) assert_int_equal(config_set(&c, extra[i], err, sizeof err), 0);
    config_resolve(&c);
    if (config_validate(&c, err, sizeof err) != 0) {
        printf("  %s: %s\n", id, err);
        return 1;
    }
    snprintf(label, sizeof label, "%s%s%s", id, nextra ? " + " : "", nextra ? extra[0] : "");
    return check_model(&c, label);
}

/* Every id in the catalog on the default options (RMSNorm, RoPE, SwiGLU). */
static void test_every_variant(void **state) {
    (void)state;
    int failures = 0, n = 0;
    for (int i = 0; variant_id_at(i); i++, n++)
        failures += check_variant(variant_id_at(i), NULL, 0);
    assert_true(n >= 34);
    assert_int_equal(failures, 0);
}

/* Model options, crossed with a few variants that touch them. */
static void test_model_options(void **state) {
    (void)state;
    const char *gpt2[] = {"norm=layer", "pos=learned", "mlp=gelu", "tied_embed=1"};
    const char *rope[] = {"qk_norm=1", "yarn_scale=2"};
    const char *nopos[] = {"pos=none", "bos=0"};
    const char *ids[] = {"baseline",   "g1-elem",   "g3-elem",  "g4-head",   "sink-token",
                         "kv-bias",    "g1-shared", "g2-head",  "diff-attn", "ssmax",
                         "stickbreak", "fox",       "registers"};
    int failures = 0;
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        if (!strcmp(ids[i], "g4-head")) continue; /* not a catalog id */
        failures += check_variant(ids[i], gpt2, 4);
        failures += check_variant(ids[i], rope, 2);
        failures += check_variant(ids[i], nopos, 2);
    }
    assert_int_equal(failures, 0);
}

/* The literature remedies combined with each other and with the older
 * slots and gates, where config_validate allows it. */
static void test_remedy_combinations(void **state) {
    (void)state;
    const char *fox_ssmax[] = {"ssmax=1", "pos=none"};
    const char *diff_reg[] = {"sink_token=3", "ssmax=1", "qk_norm=1"};
    const char *sb_gate[] = {"gate_pos=g1", "ssmax=1", "sink_token=2"};
    const char *ssmax_kv[] = {"kv_bias=1"};
    const char *reg_learned[] = {"pos=learned", "norm=layer", "max_pos=12"};
    int failures = 0;
    failures += check_variant("fox", fox_ssmax, 2);
    failures += check_variant("diff-attn", diff_reg, 3);
    failures += check_variant("stickbreak", sb_gate, 3);
    failures += check_variant("ssmax", ssmax_kv, 1);
    failures += check_variant("registers", reg_learned, 3);
    assert_int_equal(failures, 0);
}

/* The gate keys and XSA on other ids: XSA under the remedies that rewrite
 * the map or add slots (its v is the core's, after a G2 gate), a narrow
 * 2 sigma gate at G2..G5 and a softplus gate at G4. */
static void test_gate_keys(void **state) {
    (void)state;
    const char *xsa[] = {"xsa=1"};
    const char *narrow[] = {"gate_in_dim=5", "gate_act=2sigmoid"};
    const char *soft[] = {"gate_act=softplus", "gate_gran=head"};
    const char *xsa_ids[] = {"g1-head-narrow", "g2-elem", "diff-attn", "sink-logit", "kv-bias",
                             "registers",      "fox",     "ssmax",     "stickbreak", "sdpa-silu"};
    const char *gate_ids[] = {"g2-elem", "g3-elem", "g4-elem", "g5-elem", "g1-shared"};
    int failures = 0;
    for (size_t i = 0; i < sizeof xsa_ids / sizeof *xsa_ids; i++)
        failures += check_variant(xsa_ids[i], xsa, 1);
    for (size_t i = 0; i < sizeof gate_ids / sizeof *gate_ids; i++)
        failures += check_variant(gate_ids[i], narrow, 2);
    failures += check_variant("g4-elem", soft, 2);
    /* GatedNorm after LayerNorm, with sink tokens and a tied head, and on
     * a gate and XSA */
    const char *gn_ln[] = {"norm=layer", "sink_token=2", "tied_embed=1"};
    const char *gn_xsa[] = {"gated_norm=3", "xsa=1"};
    failures += check_variant("gated-norm", gn_ln, 3);
    failures += check_variant("g1-head-2sig", gn_xsa, 2);
    failures += check_variant("fox", gn_xsa, 2);
    assert_int_equal(failures, 0);
}

/* The loss of id's freshly initialised model on a fixed batch. */
static double init_loss(const char *id) {
    Config c;
    Model m;
    RunState s;
    char err[256];
    tiny_config(&c);
    assert_int_equal(config_apply_variant(&c, id, err, sizeof err), 0);
    config_resolve(&c);
    assert_int_equal(config_validate(&c, err, sizeof err), 0);
    assert_int_equal(model_init(&m, &c, err, sizeof err), 0);
    assert_int_equal(runstate_init(&s, &m, B, T), 0);
    int tok[B * T], tgt[B * T];
    for (int i = 0; i < B * T; i++) tok[i] = i % c.vocab_size, tgt[i] = (i * 5) % c.vocab_size;
    double l = loss_at(&m, &s, tok, tgt);
    runstate_free(&s);
    model_free(&m);
    return l;
}

/* g1-head-2sig starts as the identity: its zero gate scores 2 sigmoid(0) = 1,
 * and every other tensor draws the baseline's values (a stream per name),
 * so the first loss is the baseline's; a 2 sigma gate at normal init, or a
 * softplus gate, is not. */
static void test_2sig_identity_at_init(void **state) {
    (void)state;
    double base = init_loss("baseline");
    assert_true(fabs(init_loss("g1-head-2sig") - base) < 1e-6 * fabs(base));
    assert_true(fabs(init_loss("g1-head-softplus") - base) > 1e-4);
    assert_true(fabs(init_loss("g1-head") - base) > 1e-4);
}

/* The field's keys: a sliding window (on every layer, or alternating with
 * full layers; T = 6, so window 3 hides keys from most queries), ALiBi and
 * NoPE, on every catalog id, so they combine with every normaliser, slot,
 * sink token and remedy. (Softpick's relu has a kink at s = 0 that the
 * central difference at eps 1e-2 crosses on NoPE with window 4, so that
 * pairing is left out of the short list.) */
static void test_field_keys(void **state) {
    (void)state;
    const char *win[] = {"window=3"};
    const char *alt[] = {"window=2", "window_layers=alternate"};
    const char *alibi[] = {"pos=alibi"};
    const char *alibi_win[] = {"pos=alibi", "window=3", "window_layers=alternate"};
    const char *nope_win[] = {"pos=none", "window=4"};
    int failures = 0;
    for (int i = 0; variant_id_at(i); i++) {
        failures += check_variant(variant_id_at(i), win, 1);
        failures += check_variant(variant_id_at(i), alibi, 1);
    }
    const char *ids[] = {"baseline",     "sink-logit", "registers", "fox",
                         "sigmoid-attn", "diff-attn",  "ssmax"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        failures += check_variant(ids[i], alt, 2);
        failures += check_variant(ids[i], alibi_win, 3);
        failures += check_variant(ids[i], nope_win, 2);
    }
    /* registers under a window: the streaming gather (clipped softmax has
     * its kinks near here; the fixture opt-window-registers checks it) */
    const char *reg_win[] = {"window=2", "sink_token=2"};
    const char *norms[] = {"sink-logit", "stickbreak", "sigmoid-attn", "softmax1", "fox", "ssmax"};
    for (size_t i = 0; i < sizeof norms / sizeof *norms; i++)
        failures += check_variant(norms[i], reg_win, 2);
    assert_int_equal(failures, 0);
}

/* Norm placement: post-LN and sandwich on every catalog id (RMSNorm), and
 * with LayerNorm crossed with a few ids and the other field keys. The
 * clipped softmax and softpick have kinks that central differences at
 * eps 1e-2 cross here (a sandwich's post-norm magnifies a clipped row's
 * near-zero output); their fixtures (opt-post-softpick,
 * opt-sandwich-clipped) check them against autograd instead. */
static void test_norm_place(void **state) {
    (void)state;
    const char *post[] = {"norm_place=post"};
    const char *sandwich[] = {"norm_place=sandwich"};
    const char *post_ln[] = {"norm_place=post", "norm=layer", "pos=alibi"};
    const char *sw_ln[] = {"norm_place=sandwich", "norm=layer", "window=3"};
    int failures = 0;
    for (int i = 0; variant_id_at(i); i++) {
        const char *id = variant_id_at(i);
        if (!strcmp(id, "clipped-softmax") || !strcmp(id, "softpick")) continue;
        failures += check_variant(id, sandwich, 1);
        if (!strcmp(id, "gated-norm")) continue; /* refused under post-LN */
        failures += check_variant(id, post, 1);
    }
    const char *ids[] = {"baseline", "g1-elem", "g5-elem", "sink-token", "fox"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        failures += check_variant(ids[i], post_ln, 3);
        failures += check_variant(ids[i], sw_ln, 3);
    }
    assert_int_equal(failures, 0);
}

/* The checker itself must be able to fail: a wrong gradient is caught. */
static void test_checker_detects_error(void **state) {
    (void)state;
    Config c;
    Model m;
    RunState s;
    char err[256];
    tiny_config(&c);
    config_resolve(&c);
    assert_int_equal(model_init(&m, &c, err, sizeof err), 0);
    assert_int_equal(runstate_init(&s, &m, B, T), 0);
    int tok[B * T], tgt[B * T];
    for (int i = 0; i < B * T; i++) tok[i] = i % c.vocab_size, tgt[i] = (i * 5) % c.vocab_size;
    memset(s.grads, 0, m.table.total * sizeof(float));
    double l0 = loss_at(&m, &s, tok, tgt);
    model_backward(&m, &s);
    const ParamInfo *pi = param_find(&m.table, "layers.0.attn.w_q");
    assert_non_null(pi);
    /* move along the true gradient: the loss must drop by about eps*|g|^2 */
    double gg = 0;
    for (size_t i = 0; i < pi->numel; i++)
        gg += (double)s.grads[pi->offset + i] * s.grads[pi->offset + i];
    assert_true(gg > 0);
    for (size_t i = 0; i < pi->numel; i++)
        m.params[pi->offset + i] -= 1e-2f * s.grads[pi->offset + i];
    double l1 = loss_at(&m, &s, tok, tgt);
    assert_true(l1 < l0);
    assert_true(fabs((l0 - l1) - 1e-2 * gg) < 0.2 * 1e-2 * gg + 1e-5);
    runstate_free(&s);
    model_free(&m);
}

/* qk-norm's learned gains are the variant's own tensors: `added`, so they
 * count in n_params_added (docs/variants.md, "the variant's own tensors"). */
static void test_qk_norm_added(void **state) {
    (void)state;
    Config c;
    Model m;
    char err[256];
    tiny_config(&c);
    assert_int_equal(config_apply_variant(&c, "qk-norm", err, sizeof err), 0);
    config_resolve(&c);
    assert_int_equal(config_validate(&c, err, sizeof err), 0);
    assert_int_equal(model_init(&m, &c, err, sizeof err), 0);
    const ParamInfo *q = param_find(&m.table, "layers.0.attn.q_norm");
    const ParamInfo *k = param_find(&m.table, "layers.1.attn.k_norm");
    assert_non_null(q);
    assert_non_null(k);
    assert_int_equal(q->added, 1);
    assert_int_equal(k->added, 1);
    assert_int_equal(model_added_params(&m), 2 * (size_t)c.n_layers * (size_t)m.dims.dh);
    model_free(&m);
}

/* The forward of rows (Bc, Tc) on s (made for B rows of 2 ATT_BLOCK + 2): the maps every layer's
 * probe reads (model_attention) and the loss bit for bit those of a fresh RunState, whose first
 * forward writes whole maps; a training step's backward after it when train. A forward finds the
 * zeros right of each query block in place (AttnSpec.right_zeros) only where an earlier one at the
 * same length wrote them for as many rows. s keeps the scores only where
 * the backward reads them, f always (RunState.keep_scores): the same
 * gradients bit for bit, and max_logit where s kept them. */
static void maps_as_fresh(const Model *m, RunState *s, const int *tok, int Bc, int Tc, int train) {
    RunState f;
    assert_int_equal(runstate_init(&f, m, B, 2 * ATT_BLOCK + 2), 0);
    f.keep_scores = 1;
    float got = model_forward(m, s, tok, tok + 1, Bc, Tc),
          want = model_forward(m, &f, tok, tok + 1, Bc, Tc);
    assert_memory_equal(&got, &want, sizeof got);
    const int Ti = Tc + m->dims.extra_pos;
    const size_t n = (size_t)Bc * m->dims.H * Ti * Ti;
    for (int l = 0; l < m->dims.L; l++)
        assert_memory_equal(model_attention(s, l), model_attention(&f, l), n * sizeof(float));
    const double ms = model_max_logit(s, m, 0, Bc), mf = model_max_logit(&f, m, 0, Bc);
    assert_true(mf == mf && (ms == mf || (ms != ms && !s->scores_kept)));
    if (train) {
        model_backward(m, s);
        model_backward(m, &f);
        assert_memory_equal(s->grads, f.grads, m->table.total * sizeof(float));
    }
    runstate_free(&f);
}

/* Training steps, then forwards at other lengths and batch rows, on one
 * RunState, on variants whose maps differ in their writers: plain softmax,
 * stick-breaking, diff_attn (its probe map combines two), a sliding window
 * and registers (extra positions). */
static void test_maps_after_steps(void **state) {
    (void)state;
    const char *ids[] = {NULL,      "stickbreak",   "diff-attn", "sink-logit",
                         "kv-bias", "sigmoid-attn", "fox",       "registers"};
    const int TL = 2 * ATT_BLOCK + 2;
    for (size_t v = 0; v < sizeof ids / sizeof *ids; v++)
        for (int win = 0; win < 2; win++) {
            Config c;
            Model m;
            RunState s;
            char err[256], set[64];
            tiny_config(&c);
            snprintf(set, sizeof set, "seq_len=%d", TL);
            assert_int_equal(config_set(&c, set, err, sizeof err), 0);
            if (win) assert_int_equal(config_set(&c, "window=40", err, sizeof err), 0);
            if (ids[v]) assert_int_equal(config_apply_variant(&c, ids[v], err, sizeof err), 0);
            config_resolve(&c);
            if (config_validate(&c, err, sizeof err) != 0) continue; /* a window it refuses */
            assert_int_equal(model_init(&m, &c, err, sizeof err), 0);
            assert_int_equal(runstate_init(&s, &m, B, TL), 0);
            int tok[B * (2 * ATT_BLOCK + 2) + 3]; /* targets of the forwards from tok + 2 */
            for (int i = 0; i < B * TL + 3; i++) tok[i] = (i * 7 + i / 5) % c.vocab_size;
            maps_as_fresh(&m, &s, tok, B, TL, 1);
            maps_as_fresh(&m, &s, tok, B, TL, 1);
            maps_as_fresh(&m, &s, tok + 3, 1, ATT_BLOCK + 6, 0);
            maps_as_fresh(&m, &s, tok + 4, B, ATT_BLOCK + 6, 0);
            maps_as_fresh(&m, &s, tok, B, TL, 1);
            maps_as_fresh(&m, &s, tok + 1, 1, TL, 0);
            maps_as_fresh(&m, &s, tok + 2, B, TL, 0);
            /* plain softmax writes its scores over its weights, stick-breaking keeps them */
            if (!ids[v]) assert_false(s.scores_kept);
            if (ids[v] && !strcmp(ids[v], "stickbreak")) assert_true(s.scores_kept);
            runstate_free(&s);
            model_free(&m);
        }
}

/* The fused input projection's forward: q, k, v and a FULL gate's raw z
 * are the chains of n1's rows with the rows of [W_q; W_k; W_v; W_gate]
 * (each element fmaf over k in order from +0, the products' arithmetic),
 * written out here; unpacked, on the parts' packed panels, and under a
 * float-mode fake quantization (one site for the whole weight, whose
 * copies leave every operand as it is). pos = none, so nothing rotates q
 * and k after the projection. */
static void check_fused(const Model *m, const RunState *s) {
    const Dims *D = &m->dims;
    const int rows[4] = {D->qdim, D->kvdim, D->kvdim,
                         model_gate_in_projection(&m->cfg) ? D->gate_channels : 0};
    const size_t N = (size_t)B * s->Ti, d = (size_t)D->d;
    for (int l = 0; l < D->L; l++) {
        const LayerActs *a = &s->la[l];
        const float *part[4] = {a->q, a->k, a->v, a->gz};
        const float *w = m->w.layer[l].w_q;
        for (int i = 0, off = 0; i < 4 && rows[i] > 0; off += rows[i++])
            for (size_t n = 0; n < N; n++)
                for (int p = 0; p < rows[i]; p++) {
                    float acc = 0.0f;
                    for (size_t k = 0; k < d; k++)
                        acc = fmaf(a->n1[n * d + k], w[(size_t)(off + p) * d + k], acc);
                    assert_memory_equal(&acc, &part[i][n * (size_t)rows[i] + (size_t)p],
                                        sizeof acc);
                }
    }
}

static void test_fused_parts(void **state) {
    (void)state;
    static const char *const ids[] = {"baseline", "g1-elem"};
    for (int v = 0; v < 2; v++)
        for (int mode = 0; mode < 3; mode++) { /* unpacked, packed, fake-quantized */
            Config c;
            Model m;
            RunState s;
            char err[256];
            tiny_config(&c);
            assert_int_equal(config_apply_variant(&c, ids[v], err, sizeof err), 0);
            assert_int_equal(config_set(&c, "pos=none", err, sizeof err), 0);
            config_resolve(&c);
            assert_int_equal(config_validate(&c, err, sizeof err), 0);
            assert_int_equal(model_init(&m, &c, err, sizeof err), 0);
            assert_int_equal(runstate_init(&s, &m, B, T), 0);
            GemmPacks ps = {0};
            if (mode == 1) {
                gemm_packs_begin(&ps);
                assert_int_equal(model_pack_forward(&m, &ps), 0);
                assert_int_equal(gemm_packs_commit(&ps), 0);
                gemm_packs_fill(&ps, 0, 1);
                m.packs = &ps;
            }
            FakeQuant q;
            fq_init(&q, FQ_FLOAT);
            Intervention iv = {0};
            iv.quant = &q;
            int tok[B * T];
            for (int i = 0; i < B * T; i++) tok[i] = (i * 5 + 3) % m.dims.V;
            model_forward_iv(&m, &s, tok, tok, B, T, mode == 2 ? &iv : NULL);
            check_fused(&m, &s);
            fq_free(&q);
            m.packs = NULL;
            if (mode == 1) gemm_packs_free(&ps);
            runstate_free(&s), model_free(&m);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker_detects_error),
        cmocka_unit_test(test_every_variant),
        cmocka_unit_test(test_qk_norm_added),
        cmocka_unit_test(test_model_options),
        cmocka_unit_test(test_remedy_combinations),
        cmocka_unit_test(test_field_keys),
        cmocka_unit_test(test_gate_keys),
        cmocka_unit_test(test_2sig_identity_at_init),
        cmocka_unit_test(test_norm_place),
        cmocka_unit_test(test_maps_after_steps),
        cmocka_unit_test(test_fused_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
