/* test_intervene_kinds.c: the interventions head-zero, gates-open-layer,
 * gate-const, mact-mean and mact-zero (intervention.h, docs/metrics.md
 * "Interventions"): hand-built cases, identities between kinds on tiny
 * models, the command's refusals and stored groups, and the forward
 * against PyTorch (tests/reference/make_intervene_fixture.py, its
 * "more/" groups). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_args.h"
#include "intervene.h"
#include "intervention.h"
#include "metrics.h"
#include "model.h"
#include "runfile_read.h"
#include "testutil.h"

static char dir[64], g1_run[1024];

static int setup_run(void **st) {
    (void)st;
    char out[1100];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    snprintf(g1_run, sizeof g1_run, "%s/g1.h5", dir);
    snprintf(out, sizeof out, "%s/g1.out", dir);
    if (tu_run(out, "train --config %s/experiments/tiny.ini --set variant=g1-elem --out %s --quiet",
               tu_src(), g1_run))
        fail_msg("training g1-elem failed (see %s)", out);
    return 0;
}

static int remove_run(void **st) {
    (void)st;
    return tu_rmtree(dir);
}

enum { B = 2, TMAX = 64 };

/* the model's logits [B, T, V] and block outputs after a forward under iv
 * (NULL: plain), copied out */
typedef struct {
    float *logits, *blocks; /* blocks [L][B * Ti * d] */
    size_t nl, nb;
} Outs;

static void run(const Model *m, RunState *s, const int *tok, int T, const Intervention *iv,
                Outs *o) {
    const Dims *D = &m->dims;
    model_forward_iv(m, s, tok, NULL, B, T, iv);
    o->nl = (size_t)B * T * D->V;
    o->nb = (size_t)B * (T + D->extra_pos) * D->d;
    o->logits = malloc(o->nl * sizeof(float));
    o->blocks = malloc(o->nb * D->L * sizeof(float));
    assert_non_null(o->logits), assert_non_null(o->blocks);
    memcpy(o->logits, model_logits(s), o->nl * sizeof(float));
    for (int l = 0; l < D->L; l++)
        memcpy(o->blocks + l * o->nb, model_block_output(s, l), o->nb * sizeof(float));
}

static void outs_free(Outs *o) { free(o->logits), free(o->blocks); }

static void tokens(int *tok, int T) {
    for (int i = 0; i < B * T; i++) tok[i] = (i * 7 + 3) % 60;
}

/* ---- parsing the lists ---- */

