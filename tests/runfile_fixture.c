/* runfile_fixture.c: the run file the run-file tests write
 * (runfile_fixture.h). Test-only. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "runfile_fixture.h"

/* Contracts in runfile_fixture.h. */
Config test_config(void) {
    Config c;
    config_defaults(&c);
    snprintf(c.variant, sizeof c.variant, "%s", "baseline");
    c.init_seed = 1234;
    c.data_seed = 18446744073709551615ull; /* 2^64-1: must survive as u64 */
    c.lr = 3e-4f;
    c.n_layers = 2;
    c.n_heads = 2; /* the probes below: L = 2, H = 2 */
    return c;
}

void tiny_model(TinyModel *t, const Config *cfg) {
    memset(t, 0, sizeof *t);
    t->m.cfg = *cfg;
    t->info[0] =
        (ParamInfo){.offset = 0, .numel = 6, .ndim = 2, .shape = {3, 2}, .decay = 1, .added = 0};
    snprintf(t->info[0].name, PARAM_NAME, "tok_embed");
    t->info[1] =
        (ParamInfo){.offset = 6, .numel = 4, .ndim = 1, .shape = {4, 0}, .decay = 0, .added = 1};
    snprintf(t->info[1].name, PARAM_NAME, "layers.0.attn.gate.b");
    for (int i = 0; i < 10; i++) t->arena[i] = 0.5f * (float)i - 1.0f;
    t->m.table = (ParamTable){t->info, 2, 10};
    t->m.params = t->arena;
}

static void fill_f(float *a, size_t n, float base) {
    for (size_t i = 0; i < n; i++) a[i] = base + 0.25f * (float)i;
}
static void fill_d(double *a, size_t n, double base) {
    for (size_t i = 0; i < n; i++) a[i] = base + 0.5 * (double)i;
}

/* Every array of q filled with values of its index. */
static void fill_probe(Probe *q) {
    for (int i = 0; i < PN * PT; i++) q->tokens[i] = 100 + i, q->targets[i] = 101 + i;
    fill_f(q->attention, PL * PH * PT * PT, 0.0f);
    fill_f(q->slot, PL * PH * PT, 10.0f);
    fill_f(q->first_col, PN * PL * PH * PT, 20.0f);
    fill_f(q->alpha0, PL * PH, 30.0f);
    fill_f(q->row_empty, PL * PH, 31.0f);
    fill_f(q->first_ne, PL * PH, 32.0f);
    fill_f(q->gate_sample, PL * PNS * PT * PC, 40.0f);
    fill_d(q->hist, PL * 50, 1.0);
    fill_d(q->cmean, PL * PC, 2.0);
    fill_d(q->below, PL * 4, 3.0);
    fill_d(q->stats, PL * 4, 4.0);
    fill_d(q->hmax, PL, 5.0);
    fill_d(q->hmed, PL, 6.0);
    fill_d(q->htop3, PL * 3, 7.0);
    fill_d(q->hkurt, PL, 8.0);
    fill_d(q->hratio, PL, 9.0);
    fill_d(q->bos_max, PL, 11.0);
    fill_d(q->bos_ratio, PL, 12.0);
    fill_d(q->tok_max, PL, 13.0);
    fill_d(q->max_logit, PL, 17.0);
    fill_d(q->tok_ratio, PL, 14.0);
    fill_f(q->knorm, PL * PH * PT, 50.0f);
    fill_f(q->vnorm, PL * PH * PT, 60.0f);
    fill_f(q->onorm, PL * PH * PT, 70.0f);
    fill_d(q->gfirst, PL, 18.0);
    fill_d(q->grest, PL, 19.0);
    fill_d(q->erank, PL * PH, 21.0);
    fill_d(q->grad_in, PL * PT, 18.0);
    fill_d(q->gate_wn, PL * 2, 19.0);
    for (int l = 0; l < PL; l++)
        q->bos_arg[l] = 5 + l, q->tok_arg[l] = 7 - l, q->layer_heads[l] = PH, q->layer_slots[l] = l;
    fill_f(q->key_alpha, PN * PL * PH * PT, 50.0f);
    fill_f(q->bos_cos, PN * PL * PT, 60.0f);
    fill_d(q->resid, PL * PD, 70.0);
}

