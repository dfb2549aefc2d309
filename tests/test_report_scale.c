/* test_report_scale.c: the confirmatory headline's scale paragraph and the
 * Compute section over run files of known sizes (built by hand with
 * src/runfile/runfile.h, no trainer): the parameters, training tokens and
 * training FLOPs it prints equal a count made here from the model layout
 * (src/model/model.h) and the FLOP rule of docs/metrics.md, as ranges over
 * arms that differ; the report from results.csv alone prints the same
 * paragraph; only the effects the protocol's metrics test get a bullet. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "model.h"
#include "report.h"
#include "runfile.h"
#include "testutil.h"

/* The shape every run here has: L layers of width D, H heads, a GELU MLP
 * of width FF, RMSNorm, RoPE, tied embeddings, BV ordinary bigram tokens,
 * trained at length T in batches of B. */
enum { L = 2, D = 16, H = 2, FF = 32, BV = 30, T = 8, B = 4 };

static int g_vocab; /* the resolved vocabulary (BV and BOS) */

static void make_config(Config *cfg, const char *variant, int steps, int seed) {
    char err[512];
    config_defaults(cfg);
    cfg->data = DATA_BIGRAM;
    cfg->bigram_vocab = BV;
    assert_int_equal(config_apply_variant(cfg, variant, err, sizeof err), 0);
    cfg->n_layers = L, cfg->d_model = D, cfg->n_heads = H, cfg->n_kv_heads = H;
    cfg->head_dim = 0, cfg->d_ff = FF, cfg->mlp = MLP_GELU, cfg->norm = NORM_RMS;
    cfg->pos = POS_ROPE, cfg->tied_embed = 1, cfg->seq_len = T, cfg->batch_size = B;
    cfg->steps = steps, cfg->warmup = 1, cfg->init_seed = (unsigned long long)seed;
    config_resolve(cfg);
}