static void test_parse_lists(void **st) {
    (void)st;
    unsigned char mask[2 * 4];
    char err[256];
    assert_int_equal(intervene_parse_heads("0.1,1.3", 2, 4, mask, err, sizeof err), 0);
    for (int i = 0; i < 8; i++) assert_int_equal(mask[i], i == 1 || i == 7);
    const char *bad[][2] = {
        {"2.0", "--heads: 2.0: layer 2 is not in 0..1"},
        {"0.4", "--heads: 0.4: head 4 is not in 0..3"},
        {"0.-1", "--heads: 0.-1: head -1 is not in 0..3"},
        {"4294967296.0", "--heads: 4294967296.0: layer 4294967296 is not in 0..1"},
        {"0.4294967297", "--heads: 0.4294967297: head 4294967297 is not in 0..3"},
        {"-4294967296.0", "--heads: -4294967296.0: layer -4294967296 is not in 0..1"},
        {"99999999999999999999.0",
         "--heads: 99999999999999999999.0: layer 99999999999999999999 is not in 0..1"},
        {"0.1,0.1", "--heads: head 0.1 given twice"},
        {"0.1,", "--heads: '0.1,' ends with a comma"},
        {"1", "--heads: '1' is not LAYER.HEAD"},
        {"0.1x", "--heads: '0.1x' is not LAYER.HEAD"},
        {"", "head-zero needs --heads L.H,..."}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(intervene_parse_heads(bad[i][0], 2, 4, mask, err, sizeof err), -1);
        assert_string_equal(err, bad[i][1]);
    }
    double c[8];
    int n;
    assert_int_equal(intervene_parse_consts("0,0.25,1", c, 8, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_true(c[0] == 0.0 && c[1] == 0.25 && c[2] == 1.0);
    const char *badc[][2] = {{"0,1.5", "--gate-const: 1.5 is outside [0, 1]"},
                             {"-0.1", "--gate-const: -0.1 is outside [0, 1]"},
                             {"nan", "--gate-const: nan is outside [0, 1]"},
                             {"0.5,abc", "--gate-const: 'abc' is not a number"},
                             {"0.5,0.5", "--gate-const: 0.5 given twice"},
                             {"0.5,,1", "--gate-const: '' is not a number"}};
    for (size_t i = 0; i < sizeof badc / sizeof *badc; i++) {
        assert_int_equal(intervene_parse_consts(badc[i][0], c, 8, &n, err, sizeof err), -1);
        assert_string_equal(err, badc[i][1]);
    }
    assert_int_equal(intervene_parse_consts("0,0.5,1", c, 2, &n, err, sizeof err), -1);
    InterventionKind k[2] = {IV_NONE, IV_MACT_MEAN};
    IvParams p = IV_PARAMS_DEFAULT;
    p.layer = 2;
    assert_int_equal(intervene_check(k, 2, &p, 2, 4, 32, err, sizeof err), -1);
    assert_string_equal(err, "--layer 2 is not in 0..1");
    p.layer = 1;
    assert_int_equal(intervene_check(k, 2, &p, 2, 4, 32, err, sizeof err), 0);
}

/* The kinds are one table: each row's name is its RS_IV_* group name and
 * names its kind back; --help and the sweep file's refusal list every
 * kind from it; "all" is the rows marked IVP_IN_ALL. */
static void test_kind_table(void **st) {
    (void)st;
    static const char *const group[IV_COUNT] = {[IV_NONE] = RS_IV_NONE,
                                                [IV_GATES_OPEN] = RS_IV_GATES_OPEN,
                                                [IV_GATES_MEAN] = RS_IV_GATES_MEAN,
                                                [IV_BOS_CLIP] = RS_IV_BOS_CLIP,
                                                [IV_BOS_MEAN] = RS_IV_BOS_MEAN,
                                                [IV_NO_BOS] = RS_IV_NO_BOS,
                                                [IV_HEAD_ZERO] = RS_IV_HEAD_ZERO,
                                                [IV_GATES_OPEN_LAYER] = RS_IV_GATES_OPEN_LAYER,
                                                [IV_GATE_CONST] = RS_IV_GATE_CONST,
                                                [IV_MACT_MEAN] = RS_IV_MACT_MEAN,
                                                [IV_MACT_ZERO] = RS_IV_MACT_ZERO};
    char *help = NULL, names[256];
    size_t len = 0;
    FILE *f = open_memstream(&help, &len);
    assert_non_null(f);
    intervention_help(f);
    fclose(f);
    intervention_names(names, sizeof names, 1);
    assert_int_equal(strncmp(names, "all, ", 5), 0);
    for (int k = 0; k < IV_COUNT; k++) {
        assert_non_null(IV_KINDS[k].name);
        assert_string_equal(IV_KINDS[k].name, group[k]);
        assert_int_equal(intervention_kind(IV_KINDS[k].name), k);
        assert_true(IV_KINDS[k].help && IV_KINDS[k].help[0]);
        if (k == IV_NONE) continue;
        char line[64];
        snprintf(line, sizeof line, "  %-16s ", IV_KINDS[k].name);
        assert_non_null(strstr(help, line));
        assert_non_null(strstr(names, IV_KINDS[k].name));
    }
    assert_non_null(strstr(help, "  all              gates-open, gates-mean, bos-clip, bos-mean, "
                                 "no-bos\n"));
    free(help);
    assert_true(intervention_per_layer(IV_MACT_ZERO) && intervention_mact(IV_MACT_MEAN));
    assert_false(intervention_per_layer(IV_GATES_OPEN) || intervention_mact(IV_BOS_CLIP));
    assert_true(intervention_has(IV_GATE_CONST, IVP_NEEDS_GATES));
    assert_false(intervention_has((InterventionKind)IV_COUNT, IVP_IN_ALL));
}

/* ---- massive activations on a hand-built residual ---- */

/* x [1, 1 + 4, 3]: row 0 a sink row (e = 1), never touched; at the
 * threshold max(abs, ratio * median |h|) only the entries above change */
static void test_mact_hand(void **st) {
    (void)st;
    float scratch[16];
    /* real rows: |h| median of {1,2,1, 1,1,1, 50,1,1, -40,1,2} is 1 */
    const float x0[15] = {99, 99, 99, 1, 2, 1, 1, 1, 1, 50, 1, 1, -40, 1, 2};
    float x[15];
    Intervention iv = {
        .kind = IV_MACT_ZERO, .layer = 1, .scratch = scratch, .mact_abs = 10.0, .mact_ratio = 20.0};
    memcpy(x, x0, sizeof x);
    iv_residual(&iv, 0, x, 1, 5, 1, 3); /* another layer: untouched */
    assert_memory_equal(x, x0, sizeof x);
    iv_residual(&iv, 1, x, 1, 5, 1, 3); /* threshold max(10, 20 * 1) = 20 */
    const float zero[15] = {99, 99, 99, 1, 2, 1, 1, 1, 1, 0, 1, 1, 0, 1, 2};
    assert_memory_equal(x, zero, sizeof x);
    iv.kind = IV_MACT_MEAN;
    memcpy(x, x0, sizeof x);
    iv_residual(&iv, 1, x, 1, 5, 1, 3); /* feature 0's mean over the 4 rows: 12/4 = 3 */
    const float mean[15] = {99, 99, 99, 1, 2, 1, 1, 1, 1, 3, 1, 1, 3, 1, 2};
    assert_memory_equal(x, mean, sizeof x);
    iv.mact_abs = 45.0; /* now only the 50 is massive */
    memcpy(x, x0, sizeof x);
    iv_residual(&iv, 1, x, 1, 5, 1, 3);
    const float one[15] = {99, 99, 99, 1, 2, 1, 1, 1, 1, 3, 1, 1, -40, 1, 2};
    assert_memory_equal(x, one, sizeof x);
    /* the defaults are Sun et al.'s: nothing here is above 100 */
    iv.mact_abs = MACT_ABS_MIN, iv.mact_ratio = MACT_MEDIAN_RATIO;
    memcpy(x, x0, sizeof x);
    iv_residual(&iv, 1, x, 1, 5, 1, 3);
    assert_memory_equal(x, x0, sizeof x);
    assert_true(massive_threshold(x0 + 3, 12, 10.0, 20.0, scratch) == 20.0);
    assert_true(massive_threshold(x0 + 3, 12, 30.0, 20.0, scratch) == 30.0);
}

/* ---- identities on tiny models ---- */

/* The tiny model of `variant`, its run state for B sequences of its
 * seq_len T (at most TMAX) and test tokens in tok [B * TMAX]; returns T. */
static int tiny_setup(Model *m, RunState *s, const char *variant, int *tok) {
    tu_tiny_model(m, variant);
    const int T = m->cfg.seq_len;
    assert_true(T <= TMAX);
    assert_int_equal(runstate_init(s, m, B, T), 0);
    tokens(tok, T);
    return T;
}

/* Every head zeroed equals the model whose output projections are zero;
 * one head zeroed leaves the blocks before its layer bit for bit and
 * changes the loss. */
static void test_head_zero(void **st) {
    (void)st;
    const char *variants[] = {"baseline", "g1-elem", "sink-token", "g2-elem"};
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        Model m;
        RunState s;
        int tok[B * TMAX];
        const int T = tiny_setup(&m, &s, variants[v], tok);
        const Dims *D = &m.dims;
        unsigned char *all = malloc((size_t)D->L * D->H), *one = calloc((size_t)D->L * D->H, 1);
        memset(all, 1, (size_t)D->L * D->H);
        one[(size_t)(D->L - 1) * D->H + 1] = 1;
        Intervention iv = {.kind = IV_HEAD_ZERO, .head_zero = all};
        Outs z, w0, plain, o1;
        run(&m, &s, tok, T, NULL, &plain);
        run(&m, &s, tok, T, &iv, &z);
        iv.head_zero = one;
        run(&m, &s, tok, T, &iv, &o1);
        for (int l = 0; l < D->L; l++)
            memset(m.w.layer[l].w_o, 0, (size_t)D->qdim * D->d * sizeof(float));
        run(&m, &s, tok, T, NULL, &w0);
        if (memcmp(z.logits, w0.logits, z.nl * sizeof(float)))
            fail_msg("%s: every head zeroed differs from W_o = 0", variants[v]);
        assert_memory_equal(o1.blocks, plain.blocks, (D->L - 1) * plain.nb * sizeof(float));
        if (!memcmp(o1.logits, plain.logits, plain.nl * sizeof(float)))
            fail_msg("%s: zeroing head %d.1 changed nothing", variants[v], D->L - 1);
        outs_free(&z), outs_free(&w0), outs_free(&plain), outs_free(&o1);
        free(all), free(one);
        runstate_free(&s);
        model_free(&m);
    }
}

/* For multiplicative sigmoid gates c = 1 is gates-open and c = 0 is every
 * head zeroed (G1); gates-open-layer in layer 0 gives gates-open's block
 * 0 and in the last layer leaves the blocks before it alone. */
static void test_gate_const_and_layer(void **st) {
    (void)st;
    const char *variants[] = {"g1-elem", "g1-shared", "g1-head"};
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        Model m;
        RunState s;
        int tok[B * TMAX];
        const int T = tiny_setup(&m, &s, variants[v], tok);
        const Dims *D = &m.dims;
        unsigned char *all = malloc((size_t)D->L * D->H);
        memset(all, 1, (size_t)D->L * D->H);
        Outs plain, open, c1, c0, zero, half, l0, lz;
        run(&m, &s, tok, T, NULL, &plain);
        run(&m, &s, tok, T, &(Intervention){.kind = IV_GATES_OPEN}, &open);
        run(&m, &s, tok, T, &(Intervention){.kind = IV_GATE_CONST, .gate_const = 1.0f}, &c1);
        run(&m, &s, tok, T, &(Intervention){.kind = IV_GATE_CONST, .gate_const = 0.0f}, &c0);
        run(&m, &s, tok, T, &(Intervention){.kind = IV_GATE_CONST, .gate_const = 0.5f}, &half);
        run(&m, &s, tok, T, &(Intervention){.kind = IV_HEAD_ZERO, .head_zero = all}, &zero);
        run(&m, &s, tok, T, &(Intervention){.kind = IV_GATES_OPEN_LAYER, .layer = 0}, &l0);
        run(&m, &s, tok, T, &(Intervention){.kind = IV_GATES_OPEN_LAYER, .layer = D->L - 1}, &lz);
        if (memcmp(c1.logits, open.logits, open.nl * sizeof(float)))
            fail_msg("%s: c = 1 is not gates-open", variants[v]);
        if (memcmp(c0.logits, zero.logits, zero.nl * sizeof(float)))
            fail_msg("%s: c = 0 is not every head zeroed", variants[v]);
        assert_true(memcmp(half.logits, open.logits, open.nl * sizeof(float)) != 0);
        assert_true(memcmp(half.logits, plain.logits, open.nl * sizeof(float)) != 0);
        assert_memory_equal(l0.blocks, open.blocks, open.nb * sizeof(float));
        assert_true(memcmp(l0.logits, open.logits, open.nl * sizeof(float)) != 0);
        assert_memory_equal(lz.blocks, plain.blocks, (D->L - 1) * plain.nb * sizeof(float));
        assert_true(memcmp(lz.logits, plain.logits, open.nl * sizeof(float)) != 0);
        outs_free(&plain), outs_free(&open), outs_free(&c1), outs_free(&c0);
        outs_free(&zero), outs_free(&half), outs_free(&l0), outs_free(&lz);
        free(all);
        runstate_free(&s);
        model_free(&m);
    }
}