/* q's arrays filled (fill_probe) and q->p the record over them at step. */
void make_probe(Probe *q, long long step) {
    fill_probe(q);
    q->p = (ProbeRecord){.step = step,
                         .L = PL,
                         .H = PH,
                         .N = PN,
                         .T = PT,
                         .tokens = q->tokens,
                         .attention = q->attention,
                         .attention_slot = q->slot,
                         .first_col = q->first_col,
                         .alpha0 = q->alpha0,
                         .proxy = 1,
                         .row_empty = q->row_empty,
                         .first_nonempty = q->first_ne,
                         .normaliser = "softmax",
                         .gate_channels = PC,
                         .gate_heads = 2,
                         .gate_bounded = 1,
                         .gate_sample = q->gate_sample,
                         .gate_sample_n = PNS,
                         .gate_hist = q->hist,
                         .gate_channel_mean = q->cmean,
                         .gate_below = q->below,
                         .gate_stats = q->stats,
                         .h_max = q->hmax,
                         .h_median = q->hmed,
                         .h_top3 = q->htop3,
                         .h_kurtosis = q->hkurt,
                         .h_norm_ratio = q->hratio,
                         .bos_max = q->bos_max,
                         .bos_argmax = q->bos_arg,
                         .bos_norm_ratio = q->bos_ratio,
                         .tok_max = q->tok_max,
                         .tok_argmax = q->tok_arg,
                         .layer_heads = q->layer_heads,
                         .layer_slots = q->layer_slots,
                         .slots = 1,
                         .tok_norm_ratio = q->tok_ratio,
                         .max_logit = q->max_logit,
                         .D = PD,
                         .key_alpha = q->key_alpha,
                         .bos_cosine = q->bos_cos,
                         .resid_share = q->resid,
                         .key_norm = q->knorm,
                         .value_norm = q->vnorm,
                         .head_out_norm = q->onorm,
                         .gate_first = q->gfirst,
                         .gate_rest = q->grest,
                         .ov_erank = q->erank,
                         .grad_in_norm = q->grad_in,
                         .targets = q->targets,
                         .gate_w_norm = q->gate_wn};
}

/* Write a full small run: 3 train rows, 2 evals, a probe at step 2. */
RunFile *write_run(const char *path, const Config *cfg, TinyModel *t, Probe *q) {
    char err[512] = "";
    RunFile *rf = runfile_create(path, cfg, &t->m, 0, err, sizeof err);
    if (!rf) fail_msg("create: %s", err);
    for (int i = 0; i < 3; i++)
        assert_int_equal(runfile_append_train(rf, i, 5.0 - i, 1e-3 * (i + 1), 0.5 * i,
                                              1024 * (i + 1), 0.1 * i, rf_err, sizeof rf_err),
                         0);
    assert_int_equal(runfile_append_eval(rf, 0, 4.5, 6.5, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_append_eval(rf, 2, 3.5, 5.0, rf_err, sizeof rf_err), 0);
    make_probe(q, 2);
    /* written twice: the second write replaces the first whole */
    snprintf(q->p.normaliser, sizeof q->p.normaliser, "stale");
    assert_int_equal(runfile_write_probe(rf, &q->p, rf_err, sizeof rf_err), 0);
    snprintf(q->p.normaliser, sizeof q->p.normaliser, "softmax");
    assert_int_equal(runfile_write_probe(rf, &q->p, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_write_params(rf, &t->m, rf_err, sizeof rf_err), 0);
    return rf;
}

/* write_run's file on test_config and a tiny model, closed. */
void write_closed_run(const char *path, Probe *q) {
    Config cfg = test_config();
    TinyModel t;
    tiny_model(&t, &cfg);
    RunFile *rf = write_run(path, &cfg, &t, q);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);
}