/* dir/name: a finished run of variant that did steps steps. */
static void make_run(const char *dir, const char *name, const char *variant, int steps, int seed,
                     double val_loss) {
    char path[512], err[512];
    Config cfg;
    Model m;
    make_config(&cfg, variant, steps, seed);
    g_vocab = cfg.vocab_size;
    assert_int_equal(model_shape(&m, &cfg, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    RunFile *rf = runfile_create(path, &cfg, &m, 1, err, sizeof err);
    assert_non_null(rf);
    model_free(&m);
    for (int s = 1; s <= steps; s += steps - 1)
        assert_int_equal(runfile_append_train(rf, s, 2.0, 1e-3, 1.0, (long long)B * T * s, 0.01 * s,
                                              err, sizeof err),
                         0);
    assert_int_equal(runfile_append_eval(rf, steps, val_loss, val_loss / log(2), err, sizeof err),
                     0);
    assert_int_equal(runfile_set_summary(rf, "steps_done", steps, err, sizeof err), 0);
    assert_int_equal(runfile_set_summary(rf, "final_val_loss", val_loss, err, sizeof err), 0);
    assert_int_equal(runfile_set_status(rf, "done", err, sizeof err), 0);
    assert_int_equal(runfile_close(rf, err, sizeof err), 0);
}

/* Parameters by the layout of model.h: tied token embedding [V, d]; per
 * layer two RMSNorm weights [d], w_q w_k w_v w_o [d, d] and the GELU
 * MLP's w_up [ff, d] and w_down [d, ff]; the final norm [d]; a gated
 * (g1-elem) layer adds the elementwise gate's w [d, d]. */
static double hand_params(int gated) {
    double layer = 2.0 * D + 4.0 * D * D + 2.0 * D * FF + (gated ? (double)D * D : 0);
    return (double)g_vocab * D + L * layer + D;
}

/* docs/metrics.md "Training FLOPs": 6 per matmul weight per token (the
 * layers' matrices and the tied head [V, d]) plus attention's 12 T q_dim
 * per layer, times steps x batch x T tokens. */
static double hand_flops(int gated, int steps) {
    double matmul =
        L * (4.0 * D * D + 2.0 * D * FF + (gated ? (double)D * D : 0)) + (double)D * g_vocab;
    double per_token = 6.0 * matmul + 12.0 * T * D * L;
    return per_token * steps * B * T;
}

/* "4.69k": 3 significant digits in thousands (every count here is one). */
static void thousands(char *buf, size_t n, double v) { snprintf(buf, n, "%.3gk", v / 1e3); }

/* "9.8e7": %.3g with the exponent's "+0" dropped (every FLOP count here
 * is 1e7 to 1e9). */
static void flops_text(char *buf, size_t n, double v) {
    char t[64], *e;
    snprintf(t, sizeof t, "%.3g", v);
    e = strstr(t, "e+0");
    assert_non_null(e);
    snprintf(buf, n, "%.*se%s", (int)(e - t), t, e + 3);
}

/* The headline's scale paragraph of dir/REPORT.md (malloc'd): from
 * "Scale of these runs" to the blank line after its bullets. */
static char *scale_paragraph(const char *dir) {
    char path[400];
    snprintf(path, sizeof path, "%s/REPORT.md", dir);
    char *md = tu_slurp_ok(path, NULL);
    const char *head = strstr(md, "## Headline (confirmatory)");
    assert_non_null(head);
    const char *a = strstr(head, "Scale of these runs"), *claims = strstr(head, "- The paper: ");
    assert_non_null(a);
    assert_non_null(claims);
    assert_true(a < claims); /* before the claim sentences, never one of them */
    const char *b = strstr(strstr(a, "\n\n") + 2, "\n\n");
    assert_non_null(b);
    assert_true(b < claims);
    char *out = strndup(a, (size_t)(b - a));
    assert_non_null(strstr(md, "## Compute"));
    free(md);
    return out;
}

static const char PROTO[] = "[primary]\nmetric = f_attn\nmetric = val_loss\n"
                            "test = f_attn mann-whitney\ntest = val_loss mann-whitney\n"
                            "compare = g1 vs base\ncompare = base2x vs base\n"
                            "paper = f_attn g1 < base\npaper = val_loss base2x < base\n";

/* Three arms, two seeds each: base (baseline, 100 steps), g1 (g1-elem,
 * 100 steps) and base2x (baseline, 200 steps). */
static void test_scale_line(void **state) {
    (void)state;
    char err[512] = "", path[400], want[600], p0[32], p1[32], t0[32], t1[32], f0[32], f1[32];
    for (int s = 1; s <= 2; s++) {
        char name[64];
        snprintf(name, sizeof name, "base_s%d.h5", s);
        make_run(tu_scratch, name, "baseline", 100, s, 2.0 + 0.1 * s);
        snprintf(name, sizeof name, "g1_s%d.h5", s);
        make_run(tu_scratch, name, "g1-elem", 100, s, 1.9 + 0.1 * s);
        snprintf(name, sizeof name, "base2x_s%d.h5", s);
        make_run(tu_scratch, name, "baseline", 200, s, 1.8 + 0.1 * s);
    }
    snprintf(path, sizeof path, "%s/protocol.ini", tu_scratch);
    tu_write_text(path, PROTO);
    assert_int_equal(report_run(tu_scratch, NULL, err, sizeof err), 0);
    char *from_runs = scale_paragraph(tu_scratch);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%s\n", from_runs);

    /* the hand counts: 2 x 16 wide layers, vocab 31 (30 + BOS) */
    assert_int_equal(g_vocab, BV + 1);
    assert_true(hand_params(0) == 4672 && hand_params(1) == 5184);
    assert_true(hand_flops(0, 100) == 30624.0 * 3200 && hand_flops(1, 100) == 33696.0 * 3200);
    thousands(p0, sizeof p0, hand_params(0));
    thousands(p1, sizeof p1, hand_params(1));
    thousands(t0, sizeof t0, 100.0 * B * T);
    thousands(t1, sizeof t1, 200.0 * B * T);
    flops_text(f0, sizeof f0, hand_flops(0, 100));
    flops_text(f1, sizeof f1, hand_flops(0, 200)); /* base2x: the largest */
    assert_true(hand_flops(0, 200) > hand_flops(1, 100));
    snprintf(want, sizeof want,
             "Scale of these runs (not a claim): %s to %s parameters a run (all of them: the rows "
             "do not record the embedding's size), %s to %s training tokens a run "
             "([definition](#def-train-tokens)) and %s to %s training FLOPs a run "
             "([definition](#def-train-flops)), over 6 runs;",
             p0, p1, t0, t1, f0, f1);
    assert_string_equal(p0, "4.67k"); /* the formats agree with the literal counts */
    assert_string_equal(f1, "1.96e8");
    assert_non_null(strstr(from_runs, want));

    /* the effects f_attn and val_loss test, and only those */
    assert_non_null(strstr(from_runs, "\n- a first-token attention sink forms: Gu et al. 2024 saw "
                                      "it in a LLaMA-style model (60M parameters, 5B tokens, "
                                      "about 1.8e18 FLOPs by 6 × parameters × tokens)"));
    assert_non_null(strstr(from_runs, "\n- the gate removes the sink (F-Attn): the paper (Qiu et "
                                      "al. 2025) saw it in its 15A2B MoE (15B parameters, 400B "
                                      "tokens): F-Attn 0.048 (g1-elem) against 0.467"));
    assert_non_null(strstr(from_runs, "\n- the gate lowers the loss (perplexity): "));
    assert_non_null(strstr(from_runs, "Marin's MoE ablation ladder did not see it in its d512 "
                                      "rung (2.19e17 FLOPs)"));
    assert_null(strstr(from_runs, "long-context"));
    assert_null(strstr(from_runs, "massive activations"));
    assert_null(strstr(from_runs, "learning rate")); /* one rate: not a stability study */

    /* results.csv and protocol.ini alone: the same paragraph */
    char kept[300];
    snprintf(kept, sizeof kept, "%s/kept", tu_scratch);
    assert_int_equal(mkdir(kept, 0700), 0);
    char from[400], to[400];
    snprintf(from, sizeof from, "%s/results.csv", tu_scratch);
    snprintf(to, sizeof to, "%s/results.csv", kept);
    tu_copy_file(from, to);
    snprintf(to, sizeof to, "%s/protocol.ini", kept);
    tu_write_text(to, PROTO);
    assert_int_equal(report_run(kept, NULL, err, sizeof err), 0);
    char *from_csv = scale_paragraph(kept);
    assert_string_equal(from_csv, from_runs);
    free(from_csv);
    free(from_runs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale_line),
    };
    return cmocka_run_group_tests(tests, tu_scratch_setup, tu_scratch_teardown);
}