/* ---- the command on a trained run ---- */

static void get(RunReader *r, const char *name, RunIntervention *iv) {
    char err[512];
    if (runread_intervention(r, name, iv, err, sizeof err) != 0) fail_msg("%s", err);
}

/* The report over the runs in directory runs: its intervention table has a row per
 * stored result, a mact-* row named with its thresholds, and mact-zero-L1's
 * dloss the stored pair's difference, dloss. */
static void check_report_rows(const char *runs, const char *out, double dloss) {
    char rep[1100], md[1200], want[160];
    snprintf(rep, sizeof rep, "%s/rep", runs);
    snprintf(md, sizeof md, "%s/REPORT.md", rep);
    assert_int_equal(tu_run(out, "report %s --out %s", runs, rep), 0);
    char *text = tu_slurp_ok(md, NULL);
    snprintf(want, sizeof want, "| g1 | mact-zero-L1 (|h| > 0, > 2 x median) | 1 | ");
    const char *row = strstr(text, want);
    if (!row) fail_msg("REPORT.md has no row '%s'", want);
    snprintf(want, sizeof want, "| %+.4f |", dloss);
    const char *eol = strchr(row, '\n');
    const char *cell = strstr(row, want);
    if (!cell || cell > eol)
        fail_msg("mact-zero-L1 row lacks dloss %s: %.*s", want, (int)(eol - row), row);
    assert_non_null(strstr(text, "| g1 | head-zero | 1 | "));
    assert_non_null(strstr(text, "| g1 | gate-const-c1 | 1 | "));
    free(text);
}

static void test_cli_store(void **st) {
    (void)st;
    char out[1100], err[512];
    snprintf(out, sizeof out, "%s/cli.out", dir);
    const char *refuse[][2] = {
        {"head-zero", "gatelab intervene: head-zero needs --heads L.H,..."},
        {"head-zero --heads 0.9", "gatelab intervene: --heads: 0.9: head 9 is not in 0..1"},
        {"head-zero --heads 5.0", "gatelab intervene: --heads: 5.0: layer 5 is not in 0..1"},
        {"head-zero --heads 4294967296.0",
         "gatelab intervene: --heads: 4294967296.0: layer 4294967296 is not in 0..1"},
        {"gate-const --gate-const 0,2", "gatelab intervene: --gate-const: 2 is outside [0, 1]"},
        {"mact-zero --layer 7", "gatelab intervene: --layer 7 is not in 0..1"},
        {"mact-zero --mact-ratio x", "gatelab intervene: --mact-ratio 'x' is not a number >= 0"}};
    for (size_t i = 0; i < sizeof refuse / sizeof *refuse; i++) {
        assert_int_equal(tu_run(out, "intervene %s %s --no-write", g1_run, refuse[i][0]), 2);
        tu_assert_one_line(out, refuse[i][1], NULL);
    }
    assert_int_equal(tu_run(out,
                            "intervene %s gates-open head-zero gates-open-layer gate-const "
                            "mact-zero mact-mean --heads 0.0,1.1 --gate-const 0,1 --mact-abs 0 "
                            "--mact-ratio 2",
                            g1_run),
                     0);
    char *text = tu_slurp_ok(out, NULL);
    assert_null(strstr(text, "gate-const-c0.5"));
    assert_non_null(strstr(text, "mact-zero-L1"));
    assert_non_null(strstr(text, "head-zero heads: 0.0,1.1"));
    assert_non_null(strstr(text, "mact-* massive when |h| > 0, > 2 x median"));
    free(text);
    RunReader *r = runread_open(g1_run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    RunIntervention none, iv;
    get(r, RS_IV_NONE, &none);
    const char *names[] = {"gates-open",          "head-zero",     "gates-open-layer-L0",
                           "gates-open-layer-L1", "gate-const-c0", "gate-const-c1",
                           "mact-zero-L0",        "mact-zero-L1",  "mact-mean-L0",
                           "mact-mean-L1"};
    double open_loss = NAN, c1_loss = NAN, mact_l1 = NAN;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        get(r, names[i], &iv);
        assert_true(iv.loss_none == none.loss);
        assert_true(isfinite(iv.loss) && iv.loss_n == none.loss_n);
        if (!strcmp(names[i], "gates-open")) open_loss = iv.loss;
        if (!strcmp(names[i], "gate-const-c1")) c1_loss = iv.loss, assert_true(iv.gate_const == 1);
        if (!strcmp(names[i], "mact-zero-L1")) mact_l1 = iv.loss;
        if (!strncmp(names[i], "mact", 4) || !strncmp(names[i], "gates-open-layer", 16))
            assert_int_equal(iv.layer, names[i][strlen(names[i]) - 1] - '0');
        else assert_int_equal(iv.layer, -1);
        if (!strcmp(names[i], "head-zero")) assert_string_equal(iv.heads, "0.0,1.1");
        else assert_string_equal(iv.heads, "");
        if (strncmp(names[i], "gate-const", 10)) assert_true(isnan(iv.gate_const));
        /* the mact-* groups carry the thresholds they were made with */
        if (!strncmp(names[i], "mact", 4)) assert_true(iv.mact_abs == 0 && iv.mact_ratio == 2);
        else assert_true(isnan(iv.mact_abs) && isnan(iv.mact_ratio));
        runread_intervention_free(&iv);
    }
    assert_true(open_loss == c1_loss);
    assert_true(mact_l1 != none.loss); /* ratio 2 finds some in a tiny model */
    const double none_loss = none.loss;
    runread_intervention_free(&none);
    runread_close(r);
    assert_int_equal(
        tu_run(out, "intervene %s gate-const --gate-const 0.5 --json --no-write", g1_run), 0);
    text = tu_slurp_ok(out, NULL);
    assert_non_null(strstr(text, "\"name\":\"gate-const-c0.5\""));
    assert_non_null(strstr(text, "\"gate_const\":0.5"));
    assert_non_null(strstr(text, "\"loss_none\""));
    free(text);
    assert_int_equal(tu_run(out, "intervene %s mact-zero --layer 1 --json --no-write", g1_run), 0);
    text = tu_slurp_ok(out, NULL);
    assert_non_null(strstr(text, "\"mact_abs\":100"));
    assert_non_null(strstr(text, "\"mact_ratio\":1000"));
    free(text);
    check_report_rows(dir, out, mact_l1 - none_loss);
}

/* ---- against PyTorch (make_intervene_fixture.py's more/ groups) ---- */

/* Name of the run file's last probe group into name ("" when none). */
static herr_t last_probe_cb(hid_t g, const char *nm, const H5L_info_t *info, void *data) {
    (void)g, (void)info;
    if (strcmp(nm, (char *)data) > 0) snprintf((char *)data, 64, "%s", nm);
    return 0;
}

/* Rewrites dataset name of probe group g as float: f(v, n) in place. */
static void edit_f32(hid_t g, const char *name, void (*f)(float *, hsize_t *)) {
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT), sp = H5Dget_space(d);
    hsize_t dims[4] = {0};
    assert_int_equal(H5Sget_simple_extent_ndims(sp), name[0] == 'a' ? 4 : 3);
    H5Sget_simple_extent_dims(sp, dims, NULL);
    size_t n = 1;
    for (int i = 0; i < H5Sget_simple_extent_ndims(sp); i++) n *= dims[i];
    float *v = malloc(n * sizeof *v);
    assert_non_null(v);
    assert_true(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    f(v, dims);
    assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    free(v), H5Sclose(sp), H5Dclose(d);
}

/* Head (0, 0) sends every query t >= 1 to the first token... */
static void sink_head00(float *A, hsize_t *dims) {
    const hsize_t P = dims[2];
    for (hsize_t t = 1; t < P; t++)
        for (hsize_t k = 0; k < P; k++) A[t * P + k] = k == 0;
}

/* ... and its output norm is a hundredth of what it was. */
static void quiet_head00(float *o, hsize_t *dims) {
    for (hsize_t t = 0; t < dims[2]; t++) o[t] *= 0.01f;
}

/* --heads dormant zeroes the heads the run file's last probe classifies as
 * dormant: a copy of the g1 run whose head (0, 0) is made a sink with a
 * small output norm (docs/metrics.md's rule) zeroes exactly 0.0, the same
 * loss as --heads 0.0; the unchanged run has no dormant head and is
 * refused, naming it. */
static void test_head_zero_dormant(void **st) {
    (void)st;
    char out[1100], copy[1100], name[64] = "";
    snprintf(out, sizeof out, "%s/dormant.out", dir);
    snprintf(copy, sizeof copy, "%s/dormant.h5", dir);
    assert_int_equal(tu_run(out, "intervene %s head-zero --heads dormant --no-write", g1_run), 2);
    tu_assert_one_line(out, "no head is dormant by the rule of docs/metrics.md", NULL);
    size_t len;
    char *bytes = tu_slurp_ok(g1_run, &len);
    tu_write_file(copy, bytes, len);
    free(bytes);
    hid_t f = H5Fopen(copy, H5F_ACC_RDWR, H5P_DEFAULT), pg = H5Gopen2(f, "probe", H5P_DEFAULT);
    H5Literate(pg, H5_INDEX_NAME, H5_ITER_INC, NULL, last_probe_cb, name);
    hid_t g = H5Gopen2(pg, name, H5P_DEFAULT);
    edit_f32(g, "attention", sink_head00);
    edit_f32(g, "head_out_norm", quiet_head00);
    H5Gclose(g), H5Gclose(pg), H5Fclose(f);
    assert_int_equal(tu_run(out, "intervene %s head-zero --heads dormant --no-write", copy), 0);
    char *dorm = tu_slurp_ok(out, NULL);
    assert_int_equal(tu_run(out, "intervene %s head-zero --heads 0.0 --no-write", copy), 0);
    char *listed = tu_slurp_ok(out, NULL);
    assert_non_null(strstr(dorm, "head-zero heads: 0.0"));
    assert_string_equal(dorm, listed);
    free(dorm), free(listed);
}

/* The fixture's more/<name> results: the kind, layer and c from its
 * attributes, heads from the case's head list. */
static void fx_more(hid_t g, const char *cname, const Model *m, RunState *s, const int *tok, int Bn,
                    int T, const unsigned char *heads, const char *name) {
    char path[160], what[200], kind[64] = "";
    float scratch[64 * 64];
    size_t nb, nl;
    snprintf(path, sizeof path, "more/%s", name);
    hid_t r = H5Gopen2(g, path, H5P_DEFAULT);
    if (r < 0) fail_msg("fixture: no group %s/%s", cname, path);
    hid_t a = H5Aopen(r, "kind", H5P_DEFAULT), t = H5Aget_type(a);
    char *ks = NULL;
    assert_true(H5Aread(a, t, &ks) >= 0);
    snprintf(kind, sizeof kind, "%s", ks);
    H5free_memory(ks), H5Tclose(t), H5Aclose(a);
    Intervention iv = {.kind = intervention_kind(kind),
                       .layer = (int)tu_h5_attr(r, "layer"),
                       .gate_const = (float)tu_h5_attr(r, "gate_const"),
                       .head_zero = heads,
                       .scratch = scratch,
                       .mact_abs = tu_h5_attr(g, "mact_abs"),
                       .mact_ratio = tu_h5_attr(g, "mact_ratio")};
    assert_true((int)iv.kind > IV_NO_BOS);
    model_forward_iv(m, s, tok, NULL, Bn, T, &iv);
    float *blocks = tu_h5_read(r, "block_out", H5T_NATIVE_FLOAT, sizeof(float), &nb);
    float *logits = tu_h5_read(r, "logits", H5T_NATIVE_FLOAT, sizeof(float), &nl);
    size_t per = nb / m->dims.L;
    for (int l = 0; l < m->dims.L; l++) {
        snprintf(what, sizeof what, "%s %s block %d", cname, name, l);
        tu_fx_compare(what, model_block_output(s, l), blocks + l * per, per);
    }
    snprintf(what, sizeof what, "%s %s logits", cname, name);
    tu_fx_compare(what, model_logits(s), logits, nl);
    free(blocks), free(logits);
    H5Gclose(r);
}

static void fx_case(hid_t f, const char *name) {
    TuFxCase c;
    size_t nh;
    tu_fx_case_open(&c, f, name);
    const Dims *D = &c.m.dims;
    int *hl = tu_h5_read(c.g, "more_heads", H5T_NATIVE_INT, sizeof(int), &nh); /* [k, 2] */
    unsigned char *heads = calloc((size_t)D->L * D->H, 1);
    for (size_t i = 0; i + 1 < nh; i += 2) heads[hl[i] * D->H + hl[i + 1]] = 1;
    TuNames names;
    hid_t more = H5Gopen2(c.g, "more", H5P_DEFAULT);
    assert_true(more >= 0);
    tu_h5_names(more, &names);
    H5Gclose(more);
    assert_true(names.n >= 5);
    for (int i = 0; i < names.n; i++)
        fx_more(c.g, name, &c.m, &c.s, c.tok, c.N, c.T, heads, names.v[i]);
    free(heads), free(hl);
    tu_fx_case_close(&c);
}

static void test_pytorch_reference(void **st) {
    (void)st;
    tu_fx_cases("intervene/intervene.h5", fx_case);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_lists),
        cmocka_unit_test(test_kind_table),
        cmocka_unit_test(test_mact_hand),
        cmocka_unit_test(test_head_zero),
        cmocka_unit_test(test_gate_const_and_layer),
        cmocka_unit_test(test_pytorch_reference),
        cmocka_unit_test(test_cli_store),
        cmocka_unit_test(test_head_zero_dormant),
    };
    return cmocka_run_group_tests(tests, setup_run, remove_run);
}
